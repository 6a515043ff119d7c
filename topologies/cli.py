"""`ina run`: the whole demo in one command (see runner.py)."""

import argparse
import sys

from ina.args import float_range, int_choice, int_range, parsed_by, probability
from ina.controller.aggregation import BurstLoss
from ina.controller.allocators import ALLOCATORS, FIRST_FIT, allocator
from ina.hosts.cli import add_bits_argument, bits_refusal, size_refusal
from ina.hosts.compute import DelayDistribution, parse_duration, parse_straggler, straggler_refusal
from ina.p4src.protocol import (
    DEFAULT_ELEMS,
    ELEMS_CHOICES,
    MAX_JOBS,
    MAX_POOL_SIZE,
    MAX_SLOTS,
    MAX_WORKERS,
    Policy,
)
from ina.switch.p4runtime.server import COMPAT_MODES
from ina.topologies import clean, lock
from ina.topologies.lock import MachineBusy
from ina.topologies.model import AGGREGATIONS
from ina.topologies.runner import (
    MAX_BW_MBIT,
    RunError,
    RunOptions,
    require_root,
    run,
    say,
    summary,
)
from ina.topologies.topo import MAX_TREE_WORKERS, TopologyError


def parse_link_delay(text: str) -> tuple[str, str]:
    """'h3:5ms' -> ('h3', '5ms'): netem's delay syntax, checked here so a typo fails before Mininet."""
    host, _, delay = text.partition(":")
    parse_duration(delay)  # raises ValueError naming the delay
    if not host:
        raise ValueError(f"bad link delay {text!r}: use HOST:DELAY, e.g. h3:5ms")
    return host, delay if delay[-1:].isalpha() else f"{delay}ms"


def build_parser() -> argparse.ArgumentParser:
    """Limits from the protocol, so a bad value is refused before root, Mininet or a compile."""
    p = argparse.ArgumentParser(
        prog="ina run", description="Build a Mininet network of ina switches and run an all-reduce."
    )
    p.add_argument(
        "--topo",
        default="star",
        help="topology: a file, a built-in name (star, leafspine, leafspine_hier, fattree4), "
        "fattree:K or leafspine:LxH,S, either with :hierarchical (its jobs over trees of switches)",
    )
    p.add_argument(
        "--workers",
        type=int_range(1, MAX_WORKERS * MAX_JOBS),
        default=4,
        help=f"workers of the star topology (at most {MAX_WORKERS} per job)",
    )
    p.add_argument("--target", choices=["builtin", "bmv2", "auto"], default="builtin")
    p.add_argument(
        "--p4runtime-compat",
        choices=sorted(COMPAT_MODES),
        default=None,
        help="builtin switches answer P4Runtime as this target does (tests the controller "
        "against simple_switch_grpc's P4Runtime surface without BMv2)",
    )
    p.add_argument("--size", type=int_range(1), default=1 << 16, help="elements per worker")
    p.add_argument("--dtype", choices=["int32", "float32", "float64"], default="int32")
    model = p.add_mutually_exclusive_group()
    model.add_argument(
        "--loss",
        type=probability,
        help="packet loss probability on every link (e.g. 0.01; switch-to-switch links too, unless "
        "--loss-link or --loss-direction names host links)",
    )
    model.add_argument(
        "--loss-burst",
        type=BurstLoss.parse,
        metavar="GOOD,BAD,P_GB,P_BG",
        help="bursty (Gilbert-Elliott) loss instead: loss in the good and bad states, then the "
        "chance per packet of going good->bad, bad->good",
    )
    p.add_argument(
        "--loss-link", metavar="HOST", help="the loss on this host's link only (e.g. h2)"
    )
    p.add_argument(
        "--loss-direction",
        choices=["up", "down", "both"],
        default="both",
        help="up: host -> switch, down: switch -> host (default: %(default)s)",
    )
    p.add_argument(
        "--loss-mode",
        choices=["auto", "netem", "switch"],
        default="auto",
        help="where --loss is applied: netem on the links, the switch's drop simulator on "
        "every host port, or auto (netem when the kernel has it)",
    )
    p.add_argument(
        "--jobs",
        type=int_range(1, MAX_JOBS),
        help="deal the workers into this many jobs (default: 1 on a star, a file's own jobs, the fewest "
        f"of at most {MAX_WORKERS} workers on a generated topology, {MAX_TREE_WORKERS} with "
        ":hierarchical)",
    )
    p.add_argument(
        "--elems",
        type=int_choice(ELEMS_CHOICES),
        default=DEFAULT_ELEMS,
        help="elements per packet",
    )
    add_bits_argument(p)
    p.add_argument("--pool-size", type=int_range(1, MAX_POOL_SIZE), default=8192)
    p.add_argument(
        "--slots",
        type=int_range(1, MAX_SLOTS),
        default=128,
        help="slots per job = the workers' window; larger windows only queue in a software switch",
    )
    p.add_argument(
        "--policy",
        type=parsed_by(Policy.parse),
        metavar="POLICY",
        help="every job's completion policy: sync, or quorum:K, timeout:T[us|ms|s], stale:S "
        "joined by commas (docs/protocol.md; default: the topology's, else sync)",
    )
    p.add_argument(
        "--aggregation",
        choices=AGGREGATIONS,
        help="every job aggregated this way: single (at the job's aggregator, a tree's root) or "
        "hierarchical (over its tree of switches); default: the topology's",
    )
    p.add_argument(
        "--allocator",
        type=parsed_by(allocator),
        default=FIRST_FIT,
        metavar="POLICY",
        help=f"where each job's slots go in its switch's pool: {', '.join(ALLOCATORS)} or "
        "partition:N (default: first-fit)",
    )
    p.add_argument(
        "--repeat", type=int_range(1, 100000), default=1, help="all-reduces per worker (iterations)"
    )
    p.add_argument(
        "--compute-ms",
        type=float_range(0.0, 3.6e6),
        default=0.0,
        help="emulated compute (a sleep) before each all-reduce, in ms",
    )
    p.add_argument(
        "--straggler",
        type=parsed_by(parse_straggler),
        action="append",
        default=[],
        metavar="HOST:Fx",
        help="slow this host's compute by factor F (e.g. h3:3x); repeatable",
    )
    p.add_argument(
        "--straggler-dist",
        type=parsed_by(DelayDistribution.parse),
        metavar="DIST",
        help="extra compute per iteration on every host, drawn with the run's seed: exp:MEAN, "
        "uniform:MAX or pareto:MIN,ALPHA (e.g. exp:20ms)",
    )
    p.add_argument(
        "--link-delay",
        type=parsed_by(parse_link_delay),
        action="append",
        default=[],
        metavar="HOST:DELAY",
        help="one-way delay of this host's link (e.g. h3:5ms; netem); repeatable",
    )
    p.add_argument(
        "--bw",
        type=float_range(0.0, MAX_BW_MBIT, lo_open=True),
        metavar="MBIT",
        help="every link's rate in Mbit/s (host and switch-to-switch links; tc htb); default "
        "unshaped",
    )
    p.add_argument("--keep-logs", metavar="DIR", help="run directory (default runs/<timestamp>)")
    p.add_argument(
        "--pcap",
        action="store_true",
        help="capture every switch port's frames into the run directory (SWITCH-pcap/; a write "
        "per frame in and out)",
    )
    p.add_argument(
        "--cli", action="store_true", help="open the Mininet CLI instead of running workers"
    )
    p.add_argument(
        "--baseline",
        action="store_true",
        help="aggregate on a host (parameter server) instead of the switch",
    )
    p.add_argument(
        "--best-effort",
        action="store_true",
        help="every job best effort: its host fallback server on an extra host sums the chunks "
        "whose slots another job holds, so jobs may share a pool too small for them all",
    )
    p.add_argument("--clean", action="store_true", help="only remove leftovers of crashed runs")
    return p


