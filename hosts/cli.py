"""`ina worker`: one worker of a job (or `--baseline-server`, the host-only parameter server)."""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from ina.args import (
    float_range,
    int_choice,
    int_range,
    ipv4_address,
    ipv4_port,
    memory_refusal,
    probability,
    udp_port,
)
from ina.hosts.compute import ComputeModel, add_compute_arguments, start_together
from ina.hosts.core import Contributors
from ina.hosts.heap import keep_freed_memory
from ina.hosts.iterations import run_iterations
from ina.hosts.members import Members, save_sums
from ina.hosts.quantize import BIAS, chunk_exponents, error_bound
from ina.hosts.worker import Worker, WorkerError
from ina.p4src.protocol import (
    DEFAULT_ELEMS,
    ELEMS_CHOICES,
    EPOCH_MAX,
    LANE_BITS_CHOICES,
    MAX_JOBS,
    MAX_SLOTS,
    MAX_STALENESS,
    MAX_TREE_WORKERS,
    MAX_WORKERS,
    UDP_PORT,
    lane_values,
)


def make_array(seed: int, rank: int, size: int, dtype: str, iteration: int = 0) -> np.ndarray:
    """The array rank `rank` contributes in `iteration` (each iteration its own); any worker can
    rebuild every other rank's from the seed."""
    rng = np.random.default_rng(
        seed * 1000 + rank if iteration == 0 else (seed * 1000 + rank, iteration)
    )
    if dtype == "int32":
        return rng.integers(-(2**20), 2**20, size, dtype=np.int32)
    return rng.standard_normal(size).astype(dtype)


def expected_sum(
    seed: int,
    n: int,
    size: int,
    dtype: str,
    counted: Contributors | None = None,
    iteration: int = 0,
    members: Members | None = None,
) -> np.ndarray:
    """The sum of every rank's array, or, per chunk `counted` has a sum of, of the ranks in it:
    those `members` names (the job's, derived from every worker's RESULTs: hosts/members.py), else
    all of them where its count is the job's and those its bitmap names where not (a bitmap names
    ranks at the worker's switch: exact for a single-switch job, for a hierarchical one only where
    every worker is in)."""
    total = np.zeros(size, dtype=np.int64 if dtype == "int32" else np.float64)
    if counted is not None:
        whole = np.repeat(counted.counts >= n, counted.elems)[:size]
        bitmaps = counted.element_bitmaps((size,))
    for rank in range(n):
        array = make_array(seed, rank, size, dtype, iteration)
        if counted is None:
            total += array
        elif members is not None:
            named = members.in_sum[rank] & (counted.counts > 0)
            total += np.where(np.repeat(named, counted.elems)[:size], array, 0)
        else:
            named = bitmaps >> rank & 1 == 1 if rank < MAX_WORKERS else False
            total += np.where(whole | named, array, 0)
    return total


