"""What `ina run` reports beside a failed run: the switch's drop counters, which a worker cannot see."""

import io
import json
import subprocess
from types import SimpleNamespace

import pytest

import ina.compiler
from ina.controller.aggregation import Fallback
from ina.topologies import runner
from ina.topologies.runner import (
    RunError,
    RunOptions,
    RunResult,
    compile_program,
    drop_notes,
    run_workers,
    summary,
)
from ina.topologies.topo import load


def test_a_failed_run_names_what_the_switch_dropped():
    result = RunResult("runs/x")
    result.workers = [
        {"host": "h1", "job": 0, "error": "no answer from the switch"},
        {
            "host": "h2",
            "job": 0,
            "elements": 64,
            "elapsed_s": 1.0,
            "goodput_elements_per_s": 64,
            "goodput_gbps": 0.0,
            "packets_sent": 4,
            "retransmissions": 0,
            "contributions_entered": 1.0,
            "verified": True,
        },
    ]
    result.switch_stats = {
        "s1": {
            "jobs": {0: {"accepted": 9, "out_of_range": 6240, "wrong_epoch": 3}},
            "ports": {1: {"refused": 2, "drop_sim_in": 5}, 2: {"drop_sim_in": 1}},
        }
    }
    assert drop_notes(result) == [
        "switch s1 dropped, job 0: out_of_range 6240, wrong_epoch 3",
        "switch s1 dropped, port 1: refused 2",
    ]
    assert summary(result).endswith(
        "h1: no answer from the switch\n" + "\n".join(drop_notes(result))
    )


def test_each_ranks_share_in_the_sums_is_a_column_and_a_rank_left_out_is_named():
    worker = {
        "job": 0,
        "elements": 64,
        "elapsed_s": 1.0,
        "goodput_elements_per_s": 64,
        "goodput_gbps": 0.0,
        "packets_sent": 4,
        "retransmissions": 0,
        "verified": True,
    }
    result = RunResult("runs/x")
    result.workers = [
        {**worker, "host": "h1", "contributions_entered": 1.0},
        {**worker, "host": "h2", "contributions_entered": 0.0625},
    ]
    assert summary(result).splitlines() == [
        "host  job  elements  time s  M elem/s   Gbps  sent  retrans  entered  verified",
        "  h1    0        64   1.000      0.00  0.000     4        0   100.0%       yes",
        "  h2    0        64   1.000      0.00  0.000     4        0     6.2%       yes",
        "entered: the share of each rank's contributions in the sums; h2 had some left out by the completion "
        "policy (docs/protocol.md)",
    ]


def test_a_verified_run_has_no_drop_notes():
    result = RunResult("runs/x")
    result.workers = [{"host": "h1", "verified": True}]
    result.switch_stats = {"s1": {"jobs": {0: {"out_of_range": 1}}, "ports": {}}}
    assert drop_notes(result) == []


def test_link_delay_goes_on_the_hosts_link_and_without_netem_the_run_is_refused_naming_it():
    import pytest

    from ina.topologies import runner
    from ina.topologies.topo import load

    topo = load("star", workers=3)
    if runner.netem_available():
        delayed = runner.delay_links(topo, {"h2": "5ms"})
        assert [link.params.get("delay") for link in delayed.links] == [None, "5ms", None]
    else:
        with pytest.raises(
            runner.RunError,
            match=r"link h2-s1 asks for delay 5ms, which Mininet applies with "
            r"the netem qdisc, and this kernel has none",
        ):
            runner.delay_links(topo, {"h2": "5ms"})
    assert [link.params.get("delay") for link in topo.links] == [
        None,
        None,
        None,
    ]  # the loaded one is unchanged
    with pytest.raises(
        runner.RunError, match=r"--link-delay h9: no such host \(hosts: h1, h2, h3\)"
    ):
        runner.delay_links(topo, {"h9": "1ms"})
    runner.delay_links(load("star", workers=2), {})  # nothing asked: no netem needed


