"""Seeded fuzz of every option of the `ina` CLIs that take a value: random and boundary values,
parsed by each CLI's own parser (nothing runs). The test's table is the specification, written
from docs/protocol.md and not from the validators: a value outside it must exit 2 with one line
naming the argument and the range, a value inside it must parse to itself. An option that takes
a value and is not in the table fails the test, so a new option cannot skip its check. Then the
files the CLIs read (BMv2 JSON, P4Info), mutated: one line and exit 1, never a traceback."""

import argparse
import ipaddress
import math
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ina.args import ipv4_port
from ina.bench.cli import build_parser as bench_parser
from ina.compiler.cli import build_parser as compile_parser
from ina.controller.aggregation import BurstLoss
from ina.controller.allocators import allocator
from ina.controller.cli import build_parser as ctl_parser
from ina.hosts.cli import build_parser as worker_parser
from ina.hosts.compute import DelayDistribution, parse_straggler
from ina.p4src.protocol import Policy
from ina.sim.cli import build_parser as sim_parser
from ina.sim.cli import host_costs, timeout_seconds
from ina.sim.compare import parse_methods
from ina.sim.straggler import SlowHost
from ina.sim.sweep import dask_address
from ina.sim.units import parse_rate, parse_seconds
from ina.sim.workload_cli import compute_seconds, training_spec
from ina.switch.cli import build_parser as switch_parser
from ina.switch.stf import build_parser as stf_parser
from ina.topologies.cli import build_parser as run_parser
from ina.topologies.cli import parse_link_delay
from ina.train.cli import build_parser as train_parser


def INT(lo: int, hi: int | None = None) -> tuple:
    return ("int", lo, hi)


def FLOAT(lo: float, hi: float | None, lo_open: bool = False) -> tuple:
    return ("float", lo, hi, lo_open)


def PARSED(parse: Callable[[str], object], samples: tuple[str, ...]) -> tuple:
    """An option whose type is a domain parser (ina.args.parsed_by): valid iff `parse` accepts the
    text, and the error line carries the parser's own message."""
    return ("parsed", parse, samples)


POLICY = PARSED(
    Policy.parse,
    (
        "sync",
        "quorum:3",
        "quorum:0",
        "quorum:33",
        "timeout:5ms",
        "timeout:5xs",
        "stale:2",
        "stale:999",
        "quorum:3,timeout:1s",
        "quorum:",
        ",",
        "sync,quorum:2",
    ),
)
ALLOCATOR = PARSED(
    allocator,
    ("first-fit", "best-fit", "buddy", "partition", "partition:16", "partition:0", "worst"),
)
STRAGGLER = PARSED(parse_straggler, ("h3:3x", "h3", "h3:0x", "h1:1.5", ":2x", "h2:-1x"))
DISTRIBUTION = PARSED(
    DelayDistribution.parse,
    (
        "exp:5ms",
        "exp",
        "pareto:5ms,1.5",
        "pareto:5ms",
        "uniform:2s",
        "gauss:1ms",
        "pareto:1ms,0",
        "exp:1ms,2",
    ),
)


def _ipv4_port(text: str) -> tuple[str, int]:
    """ina.args.ipv4_port with its refusal as the ValueError a domain parser raises."""
    try:
        return ipv4_port(text)
    except argparse.ArgumentTypeError as err:
        raise ValueError(str(err)) from None


IPV4_PORT = PARSED(
    _ipv4_port,
    ("10.0.0.5:49120", "1.2.3.4:1", "10.0.0.5", "host:5", "10.0.0.5:0", "10.0.0.5:65536", "::1:5"),
)
ONE_OF_ELEMS = ("one_of", (8, 16, 32, 64, 128, 256))
IPV4, DEFINE, CHOICE, FREE = ("ipv4",), ("define",), ("choice",), ("free",)
BURST = ("burst",)  # GOOD,BAD,P_GB,P_BG: four probabilities
RATE = PARSED(
    parse_rate, ("100Gbps", "10Mbit/s", "2.5G", "1e9", "0", "0Gbps", "-1G", "fast", "1e400", "nan")
)
DURATION = PARSED(
    parse_seconds, ("1us", "250ns", "0.5ms", "2s", "0s", "1", "-1us", "us", "1e400s", "nan s")
)


