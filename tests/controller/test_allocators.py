"""The allocation policies on exact pools: where each puts a job, what each refuses, the map's
figures, and the compaction plan; the property tests are in test_pool_properties.py."""

import pytest

from ina.controller.allocators import (
    BestFit,
    Buddy,
    FirstFit,
    Partition,
    Pinned,
    PoolFull,
    Range,
    allocator,
    best_effort,
    fragmentation,
    free_ranges,
    plan_compaction,
)
from ina.controller.client import ControllerError

# 32 slots: 0-3 held, 4-9 free (6), 10-11 held, 12-15 free (4), 16-31 held... then free 28-31
HELD = [Range(0, 4), Range(10, 2), Range(16, 12)]


def test_free_ranges_and_fragmentation():
    assert free_ranges(HELD, 32) == [Range(4, 6), Range(12, 4), Range(28, 4)]
    assert fragmentation(HELD, 32) == 1 - 6 / 14
    assert fragmentation([], 32) == 0.0
    assert fragmentation([Range(0, 32)], 32) == 0.0  # nothing free: no fragmentation


def test_first_fit_takes_the_lowest_gap_and_best_fit_the_tightest():
    assert FirstFit().place(HELD, 4, 32) == Range(4, 4)
    assert BestFit().place(HELD, 4, 32) == Range(12, 4)  # 12-15 and 28-31 tie: lowest
    assert BestFit().place(HELD, 5, 32) == Range(4, 5)
    assert FirstFit().place([Range(0, 4), Range(8, 4)], 4, 16) == Range(4, 4)
    assert FirstFit().place([Range(0, 4), Range(8, 4)], 5, 17) == Range(12, 5)
    with pytest.raises(PoolFull, match="pool is full: 7 slots wanted, 14 free of 32"):
        FirstFit().place(HELD, 7, 32)
    with pytest.raises(PoolFull):
        BestFit().place(HELD, 7, 32)


def test_buddy_rounds_up_aligns_and_splits_the_smallest_free_block():
    assert Buddy().place([], 3, 32) == Range(0, 4)
    # free buddy blocks here: 4-7 (4, its buddy 0-3 held), 12-15 (4), 28-31 (4), and 8-9 (2)
    assert Buddy().place(HELD, 2, 32) == Range(8, 2)
    assert Buddy().place(HELD, 3, 32) == Range(4, 4)
    assert Buddy().place([Range(0, 1)], 1, 32) == Range(1, 1)
    assert Buddy().place([Range(0, 1)], 2, 32) == Range(2, 2)
    # 24 slots are a 16-block and an 8-block: 9 needs 16 and gets 0..15; never across them
    assert Buddy().place([], 9, 24) == Range(0, 16)
    with pytest.raises(PoolFull, match="in aligned blocks of 16"):
        Buddy().place([Range(0, 1)], 9, 24)
    assert Buddy().fits_empty(16, 24) and not Buddy().fits_empty(17, 24)


def test_partition_gives_whole_parts_and_refuses_larger_requests():
    four = Partition(4)
    assert four.place([], 3, 32) == Range(0, 8)
    assert four.place([Range(0, 8), Range(9, 1)], 3, 32) == Range(16, 8)
    with pytest.raises(PoolFull, match="in parts of 8"):
        four.place([], 9, 32)
    assert four.fits_empty(8, 32) and not four.fits_empty(9, 32)


def test_pinned_places_only_its_range_when_free():
    assert Pinned(Range(4, 6)).place(HELD, 6, 32) == Range(4, 6)
    with pytest.raises(PoolFull, match=r"at slots 4\.\.10"):
        Pinned(Range(4, 7)).place(HELD, 7, 32)
    with pytest.raises(PoolFull):
        Pinned(Range(28, 5)).place(HELD, 5, 32)  # past the pool's end
    with pytest.raises(ControllerError, match="pinned range has 6"):
        Pinned(Range(4, 6)).place(HELD, 5, 32)


def test_compaction_plan_closes_every_gap_in_order():
    assert plan_compaction(HELD) == {10: 4, 16: 6}
    assert plan_compaction([Range(0, 4), Range(4, 2)]) == {}


def test_allocator_names_and_bad_ones():
    assert [allocator(n).name for n in ("first-fit", "best-fit", "buddy", "partition")] == [
        "first-fit",
        "best-fit",
        "buddy",
        "partition",
    ]
    assert allocator("partition:3").parts == 3
    for bad, message in (
        ("worst-fit", "unknown allocator 'worst-fit': one of first-fit, best-fit, buddy"),
        ("buddy:2", "unknown allocator 'buddy:2'"),
        ("partition:0", r"partition:N takes N parts in 1\.\.32768; got '0'"),
        ("partition:x", "got 'x'"),
    ):
        with pytest.raises(ValueError, match=message):
            allocator(bad)
    with pytest.raises(ControllerError, match="at least one slot"):
        FirstFit().place([], 0, 8)


def test_best_effort_takes_fewer_slots_or_shares_a_hashed_range():
    # the largest free range, lowest first, when it holds at least half the request
    assert best_effort([Range(0, 10), Range(12, 2)], 8, 20, key=1) == Range(14, 6)
    assert best_effort([Range(0, 12)], 8, 16, key=1) == Range(12, 4)
    # less than half free: the request itself, shared, at the job's hashed base
    assert best_effort([Range(0, 13)], 8, 16, key=1) == Range(1 * 2654435761 % 9, 8)
    assert best_effort([Range(0, 16)], 8, 16, key=0) == Range(0, 8)
    assert best_effort([Range(0, 16)], 40, 16, key=5) == Range(0, 16)  # at most the pool
    # never on a job without a server: its 4 slots left out, 5 bases hashed over
    assert best_effort([Range(0, 16)], 8, 16, key=1, exclusive=[Range(0, 4)]) == Range(1 + 4, 8)
    assert best_effort([Range(0, 4), Range(4, 12)], 16, 16, 0, [Range(0, 4)]) == Range(4, 12)
    with pytest.raises(ControllerError, match="at least one slot"):
        best_effort([], 0, 16, key=0)
