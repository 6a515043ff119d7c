"""Property tests of the allocators (hypothesis, seeded and bounded like the repo's fuzz tests):
random sequences of add, remove, resize, compact, preempt and failed add keep the pool consistent
(no two jobs share a slot: no policy here places a job on a shared range), and the switch's tables,
read back over P4Runtime, match the allocator's view."""

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ina.controller.aggregation import Aggregation, Fallback, Worker
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
    plan_preemption,
)
from ina.controller.pool import admit_preempting, compact, held, move_job

POOL = 64
POLICIES = ("first-fit", "best-fit", "buddy", "partition", "partition:3")
OPS = st.one_of(
    st.tuples(st.just("add"), st.integers(1, 40), st.booleans()),  # with a host fallback server?
    st.tuples(st.just("remove"), st.integers(0, 99)),
    st.tuples(st.just("resize"), st.integers(0, 99), st.integers(1, 40)),
    st.tuples(st.just("compact")),
    # a job (by index) and more victims (a bit per job, lowest id first); the request: that job's
    # slots plus -1..1, so a victim holding exactly the request is common; the new job's server
    st.tuples(
        st.just("preempt"),
        st.integers(0, 99),
        st.integers(0, 2**16 - 1),
        st.integers(-1, 1),
        st.booleans(),
    ),
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


def apply(policy, ranges: dict[int, Range], servers: set[int], op: tuple, next_id: int) -> int:
    """One operation on the allocator's view (`servers`: the jobs with a host fallback server); a
    refused one must leave it exactly as it was."""
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
        if op[2]:
            servers.add(next_id)
        return next_id + 1
    if op[0] == "preempt":
        return preempt(ranges, servers, op, next_id)
    if not ranges and op[0] in ("remove", "resize"):
        return next_id
    if op[0] == "remove":
        job = sorted(ranges)[op[1] % len(ranges)]
        del ranges[job]
        servers.discard(job)
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


def preempt(ranges: dict[int, Range], servers: set[int], op: tuple, next_id: int) -> int:
    """controller/pool.py `preempt` then the new job on the freed range, on the view: the victim
    plan_preemption picks shrinks by exactly the request (the shortest range longer than it), or,
    only when none is longer, one with a server holding exactly the request leaves for it; a
    refusal happens only when neither exists, and changes nothing."""
    _, pick, mask, delta, server = op
    if not ranges:
        return next_id
    jobs = sorted(ranges)
    picked = jobs[pick % len(jobs)]
    want = max(1, ranges[picked].size + delta)
    victims = {k: ranges[k] for i, k in enumerate(jobs) if mask >> i & 1 or k == picked}
    longer = [k for k, r in victims.items() if r.size > want]
    whole = [k for k, r in victims.items() if k in servers and r.size == want]
    before = dict(ranges)
    try:
        victim, kept, freed = plan_preemption(victims, want, servers & victims.keys())
    except PoolFull:
        assert ranges == before and not longer and not whole
        return next_id
    was = ranges[victim]
    assert (freed.size, freed.end) == (want, was.end)
    if kept is None:
        assert not longer and victim in whole and freed == was
        del ranges[victim]  # on to its host fallback server
        servers.discard(victim)
    else:
        assert victim in longer and was.size == min(victims[k].size for k in longer)
        assert kept == Range(was.base, was.size - want)
        ranges[victim] = kept
    ranges[next_id] = Pinned(freed).place(
        list(ranges.values()), want, POOL
    )  # free: PoolFull fails the test
    if server:
        servers.add(next_id)
    return next_id + 1


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
        policy, ranges, servers, next_id = allocator(name), {}, set(), 0
        for op in ops:
            next_id = apply(policy, ranges, servers, op, next_id)
            check_pool(ranges, POOL)
            assert servers <= ranges.keys()

    sequence()


@pytest.mark.fuzz
@pytest.mark.parametrize("name", ["first-fit", "best-fit", "buddy", "partition:4"])
def test_switch_tables_match_the_allocator_view(served, name, fuzz_cases):
    """A short seeded sequence against the in-process switch: after every add, failed add,
    remove, move, compaction and preemption (a failed one too) the jobs read back over P4Runtime
    hold what the allocator says, and exactly the jobs with a host fallback server have one."""
    conn, _address = served
    rng = random.Random(33)
    policy = allocator(name)
    agg = Aggregation(conn, policy)
    worker = [Worker(0, 1, "02:00:00:00:00:01", "10.0.0.1")]
    server = Fallback(5, "02:cc:00:00:00:05", "10.0.0.100", 40000)
    view: dict[int, Range] = {}
    servers: set[int] = set()
    for _ in range(fuzz_cases(30)):
        kind = rng.choice(["add", "add", "remove", "move", "compact", "preempt", "preempt"])
        job = rng.randrange(256)
        if kind in ("add", "preempt") and job in view:
            continue
        if kind == "add" or not view:
            want = rng.randint(1, 7)
            try:
                placed = policy.place(list(view.values()), want, 16)
            except PoolFull:
                before = agg.jobs()
                with pytest.raises(PoolFull):
                    agg.add_job(job, worker, want)
                assert agg.jobs() == before  # a failed add changes nothing
                continue
            fallback = server if rng.random() < 0.5 else None
            assert agg.add_job(job, worker, want, fallback=fallback).base == placed.base
            view[job] = placed
            servers |= {job} if fallback else set()
        elif kind == "remove":
            job = rng.choice(sorted(view))
            agg.remove_job(job)
            del view[job]
            servers.discard(job)
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
        elif kind == "compact":
            compact(agg)
            by_base = {r.base: k for k, r in view.items()}
            for old, new in plan_compaction(list(view.values())).items():
                view[by_base[old]] = Range(new, view[by_base[old]].size)
        else:
            victims = rng.sample(sorted(view), rng.choice([1, rng.randint(1, len(view))]))
            want = max(1, view[victims[0]].size + rng.choice([-1, 0, 0, 1]))
            epochs = {j.job_id: j.epoch for j in agg.jobs()}
            try:
                victim, kept, freed = plan_preemption(
                    {v: view[v] for v in victims}, want, servers & set(victims)
                )
            except PoolFull:
                before = agg.jobs()
                with pytest.raises(PoolFull):
                    admit_preempting(agg, victims, job, worker, want)
                assert agg.jobs() == before
                continue
            done, added = admit_preempting(agg, victims, job, worker, want)
            assert (done.victim.job_id, done.on_host, done.freed) == (victim, kept is None, freed)
            assert done.victim.epoch != epochs[victim]
            if kept is None:
                del view[victim]
                servers.discard(victim)
            else:
                view[victim] = kept
            view[job] = freed
            assert (added.base, added.num_slots) == (freed.base, freed.size)
        assert held(agg.jobs()) == view
        fallbacks = conn.read_table("InaIngress.job_fallback")
        assert {e.match["hdr.agg.job_id"] for e in fallbacks} == servers
