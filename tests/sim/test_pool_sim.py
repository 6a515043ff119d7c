"""The slot pool under churn (sim/pool.py) on small pools whose every figure is known."""

import numpy as np
import pytest

from ina.controller.allocators import Buddy, Range
from ina.hosts.inprocess import InProcessSwitch
from ina.sim.churn import ChurnJob
from ina.sim.pool import PoolOptions, iteration_s, simulate_pool
from ina.train.workloads import workload

MODEL = "resnet50"


def job(t: float, slots: int, duration: float) -> ChurnJob:
    return ChurnJob(t, 1, MODEL, duration, slots)


# four 4-slot jobs fill 16 slots; the two short ones leave holes of 4 at 0 and 8 at t=100; an
# 8-slot job arrives at 150: first fit makes it wait for the long job at 4 (t=1000)
JOBS = [job(0, 4, 100), job(0, 4, 1000), job(0, 4, 100), job(0, 4, 1000), job(150, 8, 10)]


def test_first_fit_waits_for_a_hole_compaction_makes_one():
    run = simulate_pool(JOBS, PoolOptions(pool_size=16))
    assert run.waits == [0, 0, 0, 0, 850]
    assert sorted(run.completions) == [100, 100, 860, 1000, 1000]
    assert (run.queued, run.refused, run.compactions, run.moves) == (1, 0, 0, 0)
    at_150 = [s for s in run.samples if s[0] == 150][-1]
    assert at_150[1:5] == (8, 0.5, 1, 2)  # 8 held, fragmentation 1 - 4/8, one queued, two running

    run = simulate_pool(JOBS, PoolOptions(pool_size=16, compact=True), snapshots=True)
    assert run.waits == [0, 0, 0, 0, 0]
    assert (run.compactions, run.moves) == (1, 2)  # 4 -> 0 and 12 -> 4
    pause = iteration_s(MODEL, 4, 4)
    assert sorted(run.completions) == [10, 100, 100, 1000 + pause, 1000 + pause]
    _t, ranges = [s for s in run.snapshots if s[0] == 150][-1]
    assert sorted(r for _job, r in ranges) == [Range(0, 4), Range(4, 4), Range(8, 8)]


def test_policies_refuse_what_can_never_fit_and_buddy_holds_more():
    jobs = [job(0, 5, 10), job(1, 20, 10)]
    run = simulate_pool(jobs, PoolOptions(pool_size=16, allocator="partition:4"))
    assert (run.refused, len(run.completions)) == (2, 0)  # 5 > a part of 4; 20 > the pool
    run = simulate_pool(jobs, PoolOptions(pool_size=16, allocator="buddy"))
    assert (run.refused, run.completions) == (1, [10])
    assert run.samples[0][1] == 8 and run.samples[0][5] == 5  # 8 held for 5 asked
    summary = simulate_pool(jobs[:1], PoolOptions(pool_size=16, allocator="buddy")).summary()
    assert (summary["finished_jobs"], summary["mean_jct_s"], summary["p99_jct_s"]) == (1, 10, 10)


def test_fewer_slots_than_asked_slow_the_all_reduce_only():
    compute = workload(MODEL).compute_s
    full, half = iteration_s(MODEL, 8, 8), iteration_s(MODEL, 4, 8)
    assert half - compute == pytest.approx(2 * (full - compute), rel=1e-12)
    assert iteration_s(MODEL, 16, 8) == full  # more slots than asked do not speed it up
    bits = workload(MODEL).parameters * 32
    assert full == pytest.approx(compute + bits / 100e9, rel=1e-12)


def test_compaction_needs_a_contiguous_policy():
    with pytest.raises(ValueError, match="use it with first-fit or best-fit"):
        simulate_pool(JOBS, PoolOptions(pool_size=16, allocator="buddy", compact=True))


def test_the_harness_places_jobs_by_its_allocator():
    """`ina sim --allocator` reaches the controller: the harness's jobs sit where the policy says,
    and a buddy block's extra slots leave the all-reduce exact."""
    with InProcessSwitch(elems=8, pool_size=16, allocator=Buddy()) as net:
        net.add_job(0, 2, window=3)
        net.add_job(1, 2, window=3)
        assert [(j.job_id, j.base, j.num_slots) for j in net.controller.jobs()] == [
            (0, 0, 4),
            (1, 4, 4),
        ]
        arrays = {
            job: [np.arange(40, dtype=np.int32) * (r + 1) for r in range(2)] for job in (0, 1)
        }
        results = net.allreduce(arrays)
    assert all((r == np.arange(40) * 3).all() for job in results.values() for r in job)


def test_best_effort_starts_a_job_at_once_on_shared_slots_its_host_summing_half():
    """Two 4-worker jobs asking the whole 8-slot pool: the second shares the first's range at
    once (first fit alone makes it wait), each slot held by 2 jobs, so its server sums half its
    chunks and its all-reduce takes max(1, 0.5 x 4) = 2 line-rate times."""
    jobs = [ChurnJob(0, 4, MODEL, 100, 8), ChurnJob(10, 4, MODEL, 100, 8)]
    assert simulate_pool(jobs, PoolOptions(pool_size=8)).waits == [0, 90]
    run = simulate_pool(jobs, PoolOptions(pool_size=8, best_effort=True))
    assert run.waits == [0, 0]
    slowed = 100 * (iteration_s(MODEL, 8, 8, host_share=0.5, workers=4) / iteration_s(MODEL, 8, 8))
    assert run.host_shares == [(0.0, 100), (0.5, slowed)]
    assert run.completions == [100, slowed]  # each from its arrival
    summary = run.summary()
    assert summary["policy"] == "first-fit+best-effort"
    assert summary["host_share"] == pytest.approx(0.5 * slowed / (100 + slowed), rel=1e-12)
    assert run.samples[1][1] == 8  # slots held: the union, not 16


def test_host_share_is_the_mean_of_k_minus_1_over_k_over_the_slots():
    from ina.sim.pool import host_share

    mine = Range(0, 8)
    assert host_share(mine, []) == 0.0
    assert host_share(mine, [Range(4, 8)]) == 0.25  # 4 slots shared by 2: 4 x 1/2 / 8
    assert host_share(mine, [Range(0, 8), Range(6, 2)]) == pytest.approx((6 / 2 + 2 * 2 / 3) / 8)