def ADDRESS(lowest_port: int) -> tuple:
    """HOST:PORT; a listener may take port 0 (any free port), an address to dial may not."""
    return ("address", lowest_port)


def subcommand(
    build: Callable[[], argparse.ArgumentParser], name: str
) -> Callable[[], argparse.ArgumentParser]:
    """The parser of one subcommand (its errors read `ina ctl NAME: error: ...`)."""

    def parser() -> argparse.ArgumentParser:
        [sub] = [a for a in build()._actions if isinstance(a, argparse._SubParsersAction)]
        return sub.choices[name]

    return parser


def without_subcommand(
    build: Callable[[], argparse.ArgumentParser],
) -> Callable[[], argparse.ArgumentParser]:
    """A parser whose subcommand may be left out, so its global options parse on their own."""

    def parser() -> argparse.ArgumentParser:
        p = build()
        [sub] = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        sub.required = False
        return p

    return parser


# command -> (parser, arguments every parse needs, {option: kind})
COMMANDS: dict[
    str, tuple[Callable[[], argparse.ArgumentParser], dict[str, str], dict[str, tuple]]
] = {
    "worker": (
        worker_parser,
        {"--job": "1", "--workers": "2"},
        {
            "--job": INT(0, 255),
            "--rank": INT(0, 1023),
            "--workers": INT(1, 1024),
            "--wire-rank": INT(0, 31),
            "--leaf-workers": INT(1, 32),
            "--epoch": INT(1, 2**32 - 1),
            "--switch": IPV4,
            "--local-ip": IPV4,
            "--udp-port": INT(1, 65535),
            "--switch-port": INT(1, 65535),
            "--size": INT(1),
            "--dtype": CHOICE,
            "--seed": INT(0),
            "--elems": ONE_OF_ELEMS,
            "--bits": ("one_of", (32, 16, 8)),
            "--window": INT(1, 32768),
            "--timeout": FLOAT(0, 60, lo_open=True),
            "--max-retries": INT(0),
            "--repeat": INT(1),
            "--loss": FLOAT(0, 1),
            "--compute-ms": FLOAT(0, 3.6e6),
            "--slowdown": FLOAT(0, 1e6, lo_open=True),
            "--delay-dist": DISTRIBUTION,
            "--staleness": INT(0, 255),
            "--fallback": IPV4_PORT,
            "--save-sums": FREE,
        },
    ),
    "run": (
        run_parser,
        {},
        {
            "--topo": FREE,
            "--workers": INT(1, 32 * 256),
            "--target": CHOICE,
            "--p4runtime-compat": CHOICE,
            "--size": INT(1),
            "--dtype": CHOICE,
            "--loss": FLOAT(0, 1),
            "--loss-burst": BURST,
            "--loss-link": FREE,
            "--loss-direction": CHOICE,
            "--loss-mode": CHOICE,
            "--jobs": INT(1, 256),
            "--elems": ONE_OF_ELEMS,
            "--bits": ("one_of", (32, 16, 8)),
            "--pool-size": INT(1, 65536),
            "--slots": INT(1, 32768),
            "--keep-logs": FREE,
            "--policy": POLICY,
            "--aggregation": CHOICE,
            "--allocator": ALLOCATOR,
            "--repeat": INT(1, 100000),
            "--compute-ms": FLOAT(0, 3.6e6),
            "--straggler": STRAGGLER,
            "--straggler-dist": DISTRIBUTION,
            "--link-delay": PARSED(
                parse_link_delay, ("h3:5ms", "h3", ":5ms", "h1:2", "h2:1.5s", "h2:5xs")
            ),
            "--bw": FLOAT(0, 1000, lo_open=True),
        },
    ),
    "ctl set-drop": (
        subcommand(ctl_parser, "set-drop"),
        {"port": "1"},
        {
            "--ingress": FLOAT(0, 1),
            "--egress": FLOAT(0, 1),
            "--ingress-burst": BURST,
            "--egress-burst": BURST,
        },
    ),
    "ctl show-tree": (
        subcommand(ctl_parser, "show-tree"),
        {"job": "0"},
        {"--topo": FREE, "--workers": INT(1, 32 * 256), "--jobs": INT(1, 256)},
    ),
    "ctl preempt": (
        subcommand(ctl_parser, "preempt"),
        {
            "job": "3",
            "--worker": "0:1:02:00:00:00:00:01:10.0.0.1",
            "--slots": "4",
            "--victim": "1",
        },
        {
            "--worker": FREE,
            "--slots": INT(1, 32768),
            "--epoch": INT(1, 2**32 - 1),
            "--policy": POLICY,
            "--fallback": FREE,
            "--victim": INT(0, 255),
        },
    ),
    "ctl": (
        without_subcommand(ctl_parser),
        {},
        {
            "--grpc-addr": ADDRESS(1),
            "--device-id": INT(0, 2**64 - 1),
            "--election-id": INT(0, 2**128 - 1),
            "--timeout": FLOAT(0, 3600, lo_open=True),
            "--ca-cert": FREE,
            "--cert": FREE,
            "--key": FREE,
            "--allocator": ALLOCATOR,
        },
    ),
    "bench": (
        bench_parser,
        {"what": "compile"},
        {
            "--out": FREE,
            "--reps": INT(1, 1000),
            "--seconds": FLOAT(0, 3600, lo_open=True),
            "--target": CHOICE,
            "--sweep": CHOICE,
            "--workers": INT(2, 16),
            "--trace": FREE,
            "--topo": FREE,
            "--elems": ONE_OF_ELEMS,
        },
    ),
    "train": (
        train_parser,
        {},
        {
            "--model": CHOICE,
            "--dataset": CHOICE,
            "--epochs": INT(1),
            "--batch": INT(1),
            "--lr": FLOAT(0, 10, lo_open=True),
            "--hidden": INT(1),
            "--seed": INT(0),
            "--replay": CHOICE,
            "--scale": FLOAT(0, 1, lo_open=True),
            "--bucket-cap-mb": FLOAT(0, None, lo_open=True),
            "--iterations": INT(1),
            "--bucket-calls": CHOICE,
            "--bw": FLOAT(0, 1000, lo_open=True),
            "--workers": INT(1, 32),
            "--aggregation": CHOICE,
            "--target-accuracy": FLOAT(0, 1, lo_open=True),
            "--elems": ONE_OF_ELEMS,
            "--bits": ("one_of", (32, 16, 8)),
            "--window": INT(1, 32768),
            "--timeout": FLOAT(0, 60, lo_open=True),
            "--max-retries": INT(0),
            "--time-limit": FLOAT(0, None, lo_open=True),
            "--out": FREE,
            "--policy": POLICY,
            "--compute-ms": FLOAT(0, 3.6e6),
            "--straggler": STRAGGLER,
            "--straggler-dist": DISTRIBUTION,
        },
    ),
    "sim": (
        sim_parser,
        {},
        {
            "--topo": FREE,
            "--workers": INT(2, 32 * 256),
            "--jobs": INT(1, 256),
            "--size": INT(1),
            "--dtype": CHOICE,
            "--elems": ONE_OF_ELEMS,
            "--bits": ("one_of", (32, 16, 8)),
            "--window": INT(1, 32768),
            "--policy": POLICY,
            "--rate": RATE,
            "--delay": DURATION,
            "--queue": INT(0),
            "--ecn": INT(0),
            "--loss": FLOAT(0, 1),
            "--loss-burst": BURST,
            "--pipeline": DURATION,
            "--host-cost": PARSED(
                host_costs, ("200ns", "200ns,300ns", "0s,1us", "1,2", "1us,2us,3us", "-1ns", ",")
            ),
            "--nic-rate": RATE,
            "--timeout": PARSED(timeout_seconds, ("1ms", "0s", "61s", "x", "-1ms", "1e400s")),
            "--seed": INT(0),
            "--allocator": ALLOCATOR,
            "--json": FREE,
            "--plot": FREE,
            "--pcap": FREE,
            "--compare": PARSED(
                parse_methods, ("ring", "ps", "ring,ps", "ps,ring", "", "ring,", "tree", "RING")
            ),
            "--mtu": ("one_of", (256, 512, 1024, 2048, 4096)),
            "--ring-chunk": INT(1, 1 << 30),
            "--ring-transport": CHOICE,
            "--slow-host": PARSED(SlowHost.parse, ("h3:4x", "h3", "h3:0x", ":2x", "h2:1.5")),
            "--sweep": FREE,
            "--parallel": INT(1, 256),
            "--sweep-plot": FREE,
            "--dask": PARSED(
                dask_address,
                ("tcp://10.0.0.5:8786", "tls://h:1", "localhost", "tcp://h", "tcp://h:x"),
            ),
            "--model": CHOICE,
            "--train": PARSED(
                training_spec,
                (
                    "mlp:digits",
                    "softmax:iris",
                    "mlp",
                    ":digits",
                    "cnn:digits",
                    "mlp:mnist",
                    "mlp:digits:x",
                ),
            ),
            "--scale": FLOAT(0, 1, lo_open=True),
            "--bucket-cap-mb": FLOAT(0, 1e6, lo_open=True),
            "--iterations": INT(1, 100_000),
            "--bucket-calls": CHOICE,
            "--epochs": INT(1, 10_000),
            "--batch": INT(1),
            "--lr": FLOAT(0, 10, lo_open=True),
            "--compute": PARSED(
                compute_seconds, ("5ms", "0s", "3600s", "3601s", "5", "-1ms", "1e400s")
            ),
            "--straggler": STRAGGLER,
            "--straggler-dist": DISTRIBUTION,
        },
    ),
    "compile": (
        compile_parser,
        {"program": "x.p4"},
        {"-o": FREE, "--p4runtime-files": FREE, "-I": FREE, "-D": DEFINE, "--p4v": CHOICE},
    ),
    "stf": (
        stf_parser,
        {"program": "x.p4", "stf": "x.stf"},
        {"-I": FREE, "-D": DEFINE, "--engine": CHOICE},
    ),
    "switch": (
        switch_parser,
        {},
        {
            "-i": FREE,
            "--device-id": INT(0, 2**64 - 1),
            "--grpc-server-addr": ADDRESS(0),
            "--grpc-server-cert": FREE,
            "--grpc-server-key": FREE,
            "--grpc-server-cacert": FREE,
            "--cpu-port": INT(0, 511),
            "--drop-port": INT(0, 511),
            "--pcap": FREE,
            "--engine": CHOICE,
            "--profile": FREE,
            "--log-file": FREE,
            "--p4runtime-compat": CHOICE,
        },
    ),
}
GARBAGE = [
    "",
    "abc",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "1.5",
    "0x",
    "1e3",
    "five",
    "0b2",
    "12abc",
    "-",
    "1" * 5000,
    "\n",
    "🙂",
    "0x-1",
]


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Options that take a value, by their first option string."""
    return {a.option_strings[0]: a for a in parser._actions if a.option_strings and a.nargs != 0}


def _int_case(rng: random.Random, lo: int, hi: int | None) -> tuple[str, int | None]:
    edge = [lo - 1, lo, lo + 1] + ([hi - 1, hi, hi + 1] if hi is not None else [2**31, 2**64])
    n = rng.choice([*edge, rng.randint(-(2**40), 2**40), 10**30, -(10**30)])
    if rng.random() < 0.2:
        return rng.choice(GARBAGE), None
    return (hex(n) if n >= 0 and rng.random() < 0.3 else str(n)), n


def _float_case(rng: random.Random, lo: float, hi: float | None) -> tuple[str, float | None]:
    x = rng.choice(
        [lo, lo - 1e-9, lo + 1e-9, -1.0, rng.uniform(-100, 100), 1e300, -0.0]
        + ([hi, hi + 1e-6, hi - 1e-6] if hi is not None else [])
    )
    if rng.random() < 0.25:
        text = rng.choice(GARBAGE)
        try:
            return text, float(text)
        except ValueError:
            return text, None
    return repr(x), x


def _ipv4_case(rng: random.Random) -> tuple[str, bool]:
    good = ".".join(str(rng.randint(0, 255)) for _ in range(4))
    text = rng.choice(
        [
            good,
            good,
            "256.1.1.1",
            "1.2.3",
            "::1",
            "host.example",
            "10.0.0.01",
            "1.2.3.4.5",
            *GARBAGE,
        ]
    )
    parts = text.split(".")
    valid = len(parts) == 4 and all(
        p.isascii() and p.isdigit() and str(int(p)) == p and int(p) <= 255 for p in parts
    )
    return text, valid


def _define_case(rng: random.Random) -> tuple[str, bool]:
    text = rng.choice(
        ["A", "ELEMS=8", "_x=y z", "POOL_SIZE=", "=1", "1A", "A B", "a-b=1", "A.B=1", *GARBAGE]
    )
    return text, bool(re.fullmatch(r"[A-Za-z_]\w*", text.partition("=")[0]))


def _address_case(rng: random.Random, lowest_port: int) -> tuple[str, bool]:
    port = rng.choice(
        ["-1", "0", "1", "9559", "65535", "65536", "1000000", "", "x", "\u0663", "0x10"]
    )
    text = rng.choice(
        [f"127.0.0.1:{port}", f"[::1]:{port}", f"switch:{port}", f":{port}", "127.0.0.1", *GARBAGE]
    )
    host, sep, digits = text.rpartition(":")
    valid = bool(
        sep and host and re.fullmatch("[0-9]+", digits) and lowest_port <= int(digits) <= 65535
    )
    return text, valid


def _case(rng: random.Random, kind: tuple, action: argparse.Action) -> tuple[str, bool, object]:
    """(text, valid per the table, the parsed value a valid text must give)."""
    if kind[0] == "int":
        text, n = _int_case(rng, kind[1], kind[2])
        return text, n is not None and kind[1] <= n and (kind[2] is None or n <= kind[2]), n
    if kind[0] == "one_of":
        text, n = _int_case(rng, min(kind[1]), max(kind[1]))
        return text, n in kind[1], n
    if kind[0] == "float":
        lo, hi, lo_open = kind[1:]
        text, x = _float_case(rng, lo, hi)
        ok = (
            x is not None
            and math.isfinite(x)
            and (x > lo if lo_open else x >= lo)
            and (hi is None or x <= hi)
        )
        return text, ok, x
    if kind[0] == "burst":
        cases = [_float_case(rng, 0.0, 1.0) for _ in range(rng.choice([4, 4, 4, 3, 5]))]
        ok = len(cases) == 4 and all(x is not None and 0 <= x <= 1 for _t, x in cases)
        return (
            ",".join(t for t, _x in cases),
            ok,
            BurstLoss(*(x for _t, x in cases)) if ok else None,
        )
    if kind[0] == "ipv4":
        text, ok = _ipv4_case(rng)
        return text, ok, str(ipaddress.IPv4Address(text)) if ok else None
    if kind[0] == "address":
        text, ok = _address_case(rng, kind[1])
        return text, ok, text
    if kind[0] == "define":
        text, ok = _define_case(rng)
        name, eq, value = text.partition("=")
        return text, ok, [(name, value if eq else "1")]
    if kind[0] == "parsed":
        text = rng.choice([*kind[2], *GARBAGE])
        try:
            value = kind[1](text)
        except ValueError:
            return text, False, None
        return text, True, [value] if action.default == [] else value
    text = rng.choice([*action.choices, *GARBAGE])
    return text, text in action.choices, text


def _range_words(kind: tuple, action: argparse.Action, text: str) -> str:
    """What the error line must say about the valid values (for a domain parser: its message)."""
    if kind[0] == "parsed":
        try:
            kind[1](text)
        except ValueError as err:
            return str(err)
    if kind[0] == "int":
        return f"{kind[1]}..{kind[2]}" if kind[2] is not None else f">= {kind[1]}"
    if kind[0] == "one_of":
        return ", ".join(map(str, kind[1]))
    if kind[0] == "float":
        return str(float(kind[1]))
    if kind[0] == "choice":
        return "choose from"
    if kind[0] == "burst":
        return "GOOD,BAD,P_GB,P_BG: four numbers in [0.0, 1.0]"
    if kind[0] == "address":
        return f"HOST:PORT with PORT in {kind[1]}..65535"
    return "expected"


def _argv(base: dict[str, str], option: str, text: str) -> list[str]:
    argv = [v for k, v in base.items() if not k.startswith("-")]
    argv += [x for k, v in base.items() if k.startswith("-") and k != option for x in (k, v)]
    return [*argv, f"{option}={text}" if option.startswith("--") else option + text]


def test_every_option_with_a_value_is_in_the_table():
    for name, (build, _base, table) in COMMANDS.items():
        assert set(_options(build())) == set(table), name


@pytest.mark.fuzz
def test_cli_options_refuse_out_of_range_values_in_one_line(capsys, fuzz_cases):
    rng = random.Random(1234)
    parsers = {name: build() for name, (build, _b, _t) in COMMANDS.items()}
    for case in range(fuzz_cases(3000)):
        name = rng.choice(list(COMMANDS))
        _build, base, table = COMMANDS[name]
        option = rng.choice([o for o, kind in table.items() if kind != FREE])
        action = _options(parsers[name])[option]
        text, valid, value = _case(rng, table[option], action)
        argv = _argv(base, option, text)
        try:
            args = parsers[name].parse_args(argv)
        except SystemExit as exit_:
            err = capsys.readouterr().err
            lines = [line for line in err.splitlines() if "error:" in line]
            assert not valid, (case, name, argv, err)
            assert exit_.code == 2, (case, argv)
            assert len(lines) == 1 and err.rstrip("\n").endswith(lines[0]), (case, argv, err)
            assert lines[0].startswith(
                f"ina {name}: error: argument {'/'.join(action.option_strings)}"
            ), (argv, err)
            if (
                "expected one argument" not in lines[0]
            ):  # argparse's own refusal of a value like '-'
                assert _range_words(table[option], action, text) in lines[0], (argv, lines[0])
            continue
        assert valid, (case, name, argv, "was accepted")
        parsed = getattr(args, action.dest)
        if isinstance(action, argparse._AppendAction) and not isinstance(value, list):
            parsed = parsed[-1]  # given once: a list of that one value
        assert parsed == value, (case, argv, parsed)


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        (
            "worker",
            [
                "--job",
                "1",
                "--rank",
                "0",
                "--workers",
                "2",
                "--switch",
                "127.0.0.1",
                "--timeout",
                "-1",
            ],
        ),
        ("run", ["--slots", "0"]),
        ("bench", ["compile", "--reps", "-3"]),
        ("compile", ["x.p4", "-D", "1=2"]),
        ("stf", ["x.p4", "x.stf", "-D", "="]),
        ("switch", ["--no-p4", "-i", "600@eth0"]),
    ],
)
def test_bad_value_through_the_ina_command_exits_2_without_traceback(command, argv):
    done = subprocess.run(
        [sys.executable, "-m", "ina", command, *argv], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"ina {command}: error: argument ")


# --- files -------------------------------------------------------------------------------
# The commands that read a user's BMv2 JSON or P4Info, fed seeded mutations of good ones: each
# ends in one line on stderr and exit 1 (or, for a mutation that still makes a good program, runs
# to its end), never an exception. A switch whose program loads stops at a port something holds.
def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


def _mutated(rng: random.Random, good: bytes) -> bytes:
    """A hostile variant of a good file: cut, bytes flipped or inserted, a value nested deep, a
    number made huge, another encoding, noise, or nothing."""
    how = rng.choice(["cut", "flip", "insert", "nest", "number", "encoding", "noise", "empty"])
    at = rng.randrange(len(good))
    if how == "cut":
        return good[:at]
    if how == "flip":
        data = bytearray(good)
        for i in rng.sample(range(len(data)), rng.choice([1, 3, 30])):
            data[i] = rng.randrange(256)
        return bytes(data)
    if how == "insert":
        return (
            good[:at]
            + rng.choice([b"\x00", b"\xff\xfe", "\u2028".encode(), b"{", b"]", b'"', b"\\"])
            + good[at:]
        )
    if (
        how == "nest"
    ):  # a value nested past the schema's 128 levels, or past Python's parser's recursion
        colon = good.find(b":", at)
        depth = rng.choice([2, 127, 129, 500, 990, 5000, 100_000])
        return (
            good[: colon + 1] + _nest(depth).encode() + b"," + good[colon + 1 :]
            if colon >= 0
            else good
        )
    if how == "number":
        return re.sub(
            rb"\d+",
            lambda m: rng.choice([b"9" * 5000, b"1e400", b"NaN", b"-0", b"Infinity", m[0]]),
            good,
            count=rng.randint(1, 5),
        )
    if how == "encoding":
        return rng.choice(
            [
                good.decode("latin-1").encode("utf-16"),
                b"\xef\xbb\xbf" + good,
                good.replace(b"\n", b"\r"),
            ]
        )
    if how == "noise":
        return bytes(rng.randrange(256) for _ in range(rng.choice([1, 64, 4096])))
    return b""


@pytest.fixture(scope="module")
def good_program(tmp_path_factory):
    """basic_forward's BMv2 JSON, its P4Info in the three formats `ina compile` writes, an empty STF."""
    import json

    from ina.compiler import compile_file
    from ina.files import write_p4info

    d = tmp_path_factory.mktemp("good")
    result = compile_file(str(Path(__file__).parent / "p4" / "basic_forward.p4"))
    (d / "prog.json").write_text(json.dumps(result.bmv2, indent=1))
    for suffix in (".txtpb", ".json", ".bin"):
        write_p4info(result.p4info, d / f"p4info{suffix}")
    (d / "empty.stf").write_text("")
    return d


