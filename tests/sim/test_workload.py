"""Iterations of compute then all-reduce in virtual time (sim/workload.py): every int32 sum of
every iteration bit-exact against numpy under every policy, a straggler's compute exactly in the
iteration time, several jobs at once, and the sum checks themselves."""

import dataclasses

import numpy as np
import pytest

from ina.hosts.cli import make_array
from ina.hosts.compute import DelayDistribution
from ina.hosts.core import Contributors
from ina.hosts.group import Group
from ina.hosts.inprocess import InProcessSwitch
from ina.p4src.protocol import Policy
from ina.sim.allreduce import AllReduceConfig
from ina.sim.links import LinkSpec
from ina.sim.workload import (
    Programs,
    Stragglers,
    SumChecks,
    WorkloadConfig,
    replay_steps,
    simulate_workload,
)
from ina.train.replay import ReplayConfig
from ina.train.sgd import Compute, Reduce

LINK = LinkSpec(rate=100e9, delay=1e-6, queue=1 << 20)
REPLAY = ReplayConfig(
    scale=0.0005, iterations=3
)  # resnet50: 5 buckets, 12,783 elements per iteration
COMPUTE = 100e-6


def int32_config(policy: str = "sync", workers: int = 4, **kwargs) -> WorkloadConfig:
    network = AllReduceConfig(
        workers=workers, dtype="int32", link=LINK, policy=Policy.parse(policy)
    )
    return WorkloadConfig(network, REPLAY, compute_s=COMPUTE, **kwargs)


@pytest.mark.parametrize(
    "policy, grouped",
    [
        ("sync", False),
        ("quorum:3", False),
        ("timeout:20us", False),
        ("stale:1", False),
        ("quorum:3", True),
        ("stale:1", True),
    ],
)
def test_every_iteration_sums_bit_exact_under_every_policy_with_a_straggler(policy, grouped):
    """The driver alone (Programs, replay_steps) on a star: each rank's every sum, taken as the
    program gets it (each bucket's, split from the iteration's one call when `grouped`), equals
    numpy's int32 sum of the ranks its bitmap names."""
    n, buckets = 4, REPLAY.buckets()
    durations = {rank: [COMPUTE * (3 if rank == 1 else 1)] * REPLAY.iterations for rank in range(n)}
    got: list[tuple[int, int, int, np.ndarray, Contributors]] = []
    with InProcessSwitch(elems=64, link=LINK, record=False) as net:
        policy_ = Policy.parse(policy)
        net.add_job(0, n, window=32, policy=policy_)
        programs = Programs(net)
        arrays = {
            rank: [make_array(7, rank, size, "int32") for size in buckets] for rank in range(n)
        }
        for rank in range(n):
            programs.add(
                0,
                rank,
                replay_steps(
                    arrays[rank],
                    durations[rank],
                    policy_.staleness,
                    lambda: net.now,
                    lambda i, b, total, counted, rank=rank: got.append(
                        (rank, i, b, total, counted)
                    ),
                    Group(arrays[rank], 64) if grouped else None,
                ),
                lambda core: (core.result(), core.contributors()),
            )
        programs.run()
    assert sorted((r, i, b) for r, i, b, _t, _c in got) == [
        (r, i, b)
        for r in range(n)
        for i in range(1, REPLAY.iterations + 1)
        for b in range(len(buckets))
    ]
    partial = False
    for _rank, _i, b, total, counted in got:
        bitmaps = counted.element_bitmaps(total.shape)
        expected = sum(
            np.where(bitmaps >> r & 1 == 1, arrays[r][b].astype(np.int64), 0) for r in range(n)
        )
        assert total.dtype == np.int32
        assert np.array_equal(total, expected.astype(np.int32))
        partial |= bool(np.any(counted.counts < n))
    assert partial == (
        policy == "quorum:3"
    )  # the 3x straggler's late UPDATEs miss the quorum's sums


@pytest.mark.parametrize("policy", ["sync", "quorum:3", "stale:1"])
def test_simulate_workload_verifies_every_iteration(policy):
    """Grouped (REPLAY's default) under every policy; the separate calls under sync."""
    result = simulate_workload(int32_config(policy, stragglers=Stragglers((("h2", 3.0),))))
    assert result.verified
    if policy == "sync":
        separate = dataclasses.replace(REPLAY, bucket_calls="separate")
        config = dataclasses.replace(int32_config(policy), replay=separate)
        assert simulate_workload(config).verified
    assert [(it.job, it.iteration) for it in result.iterations] == [(0, 1), (0, 2), (0, 3)]
    assert result.buckets == REPLAY.buckets()
    assert len(result.records) == 4 and all(len(r) == 3 for r in result.records)


