"""The switch's slot pool under job churn, in virtual time: jobs arrive (sim/churn.py), wait in a
queue until the allocation policy (controller/allocators.py, the controller's own objects) places
them, run, and leave. Hours or days of virtual time take seconds: no packet is simulated, only the
pool.

A job's run time comes from its replayed model (train/workloads.py): an iteration is its compute
plus its gradient's all-reduce at the line rate, and the all-reduce slows by want / got when a job
holds fewer slots than it asked for (the window is the slots). The trace's duration is the run time
with every slot asked for, so it fixes the job's number of iterations.

The queue is first come, first served with backfill: on every arrival and departure the waiting
jobs are tried in arrival order and each that fits starts. A job that could never fit (larger than
the pool, or than a part of a static partition) is refused. With `compact`, a job that does not fit
while enough slots are free in pieces makes the controller compact the pool first
(allocators.plan_compaction): each moved job drains and resumes on its new range, which costs it
one iteration (controller/pool.py's remove + add with a fresh epoch).

With `best_effort` every job has a host fallback server (docs/protocol.md, "Best effort and the
host fallback"): a job that no range fits starts at once on what `allocators.best_effort` gives it
(fewer slots, or a hashed range shared with running jobs) instead of waiting. On a slot that k
running jobs hold, each gets the switch for 1/k of its uses and its server sums the rest (two jobs
on one 8-slot range in the packet-level run, sim/best_effort.py: 48% and 50%), so a job's host
share is the mean of (k - 1) / k over its slots. The server's link takes every worker's share of
the gradient: the all-reduce takes max(want / got, share x workers) times the line-rate time. A
job's share is fixed at its start from the jobs then holding its slots (a job landing later on its
range counts the collision in its own share).
"""

import functools
import itertools
import math
from dataclasses import dataclass, field

from ina.controller.allocators import (
    PoolFull,
    Range,
    allocator,
    best_effort,
    fragmentation,
    free_ranges,
    plan_compaction,
)
from ina.p4src.protocol import MAX_JOBS
from ina.sim.churn import ChurnJob
from ina.sim.events import Simulator
from ina.train.workloads import BYTES_PER_ELEMENT, workload

LINE_RATE_BPS = 100e9
COMPACTING = ("first-fit", "best-fit")  # contiguous policies: compaction keeps their shape


@dataclass(frozen=True)
class PoolOptions:
    pool_size: int = 8192
    allocator: str = "first-fit"
    compact: bool = False
    line_rate_bps: float = LINE_RATE_BPS
    best_effort: bool = False  # every job has a host fallback server: none waits for slots

    @property
    def label(self) -> str:
        return (
            self.allocator
            + ("+compact" if self.compact else "")
            + ("+best-effort" if self.best_effort else "")
        )


@functools.cache
def _model(name: str) -> tuple[float, float]:
    w = workload(name)
    return w.compute_s, w.parameters * BYTES_PER_ELEMENT * 8


def iteration_s(
    model: str,
    got: int,
    want: int,
    line_rate_bps: float = LINE_RATE_BPS,
    host_share: float = 0.0,
    workers: int = 1,
) -> float:
    """One iteration of `model` holding `got` of the `want` slots it asked for, `host_share` of its
    chunks summed by its host fallback server, whose link takes every one of `workers`' share."""
    compute, bits = _model(model)
    return compute + bits / line_rate_bps * max(1.0, want / got, host_share * workers)


def host_share(mine: Range, others: list[Range]) -> float:
    """The share of a job's uses its server sums on `mine`, shared with `others`: the mean over its
    slots of (k - 1) / k, k the jobs holding the slot (each gets the switch 1/k of the time)."""
    ends = sorted(
        {mine.base, mine.end}
        | {min(max(x, mine.base), mine.end) for r in others for x in (r.base, r.end)}
    )
    total = 0.0
    for lo, hi in itertools.pairwise(ends):
        k = 1 + sum(r.base <= lo and hi <= r.end for r in others)
        total += (hi - lo) * (k - 1) / k
    return total / mine.size


@dataclass
class Placed:
    index: int
    job: ChurnJob
    range: Range
    start: float
    end: float = 0.0
    generation: int = 0  # a departure event of an older generation was superseded by a move


@dataclass
class PoolRun:
    options: PoolOptions
    samples: list[tuple[float, int, float, int, int, int]] = field(default_factory=list)
    # (time, slots held, external fragmentation, jobs queued, jobs running, slots asked for by the
    # running jobs: below the held slots by the internal fragmentation of buddy and partition)
    snapshots: list[tuple[float, list[tuple[int, Range]]]] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)
    host_shares: list[tuple[float, float]] = field(
        default_factory=list
    )  # (share, run time) per job
    completions: list[float] = field(default_factory=list)
    refused: int = 0
    queued: int = 0  # jobs that could not start on arrival
    compactions: int = 0
    moves: int = 0

    def summary(self) -> dict:
        """Time-weighted pool figures over the run, per-job figures over the jobs that finished."""
        used = _time_mean(self.samples, 1) / self.options.pool_size
        frag = _time_mean(self.samples, 2)
        jct = sorted(self.completions)
        return {
            "policy": self.options.label,
            "utilisation": used,
            "useful_utilisation": _time_mean(self.samples, 5) / self.options.pool_size,
            "fragmentation": frag,
            "mean_queue": _time_mean(self.samples, 3),
            "queued_jobs": self.queued,
            "refused_jobs": self.refused,
            "finished_jobs": len(jct),
            "mean_wait_s": sum(self.waits) / len(self.waits) if self.waits else 0.0,
            "mean_jct_s": sum(jct) / len(jct) if jct else 0.0,
            "p99_jct_s": jct[min(len(jct) - 1, math.ceil(0.99 * len(jct)) - 1)] if jct else 0.0,
            "compactions": self.compactions,
            "moves": self.moves,
            "host_share": _weighted(self.host_shares),
        }


