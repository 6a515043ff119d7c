"""One training worker on one host: `python -m ina.train.worker_main`, started by `ina train`.

It trains its shard of every global batch, all-reduces each gradient through `Worker` (to the
switch, or to the parameter server that speaks the switch's protocol) or, with --ring, through a
ring all-reduce over TCP between the worker hosts, and prints one JSON line per
epoch, then a last one with its history and a digest of its final weights, so the parent can follow
progress and check that every worker ended with the same model. With --replay it replays a real
model's iterations instead (train/replay.py): one line per iteration, the digest of the last sums. When the all-reduce cannot finish
(after --max-retries retransmissions, a bounded wait; the ring: --ring-timeout) it exits 1 naming
the aggregator (or the ring neighbour) and the job.
"""

import argparse
import hashlib
import json
import sys
from dataclasses import asdict

from ina.args import float_range, int_choice, int_range, ipv4_address
from ina.hosts.compute import ComputeModel, add_compute_arguments, start_together
from ina.hosts.heap import keep_freed_memory
from ina.hosts.ring import PORT as RING_PORT
from ina.hosts.ring import Ring, RingError
from ina.hosts.worker import Worker, WorkerError
from ina.p4src.protocol import (
    DEFAULT_ELEMS,
    ELEMS_CHOICES,
    EPOCH_MAX,
    MAX_JOBS,
    MAX_SLOTS,
    MAX_WORKERS,
)
from ina.train.data import load
from ina.train.feedback import ErrorFeedback
from ina.train.options import (
    add_lanes_arguments,
    add_replay_arguments,
    add_training_arguments,
    config_from,
    replay_from,
)
from ina.train.replay import replay
from ina.train.sgd import train


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ina.train.worker_main",
        description="Train one data-parallel worker through an ina switch.",
    )
    p.add_argument("--job", type=int_range(0, MAX_JOBS - 1), required=True)
    p.add_argument("--rank", type=int_range(0, MAX_WORKERS - 1), required=True)
    p.add_argument("--workers", type=int_range(1, MAX_WORKERS), required=True)
    p.add_argument("--epoch", type=int_range(1, EPOCH_MAX), required=True, help="the job's epoch")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--switch", type=ipv4_address, help="the aggregator's IP")
    where.add_argument(
        "--ring", type=ipv4_list, help="every worker's IP by rank: ring all-reduce over TCP"
    )
    p.add_argument(
        "--ring-timeout",
        type=float_range(0.0, 600.0, lo_open=True),
        default=10.0,
        help="seconds a ring neighbour may take to connect or answer",
    )
    p.add_argument("--aggregator", default="the switch", help="what --switch is, for messages")
    p.add_argument("--elems", type=int_choice(ELEMS_CHOICES), default=DEFAULT_ELEMS)
    add_lanes_arguments(p)
    p.add_argument("--window", type=int_range(1, MAX_SLOTS), default=64)
    p.add_argument("--timeout", type=float_range(0.0, 60.0, lo_open=True), default=0.05)
    p.add_argument("--max-retries", type=int_range(0), default=6)
    p.add_argument(
        "--staleness",
        type=int_range(0, MAX_SLOTS - 1),
        default=0,
        help="the job's stale:S: pipeline up to S + 1 all-reduces, each update at most S iterations late",
    )
    add_training_arguments(p)
    add_replay_arguments(p)
    add_compute_arguments(p)
    return p


def ipv4_list(text: str) -> list[str]:
    return [ipv4_address(ip) for ip in text.split(",")]


def connect(args: argparse.Namespace) -> Worker | Ring:
    """The all-reduce this worker uses: the ring between the workers, or `Worker` to the aggregator."""
    if args.ring:
        if len(args.ring) != args.workers:
            raise ValueError(f"--ring names {len(args.ring)} workers, --workers is {args.workers}")
        return Ring(args.rank, [(ip, RING_PORT) for ip in args.ring], timeout=args.ring_timeout)
    worker = Worker(
        args.job,
        args.rank,
        args.workers,
        args.switch,
        elems=args.elems,
        window=args.window,
        timeout=args.timeout,
        max_retries=args.max_retries,
        epoch=args.epoch,
        staleness=args.staleness,
        bits=args.bits,
    )
    worker.start()  # its I/O thread set up before the start barrier
    return worker


def counts_of(worker: Worker | Ring):
    """How many gradients each element of the worker's last sum holds: the switch's RESULTs say so
    per chunk (fewer than n under a quorum or timeout); a ring always sums all n (None)."""
    if not isinstance(worker, Worker):
        return None
    return lambda shape: worker.contributors.element_counts(shape)


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    config = config_from(args)
    keep_freed_memory()  # every all-reduce's buffers reuse the last one's pages
    try:
        worker = connect(args)
    except (WorkerError, RingError, ValueError) as err:
        print(f"ina train: worker {args.rank} of job {args.job}: {err}", file=sys.stderr)
        return 1
    data = None if args.replay else load(args.dataset, config.seed)
    if args.start_barrier:
        start_together(args.rank)

    def report(record: object) -> None:
        emit({"rank": args.rank, **asdict(record)})

    try:
        if args.replay:
            history, digest = replay(
                replay_from(args), args.rank, worker.allreduce, report, worker.allreduce_many
            )
        else:
            compute = ComputeModel(
                args.compute_ms / 1e3, args.slowdown, args.delay_dist, config.seed, args.rank
            )
            pipelined = (
                {"allreduce_async": worker.allreduce_async, "staleness": args.staleness}
                if args.staleness
                else {}
            )
            model, history = train(
                config,
                data,
                args.rank,
                args.workers,
                worker.allreduce,
                report,
                counts=counts_of(worker),
                compute=compute,
                feedback=ErrorFeedback(args.elems, args.workers, args.bits)
                if args.error_feedback
                else None,
                **pipelined,
            )
            digest = hashlib.sha256(model.params.tobytes()).hexdigest()
    except WorkerError as err:
        print(
            f"ina train: worker {args.rank} of job {args.job} lost {args.aggregator} ({args.switch}): {err}",
            file=sys.stderr,
        )
        return 1
    except RingError as err:
        print(f"ina train: worker {args.rank} of job {args.job}: {err}", file=sys.stderr)
        return 1
    finally:
        worker.close()
    stats = (
        asdict(worker.stats) if isinstance(worker, Worker) else None
    )  # the switch's or server's protocol
    entered = worker.share.fraction if isinstance(worker, Worker) else 1.0  # a ring sums every rank
    emit(
        {
            "rank": args.rank,
            "history": history.as_dict(),
            "weights_sha256": digest,
            "stats": stats,
            "contributions_entered": round(entered, 6),
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
