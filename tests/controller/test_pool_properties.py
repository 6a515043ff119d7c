"""Property tests of the allocators (hypothesis, seeded and bounded like the repo's fuzz tests):
random sequences of add, remove, resize, compact and failed add keep the pool consistent, and
the switch's tables, read back over P4Runtime, match the allocator's view."""

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ina.controller.aggregation import Aggregation, Worker
from ina.controller.allocators import (
    Buddy,
    Partition,
    Pinned,
    PoolFull,
    Range,
    allocator,
    fragmentation,
    free_ranges,
    plan_compaction,
)
from ina.controller.pool import compact, held, move_job

POOL = 64
POLICIES = ("first-fit", "best-fit", "buddy", "partition", "partition:3")
OPS = st.one_of(
    st.tuples(st.just("add"), st.integers(1, 40)),
    st.tuples(st.just("remove"), st.integers(0, 99)),
    st.tuples(st.just("resize"), st.integers(0, 99), st.integers(1, 40)),
    st.tuples(st.just("compact")),
)


def legacy_first_fit(ranges: list[Range], want: int, pool_size: int) -> int | None:
    """controller/aggregation.py's `allocate` before #33, kept as the oracle of 'unchanged'."""
    base = 0
    for r in sorted(ranges):
        if r.base - base >= want:
            return base
        base = max(base, r.end)
    return base if pool_size - base >= want else None


def check_pool(ranges: dict[int, Range], pool_size: int) -> None:
    spans = sorted(ranges.values())
    for a, b in itertools.pairwise(spans):
        assert a.end <= b.base, f"{a} and {b} share a slot"
    assert all(r.base >= 0 and r.end <= pool_size and r.size > 0 for r in spans)
    gaps = free_ranges(spans, pool_size)
    assert sum(r.size for r in spans) + sum(g.size for g in gaps) == pool_size
    assert not any(g.overlaps(r) for g in gaps for r in spans)
    assert 0.0 <= fragmentation(spans, pool_size) < 1.0


def shape_ok(policy, placed: Range, want: int) -> bool:
    """What each policy promises about the range itself."""
    if isinstance(policy, Buddy):
        return placed.size == 1 << (want - 1).bit_length() and placed.base % placed.size == 0
    if isinstance(policy, Partition):
        part = POOL // policy.parts
        return placed.size == part and placed.base % part == 0
    return placed.size == want


def apply(policy, ranges: dict[int, Range], op: tuple, next_id: int) -> int:
    """One operation on the allocator's view; a refused one must leave it exactly as it was."""
    before = dict(ranges)
    if op[0] == "add":
        try:
            placed = policy.place(list(ranges.values()), op[1], POOL)
        except PoolFull:
            assert ranges == before
            if policy.name == "first-fit":
                assert legacy_first_fit(list(ranges.values()), op[1], POOL) is None
            return next_id
        if policy.name == "first-fit":
            assert placed.base == legacy_first_fit(list(ranges.values()), op[1], POOL)
        assert shape_ok(policy, placed, op[1])
        ranges[next_id] = placed
        return next_id + 1
    if not ranges and op[0] in ("remove", "resize"):
        return next_id
    if op[0] == "remove":
        del ranges[sorted(ranges)[op[1] % len(ranges)]]
    elif op[0] == "resize":
        job = sorted(ranges)[op[1] % len(ranges)]
        others = [r for k, r in ranges.items() if k != job]
        target = Range(ranges[job].base, op[2])
        try:
            ranges[job] = Pinned(target).place(others, op[2], POOL)
        except PoolFull:
            assert ranges == before
            assert target.end > POOL or any(r.overlaps(target) for r in others)
    else:
        by_base = {r.base: k for k, r in ranges.items()}
        for old, new in sorted(plan_compaction(list(ranges.values())).items()):
            job = by_base[old]
            others = [r for k, r in ranges.items() if k != job]
            ranges[job] = Pinned(Range(new, ranges[job].size)).place(others, ranges[job].size, POOL)
        assert fragmentation(list(ranges.values()), POOL) == 0.0
        assert sum(r.size for r in ranges.values()) == max(
            (r.end for r in ranges.values()), default=0
        )
    return next_id


@pytest.mark.fuzz
def test_random_sequences_keep_the_pool_consistent(fuzz_cases):
    @settings(
        max_examples=fuzz_cases(1000),  # a longer hunt: --fuzz-scale
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(st.sampled_from(POLICIES), st.lists(OPS, max_size=60))
    def sequence(name: str, ops: list[tuple]) -> None:
        policy, ranges, next_id = allocator(name), {}, 0
        for op in ops:
            next_id = apply(policy, ranges, op, next_id)
            check_pool(ranges, POOL)

    sequence()


@pytest.mark.fuzz
@pytest.mark.parametrize("name", ["first-fit", "best-fit", "buddy", "partition:4"])
def test_switch_tables_match_the_allocator_view(served, name, fuzz_cases):
    """A short seeded sequence against the in-process switch: after every add, failed add,
    remove, move and compaction the jobs read back over P4Runtime hold what the allocator says."""
    conn, _address = served
    rng = random.Random(33)
    policy = allocator(name)
    agg = Aggregation(conn, policy)
    worker = [Worker(0, 1, "02:00:00:00:00:01", "10.0.0.1")]
    view: dict[int, Range] = {}
    for _ in range(fuzz_cases(25)):
        kind = rng.choice(["add", "add", "remove", "move", "compact"])
        if kind == "add" or not view:
            job, want = rng.randrange(256), rng.randint(1, 7)
            if job in view:
                continue
            try:
                placed = policy.place(list(view.values()), want, 16)
            except PoolFull:
                before = agg.jobs()
                with pytest.raises(PoolFull):
                    agg.add_job(job, worker, want)
                assert agg.jobs() == before  # a failed add changes nothing
                continue
            assert (agg.add_job(job, worker, want).base, want) == (placed.base, want)
            view[job] = placed
        elif kind == "remove":
            job = rng.choice(sorted(view))
            agg.remove_job(job)
            del view[job]
        elif kind == "move":
            job = rng.choice(sorted(view))
            target = Range(rng.randrange(16), rng.randint(1, 4))
            others = [r for k, r in view.items() if k != job]
            epoch = agg.job(job).epoch
            try:
                Pinned(target).place(others, target.size, 16)
            except PoolFull:
                before = agg.jobs()
                with pytest.raises(PoolFull):
                    move_job(agg, job, target)
                assert agg.jobs() == before
                continue
            moved = move_job(agg, job, target)
            assert moved.epoch != epoch
            view[job] = target
        else:
            compact(agg)
            by_base = {r.base: k for k, r in view.items()}
            for old, new in plan_compaction(list(view.values())).items():
                view[by_base[old]] = Range(new, view[by_base[old]].size)
        assert held(agg.jobs()) == view