def _weighted(shares: list[tuple[float, float]]) -> float:
    """The jobs' host shares weighted by their run times: the share of the chunks the hosts summed."""
    time = sum(t for _s, t in shares)
    return sum(s * t for s, t in shares) / time if time else 0.0


def _time_mean(samples: list[tuple], column: int) -> float:
    if len(samples) < 2 or samples[-1][0] <= samples[0][0]:
        return float(samples[-1][column]) if samples else 0.0
    area = sum(a[column] * (b[0] - a[0]) for a, b in itertools.pairwise(samples))
    return area / (samples[-1][0] - samples[0][0])


def simulate_pool(jobs: list[ChurnJob], options: PoolOptions, snapshots: bool = False) -> PoolRun:
    """Run the churn through one pool under one policy; the same jobs give the same run."""
    if options.compact and options.allocator not in COMPACTING:
        raise ValueError(
            f"compaction keeps ranges contiguous, not {options.allocator}'s alignment: "
            f"use it with {' or '.join(COMPACTING)}"
        )
    policy = allocator(options.allocator)
    sim, run = Simulator(), PoolRun(options)
    running: dict[int, Placed] = {}
    waiting: list[int] = []

    def record(now: float) -> None:
        ranges = [p.range for p in running.values()]
        run.samples.append(
            (
                now,
                options.pool_size - sum(g.size for g in free_ranges(ranges, options.pool_size)),
                fragmentation(ranges, options.pool_size),
                len(waiting),
                len(running),
                sum(p.job.slots for p in running.values()),
            )
        )
        if snapshots:
            run.snapshots.append((now, [(i, p.range) for i, p in running.items()]))

    def start(now: float, index: int, placed: Range) -> None:
        job = jobs[index]
        share = host_share(placed, [p.range for p in running.values()])
        full = iteration_s(job.model, job.slots, job.slots, options.line_rate_bps)
        took = job.duration_s * (
            iteration_s(
                job.model, placed.size, job.slots, options.line_rate_bps, share, job.workers
            )
            / full
        )
        run.host_shares.append((share, took))
        running[index] = Placed(index, job, placed, now, now + took)
        run.waits.append(now - job.arrival_s)
        sim.at(now + took, depart, index, 0)

    def compact(now: float) -> None:
        by_base = {p.range.base: p for p in running.values()}
        for old, new in sorted(plan_compaction([p.range for p in running.values()]).items()):
            p = by_base[old]
            p.range = Range(new, p.range.size)
            p.end += iteration_s(p.job.model, p.range.size, p.job.slots, options.line_rate_bps)
            p.generation += 1
            sim.at(p.end, depart, p.index, p.generation)
            run.moves += 1
        run.compactions += 1

    def admit(now: float) -> None:
        changed = True
        for index in list(waiting):
            if changed:  # the pool as it stands, once per placement
                held = [p.range for p in running.values()]
                gaps = free_ranges(held, options.pool_size)
                largest, free = max((g.size for g in gaps), default=0), sum(g.size for g in gaps)
                changed = False
            if len(running) >= MAX_JOBS or (free == 0 and not options.best_effort):
                break
            want = jobs[index].slots
            try:
                if want > (free if options.compact else largest):
                    raise PoolFull("no policy places more than the largest free range")
                placed = policy.place(held, want, options.pool_size)
            except PoolFull:
                if options.best_effort:
                    placed = best_effort(held, want, options.pool_size, index)
                elif options.compact and free >= want:
                    compact(now)
                    placed = policy.place(
                        [p.range for p in running.values()], want, options.pool_size
                    )
                else:
                    continue
            waiting.remove(index)
            start(now, index, placed)
            changed = True

    def arrive(now: float, index: int) -> None:
        if not policy.fits_empty(jobs[index].slots, options.pool_size):
            run.refused += 1
            record(now)
            return
        waiting.append(index)
        admit(now)
        if index in waiting:
            run.queued += 1
        record(now)

    def depart(now: float, index: int, generation: int) -> None:
        p = running.get(index)
        if p is None or p.generation != generation:
            return
        del running[index]
        run.completions.append(now - p.job.arrival_s)
        admit(now)
        record(now)

    for index, job in enumerate(jobs):
        sim.at(job.arrival_s, arrive, index)
    sim.run()
    return run