class Process:
    """A worker process that reports one verified all-reduce."""

    def __init__(self, argv):
        self.argv, self.returncode = argv, 0
        self.stdout = io.StringIO("bound\n")
        self.stdin = io.StringIO()

    def communicate(self, timeout=None):
        return json.dumps({"job": 0, "verified": True}) + "\n", ""

    def kill(self):
        pass

    def wait(self):
        return 0


class Hosts:
    """Stands in for the Mininet network: each host's popen records its command."""

    def __init__(self):
        self.started = {}

    def host(self, name):
        hosts = self

        class Node:
            def popen(self, argv, **_kwargs):
                hosts.started[name] = argv
                return Process(argv)

        return Node()


def option(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


def test_each_worker_sends_to_its_trees_leaf_with_its_rank_there_and_seeds_its_data_by_job_rank(
    tmp_path,
):
    topo, hosts = load("leafspine_hier"), Hosts()
    run_workers(hosts, topo, RunOptions(topo="leafspine_hier"), {0: 7}, tmp_path)
    sw = topo.switches
    assert {
        h: (
            option(a, "--switch"),
            option(a, "--rank"),
            option(a, "--wire-rank"),
            option(a, "--leaf-workers"),  # its leaf's two, its turns at its switch
        )
        for h, a in hosts.started.items()
    } == {
        "h1": (sw["s1"].ip, "0", None, "2"),
        "h2": (sw["s1"].ip, "1", None, "2"),
        "h3": (sw["s2"].ip, "2", "0", "2"),
        "h4": (sw["s2"].ip, "3", "1", "2"),
    }
    # A hierarchical job's workers save their sums for the job's check (job_sums.py) ...
    saved = str(tmp_path / "sums" / "job0")
    assert {(option(a, "--save-sums"), "--verify" in a) for a in hosts.started.values()} == {
        (saved, False)
    }
    single, hosts = load("leafspine"), Hosts()
    run_workers(hosts, single, RunOptions(topo="leafspine"), {0: 7}, tmp_path)
    assert {
        (
            option(a, "--switch"),
            option(a, "--wire-rank"),
            option(a, "--leaf-workers"),
            option(a, "--save-sums"),
            "--verify" in a,
        )
        for a in hosts.started.values()
    } == {
        (single.switches["s1"].ip, None, None, None, True)
    }  # ... a single switch's check their own
    # The host-only baseline's server knows the workers by their ranks in the job.
    topo, hosts = load("leafspine_hier", extra_host=True), Hosts()
    run_workers(hosts, topo, RunOptions(topo="leafspine_hier", baseline=True), {0: 7}, tmp_path)
    server = topo.hosts[topo.extra_host].ip
    assert {
        h: (option(a, "--switch"), option(a, "--wire-rank"))
        for h, a in hosts.started.items()
        if h != topo.extra_host
    } == {h: (server, None) for h in ("h1", "h2", "h3", "h4")}


class ServerHosts(Hosts):
    """Hosts whose every popen is kept: the extra host runs one fallback server per job."""

    def host(self, name):
        hosts = self

        class Node:
            def popen(self, argv, **_kwargs):
                hosts.started.setdefault(name, []).append(argv)
                return Process(argv)

        return Node()


def test_best_effort_gives_each_job_a_fallback_server_on_the_extra_host_and_its_workers_its_address(
    tmp_path,
):
    topo = load("star", workers=4, jobs=2, slots=8, extra_host=True)
    fallbacks = runner.fallback_servers(topo)
    extra = topo.hosts[topo.extra_host]
    assert fallbacks == {
        job: Fallback(5, extra.mac, extra.ip, runner.FALLBACK_PORT_BASE + job) for job in (0, 1)
    }
    hosts = ServerHosts()
    run_workers(
        hosts, topo, RunOptions(best_effort=True), {0: 7, 1: 9}, tmp_path, fallbacks, {0: 8, 1: 6}
    )
    servers = hosts.started.pop(topo.extra_host)
    assert [
        (option(a, "--job"), option(a, "--epoch"), option(a, "--udp-port"), option(a, "--local-ip"))
        for a in servers
    ] == [("0", "7", "49120", extra.ip), ("1", "9", "49121", extra.ip)]
    assert all("--fallback-server" in a for a in servers)
    assert {
        h: (option(a, "--job"), option(a, "--fallback"), option(a, "--window"))
        for h, (a,) in hosts.started.items()
    } == {
        "h1": ("0", f"{extra.ip}:49120", "8"),
        "h3": ("0", f"{extra.ip}:49120", "8"),
        "h2": ("1", f"{extra.ip}:49121", "6"),  # the slots it was given, fewer than asked
        "h4": ("1", f"{extra.ip}:49121", "6"),
    }


def test_a_job_on_its_host_addresses_its_fallback_server_and_is_given_no_fallback(tmp_path):
    """run_workers(on_host=): a job preempted onto its host fallback server (bench/pool_emu.py)."""
    topo = load("star", workers=4, jobs=2, slots=8, extra_host=True)
    fallbacks = runner.fallback_servers(topo)
    extra = topo.hosts[topo.extra_host]
    hosts = ServerHosts()
    run_workers(
        hosts, topo, RunOptions(), {0: 7, 1: 9}, tmp_path, {0: fallbacks[0]}, {0: 4, 1: 4}, {0}
    )
    servers = hosts.started.pop(topo.extra_host)
    assert [
        (option(a, "--job"), option(a, "--epoch"), option(a, "--udp-port")) for a in servers
    ] == [("0", "7", "49120")]
    assert {
        h: (option(a, "--switch"), option(a, "--switch-port"), option(a, "--fallback"))
        for h, (a,) in hosts.started.items()
    } == {
        "h1": (extra.ip, "49120", None),
        "h3": (extra.ip, "49120", None),
        "h2": (topo.switches["s1"].ip, None, None),
        "h4": (topo.switches["s1"].ip, None, None),
    }


def test_best_effort_refuses_a_hierarchical_job_before_anything_starts():
    topo = load("leafspine_hier", extra_host=True)
    with pytest.raises(runner.RunError, match=r"^--best-effort: job 0 aggregates hierarchical"):
        runner.fallback_servers(topo)


def test_the_summary_gives_each_best_effort_jobs_host_share():
    result = RunResult("runs/x")
    result.workers = [
        {"host": "h1", "job": 0, "host_share": 0.25, "verified": True},
        {"host": "h3", "job": 0, "host_share": 0.5, "verified": True},
        {"host": "h2", "job": 1, "host_share": 0.0, "verified": True},
    ]
    assert runner.fallback_notes(result) == [
        "job 0: 37.5% of its chunks summed by its host fallback server"
    ]


def test_the_switch_is_built_and_its_workers_started_with_the_runs_lane_width(
    monkeypatch, tmp_path
):
    """--bits reaches both ends: ina's compiler and p4c-bm2-ss get -DLANE_BITS, every worker
    --bits, so a switch and its workers never differ (a switch of another width drops UPDATEs)."""
    seen = {}

    def compile_file(path, defines):
        seen["builtin"] = defines
        return SimpleNamespace(bmv2={}, p4info=None)

    def p4c(cmd, **_kwargs):
        seen["bmv2"] = [a for a in cmd if a.startswith("-D")]
        return subprocess.CompletedProcess(cmd, 1, "", "stop here")

    monkeypatch.setattr(ina.compiler, "compile_file", compile_file)
    monkeypatch.setattr(subprocess, "run", p4c)
    compile_program("builtin", 64, 512, tmp_path, bits=16)
    with pytest.raises(RunError, match="p4c-bm2-ss failed:\nstop here"):
        compile_program("bmv2", 64, 512, tmp_path, bits=8)
    assert seen == {
        "builtin": {"ELEMS": "64", "POOL_SIZE": "512", "LANE_BITS": "16"},
        "bmv2": ["-DELEMS=64", "-DPOOL_SIZE=512", "-DLANE_BITS=8"],
    }
    topo, hosts = load("star", workers=2), Hosts()
    run_workers(hosts, topo, RunOptions(workers=2, bits=8, dtype="float32"), {0: 7}, tmp_path)
    assert {h: option(a, "--bits") for h, a in hosts.started.items()} == {"h1": "8", "h2": "8"}
