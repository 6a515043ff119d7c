"""`ina sim`: an all-reduce per job through the real switch program in virtual time, on `ina run`'s
topologies (a star, the YAML files, fattree:K, leafspine:LxH,S) of simulated links
(docs/simulation.md): the communication time in simulated seconds, goodput per worker, what each
link carried and dropped, and how fast the simulation ran. The same seed gives the same run."""

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

from ina.args import int_choice, int_range, parsed_by, probability
from ina.bench.results import git_revision
from ina.controller.aggregation import BurstLoss
from ina.controller.allocators import ALLOCATORS, allocator
from ina.hosts.cli import bits_refusal
from ina.hosts.core import WorkerError
from ina.hosts.heap import keep_freed_memory
from ina.p4src.protocol import (
    ELEMS_CHOICES,
    LANE_BITS_CHOICES,
    MAX_JOBS,
    MAX_SLOTS,
    MAX_WORKERS,
    Policy,
)
from ina.sim import budget, compare, output, ring, sweep, workload_cli
from ina.sim.allreduce import (
    DEFAULT_LINK,
    AllReduceConfig,
    AllReduceResult,
    lossless_time,
    report,
    window_covers_path,
)
from ina.sim.links import LinkSpec
from ina.sim.nodes import HostSpec
from ina.sim.straggler import SlowHost
from ina.sim.transport import ROCE, TransportError
from ina.sim.units import format_rate, format_seconds, parse_rate, parse_seconds
from ina.topologies.topo import MAX_TREE_WORKERS, TopologyError, is_star

MAX_TIMEOUT_S = 60.0
DEFAULTS = AllReduceConfig()


def host_costs(text: str) -> tuple[float, float]:
    """COST or SEND,RECV (durations with a unit) -> (send, receive) seconds per packet."""
    parts = text.split(",")
    if len(parts) > 2:
        raise ValueError(
            f"expected COST or SEND,RECV durations with a unit, e.g. 200ns or 100ns,300ns, got {text[:40]!r}"
        )
    send = parse_seconds(parts[0])
    return send, parse_seconds(parts[-1])


def timeout_seconds(text: str) -> float:
    """The workers' first RTO: a duration in (0, MAX_TIMEOUT_S]."""
    seconds = parse_seconds(text) if text.strip()[:1].isdigit() else -1.0
    if not 0 < seconds <= MAX_TIMEOUT_S:
        raise ValueError(
            f"expected a duration in (0, {MAX_TIMEOUT_S:g}s] with a unit, e.g. 1ms, got {text[:40]!r}"
        )
    return seconds