def test_a_stragglers_compute_appears_exactly_in_the_iteration_time():
    """Sync, lossless, a symmetric star: the 3x straggler starts its all-reduce 2 x COMPUTE after the
    others, so every iteration of the job takes exactly that much longer, and the others wait it out."""
    plain = simulate_workload(int32_config())
    slow = simulate_workload(int32_config(stragglers=Stragglers((("h2", 3.0),))))
    for a, b in zip(plain.iterations, slow.iterations, strict=True):
        assert a.compute_s == pytest.approx(COMPUTE, abs=1e-15)
        assert b.compute_s == pytest.approx(3 * COMPUTE, abs=1e-15)
        assert b.communication_s == pytest.approx(a.communication_s, abs=1e-12)
        assert b.iteration_s == pytest.approx(a.iteration_s + 2 * COMPUTE, abs=1e-12)
    host = [h for _j, _r, h in slow.workers]
    other = slow.records[host.index("h1")]
    for a, r in zip(plain.iterations, other, strict=True):  # a fast worker waits for the straggler
        assert r.comm_s == pytest.approx(a.communication_s + 2 * COMPUTE, abs=1e-12)
    assert slow.records[host.index("h2")][-1].wall_s == pytest.approx(
        3 * (a.iteration_s + 2 * COMPUTE), abs=1e-12
    )


def test_a_straggler_distribution_adds_seeded_draws():
    dist = DelayDistribution.parse("uniform:50us")
    a = simulate_workload(int32_config(stragglers=Stragglers((), dist)))
    b = simulate_workload(int32_config(stragglers=Stragglers((), dist)))
    assert [it.iteration_s for it in a.iterations] == [it.iteration_s for it in b.iterations]
    computes = {r.compute_s for records in a.records for r in records}
    assert len(computes) == 12 and all(COMPUTE <= c <= COMPUTE + 50e-6 for c in computes)


def test_several_jobs_on_a_leaf_spine_at_once():
    network = AllReduceConfig(topo="leafspine:2x4,2", jobs=2, dtype="int32", link=LINK)
    result = simulate_workload(
        WorkloadConfig(network, ReplayConfig(scale=0.0002, iterations=2), compute_s=COMPUTE)
    )
    assert result.verified
    assert [(it.job, it.iteration) for it in result.iterations] == [(0, 1), (1, 1), (0, 2), (1, 2)]
    assert sorted({job for job, _r, _h in result.workers}) == [0, 1]
    assert all(it.compute_s == pytest.approx(COMPUTE, abs=1e-15) for it in result.iterations)


def test_float32_gradients_within_the_bound():
    network = AllReduceConfig(workers=3, dtype="float32", link=LINK)
    result = simulate_workload(WorkloadConfig(network, ReplayConfig(scale=0.0002, iterations=2)))
    assert result.verified and 0 < result.max_abs_error < 1e-4
    assert result.iterations[0].compute_s == pytest.approx(
        3 * 8.2e9 * 32 / 15e12 * 0.0002, abs=1e-15
    )  # resnet50's


def test_replayed_gradients_in_8_bit_lanes_within_their_bound():
    """Each sum checked against its lanes' bound (verify's bits), which 32 bits' would refuse."""
    network = AllReduceConfig(workers=3, dtype="float32", link=LINK, elems=8, bits=8)
    result = simulate_workload(WorkloadConfig(network, ReplayConfig(scale=0.0002, iterations=1)))
    assert result.verified and 1e-3 < result.max_abs_error < 0.2


def test_the_checks_catch_a_wrong_sum_and_a_worker_that_differs():
    config = AllReduceConfig(dtype="int32", elems=8)
    checks = SumChecks(config, {0: 2}, [10])
    total = make_array(config.seed, 0, 10, "int32") + make_array(config.seed, 1, 10, "int32")
    everyone = Contributors(8, np.array([2, 2], np.uint8), np.array([3, 3], np.uint32))
    checks.check(0, 1, 0, total, everyone)
    checks.check(0, 1, 0, total, everyone)
    checks.check(0, 2, 0, total, everyone)
    checks.check(0, 2, 0, total + 1, everyone)  # the second worker's differs
    checks.check(0, 3, 0, total + 1, everyone)  # the first's is wrong
    assert checks.failed == {(0, 2), (0, 3)}


def test_a_program_keeps_calls_in_flight_up_to_keep():
    """Under stale:1 a Reduce with keep=1 returns at once with nothing, the next hands back the
    first call's sum, and Reduce(None) the last; Compute lets exactly its virtual time pass."""
    seen: dict[int, list] = {0: [], 1: []}
    with InProcessSwitch(elems=8, link=LINK, record=False) as net:
        net.add_job(0, 2, window=8, policy=Policy(staleness=1))
        programs = Programs(net)

        def program(rank: int):
            a, b = (np.full(100, rank + 1, np.int32), np.full(100, 10 * (rank + 1), np.int32))
            yield Compute(5e-6 * (rank + 1))
            seen[rank].append(("computed", net.now))
            seen[rank].append(("first", (yield Reduce(a, keep=1)), net.now))
            seen[rank].append(("second", [s.tolist()[:1] for s in (yield Reduce(b, keep=1))]))
            seen[rank].append(("last", [s.tolist()[:1] for s in (yield Reduce(None))]))

        for rank in range(2):
            programs.add(0, rank, program(rank), lambda core: core.result())
        programs.run()
    assert seen[0][0] == ("computed", 5e-6) and seen[1][0] == ("computed", 10e-6)
    assert seen[0][1] == ("first", [], 5e-6) and seen[1][1] == ("first", [], 10e-6)
    assert [s[1:] for s in seen[0][2:]] == [s[1:] for s in seen[1][2:]] == [([[3]],), ([[30]],)]
