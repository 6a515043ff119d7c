"""`ina run` refuses out-of-range arguments in argparse (exit 2, one line naming the argument and
the valid range), before it needs root, cleans up or compiles anything."""

import pytest

from ina.p4src.protocol import Policy
from ina.topologies import cli

CASES = [
    (["--workers", "0"], "argument --workers: expected an integer in 1..8192, got '0'"),
    (["--jobs", "300"], "argument --jobs: expected an integer in 1..256, got '300'"),
    (["--elems", "12"], "argument --elems: expected one of 8, 16, 32, 64, 128, 256, got '12'"),
    (["--slots", "40000"], "argument --slots: expected an integer in 1..32768, got '40000'"),
    (
        ["--pool-size", "0x20000"],
        "argument --pool-size: expected an integer in 1..65536, got '0x20000'",
    ),
    (["--size", "0"], "argument --size: expected an integer >= 1, got '0'"),
    # every worker of the run holds its array on this machine, and verifies its job's sum
    (
        ["--size", "6710887"],
        "argument --size: expected an integer in 1..6710886 (640 bytes per element over "
        "4 workers, at most 4 GiB), got '6710887'",
    ),
    (
        ["--workers", "64", "--jobs", "2", "--size", "1000000000"],
        "argument --size: expected an integer in 1..174762 (24576 bytes per element over 64 workers, at most 4 GiB), "
        "got '1000000000'",
    ),
    (["--loss", "nan"], "argument --loss: expected a number in [0.0, 1.0], got 'nan'"),
    (["--loss", "-0.5"], "argument --loss: expected a number in [0.0, 1.0], got '-0.5'"),
    (["--policy", "quorum:0"], "argument --policy: quorum 0 is out of range 1..1024"),
    (
        ["--policy", "all"],
        "argument --policy: bad policy part 'all': use sync, quorum:K, timeout:T[us|ms|s] or stale:S",
    ),
    (
        ["--straggler", "h3:-2x"],
        "argument --straggler: bad straggler 'h3:-2x': use HOST:FACTORx, e.g. h3:3x",
    ),
    (
        ["--straggler", "h2:5x"],
        "argument --straggler: h2:5x slows the emulated compute, and there is none "
        "(--compute-ms is 0): add --compute-ms MS, e.g. --compute-ms 20",
    ),
    (
        ["--straggler-dist", "exp"],
        "argument --straggler-dist: bad distribution 'exp': use exp:MEAN, uniform:MAX or "
        "pareto:MIN,ALPHA",
    ),
    (["--repeat", "0"], "argument --repeat: expected an integer in 1..100000, got '0'"),
    (["--bits", "4"], "argument --bits: expected one of 32, 16, 8, got '4'"),
    (["--bits", "16"], "argument --bits: 16-bit lanes sum floats only: add --dtype float32"),
    (
        ["--bits", "8", "--dtype", "float32", "--baseline"],
        "argument --bits: the host-only baseline sums 32-bit lanes; drop --bits 8",
    ),
    (
        ["--compute-ms", "inf"],
        "argument --compute-ms: expected a number in [0.0, 3600000.0], got 'inf'",
    ),
    (
        ["--link-delay", "h3"],
        "argument --link-delay: '' is not a duration (e.g. 20ms, 500us, 1.5s)",
    ),
    (
        ["--link-delay", ":5ms"],
        "argument --link-delay: bad link delay ':5ms': use HOST:DELAY, e.g. h3:5ms",
    ),
]


@pytest.fixture
def nothing_runs(monkeypatch):
    """A bad argument that got through would start Mininet: fail instead."""

    def refuse(*args, **kwargs):
        raise AssertionError("ina run went past argument checking")

    monkeypatch.setattr(cli, "run", refuse)
    monkeypatch.setattr(cli.clean, "cleanup", refuse)


@pytest.mark.parametrize(("argv", "message"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_argument_is_one_line_usage_error(nothing_runs, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.rstrip("\n").splitlines()[-1] == f"ina run: error: {message}"


def test_straggler_options_reach_the_run_options(monkeypatch):
    seen = {}

    def record(opts):
        seen["opts"] = opts
        raise KeyboardInterrupt  # stop before anything starts; main says "interrupted"

    monkeypatch.setattr(cli, "run", record)
    assert (
        cli.main(
            [
                "--policy",
                "quorum:3,timeout:5ms",
                "--straggler",
                "h3:3x",
                "--straggler",
                "h1:1.5x",
                "--straggler-dist",
                "pareto:2ms,1.5",
                "--repeat",
                "20",
                "--compute-ms",
                "50",
                "--link-delay",
                "h2:5ms",
                "--link-delay",
                "h3:2",
                "--bits",
                "8",
                "--dtype",
                "float32",
            ]
        )
        == 130
    )
    opts = seen["opts"]
    assert (
        opts.policy,
        opts.stragglers,
        opts.straggler_dist,
        opts.repeat,
        opts.compute_ms,
        opts.link_delays,
        opts.bits,
    ) == (
        Policy(quorum=3, timeout_us=5000),
        {"h3": 3.0, "h1": 1.5},
        "pareto:2ms,1.5",
        20,
        50.0,
        {"h2": "5ms", "h3": "2ms"},
        8,
    )


def test_the_largest_size_within_the_memory_budget_reaches_the_run(monkeypatch):
    def stop(opts):
        raise KeyboardInterrupt  # stop before anything starts

    monkeypatch.setattr(cli, "run", stop)
    assert cli.main(["--size", "6710886"]) == 130


def test_defaults_are_within_the_limits():
    args = cli.build_parser().parse_args([])
    assert (args.workers, args.jobs, args.elems, args.slots, args.pool_size, args.bits) == (
        4,
        None,
        256,
        128,
        8192,
        32,
    )


@pytest.mark.parametrize(("argv", "pcap"), [([], False), (["--pcap"], True)])
def test_pcap_is_captured_only_when_asked(monkeypatch, argv, pcap):
    seen = {}

    def record(opts):
        seen["opts"] = opts
        raise KeyboardInterrupt  # stop before anything starts

    monkeypatch.setattr(cli, "run", record)
    assert cli.main(argv) == 130
    assert seen["opts"].pcap is pcap
