"""The switch's slot pool as one resource: its map, and moving, resizing and compacting live jobs.

A job's range changes between iterations only, through the one safe path the epoch mechanism gives
(docs/protocol.md, "Moving a job's range"): the job's workers drain (every slot they used has its
RESULT), the controller removes the job and adds it again on the new range with a fresh epoch that
differs from the old one, and the workers resume as a new run with that epoch. Nothing here writes
a register, so it works wherever `add_job` does.
"""

from dataclasses import dataclass, replace

from ina.controller.aggregation import Aggregation, Fallback, Job, Worker
from ina.controller.allocators import (
    Pinned,
    Range,
    fragmentation,
    free_ranges,
    plan_compaction,
    plan_preemption,
)
from ina.controller.client import ControllerError
from ina.p4src.protocol import SYNC, Policy, new_epoch


def held(jobs: list[Job]) -> dict[int, Range]:
    """Each job's range, by job id."""
    return {j.job_id: Range(j.base, j.num_slots) for j in jobs}


def pool_map(ranges: dict[int, Range], pool_size: int) -> dict:
    """Which job holds which range, the free ranges, and the external fragmentation: what
    `ina ctl show-pool` prints and the churn simulation samples."""
    gaps = free_ranges(ranges.values(), pool_size)
    used = sum(r.size for r in ranges.values())
    return {
        "pool_size": pool_size,
        "used": used,
        "free": pool_size - used,
        "largest_free": max((g.size for g in gaps), default=0),
        "fragmentation": fragmentation(ranges.values(), pool_size),
        "jobs": [
            {"job": job, "base": r.base, "slots": r.size}
            for job, r in sorted(ranges.items(), key=lambda kv: kv[1])
        ],
        "free_ranges": [{"base": g.base, "slots": g.size} for g in gaps],
    }


def _fresh_epoch(old: int) -> int:
    """A new run's epoch unlike `old`: an old run's late UPDATE must never match the new run."""
    epoch = new_epoch()
    while epoch == old:
        epoch = new_epoch()
    return epoch


def _install(agg: Aggregation, job: Job, target: Range, epoch: int) -> Job:
    """Add `job` (its workers, policy, parent and servers) on `target` with `epoch`."""
    return Aggregation(agg.conn, Pinned(target)).add_job(
        job.job_id,
        job.workers,
        target.size,
        epoch,
        job.policy,
        parent=job.parent,
        job_workers=job.job_workers or None,
        fallback=job.fallback,
    )


def _put_back(agg: Aggregation, job: Job) -> Job:
    """Install `job` as it was: undoing a move or a preemption."""
    return _install(agg, job, Range(job.base, job.num_slots), job.epoch)


def move_job(agg: Aggregation, job_id: int, target: Range) -> Job:
    """Put a drained job on `target` (another base, or another size: a resize is a move to the same
    base): remove it, add it there with a fresh epoch unlike the old one. A target that overlaps
    another job or leaves the pool is refused before anything changes; should the add fail, the
    job is put back as it was."""
    jobs = agg.jobs()
    old = next((j for j in jobs if j.job_id == job_id), None)
    if old is None:
        raise ControllerError(f"no job {job_id} on this switch (see: ina ctl show-jobs)")
    others = [r for k, r in held(jobs).items() if k != job_id]
    Pinned(target).place(others, target.size, agg.pool_size)  # PoolFull: nothing changed
    epoch = _fresh_epoch(old.epoch)
    agg.remove_job(job_id)
    try:
        return _install(agg, old, target, epoch)
    except ControllerError:
        _put_back(agg, old)
        raise


def compact(agg: Aggregation) -> dict[int, Job]:
    """Move every job down to close the gaps, lowest first (each move lands on free slots:
    allocators.plan_compaction). Returns the moved jobs by id."""
    ranges = held(agg.jobs())
    by_base = {r.base: job for job, r in ranges.items()}
    moved = {}
    for old_base, new_base in sorted(plan_compaction(list(ranges.values())).items()):
        job = by_base[old_base]
        moved[job] = move_job(agg, job, Range(new_base, ranges[job].size))
    return moved


@dataclass(frozen=True)
class Preemption:
    """What a preemption did. `victim` is the job as it goes on: on its kept range with a fresh
    epoch, or (`on_host`) off the switch, as it was there but for the fresh epoch its run through
    its host fallback server takes (its workers address that server as their aggregator).
    `was` is the victim as it was; `freed` the range left for the new job."""

    victim: Job
    was: Job
    freed: Range
    on_host: bool


def preempt(agg: Aggregation, victims: list[int], want: int) -> Preemption:
    """Make room for a higher-priority job asking `want` slots in a full pool (docs/protocol.md,
    "Preemption"): of the drained `victims` (lower-priority jobs, by id),
    `allocators.plan_preemption` picks one, which is moved onto the lower part of its range with a
    fresh epoch (`move_job`), or, a victim with a host fallback server giving all its slots, is
    removed from the switch to go on through that server. PoolFull, having changed nothing, if no
    victim qualifies."""
    jobs = {j.job_id: j for j in agg.jobs()}
    missing = [v for v in victims if v not in jobs]
    if missing:
        raise ControllerError(f"no job {missing[0]} on this switch (see: ina ctl show-jobs)")
    victim, kept, freed = plan_preemption(
        {v: Range(jobs[v].base, jobs[v].num_slots) for v in victims},
        want,
        {v for v in victims if jobs[v].fallback is not None},
    )
    was = jobs[victim]
    if kept is not None:
        return Preemption(move_job(agg, victim, kept), was, freed, on_host=False)
    agg.remove_job(victim)
    return Preemption(replace(was, epoch=_fresh_epoch(was.epoch)), was, freed, on_host=True)


def admit_preempting(
    agg: Aggregation,
    victims: list[int],
    job_id: int,
    workers: list[Worker],
    want: int,
    epoch: int | None = None,
    policy: Policy = SYNC,
    fallback: Fallback | None = None,
) -> tuple[Preemption, Job]:
    """`preempt` for a new job, then the job added on the freed range (`ina ctl preempt`). Should
    the add fail (a bad worker, a job id already there), the victim is put back as it was (range,
    epoch, servers), so nothing changes."""
    done = preempt(agg, victims, want)
    try:
        job = Aggregation(agg.conn, Pinned(done.freed)).add_job(
            job_id, workers, want, epoch, policy, fallback=fallback
        )
    except ControllerError:
        if not done.on_host:
            agg.remove_job(done.victim.job_id)
        _put_back(agg, done.was)
        raise
    return done, job
