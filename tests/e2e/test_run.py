"""`ina run` for real: Mininet hosts, ina switch processes, P4Runtime programming, verified workers."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ina.controller.aggregation import Aggregation
from ina.controller.client import SwitchConnection
from ina.topologies import clean, cli, runner
from ina.topologies.net import Network
from ina.topologies.runner import RunOptions, compile_program, netem_available, run
from ina.topologies.topo import load
from ina.topologies.topology_setup import program_topology

REPO = Path(__file__).resolve().parents[2]


def interfaces() -> set[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()} & {
        n for n in re.findall(r"\d+: ([hs]\d+-eth\d+)", out)
    }


@pytest.mark.parametrize(
    ("workers", "dtype", "jobs"),
    [
        (2, "int32", 1),
        (3, "int32", 1),
        (8, "int32", 1),
        (4, "float32", 1),
        (4, "int32", 2),
    ],
)
def test_star_allreduce_is_verified(tmp_path, workers, dtype, jobs):
    result = run(
        RunOptions(
            workers=workers,
            dtype=dtype,
            jobs=jobs,
            size=8192,
            elems=16,
            pool_size=1024,
            slots=64,
            run_dir=str(tmp_path),
        )
    )
    assert result.ok, (result.workers, result.switch_stats)
    assert len(result.workers) == workers
    assert {w["job"] for w in result.workers} == set(range(jobs))
    assert not interfaces()


@pytest.mark.parametrize("mode", ["netem", "switch"])
def test_loss_is_recovered_wherever_it_is_applied(tmp_path, mode):
    """5% loss each way on every host link, by netem on the links or by the switch's drop
    simulator: every worker's sum is bit-exact and every worker retransmitted, from result.json."""
    if mode == "netem" and not netem_available():
        pytest.skip(
            "this kernel has no netem qdisc (`tc qdisc add ... netem` fails): "
            "only the switch's drop simulator can apply loss here"
        )
    size, elems = 8192, 16
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ina",
            "run",
            "--workers",
            "3",
            "--size",
            str(size),
            "--elems",
            str(elems),
            "--pool-size",
            "1024",
            "--slots",
            "64",
            "--loss",
            "0.05",
            "--loss-mode",
            mode,
            "--keep-logs",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["loss_mode"] == mode
    assert sorted(w["rank"] for w in result["workers"]) == [0, 1, 2]
    for w in result["workers"]:
        assert (w["verified"], w["max_abs_error"], w["elements"]) == (True, 0.0, size)
        # int32 sends each chunk once plus its retransmissions; 512 chunks at 5% each way leave
        # a worker without a loss with probability 0.9025**512, about 1e-23
        assert w["packets_sent"] == size // elems + w["retransmissions"]
        assert w["retransmissions"] > 0, w
    ports = result["switch_stats"]["s1"]["ports"].values()
    simulated = sum(p.get("drop_sim_in", 0) + p.get("drop_sim_out", 0) for p in ports)
    assert (simulated > 0) if mode == "switch" else (simulated == 0)
    assert not interfaces()


