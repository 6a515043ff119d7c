"""`ina train`: data-parallel SGD in Mininet with every gradient all-reduced through the switch (or
the host parameter server, or a ring between the hosts), compared with a single-process reference of the same model, epochs and
global batch. With --replay it replays a real model's iterations instead (DDP buckets all-reduced
for real, compute emulated). Writes train.json and train.png to the run directory."""

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from mininet.link import TCIntf

from ina.args import float_range, int_choice, int_range, parsed_by
from ina.hosts.compute import DelayDistribution, parse_straggler, straggler_refusal
from ina.p4src.protocol import DEFAULT_ELEMS, ELEMS_CHOICES, MAX_SLOTS, MAX_WORKERS, SYNC, Policy
from ina.topologies import lock
from ina.topologies.lock import MachineBusy
from ina.train import replay_report, report
from ina.train.data import Dataset, load
from ina.train.options import (
    add_lanes_arguments,
    add_replay_arguments,
    add_training_arguments,
    config_from,
    hidden_refusal,
    replay_from,
)
from ina.train.progress import EpochProgress
from ina.train.runner import AGGREGATIONS, TrainError, TrainOptions, run
from ina.train.sgd import Config, check, train


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ina train", description=__doc__)
    add_training_arguments(p)
    add_replay_arguments(p)
    p.add_argument(
        "--bw",
        type=float_range(0.0, TCIntf.bwParamMax, lo_open=True),
        help="limit every link to this many Mbit/s (TCLink, which ignores more than "
        f"{TCIntf.bwParamMax}), so the network is the bottleneck",
    )
    p.add_argument("--workers", type=int_range(1, MAX_WORKERS), default=4, help="worker hosts")
    p.add_argument(
        "--aggregation",
        choices=AGGREGATIONS,
        default="switch",
        help="switch: in-network; ps: the host parameter server on one more host; "
        "ring: ring all-reduce over TCP between the workers (what NCCL and Gloo do)",
    )
    p.add_argument(
        "--target-accuracy",
        type=float_range(0.0, 1.0, lo_open=True),
        help="test accuracy to time (default: the reference's final accuracy less 1 point)",
    )
    p.add_argument(
        "--elems",
        type=int_choice(ELEMS_CHOICES),
        default=DEFAULT_ELEMS,
        help="elements per packet",
    )
    add_lanes_arguments(p)
    p.add_argument("--window", type=int_range(1, MAX_SLOTS), default=64, help="the job's slots")
    p.add_argument(
        "--timeout",
        type=float_range(0.0, 60.0, lo_open=True),
        default=0.05,
        help="a worker's first retransmission timer, seconds",
    )
    p.add_argument(
        "--max-retries",
        type=int_range(0),
        default=6,
        help="a worker that gets no answer after this many retransmissions fails the run",
    )
    p.add_argument(
        "--time-limit", type=float_range(0.0, lo_open=True), default=600.0, help="seconds"
    )
    p.add_argument("--out", help="run directory (default: runs/train-<time>)")
    p.add_argument(
        "--policy",
        type=parsed_by(Policy.parse),
        default=SYNC,
        metavar="POLICY",
        help="the job's completion policy: sync (default), quorum:K, timeout:T[us|ms|s], "
        "stale:S (docs/protocol.md); each gradient is averaged over the workers its sum holds; "
        "under stale:S each update is applied at most S iterations late",
    )
    p.add_argument(
        "--compute-ms",
        type=float_range(0.0, 3.6e6),
        default=0.0,
        help="emulated compute (a sleep) added to every iteration, in ms",
    )
    p.add_argument(
        "--straggler",
        type=parsed_by(parse_straggler),
        action="append",
        default=[],
        metavar="HOST:Fx",
        help="slow this host's --compute-ms by factor F (e.g. h4:3x); repeatable",
    )
    p.add_argument(
        "--straggler-dist",
        type=parsed_by(DelayDistribution.parse),
        metavar="DIST",
        help="extra compute per iteration on every host, seeded: exp:MEAN, uniform:MAX, pareto:MIN,ALPHA",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    config = config_from(args)
    opts = TrainOptions(
        config,
        args.dataset,
        args.workers,
        args.aggregation,
        args.elems,
        bits=args.bits,
        error_feedback=args.error_feedback,
        window=args.window,
        timeout=args.timeout,
        max_retries=args.max_retries,
        time_limit=args.time_limit,
        run_dir=args.out or f"runs/train-{time.strftime('%Y%m%d-%H%M%S')}",
        replay=replay_from(args) if args.replay else None,
        bw=args.bw,
        policy=args.policy,
        compute_ms=args.compute_ms,
        stragglers=dict(args.straggler),
        straggler_dist=args.straggler_dist and str(args.straggler_dist),
    )
    problem = straggler_refusal(opts.stragglers, opts.compute_ms)
    if problem:
        p.error(problem)
    if args.policy.staleness and args.window <= args.policy.staleness:
        p.error(
            f"argument --policy: stale:{args.policy.staleness} splits the job's slots into "
            f"{args.policy.staleness + 1} groups; --window {args.window} has too few"
        )
    if args.policy != SYNC and args.aggregation != "switch":
        p.error(
            f"argument --policy: policies are the switch's; --aggregation {args.aggregation} is always sync"
        )
    if (args.bits != 32 or args.error_feedback) and args.aggregation != "switch":
        p.error(
            "argument --bits/--error-feedback: lanes and their residuals are the switch's; "
            f"--aggregation {args.aggregation} has none"
        )
    if args.error_feedback and args.replay:
        p.error("argument --error-feedback: a replay sends no gradients to carry a residual of")
    data = None if opts.replay else load(args.dataset, config.seed)
    if data is not None:
        try:
            check(config, data, args.workers)
        except ValueError as err:
            p.error(f"argument --batch: {err}")
        problem = hidden_refusal(config, data, args.workers)
        if problem:
            p.error(problem)
    try:  # now, not after the run, when the results would have nowhere to go
        Path(opts.run_dir).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        p.error(f"argument --out: cannot create {opts.run_dir}: {err.strerror}")
    try:  # held before the reference trains, so a busy machine is said at once; root: run() says it
        with lock.machine() if os.geteuid() == 0 else contextlib.nullcontext():
            return replay(opts) if opts.replay else train_and_compare(args, opts, config, data)
    except MachineBusy as err:
        print(f"ina train: {err}", file=sys.stderr)
        return 2


def train_and_compare(
    args: argparse.Namespace, opts: TrainOptions, config: Config, data: Dataset
) -> int:
    """The reference in one process, then the run in Mininet; JSON, PNG and a summary of both."""
    _, reference = train(config, data)
    target = args.target_accuracy or reference.epochs[-1].test_accuracy - 0.01
    print(
        f"[ina train] reference (one process): test accuracy {reference.epochs[-1].test_accuracy:.2%} "
        f"after {config.epochs} epochs",
        flush=True,
    )
    progress = EpochProgress(config.epochs)
    try:
        finals = run(
            opts, lambda r: progress.update(r["epoch"], r["loss"], r["test_accuracy"], r["wall_s"])
        )
    except TrainError as err:
        print(f"ina train: {err}", file=sys.stderr)
        return 1
    finally:
        progress.close()
    if len(finals) != args.workers:
        print(
            f"ina train: {args.workers - len(finals)} worker(s) ended without a report",
            file=sys.stderr,
        )
        return 1
    summary = report.summarise(opts, reference, finals, target)
    out = Path(opts.run_dir)
    (out / "train.json").write_text(json.dumps(summary, indent=2))
    report.plot(summary, out / "train.png")
    print(report.text(summary))
    print(f"[ina train] wrote {out / 'train.json'} and {out / 'train.png'}")
    return 0 if summary["weights_identical"] else 1


def replay(opts: TrainOptions) -> int:
    """Replay the workload in Mininet, one line per iteration of rank 0; JSON, PNG and a summary."""

    def line(r: dict) -> None:
        print(
            f"[ina train] iteration {r['iteration']}/{opts.replay.iterations}: {1000 * r['compute_s']:.2f} ms "
            f"compute + {1000 * r['comm_s']:.2f} ms communication",
            flush=True,
        )

    measured: list[dict] = []
    try:
        finals = run(opts, line, measured.append)
    except TrainError as err:
        print(f"ina train: {err}", file=sys.stderr)
        return 1
    if len(finals) != opts.workers:
        print(
            f"ina train: {opts.workers - len(finals)} worker(s) ended without a report",
            file=sys.stderr,
        )
        return 1
    summary = replay_report.summarise(opts, finals, measured[0])
    out = Path(opts.run_dir)
    (out / "train.json").write_text(json.dumps(summary, indent=2))
    replay_report.plot(summary, out / "train.png")
    print(replay_report.text(summary))
    print(f"[ina train] wrote {out / 'train.json'} and {out / 'train.png'}")
    return 0 if summary["sums_identical"] else 1