def verify(
    result: np.ndarray,
    seed: int,
    n: int,
    size: int,
    dtype: str,
    elems: int,
    counted: Contributors | None = None,
    iteration: int = 0,
    bits: int = 32,
    members: Members | None = None,
) -> tuple[bool, float]:
    """Whether `result` is iteration `iteration`'s sum, and its largest element error.
    Bit-exact for int32 (with wraparound); within the block-floating-point bound for floats in
    `bits`-bit lanes (`elems` values per chunk).
    Under a quorum or timeout policy the expected sum is, per chunk, that of the ranks counted, and a
    float contribution may be clipped to the exponent the previous use agreed on (docs/protocol.md):
    at most to the smallest of the ranks' own exponents, which bounds what clipping can take.
    `members` (hosts/members.py) names the ranks job-wide; a chunk they leave unresolved fails."""
    exact = expected_sum(seed, n, size, dtype, counted, iteration, members)
    settled = (
        members is None or counted is None or not (members.unresolved & (counted.counts > 0)).any()
    )
    if dtype == "int32":
        wrapped = (exact + 2**31) % 2**32 - 2**31
        error = np.abs(result.astype(np.int64) - wrapped)
        return settled and bool(np.array_equal(result, wrapped)), float(error.max(initial=0))
    arrays = np.stack([make_array(seed, r, size, dtype, iteration) for r in range(n)])
    pad = -size % elems
    chunks = np.pad(np.abs(arrays).max(axis=0), (0, pad)).reshape(-1, elems)
    bounds = np.array([error_bound(int(e), n, bits) for e in chunk_exponents(chunks)])
    allowed = np.repeat(bounds, elems)[:size] + np.abs(exact) * float(np.finfo(dtype).eps) * 2
    if counted is not None and np.any(counted.counts < n):
        own = chunk_exponents(
            np.pad(np.abs(arrays), ((0, 0), (0, pad))).reshape(n, -1, elems).reshape(-1, elems)
        )
        floor = np.where(own > 0, 2.0 ** (own - BIAS), 0.0).reshape(n, -1).min(axis=0)  # per chunk
        ranks = (
            np.repeat(members.in_sum, elems, axis=1)[:, :size]
            if members is not None
            else (counted.element_bitmaps((size,))[None, :] >> np.arange(n)[:, None] & 1).astype(
                bool
            )
        )
        excess = np.maximum(np.abs(arrays) - np.repeat(floor, elems)[None, :size], 0.0)
        allowed += np.where(ranks, excess, 0.0).sum(axis=0)
    error = np.abs(result.astype(np.float64) - exact)
    return settled and bool(np.all(error <= allowed)), float(error.max(initial=0.0))


MAX_TIMEOUT_S = 60.0  # the first retransmission timer; poll() takes it in int milliseconds
# Peak bytes a worker holds per element of --size: its array, the packets, the sum and float64
# working copies (measured with the switch in process: 27 for int32 to 49 for float64); --verify
# adds as much again plus every rank's array (8 bytes each at most).
BYTES_PER_ELEMENT = 64
VERIFY_BYTES_PER_ELEMENT = 64
VERIFY_BYTES_PER_RANK = 8


def size_refusal(size: int, workers: int, verify: bool, processes: int = 1) -> str | None:
    """The error for a --size whose arrays, in `processes` workers of a job of `workers` ranks, do
    not fit ina.args.MEMORY_BUDGET; None when they do."""
    per_element = BYTES_PER_ELEMENT + (
        VERIFY_BYTES_PER_ELEMENT + VERIFY_BYTES_PER_RANK * workers if verify else 0
    )
    unit = "element" + (f" over {processes} workers" if processes > 1 else "")
    return memory_refusal("--size", size, per_element * processes, unit)


def add_bits_argument(p: argparse.ArgumentParser) -> None:
    """--bits, the switch's lane width, as every command that builds or joins a switch takes it."""
    p.add_argument(
        "--bits",
        type=int_choice(LANE_BITS_CHOICES),
        default=32,
        help="bits per value in the switch's lanes (-DLANE_BITS; below 32 floats only): each "
        "packet carries ELEMS x 32 / bits values",
    )


def bits_refusal(bits: int, dtype: str) -> str | None:
    """The error for `bits`-bit lanes asked to sum `dtype` arrays; None when they can."""
    if bits != 32 and dtype == "int32":
        return f"argument --bits: {bits}-bit lanes sum floats only: add --dtype float32"
    return None