def build_parser() -> argparse.ArgumentParser:
    """Every limit from the protocol (p4src/protocol.py) or the model, checked before anything runs."""
    p = argparse.ArgumentParser(prog="ina sim", description=__doc__)
    p.add_argument(
        "--topo",
        default=DEFAULTS.topo,
        metavar="TOPO",
        help="star, leafspine, leafspine_hier, fattree4 (.yaml), a topology file, fattree:K or "
        "leafspine:LxH,S, either with :hierarchical (default star)",
    )
    p.add_argument(
        "--workers",
        type=int_range(2, MAX_WORKERS * MAX_JOBS),
        help=f"workers on the star (default {DEFAULTS.workers}; other topologies have their hosts)",
    )
    (
        p.add_argument(
            "--jobs",
            type=int_range(1, MAX_JOBS),
            help=f"deal the workers into this many jobs, each of at most {MAX_WORKERS} ({MAX_TREE_WORKERS} "
            "for hierarchical jobs; default: 1 on a file, the fewest that hold every host on a generated "
            "topology)",
        ),
    )
    p.add_argument(
        "--size", type=int_range(1), default=DEFAULTS.size, help="elements each worker all-reduces"
    )
    p.add_argument(
        "--dtype",
        choices=["int32", "float32"],
        help=f"float32 travels quantized (block floating point, hosts/quantize.py; default {DEFAULTS.dtype}, "
        "float32 for --model and --train)",
    )
    p.add_argument(
        "--elems",
        type=int_choice(ELEMS_CHOICES),
        default=DEFAULTS.elems,
        help="32-bit words per packet (the switch's ELEMS)",
    )
    p.add_argument(
        "--bits",
        type=int_choice(LANE_BITS_CHOICES),
        default=DEFAULTS.bits,
        help="bits per value in the switch's lanes (-DLANE_BITS; below 32 needs float32): each "
        "packet carries E x 32 / bits values",
    )
    p.add_argument(
        "--window",
        type=int_range(1, MAX_SLOTS),
        default=DEFAULTS.window,
        help="slots in flight per worker",
    )
    p.add_argument(
        "--policy",
        type=parsed_by(Policy.parse),
        default=DEFAULTS.policy,
        metavar="POLICY",
        help="the job's completion policy: sync, quorum:K, timeout:T[us|ms|s], stale:S (docs/protocol.md)",
    )
    p.add_argument(
        "--rate",
        type=parsed_by(parse_rate),
        default=DEFAULT_LINK.rate,
        help=f"every link's rate (default {format_rate(DEFAULT_LINK.rate)})",
    )
    p.add_argument(
        "--delay",
        type=parsed_by(parse_seconds),
        default=DEFAULT_LINK.delay,
        help=f"every link's propagation delay, one way (default {format_seconds(DEFAULT_LINK.delay)})",
    )
    p.add_argument(
        "--queue",
        type=int_range(0),
        default=DEFAULT_LINK.queue,
        help="bytes of frames each egress queue holds before it drops (default %(default)s)",
    )
    p.add_argument(
        "--ecn",
        type=int_range(0),
        help="count the frames that find more than this many bytes queued",
    )
    loss = p.add_mutually_exclusive_group()
    loss.add_argument(
        "--loss",
        type=probability,
        default=0.0,
        help="loss probability per frame on every link, both ways",
    )
    loss.add_argument(
        "--loss-burst",
        type=BurstLoss.parse,
        metavar="GOOD,BAD,P_GB,P_BG",
        help="bursty (Gilbert-Elliott) loss on every link instead: loss in the good and bad states, "
        "then the chance per frame of going good->bad, bad->good",
    )
    p.add_argument(
        "--pipeline",
        type=parsed_by(parse_seconds),
        default=DEFAULTS.pipeline,
        help="the switch's latency per frame, in to out (default 0s)",
    )
    p.add_argument(
        "--host-cost",
        type=parsed_by(host_costs),
        default=(0.0, 0.0),
        metavar="COST|SEND,RECV",
        help="CPU time per packet a worker sends and receives (e.g. 200ns; default 0s)",
    )
    p.add_argument(
        "--nic-rate", type=parsed_by(parse_rate), help="the workers' NIC rate (default: the link's)"
    )
    p.add_argument(
        "--timeout",
        type=parsed_by(timeout_seconds),
        default=DEFAULTS.timeout,
        help="the workers' first retransmission timeout, before an RTT sample "
        f"(default {format_seconds(DEFAULTS.timeout)})",
    )
    p.add_argument(
        "--slow-host",
        type=parsed_by(SlowHost.parse),
        metavar="HOST:FACTORx",
        help="a communication straggler: HOST's NIC rate divided and its per-packet costs multiplied by "
        "FACTOR (e.g. h3:4x; docs/simulation.md)",
    )
    p.add_argument(
        "--seed", type=int_range(0), default=DEFAULTS.seed, help="the arrays and every link's loss"
    )
    p.add_argument(
        "--allocator",
        type=parsed_by(allocator),
        default=DEFAULTS.allocator,
        metavar="POLICY",
        help=f"where each job's slots go in its switch's pool: {', '.join(ALLOCATORS)} or "
        "partition:N (default: first-fit)",
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        help="write every figure, the configuration, the seed and the git revision",
    )
    output.add_arguments(p)
    baselines = p.add_argument_group("baselines on the same links (sim/compare.py)")
    baselines.add_argument(
        "--compare",
        type=parsed_by(compare.parse_methods),
        metavar="ring,ps",
        help="also run the ring all-reduce over RoCE and/or the host parameter server; print them side by side",
    )
    baselines.add_argument(
        "--mtu",
        type=int_choice(compare.MTUS),
        default=ROCE.mtu,
        help=f"the ring's RoCE path MTU, payload bytes per frame (default {ROCE.mtu})",
    )
    baselines.add_argument(
        "--ring-transport",
        choices=tuple(ring.TRANSPORTS),
        default="roce",
        help="the ring's transport: RoCE's reliable connection as NCCL runs (default) or Linux's "
        "TCP as hosts/ring.py runs (sim/tcp.py; --mtu does not apply)",
    )
    baselines.add_argument(
        "--ring-chunk",
        type=int_range(1, 1 << 30),
        default=ring.CHUNK,
        metavar="BYTES",
        help=f"the ring's message size: a step forwards each chunk as it arrives (default {ring.CHUNK})",
    )
    sweep.add_arguments(p)
    workload_cli.add_arguments(p)
    return p


