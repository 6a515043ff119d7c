"""Which job ranks a chunk's sum holds, derived from every worker's RESULTs (hosts/members.py), and
the check of a hierarchical job's partial sums rank by rank with it."""

import numpy as np

from ina.hosts.chunks import Contributors
from ina.hosts.cli import make_array, verify
from ina.hosts.members import job_members

ELEMS = 4
# two leaves of two: job ranks 0, 1 at leaf a (ranks 0, 1 there), 2, 3 at leaf b
ENDPOINTS = [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
# per chunk, what each job rank's RESULT said: (count, bitmap at its leaf); count 0 = no sum
TOLD = [
    [(4, 0b11), (4, 0b11), (4, 0b11), (4, 0b11)],  # 0: everyone
    [(3, 0b01), (3, 0b01), (3, 0b11), (3, 0b11)],  # 1: a's rank 0 and all of b
    [(2, 0b11), (2, 0b11), (0, 0), (0, 0)],  # 2: b had no RESULT; the count leaves it out
    [(4, 0b11), (4, 0b11), (0, 0), (0, 0)],  # 3: ... the count puts it all in
    [(3, 0b11), (3, 0b11), (0, 0), (0, 0)],  # 4: ... one of b's two: which, nobody can say
    [(3, 0b11), (3, 0b01), (3, 0b01), (3, 0b01)],  # 5: a's workers told different bitmaps
    [(0, 0), (0, 0), (2, 0), (2, 0)],  # 6: a had none, b not in: a is in by the count
    [(4, 0b11), (4, 0b11), (3, 0b11), (3, 0b11)],  # 7: workers told different counts
]
WANT = [
    [1, 1, 1, 1],
    [1, 0, 1, 1],
    [1, 1, 0, 0],
    [1, 1, 1, 1],
    [1, 1, 0, 0],
    [1, 1, 1, 0],
    [1, 1, 0, 0],
    [1, 1, 1, 1],
]


def told() -> list[Contributors]:
    return [
        Contributors(
            ELEMS,
            np.array([chunk[rank][0] for chunk in TOLD], np.uint16),
            np.array([chunk[rank][1] for chunk in TOLD], np.uint32),
        )
        for rank in range(4)
    ]


def test_the_leaves_bitmaps_and_the_count_name_the_job_ranks_of_each_sum():
    members = job_members(told(), ENDPOINTS)
    assert members.in_sum.T.astype(int).tolist() == WANT  # unresolved chunks: the likeliest
    assert members.unresolved.tolist() == [False, False, False, False, True, True, False, True]


def test_a_single_switch_jobs_bitmaps_name_its_ranks():
    counted = [
        Contributors(ELEMS, np.array([2, 3], np.uint16), np.array([0b101, 0b111])) for _ in range(3)
    ]
    members = job_members(counted, [("s", r) for r in range(3)])
    assert members.in_sum.T.astype(int).tolist() == [[1, 0, 1], [1, 1, 1]]
    assert not members.unresolved.any()


def test_partial_sums_of_a_hierarchical_job_are_checked_rank_by_rank():
    """Each worker's result of chunks 0-3 and 6 is exactly its members' sum; a result holding
    another rank than the RESULTs name fails, and so does any chunk they leave unresolved."""
    seed, n, chunks = 4, 4, len(TOLD)
    size = chunks * ELEMS
    arrays = [make_array(seed, r, size, "int32").astype(np.int64) for r in range(n)]
    counted = told()
    members = job_members(counted, ENDPOINTS)
    kept = [0, 1, 2, 3, 6]  # 4, 5 and 7 are left unresolved
    for rank in range(n):
        trimmed = told_only(counted[rank], kept)
        want = np.zeros(size, np.int64)  # every sum it has, of the ranks WANT names
        for c in np.flatnonzero(counted[rank].counts):
            part = slice(c * ELEMS, (c + 1) * ELEMS)
            want[part] = sum(arrays[r][part] for r in range(n) if WANT[c][r])
        whole = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)
        # chunks 4, 5 and 7 unresolved: not checkable, even with the members' sum in them
        assert not verify(whole, seed, n, size, "int32", ELEMS, counted[rank], members=members)[0]
        result = whole.copy()
        for c in (4, 5, 7):
            result[c * ELEMS : (c + 1) * ELEMS] = 0  # as told_only has it: no sum
        assert verify(result, seed, n, size, "int32", ELEMS, trimmed, members=members)[0]
        result[ELEMS : 2 * ELEMS] += arrays[1][ELEMS : 2 * ELEMS].astype(np.int32)  # rank 1 too
        assert not verify(result, seed, n, size, "int32", ELEMS, trimmed, members=members)[0]


def told_only(counted: Contributors, kept: list[int]) -> Contributors:
    """`counted` with the chunks not in `kept` as if this worker had no sum of them."""
    counts = np.zeros_like(counted.counts)
    counts[kept] = counted.counts[kept]
    return Contributors(counted.elems, counts, counted.bitmaps)
