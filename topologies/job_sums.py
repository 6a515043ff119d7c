"""`ina run`'s check of a hierarchical job's sums rank by rank, as `ina sim` checks them (issue 31).

A worker's RESULT bitmap names ranks at its leaf, so which job ranks a partial sum (a quorum's, a
timeout's) holds is known only from every worker's RESULTs together (hosts/members.py). Each
worker of such a job saves its sums and RESULTs (`ina worker --save-sums`) instead of checking
alone; this reads them back once every worker has finished and checks each rank's sums against
the ranks the job's RESULTs name (hosts/cli.py's `verify`, exact for int32).
"""

from collections.abc import Hashable, Sequence
from pathlib import Path

from ina.hosts.cli import verify
from ina.hosts.members import job_members, load_sums


def check_job_sums(
    directory: Path,
    endpoints: Sequence[tuple[Hashable, int]],
    *,
    seed: int,
    size: int,
    dtype: str,
    iterations: int,
) -> list[bool]:
    """Per job rank (`endpoints`: each rank's leaf switch and its rank there), whether every
    iteration's saved sum is the sum of the ranks the job's RESULTs name; a rank fails where a
    worker saved nothing (every rank of that iteration: the job's members are then unknown)."""
    ok = [True] * len(endpoints)
    for iteration in range(iterations):
        try:
            saved = [load_sums(directory, rank, iteration) for rank in range(len(endpoints))]
        except OSError:
            return [False] * len(endpoints)
        members = job_members([counted for _sum, counted in saved], endpoints)
        for rank, (total, counted) in enumerate(saved):
            ok[rank] &= verify(
                total,
                seed,
                len(endpoints),
                size,
                dtype,
                counted.elems,
                counted,
                iteration,
                members=members,
            )[0]
    return ok