def config_from(p: argparse.ArgumentParser, args: argparse.Namespace) -> AllReduceConfig:
    """The run's configuration; a combination no single option's check sees is refused here (the
    topology is read here too, so a bad one is refused before anything runs)."""
    if args.workers is not None and not is_star(args.topo):
        p.error(f"argument --workers: applies to --topo star; {args.topo} has its hosts")
    if args.policy.staleness >= args.window:
        p.error(
            f"argument --policy: stale:{args.policy.staleness} needs a window above {args.policy.staleness} "
            f"(each of the S + 1 groups needs a slot), got --window {args.window}"
        )
    if args.json and not os.access(Path(args.json).resolve().parent, os.W_OK):
        p.error(
            f"argument --json: cannot write {args.json} (its directory is missing or not writable)"
        )
    problem = bits_refusal(args.bits, args.dtype or DEFAULTS.dtype)
    if problem and not (args.model or args.train):
        p.error(problem)
    send, recv = args.host_cost
    config = AllReduceConfig(
        topo=args.topo,
        workers=DEFAULTS.workers if args.workers is None else args.workers,
        jobs=args.jobs,
        size=args.size,
        dtype=args.dtype or DEFAULTS.dtype,
        elems=args.elems,
        bits=args.bits,
        window=args.window,
        policy=args.policy,
        link=LinkSpec(
            args.rate,
            args.delay,
            args.queue,
            args.ecn,
            args.loss if args.loss_burst is None else args.loss_burst,
        ),
        host=HostSpec(args.nic_rate or args.rate, send, recv),
        pipeline=args.pipeline,
        seed=args.seed,
        timeout=args.timeout,
        slow_host=args.slow_host,
        allocator=args.allocator,
    )
    try:
        topo = config.plain_topology()
    except TopologyError as err:
        p.error(f"argument --topo {args.topo}: {err}")
    if args.slow_host and args.slow_host.host not in topo.hosts:
        p.error(
            f"argument --slow-host: {args.slow_host.host} is not a host of {args.topo} "
            f"(hosts {next(iter(topo.hosts))}..{next(reversed(topo.hosts))})"
        )
    if not topo.jobs:
        p.error(
            f"argument --topo {args.topo}: the topology has no jobs (declare them in the file, or give --jobs)"
        )
    try:
        topo.with_policy(config.policy)
    except TopologyError as err:
        p.error(f"argument --policy: {err}")
    if refusal := budget.refusal(config, topo):
        p.error(refusal)
    return config