def clean_stale() -> int:
    """`--clean`: what crashed runs left, removed while holding the machine, so a live run's
    interfaces and switches are never taken for leftovers (a live run refuses it, exit 2)."""
    try:
        require_root()
        with lock.machine():
            removed = clean.cleanup()
    except MachineBusy as err:
        print(f"ina run --clean: {err}", file=sys.stderr)
        return 2
    except RunError as err:
        print(f"ina run --clean: {err}", file=sys.stderr)
        return 1
    print("removed: " + (", ".join(removed) if removed else "nothing"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (
        (args.loss_link or args.loss_direction != "both")
        and args.loss is None
        and args.loss_burst is None
    ):
        parser.error("--loss-link/--loss-direction: say the loss with --loss or --loss-burst")
    if args.p4runtime_compat and args.target != "builtin":
        parser.error(
            "--p4runtime-compat applies to --target builtin (ina's switch imitating the target)"
        )
    problem = straggler_refusal(dict(args.straggler), args.compute_ms)
    if problem:
        parser.error(problem)
    ranks = min(
        -(-args.workers // (args.jobs or 1)), MAX_WORKERS
    )  # per job (at most MAX_WORKERS); every worker verifies
    problem = size_refusal(args.size, ranks, verify=True, processes=args.workers) or bits_refusal(
        args.bits, args.dtype
    )
    if problem:
        parser.error(problem)
    if args.bits != 32 and args.baseline:
        parser.error(
            f"argument --bits: the host-only baseline sums 32-bit lanes; drop --bits {args.bits}"
        )
    if args.clean:
        return clean_stale()
    opts = RunOptions(
        topo=args.topo,
        workers=args.workers,
        target=args.target,
        size=args.size,
        dtype=args.dtype,
        loss=args.loss if args.loss_burst is None else args.loss_burst,
        loss_mode=args.loss_mode,
        loss_link=args.loss_link,
        loss_direction=args.loss_direction,
        jobs=args.jobs,
        elems=args.elems,
        bits=args.bits,
        pool_size=args.pool_size,
        slots=args.slots,
        run_dir=args.keep_logs,
        cli=args.cli,
        baseline=args.baseline,
        p4runtime_compat=args.p4runtime_compat,
        policy=args.policy,
        aggregation=args.aggregation,
        allocator=args.allocator,
        repeat=args.repeat,
        compute_ms=args.compute_ms,
        stragglers=dict(args.straggler),
        straggler_dist=args.straggler_dist and str(args.straggler_dist),
        link_delays=dict(args.link_delay),
        best_effort=args.best_effort,
        pcap=args.pcap,
        bw=args.bw,
    )
    try:
        result = run(opts)
    except MachineBusy as err:
        print(f"ina run: {err}", file=sys.stderr)
        return 2
    except (RunError, TopologyError) as err:
        print(f"ina run: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ina run: interrupted; the network was torn down", file=sys.stderr)
        return 130
    except (
        Exception
    ) as err:  # a switch that failed to start, a controller error: say it in one place
        print(f"ina run: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    if opts.cli:
        return 0
    print(summary(result))
    say(
        ("all results verified" if result.ok else "SOME RESULTS ARE WRONG OR MISSING")
        + f"; details in {result.run_dir}"
    )
    return 0 if result.ok else 1
