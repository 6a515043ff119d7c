"""The switch's slot pool as one resource: its map, and moving, resizing and compacting live jobs.

A job's range changes between iterations only, through the one safe path the epoch mechanism gives
(docs/protocol.md, "Moving a job's range"): the job's workers drain (every slot they used has its
RESULT), the controller removes the job and adds it again on the new range with a fresh epoch that
differs from the old one, and the workers resume as a new run with that epoch. Nothing here writes
a register, so it works wherever `add_job` does.
"""

from ina.controller.aggregation import Aggregation, Job
from ina.controller.allocators import (
    Pinned,
    Range,
    fragmentation,
    free_ranges,
    plan_compaction,
    plan_preemption,
)
from ina.controller.client import ControllerError
from ina.p4src.protocol import new_epoch


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


def move_job(agg: Aggregation, job_id: int, target: Range) -> Job:
    """Put a drained job on `target` (another base, or another size: a resize is a move to the same
    base): remove it, add it there
    with a fresh epoch unlike the old one. A target that overlaps another job or leaves the pool
    is refused before anything changes; should the add fail, the job is put back as it was."""
    jobs = agg.jobs()
    old = next((j for j in jobs if j.job_id == job_id), None)
    if old is None:
        raise ControllerError(f"no job {job_id} on this switch (see: ina ctl show-jobs)")
    others = [r for k, r in held(jobs).items() if k != job_id]
    Pinned(target).place(others, target.size, agg.pool_size)  # PoolFull: nothing changed
    epoch = new_epoch()
    while epoch == old.epoch:  # an old run's late UPDATE must never match the new run
        epoch = new_epoch()
    agg.remove_job(job_id)
    try:
        return Aggregation(agg.conn, Pinned(target)).add_job(
            job_id, old.workers, target.size, epoch, old.policy, fallback=old.fallback
        )
    except ControllerError:
        Aggregation(agg.conn, Pinned(Range(old.base, old.num_slots))).add_job(
            job_id, old.workers, old.num_slots, old.epoch, old.policy, fallback=old.fallback
        )
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


def preempt(agg: Aggregation, victims: list[int], want: int) -> tuple[Job, Range]:
    """Make room for a higher-priority job asking `want` slots in a full pool (docs/protocol.md,
    "Preemption"): of the drained `victims` (lower-priority jobs, by id), the one
    `allocators.plan_preemption` picks is moved onto the lower part of its range with a fresh epoch
    (`move_job`), and the top `want` slots of its old range are left free for the new job. Returns
    the moved job and the freed range; PoolFull, having changed nothing, if no victim has more than
    `want` slots."""
    ranges = held(agg.jobs())
    missing = [v for v in victims if v not in ranges]
    if missing:
        raise ControllerError(f"no job {missing[0]} on this switch (see: ina ctl show-jobs)")
    victim, kept, freed = plan_preemption({v: ranges[v] for v in victims}, want)
    return move_job(agg, victim, kept), freed
