"""`ina run`'s check of a hierarchical job's sums rank by rank (topologies/job_sums.py): from the
sums and RESULTs every worker saved (`ina worker --save-sums`), as `ina sim` checks them."""

import numpy as np

from ina.hosts.chunks import Contributors
from ina.hosts.cli import make_array
from ina.hosts.members import save_sums, sums_path
from ina.topologies.job_sums import check_job_sums

SEED, ELEMS = 3, 4
ENDPOINTS = [("s1", 0), ("s1", 1), ("s2", 0), ("s2", 1)]  # two leaves of two, as leafspine_hier
# per chunk, what each job rank's RESULT said (count, bitmap at its leaf) and who is in the sum
TOLD = [
    [(4, 0b11), (4, 0b11), (4, 0b11), (4, 0b11)],  # everyone
    [(3, 0b01), (3, 0b01), (3, 0b11), (3, 0b11)],  # a quorum at s1 left rank 1 out
    [(2, 0b11), (2, 0b11), (2, 0), (2, 0)],  # the root completed without s2
]
IN_SUM = [[1, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 0]]
SIZE = len(TOLD) * ELEMS


def save_job(directory, iteration: int = 0) -> list[np.ndarray]:
    """Every rank's sum (the members' per chunk, as the switches sum it) saved as a worker does."""
    arrays = [make_array(SEED, r, SIZE, "int32", iteration) for r in range(4)]
    total = np.concatenate(
        [
            sum(arrays[r][c * ELEMS : (c + 1) * ELEMS] for r in range(4) if IN_SUM[c][r])
            for c in range(len(TOLD))
        ]
    ).astype(np.int32)
    for rank in range(4):
        counted = Contributors(
            ELEMS,
            np.array([chunk[rank][0] for chunk in TOLD], np.uint16),
            np.array([chunk[rank][1] for chunk in TOLD], np.uint32),
        )
        save_sums(directory, rank, iteration, total, counted)
    return arrays


def check(directory, iterations: int = 1) -> list[bool]:
    return check_job_sums(
        directory, ENDPOINTS, seed=SEED, size=SIZE, dtype="int32", iterations=iterations
    )


def test_partial_sums_are_checked_against_the_ranks_the_jobs_results_name(tmp_path):
    save_job(tmp_path, 0)
    arrays = save_job(tmp_path, 1)
    assert check(tmp_path, iterations=2) == [True] * 4
    # rank 2's sum of iteration 1 holds rank 1's contribution in chunk 1, which the RESULTs leave out
    saved = np.load(sums_path(tmp_path, 2, 1))
    wrong = saved["result"].copy()
    wrong[ELEMS : 2 * ELEMS] += arrays[1][ELEMS : 2 * ELEMS]
    counted = Contributors(ELEMS, saved["counts"], saved["bitmaps"])
    save_sums(tmp_path, 2, 1, wrong, counted)
    assert check(tmp_path, iterations=2) == [True, True, False, True]


def test_a_worker_that_saved_nothing_fails_its_whole_job(tmp_path):
    save_job(tmp_path)
    sums_path(tmp_path, 3, 0).unlink()
    assert check(tmp_path) == [False] * 4