def describe(result: AllReduceResult) -> str:
    """The run in a few lines and a table of links."""
    c, link = result.config, result.config.link
    goodput = result.goodput_bps
    loss = f"bursty loss {link.loss}" if isinstance(link.loss, BurstLoss) else f"loss {link.loss:g}"
    jobs = len({job for job, _rank, _host in result.workers})
    bound = lossless_time(c)
    lines = [
        f"ina sim: {len(result.workers)} workers in {jobs} job(s) x {c.size} {c.dtype} (E={c.elems}, {c.bits}-bit lanes, window "
        f"{c.window}, {c.policy}), {c.topo} at {format_rate(link.rate)}, {format_seconds(link.delay)} per link, "
        f"queues {link.queue:,.0f} B, {loss}, seed {c.seed}"
        + (f", slow host {c.slow_host}" if c.slow_host else ""),
        f"communication time  {format_seconds(result.communication_s)} simulated "
        + (
            "(no lossless bound off the star, where links are shared)"
            if bound is None
            else f"(lossless bound {format_seconds(bound)}"
            + (
                ""
                if window_covers_path(c)
                else "; the window does not cover the path, so the link is not the limit"
            )
            + ")"
        ),
        f"goodput per worker  {format_rate(min(goodput))} min, {format_rate(max(goodput))} max",
        f"retransmissions     {sum(result.retransmissions)} ({sum(result.packets_sent)} packets sent by the workers)",
        f"result              {'verified' if result.verified else 'WRONG'}"
        + (
            f" (max abs error {result.max_abs_error:.3g})"
            if c.dtype != "int32"
            else " (every sum bit-exact)"
        ),
        "",
        f"{'link':<10} {'dir':<4} {'frames':>9} {'bytes':>12} {'dropped':>8} {'lost':>6} {'ecn':>6} {'peak queue B':>12}",
    ]
    for name, up, down in result.links:
        for direction, s in (("up", up), ("down", down)):
            lines.append(
                f"{name:<10} {direction:<4} {s.frames:>9} {s.bytes:>12} {s.dropped:>8} {s.lost:>6} "
                f"{s.marked:>6} {s.peak_queue:>12}"
            )
    rate = result.arrivals / result.wall_run_s if result.wall_run_s else 0.0
    lines.append("")
    for name, stats in result.switch.items():
        for job, counts in sorted(stats.get("jobs", {}).items()):
            lines.append(
                f"switch {name:<6} job {job:<3} " + ", ".join(f"{k} {v}" for k, v in counts.items())
            )
    lines += [
        f"wall                {result.wall_run_s:.3f} s simulating (+{result.wall_setup_s:.3f} s setting up), "
        f"{result.arrivals} packet arrivals, {rate:,.0f} arrivals per wall second"
    ]
    return "\n".join(lines)


def run_compare(
    p: argparse.ArgumentParser, args: argparse.Namespace, config: AllReduceConfig
) -> int:
    """`--compare`: the switch path and the baselines named, side by side (and in --json)."""
    problem = compare.refusal(config, args.compare)
    if problem:
        p.error(f"argument --compare: {problem}")
    try:
        transport = (
            dataclasses.replace(ROCE, mtu=args.mtu)
            if args.ring_transport == "roce"
            else ring.TRANSPORTS["tcp"]
        )
        result = output.compare_with_output(config, args, transport)
    except OSError as err:
        print(f"ina sim: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
        return 1
    except (WorkerError, TransportError) as err:
        print(f"ina sim: the all-reduce failed: {err}", file=sys.stderr)
        return 1
    print(describe(result.results["switch"]))
    print()
    print(compare.describe(result))
    if args.json:
        try:
            Path(args.json).write_text(
                json.dumps(compare.report(result, git_revision()), indent=2) + "\n"
            )
        except OSError as err:
            print(f"ina sim: cannot write {args.json}: {err.strerror}", file=sys.stderr)
            return 1
        print(f"wrote {args.json}")
    return 0 if compare.verified(result) else 1


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    keep_freed_memory()  # every simulated all-reduce's buffers reuse the last one's pages
    if args.sweep or args.parallel or args.dask or args.sweep_plot:
        return sweep.command(p, args, config_from)
    config = config_from(p, args)
    workload = workload_cli.run(p, args, config)
    if workload is not None:
        return workload
    if args.compare:
        return run_compare(p, args, config)
    try:
        result = output.simulate_with_output(config, args)
    except OSError as err:
        print(f"ina sim: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
        return 1
    except WorkerError as err:
        print(f"ina sim: the all-reduce failed: {err}", file=sys.stderr)
        return 1
    except MemoryError:
        print(
            f"ina sim: --size {config.size} x --workers {config.workers} needs more memory than this machine has",
            file=sys.stderr,
        )
        return 1
    print(describe(result))
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(report(result, git_revision()), indent=2) + "\n")
        except OSError as err:
            print(f"ina sim: cannot write {args.json}: {err.strerror}", file=sys.stderr)
            return 1
        print(f"wrote {args.json}")
    return 0 if result.verified else 1