def test_loss_mode_netem_on_a_kernel_without_it_is_refused_before_anything_starts(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(runner, "netem_available", lambda: False)
    assert (
        cli.main(["--loss", "0.05", "--loss-mode", "netem", "--keep-logs", str(tmp_path / "run")])
        == 1
    )
    assert "ina run: --loss-mode netem: this kernel has no netem qdisc" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_leafspine_forwards_ordinary_traffic(tmp_path):
    topo = load("leafspine")
    bmv2, p4info = compile_program("builtin", 8, 512, tmp_path)
    net = Network(topo, str(tmp_path), run_id="test-leafspine")
    try:
        net.start()
        program_topology(topo, bmv2, p4info)
        h1, h4 = net.host("h1"), net.host("h4")
        assert ", 0% packet loss" in h1.cmd("ping -c 3 -W 2 -i 0.2 10.0.0.4"), "h1 cannot reach h4"
        assert ", 0% packet loss" in h4.cmd("ping -c 2 -W 2 -i 0.2 10.0.255.254"), (
            "h4 cannot ping the aggregator"
        )
    finally:
        net.stop()
    assert not interfaces()


def test_killed_switch_leaves_nothing_behind(tmp_path):
    topo = load("star", workers=2)
    net = Network(topo, str(tmp_path), run_id="test-killed")
    net.start()
    [switch] = net.switches()
    switch.proc.kill()
    # The runner process "crashes" here: nothing calls net.stop(); the next run's cleanup must cope.
    left = interfaces()
    assert {"s1-eth1", "s1-eth2"} <= left
    removed = clean.cleanup()
    assert {"host shell h1", "host shell h2"} <= set(removed)  # their veth pairs go with them
    assert not interfaces()
    assert switch.proc.poll() is not None


def test_cli_exit_status_and_summary(tmp_path):
    """Three repetitions, each of its own arrays and each verified; every rank's data in every sum."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ina",
            "run",
            "--workers",
            "2",
            "--size",
            "4096",
            "--repeat",
            "3",
            "--elems",
            "16",
            "--pool-size",
            "512",
            "--slots",
            "32",
            "--keep-logs",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all results verified" in done.stdout
    assert (tmp_path / "s1.log").exists() and (tmp_path / "result.json").exists()
    workers = json.loads((tmp_path / "result.json").read_text())["workers"]
    assert [
        (w["verified"], w["failed_repetitions"], w["elements"], w["contributions_entered"])
        for w in workers
    ] == [(True, [], 3 * 4096, 1.0)] * 2


@pytest.fixture
def star(tmp_path):
    """A 2-worker star with its job 0 installed by the controller: (network, topology, job)."""
    topo = load("star", workers=2)
    bmv2, p4info = compile_program("builtin", 16, 256, tmp_path)
    net = Network(topo, str(tmp_path), run_id="test-star")
    try:
        net.start()
        [job] = program_topology(topo, bmv2, p4info)["s1"]
        yield net, topo, job
    finally:
        net.stop()


def worker_on_h1(net: Network, *args: str) -> tuple[int, str]:
    """Run `ina worker` on h1 against the switch; (exit status, stderr)."""
    done = net.host("h1").popen(
        [
            sys.executable,
            "-m",
            "ina",
            "worker",
            "--rank",
            "0",
            "--workers",
            "2",
            "--switch",
            "10.0.255.254",
            "--elems",
            "16",
            "--max-retries",
            "3",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _out, err = done.communicate(timeout=60)
    return done.returncode, err


def test_refused_worker_fails_cleanly(star):
    net, _topo, _job = star
    status, err = worker_on_h1(net, "--job", "5", "--size", "256", "--epoch", "1")
    assert status == 1
    assert "no answer from the switch at 10.0.255.254" in err and "Traceback" not in err


def test_a_worker_with_another_runs_epoch_is_refused_and_counted(star):
    net, topo, job = star
    wrong = job.epoch % 0xFFFFFFFF + 1
    # One chunk, window 1: the packet and its 3 retransmissions, then the worker gives up.
    status, err = worker_on_h1(
        net, "--job", "0", "--size", "16", "--window", "1", "--epoch", str(wrong)
    )
    assert status == 1 and "an epoch other than the job's" in err
    with SwitchConnection(topo.switches["s1"].grpc, election_id=None) as conn:
        assert Aggregation(conn).stats()["jobs"][0] == {"wrong_epoch": 4}


def test_hosts_know_every_address_up_front(star):
    # With loss emulated, a lost ARP request would stall a worker for the kernel's 1 s retry.
    net, topo, _job = star
    for name in topo.hosts:
        table = net.host(name).cmd("ip neigh show nud permanent")
        others = [h for h in topo.hosts if h != name]
        for node in [*(topo.hosts[h] for h in others), *topo.switches.values()]:
            assert f"{node.ip} dev {name}-eth0 lladdr {node.mac} PERMANENT" in table, table


def test_make_run_exits_zero():
    """The README's first command, as a user types it (set-up is already done, so it is quick)."""
    done = subprocess.run(
        ["make", "run", "WORKERS=2"], capture_output=True, text=True, cwd=REPO, timeout=600
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "all results verified" in done.stdout