@pytest.mark.fuzz
def test_cli_files_are_refused_in_one_line(
    tmp_path, capsys, fuzz_cases, good_program, taken_address
):
    from ina.controller.cli import main as ctl
    from ina.switch.cli import main as switch
    from ina.switch.stf import main as stf

    rng = random.Random(2828)
    nowhere = ["--grpc-addr", "127.0.0.1:1", "--timeout", "0.2", "set-pipeline"]
    program, p4infos = (
        good_program / "prog.json",
        {s: good_program / f"p4info{s}" for s in (".txtpb", ".json", ".bin")},
    )
    for case in range(fuzz_cases(200)):
        target = rng.choice(["switch", "stf", "ctl", "ctl p4info"])
        suffix = rng.choice(list(p4infos)) if target == "ctl p4info" else ".json"
        path = tmp_path / f"case{case}{suffix}"
        path.write_bytes(
            _mutated(rng, (p4infos[suffix] if target == "ctl p4info" else program).read_bytes())
        )
        if target == "switch":
            code = switch([str(path), "--engine", "python", "--grpc-server-addr", taken_address])
        elif target == "stf":
            code = stf([str(path), str(good_program / "empty.stf"), "--engine", "python"])
        else:
            json_file, p4info = (
                (program, path) if target == "ctl p4info" else (path, p4infos[".txtpb"])
            )
            code = ctl([*nowhere, "--bmv2-json", str(json_file), "--p4info", str(p4info)])
        err = capsys.readouterr().err
        assert code == 1 or (target == "stf" and code == 0 and not err), (case, target, code, err)
        if code == 1:
            assert err.count("\n") == 1 and err.startswith(f"ina {target.split()[0]}: "), (
                case,
                target,
                err[:500],
            )
