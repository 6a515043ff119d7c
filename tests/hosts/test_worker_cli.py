"""`ina worker` refuses every out-of-range argument in argparse (exit 2, one line naming the argument
and the valid range) before a Worker exists: these values used to hang it or end in a traceback."""

import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
import pytest

from ina.hosts import cli
from ina.train import cli as train_cli

BASE = ["--job", "1", "--rank", "0", "--workers", "2", "--switch", "127.0.0.1", "--size", "64"]
CASES = [
    (["--window", "0"], "argument --window: expected an integer in 1..32768, got '0'"),
    (["--window", "-4"], "argument --window: expected an integer in 1..32768, got '-4'"),
    (["--timeout", "-1"], "argument --timeout: expected a number in (0.0, 60.0], got '-1'"),
    (["--timeout", "nan"], "argument --timeout: expected a number in (0.0, 60.0], got 'nan'"),
    (["--size", "-5"], "argument --size: expected an integer >= 1, got '-5'"),
    # --size sizes memory: refused before any array exists (ina.args.MEMORY_BUDGET, 4 GiB; 64 bytes per
    # element, --verify 64 more and 8 per rank); these ended in a numpy traceback or the OOM killer
    (
        ["--size", str(10**20)],
        "argument --size: expected an integer in 1..67108864 (64 bytes per element, at most "
        f"4 GiB), got '{10**20}'",
    ),
    (
        ["--size", "67108865"],
        "argument --size: expected an integer in 1..67108864 (64 bytes per element, at most "
        "4 GiB), got '67108865'",
    ),
    (
        ["--workers", "32", "--verify", "--size", "11184811"],
        "argument --size: expected an integer in 1..11184810 (384 bytes per element, at most 4 GiB), got '11184811'",
    ),
    (["--elems", "0"], "argument --elems: expected one of 8, 16, 32, 64, 128, 256, got '0'"),
    (["--rank", "1024"], "argument --rank: expected an integer in 0..1023, got '1024'"),
    (["--rank", "300"], "argument --rank: expected an integer in 0..1 (below --workers), got 300"),
    (["--wire-rank", "32"], "argument --wire-rank: expected an integer in 0..31, got '32'"),
    (["--rank", "2"], "argument --rank: expected an integer in 0..1 (below --workers), got 2"),
    (["--job", "70000"], "argument --job: expected an integer in 0..255, got '70000'"),
    (["--udp-port", "70000"], "argument --udp-port: expected an integer in 1..65535, got '70000'"),
    (["--udp-port", "0"], "argument --udp-port: expected an integer in 1..65535, got '0'"),
    (["--switch-port", "0"], "argument --switch-port: expected an integer in 1..65535, got '0'"),
    (
        ["--switch", "not-an-ip"],
        "argument --switch: expected an IPv4 address like 10.0.0.1, got 'not-an-ip'",
    ),
    (["--workers", "0"], "argument --workers: expected an integer in 1..1024, got '0'"),
    (["--workers", "1025"], "argument --workers: expected an integer in 1..1024, got '1025'"),
    # a hierarchical job (more than one switch's 32): its leaf's workers and its rank there
    (
        ["--workers", "40", "--rank", "39"],
        "argument --leaf-workers: a switch sums 1..32 workers; --workers 40 (a hierarchical job) "
        "needs its leaf's count here, and --wire-rank",
    ),
    (
        ["--workers", "40", "--rank", "39", "--leaf-workers", "8", "--wire-rank", "8"],
        "argument --wire-rank: expected an integer in 0..7 (below the leaf's workers), got 8",
    ),
    (["--leaf-workers", "33"], "argument --leaf-workers: expected an integer in 1..32, got '33'"),
    (
        ["--leaf-workers", "3"],
        "argument --leaf-workers: expected an integer in 1..2 (at most --workers), got 3",
    ),
    (["--repeat", "0", "--verify"], "argument --repeat: expected an integer >= 1, got '0'"),
    (["--seed", "-1"], "argument --seed: expected an integer >= 0, got '-1'"),
    (["--loss", "1.5"], "argument --loss: expected a number in [0.0, 1.0], got '1.5'"),
    (
        ["--fallback", "10.0.0.5"],
        "argument --fallback: expected IPV4:PORT with PORT in 1..65535, got '10.0.0.5'",
    ),
    (
        ["--fallback", "host:5"],
        "argument --fallback: expected IPV4:PORT with PORT in 1..65535, got 'host:5'",
    ),
    (
        ["--fallback", "10.0.0.5:0"],
        "argument --fallback: expected IPV4:PORT with PORT in 1..65535, got '10.0.0.5:0'",
    ),
    (["--bits", "12"], "argument --bits: expected one of 32, 16, 8, got '12'"),
    (["--bits", "8"], "argument --bits: 8-bit lanes sum floats only: add --dtype float32"),
    (
        ["--save-sums", "/nonexistent/sums"],
        "argument --save-sums: /nonexistent/sums is not a directory",
    ),
]