class Outcome:
    """A worker's all-reduces, one repetition at a time: each with its own arrays (make_array's
    iteration), each verified (with --verify) as it completes; chunks whose sum lacks ranks counted."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.failed: list[int] = []  # the repetitions whose sum was wrong
        self.max_error = 0.0
        self.partial = self.missing = 0
        # the main thread's CPU seconds making arrays and checking or saving sums: not the
        # all-reduce's, which `allreduce_cpu_s` reports (the I/O thread's run on meanwhile)
        self.own_cpu_s = 0.0

    def array(self, iteration: int) -> np.ndarray:
        a = self.args
        cpu = time.thread_time()
        array = make_array(a.seed, a.rank, a.size, a.dtype, iteration)
        self.own_cpu_s += time.thread_time() - cpu
        return array

    def add(self, iteration: int, reduced: tuple[np.ndarray, Contributors]) -> None:
        cpu = time.thread_time()
        self._add(iteration, reduced)
        self.own_cpu_s += time.thread_time() - cpu

    def _add(self, iteration: int, reduced: tuple[np.ndarray, Contributors]) -> None:
        result, counted = reduced
        a = self.args
        self.partial += int(np.count_nonzero(counted.counts < a.workers))
        self.missing += len(counted.missing)
        if a.save_sums:
            save_sums(a.save_sums, a.rank, iteration, result, counted)
        if a.verify:
            ok, error = verify(
                result,
                a.seed,
                a.workers,
                a.size,
                a.dtype,
                lane_values(a.elems, a.bits),
                counted,
                iteration,
                a.bits,
            )
            self.max_error = max(self.max_error, error)
            if not ok:
                self.failed.append(iteration)

    @property
    def ok(self) -> bool:
        return not self.failed

    def mismatch(self) -> str:
        which = ", ".join(map(str, self.failed[:10])) + (" ..." if len(self.failed) > 10 else "")
        return (
            f"the sum of {len(self.failed)} of {self.args.repeat} all-reduce(s) does not match the expected sum "
            f"(repetition {which}; max error {self.max_error:g})"
        )


def build_parser() -> argparse.ArgumentParser:
    """Every limit comes from the protocol (p4src/protocol.py), so a bad value never reaches Worker."""
    p = argparse.ArgumentParser(
        prog="ina worker", description="Run one all-reduce worker through an ina switch."
    )
    p.add_argument("--job", type=int_range(0, MAX_JOBS - 1), required=True)
    p.add_argument(
        "--rank",
        type=int_range(0, MAX_TREE_WORKERS - 1),
        help="this worker's rank, below --workers",
    )
    p.add_argument(
        "--workers",
        type=int_range(1, MAX_TREE_WORKERS),
        required=True,
        help=f"the job's workers (above {MAX_WORKERS}: a hierarchical job, with --wire-rank and "
        "--leaf-workers)",
    )
    p.add_argument(
        "--wire-rank",
        type=int_range(0, MAX_WORKERS - 1),
        help="its rank at the switch it sends to, when that differs from --rank (a hierarchical "
        "job's leaf: `ina ctl show-tree`); --rank then only seeds and checks the data",
    )
    p.add_argument(
        "--leaf-workers",
        type=int_range(1, MAX_WORKERS),
        help="the workers of the switch it sends to, when fewer than --workers (a hierarchical "
        "job's leaf); --workers then only sets the scale and checks the data",
    )
    p.add_argument(
        "--epoch",
        type=int_range(1, EPOCH_MAX),
        help="the job's epoch the controller installed (`ina ctl show-jobs`; default: $INA_EPOCH)",
    )
    p.add_argument("--switch", type=ipv4_address, help="the switch's IP (or the baseline server's)")
    p.add_argument(
        "--switch-port",
        type=udp_port,
        default=UDP_PORT,
        help="the UDP port --switch answers on (default: the protocol's, %(default)s); a job "
        "preempted onto its host fallback server addresses that server's",
    )
    p.add_argument("--local-ip", type=ipv4_address)
    p.add_argument("--udp-port", type=udp_port, default=UDP_PORT)
    p.add_argument("--size", type=int_range(1), default=1 << 16, help="elements per all-reduce")
    p.add_argument("--dtype", choices=["int32", "float32", "float64"], default="int32")
    p.add_argument("--seed", type=int_range(0), default=1)
    p.add_argument(
        "--elems",
        type=int_choice(ELEMS_CHOICES),
        default=DEFAULT_ELEMS,
        help="elements per packet (the switch's ELEMS)",
    )
    add_bits_argument(p)
    p.add_argument(
        "--window",
        type=int_range(1, MAX_SLOTS),
        default=256,
        help="slots in flight (at most the job's slots)",
    )
    p.add_argument(
        "--timeout",
        type=float_range(0.0, MAX_TIMEOUT_S, lo_open=True),
        default=0.01,
        help="the retransmission timeout until the first RTT sample; afterwards it follows the measured RTT",
    )
    p.add_argument(
        "--max-retries",
        type=int_range(0),
        default=12,
        help="give up after this many timeouts of one packet; fast resends do not count",
    )
    p.add_argument(
        "--repeat",
        type=int_range(1),
        default=1,
        help="all-reduces (iterations), each after its compute",
    )
    add_compute_arguments(p)
    p.add_argument(
        "--staleness",
        type=int_range(0, MAX_STALENESS),
        default=0,
        help="the job's bounded staleness (policy stale:S): up to S + 1 all-reduces in flight",
    )
    p.add_argument("--verify", action="store_true")
    p.add_argument(
        "--save-sums",
        type=Path,
        metavar="DIR",
        help="write each all-reduce's sum and its RESULTs' counts and bitmaps to DIR (an existing "
        "directory), for a check of the job's sums rank by rank once every worker is done (`ina "
        "run` does it for hierarchical jobs, whose bitmaps name ranks at a leaf: hosts/members.py)",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--baseline-server", action="store_true", help="serve as the host-only parameter server"
    )
    p.add_argument(
        "--fallback-server",
        action="store_true",
        help="serve as the job's host fallback server (best effort: sums the chunks the switch "
        "sends on; docs/protocol.md)",
    )
    p.add_argument(
        "--fallback",
        type=ipv4_port,
        metavar="IPV4:PORT",
        help="the job's host fallback server: its answers are taken as the switch's (best effort)",
    )
    p.add_argument(
        "--loss",
        type=probability,
        default=0.0,
        help="baseline server: drop this fraction of packets",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.baseline_server or args.fallback_server:
        from ina.hosts.baseline import ParameterServer

        mode = "--fallback-server" if args.fallback_server else "--baseline-server"
        if args.baseline_server and args.fallback_server:
            p.error("--baseline-server and --fallback-server are two servers: pick one")
        if args.epoch is None:
            p.error(f"--epoch is required for {mode}")
        try:
            server = ParameterServer(
                args.job,
                args.workers,
                args.epoch,
                args.elems,
                args.local_ip or "",
                args.udp_port,
                args.loss,
                fallback=args.fallback_server,
            )
        except OSError as err:
            print(
                f"ina worker: cannot serve on UDP port {args.udp_port}: {err.strerror}",
                file=sys.stderr,
            )
            return 1
        server.serve_forever()
        return 0
    if args.rank is None or args.switch is None:
        p.error("--rank and --switch are required for a worker")
    if args.rank >= args.workers:
        p.error(
            f"argument --rank: expected an integer in 0..{args.workers - 1} (below --workers), got {args.rank}"
        )
    leaf_workers = args.workers if args.leaf_workers is None else args.leaf_workers
    wire_rank = args.rank if args.wire_rank is None else args.wire_rank
    if leaf_workers > MAX_WORKERS:
        p.error(
            f"argument --leaf-workers: a switch sums 1..{MAX_WORKERS} workers; --workers "
            f"{args.workers} (a hierarchical job) needs its leaf's count here, and --wire-rank"
        )
    if leaf_workers > args.workers:
        p.error(
            f"argument --leaf-workers: expected an integer in 1..{args.workers} (at most --workers), "
            f"got {leaf_workers}"
        )
    if wire_rank >= leaf_workers:
        p.error(
            f"argument --wire-rank: expected an integer in 0..{leaf_workers - 1} (below the leaf's "
            f"workers), got {wire_rank}"
        )
    problem = size_refusal(args.size, args.workers, args.verify) or bits_refusal(
        args.bits, args.dtype
    )
    if problem:
        p.error(problem)
    if args.save_sums and not args.save_sums.is_dir():
        p.error(f"argument --save-sums: {args.save_sums} is not a directory")
    if args.staleness >= args.window:
        p.error(
            f"argument --staleness: expected an integer in 0..{args.window - 1} (below --window: every one of "
            f"the S + 1 groups needs a slot), got {args.staleness}"
        )
    keep_freed_memory()  # every all-reduce's buffers reuse the last one's pages
    try:
        worker = Worker(
            args.job,
            wire_rank,
            leaf_workers,
            args.switch,
            args.local_ip,
            args.udp_port,
            args.elems,
            args.window,
            args.timeout,
            args.max_retries,
            switch_port=args.switch_port,
            epoch=args.epoch,
            staleness=args.staleness,
            job_workers=args.workers,
            fallback=args.fallback,
            bits=args.bits,
        )
        worker.start()  # its I/O thread set up now, before the start: the first call only sends
        outcome = Outcome(args)
        first = outcome.array(0)  # made before the start: a released worker only sends
        if args.start_barrier:
            start_together(args.rank)
        # the monotonic clock is the machine's, shared by every Mininet host: a runner compares
        # its workers' starts with it (how far apart they began: `ina bench hier-emu`)
        started, cpu, own = time.monotonic(), time.process_time(), outcome.own_cpu_s
        compute = ComputeModel(
            args.compute_ms / 1e3, args.slowdown, args.delay_dist, args.seed, args.rank
        )
        iterations = run_iterations(
            worker.allreduce_async,
            lambda iteration: first if iteration == 0 else outcome.array(iteration),
            args.repeat,
            compute,
            outcome.add,
            args.staleness,
        )
        cpu = time.process_time() - cpu - (outcome.own_cpu_s - own)
    except WorkerError as err:
        print(f"ina worker: {err}", file=sys.stderr)
        return 1
    except MemoryError:  # within the budget, but this machine has less
        print(
            f"ina worker: --size {args.size} needs more memory than this machine has",
            file=sys.stderr,
        )
        return 1
    s = worker.stats
    report = {
        "job": args.job,
        "rank": args.rank,
        "bits": args.bits,
        "elements": s.elements,
        "elapsed_s": round(s.elapsed, 6),
        "started_monotonic_s": round(started, 6),
        "goodput_elements_per_s": round(s.goodput),
        "goodput_gbps": round(s.goodput * 32 / 1e9, 6),
        # every thread's CPU seconds from the start to the last sum, less the arrays and checks
        "allreduce_cpu_s": round(cpu, 6),
        "packets_sent": s.packets_sent,
        "packets_received": s.packets_received,
        "retransmissions": s.retransmissions,
        "redone": s.redone,
        "timeouts": s.timeouts,
        "spurious": s.spurious,
        "statuses": s.statuses,
        "duplicates": s.duplicates,
        "fallbacks": s.fallbacks,
        "host_share": round(s.fallbacks / (-(-args.size // args.elems) * args.repeat), 6),
        "verified": outcome.ok if args.verify else None,
        "max_abs_error": outcome.max_error,
        "failed_repetitions": outcome.failed,
        "contributions_entered": round(worker.share.fraction, 6),
        "io": worker.io,
        "partial_chunks": outcome.partial,
        "missing_chunks": outcome.missing,
        "iterations": [
            {"compute_s": round(i.compute_s, 6), "allreduce_s": round(i.allreduce_s, 6)}
            for i in iterations
        ],
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"rank {args.rank}: {s.elements} elements in {s.elapsed:.3f} s ({s.goodput / 1e6:.2f} M elem/s), "
            f"{s.packets_sent} sent, {s.retransmissions} retransmitted, {worker.share.fraction:.1%} of its "
            "contributions in the sums" + (f", verified: {outcome.ok}" if args.verify else "")
        )
    if not outcome.ok:
        print(f"ina worker: {outcome.mismatch()}", file=sys.stderr)
        return 1
    return 0