@pytest.fixture
def no_worker(monkeypatch):
    """A Worker built from bad arguments is the bug: building one fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"a Worker was built from {args} {kwargs}")

    monkeypatch.setattr(cli, "Worker", refuse)


@pytest.mark.parametrize(("extra", "message"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_argument_is_one_line_usage_error(no_worker, capsys, extra, message):
    with pytest.raises(SystemExit) as exit_:
        cli.main(BASE + extra)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.rstrip("\n").splitlines()[-1] == f"ina worker: error: {message}"
    assert "Traceback" not in err


def test_the_largest_size_within_the_memory_budget_is_accepted(no_worker):
    """The bound's own value passes the check and reaches the Worker (which the fixture refuses)."""
    with pytest.raises(AssertionError, match="a Worker was built"):
        cli.main([*BASE, "--workers", "32", "--verify", "--size", "11184810"])


def test_wire_rank_is_the_workers_rank_on_the_wire_and_rank_stays_its_datas(no_worker):
    """A hierarchical job's worker sends with its rank at its leaf (--wire-rank), not its job rank."""
    with pytest.raises(AssertionError, match=r"a Worker was built from \(1, 0, 2,"):
        cli.main([*BASE, "--rank", "1", "--wire-rank", "0"])
    with pytest.raises(AssertionError, match=r"a Worker was built from \(1, 1, 2,"):
        cli.main([*BASE, "--rank", "1"])


def test_a_worker_of_a_1024_worker_job_sums_at_its_leaf_and_scales_for_the_job(no_worker):
    """Job rank 1000 of 1,024 is rank 5 of its leaf's 32: Worker(job, wire rank, leaf's workers,
    ..., job_workers=1024)."""
    hier = ["--workers", "1024", "--rank", "1000", "--wire-rank", "5", "--leaf-workers", "32"]
    with pytest.raises(
        AssertionError, match=r"a Worker was built from \(1, 5, 32,.*'job_workers': 1024"
    ):
        cli.main([*BASE, *hier])


def test_bits_reach_the_worker(no_worker):
    with pytest.raises(AssertionError, match=r"a Worker was built from .*'bits': 16"):
        cli.main([*BASE, "--dtype", "float32", "--bits", "16"])


def test_switch_port_reaches_the_worker(no_worker):
    """A job preempted onto its host fallback server addresses that server's port."""
    with pytest.raises(AssertionError, match=r"a Worker was built from .*'switch_port': 49120"):
        cli.main([*BASE, "--switch-port", "49120"])


def test_hex_udp_port_still_accepted():
    assert cli.build_parser().parse_args([*BASE, "--udp-port", "0xBEE1"]).udp_port == 0xBEE1


@pytest.mark.parametrize("extra", [["--window", "0"], ["--timeout", "-1"], ["--window", "-4"]])
def test_values_that_used_to_hang_exit_2_in_a_process(extra):
    """End to end through `python -m ina`: these ran for ever before."""
    done = subprocess.run(
        [sys.executable, "-m", "ina", "worker", *BASE, *extra],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith(
        f"ina worker: error: argument {extra[0]}: expected"
    )


def test_worker_and_baseline_server_through_the_cli():
    """The checked arguments still reach Worker and ParameterServer (epoch included) and sum exactly.
    The CLI's server listens on the protocol's port, which a worker addresses: each run of this test
    takes loopback addresses of its own (from its pid), so concurrent runs never meet."""
    common = ["--job", "3", "--workers", "1", "--epoch", "0x5eed"]
    net = f"127.{1 + os.getpid() % 254}.{os.getpid() // 254 % 256}"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ina",
            "worker",
            "--baseline-server",
            *common,
            "--local-ip",
            f"{net}.77",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    before, children = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "ina",
                "worker",
                *common,
                "--rank",
                "0",
                "--switch",
                f"{net}.77",
                "--local-ip",
                f"{net}.78",
                "--size",
                "1000",
                "--verify",
                "--json",
                "--timeout",
                "0.05",
                "--repeat",
                "3",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        worker = resource.getrusage(resource.RUSAGE_CHILDREN)  # the worker's, waited for
    finally:
        server.kill()
        server.wait()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # its all-reduces' CPU: some, and less than the whole process's (imports, arrays, checks)
    whole = sum(getattr(worker, f) - getattr(children, f) for f in ("ru_utime", "ru_stime"))
    assert 0 < report["allreduce_cpu_s"] < whole
    assert (report["verified"], report["contributions_entered"], report["failed_repetitions"]) == (
        True,
        1.0,
        [],
    )
    # its start on the machine's clock, which every process (and Mininet host) reads alike
    assert before <= report["started_monotonic_s"] <= time.monotonic()


def test_baseline_server_needs_an_epoch(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--baseline-server", "--job", "0", "--workers", "2"])
    assert exit_.value.code == 2
    assert (
        capsys.readouterr().err.splitlines()[-1]
        == "ina worker: error: --epoch is required for --baseline-server"
    )


def test_fallback_servers_address_reaches_the_worker(no_worker):
    """A best-effort job's worker takes answers from its host fallback server (hosts/core.py)."""
    with pytest.raises(AssertionError, match=r"'fallback': \('10.0.0.5', 49120\)"):
        cli.main([*BASE, "--fallback", "10.0.0.5:49120"])


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        (["--fallback-server"], "--epoch is required for --fallback-server"),
        (
            ["--fallback-server", "--baseline-server", "--epoch", "7"],
            "--baseline-server and --fallback-server are two servers: pick one",
        ),
    ],
)
def test_fallback_server_needs_an_epoch_and_is_not_the_baseline(capsys, mode, message):
    with pytest.raises(SystemExit) as exit_:
        cli.main([*mode, "--job", "0", "--workers", "2"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"ina worker: error: {message}"


@pytest.mark.parametrize(
    ("mode", "fallback"), [("--fallback-server", True), ("--baseline-server", False)]
)
def test_the_fallback_server_sums_only_what_the_switch_could_not(monkeypatch, mode, fallback):
    """--fallback-server is the baseline's server with `fallback` (hosts/baseline.py): it lets a
    later round replace a use it never completed, as the switch completed that one."""
    made = []

    class Server:
        def __init__(self, *args, **kwargs):
            made.append((args, kwargs))

        def serve_forever(self):
            pass

    monkeypatch.setattr("ina.hosts.baseline.ParameterServer", Server)
    common = ["--job", "3", "--workers", "2", "--epoch", "7", "--udp-port", "49123"]
    assert cli.main([mode, *common]) == 0
    assert made == [((3, 2, 7, 256, "", 49123, 0.0), {"fallback": fallback})]


def test_ina_worker_and_ina_train_default_to_1_kb_packets():
    """256 values per packet (docs/performance.md: emulation costs per packet), as ina run."""
    assert cli.build_parser().parse_args(BASE).elems == 256
    assert train_cli.build_parser().parse_args([]).elems == 256


def test_the_outcome_counts_its_own_cpu_apart_from_the_allreduce(monkeypatch):
    """Making an array and checking a sum are the main thread's CPU, not the all-reduce's."""
    args = cli.build_parser().parse_args(
        ["--job", "0", "--rank", "0", "--workers", "1", "--size", "8", "--verify"]
    )
    outcome = cli.Outcome(args)
    ticks = iter(range(0, 100, 3))  # each read of the thread's CPU clock 3 s on
    monkeypatch.setattr(cli.time, "thread_time", lambda: float(next(ticks)))
    array = outcome.array(0)
    one = cli.Contributors(args.elems, np.ones(1, np.uint16), np.ones(1, np.uint32))
    outcome.add(0, (array, one))
    assert (outcome.own_cpu_s, outcome.ok) == (6.0, True)
