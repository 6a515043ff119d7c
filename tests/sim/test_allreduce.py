"""A simulated all-reduce through the real switch program: every int32 sum bit-exact against numpy,
the communication time against docs/simulation.md's formulas, and losses and drops recovered."""

import gc

import numpy as np
import pytest

from ina.controller.aggregation import BurstLoss
from ina.hosts.chunks import Contributors
from ina.hosts.cli import make_array
from ina.p4src.protocol import Policy
from ina.sim import allreduce
from ina.sim.allreduce import (
    AllReduceConfig,
    lossless_time,
    report,
    simulate,
    verify_sums,
    window_covers_path,
)
from ina.sim.links import LinkSpec
from ina.sim.nodes import HostSpec

RATE = 100e9


def expected(config: AllReduceConfig) -> np.ndarray:
    return np.sum(
        [make_array(config.seed, r, config.size, config.dtype) for r in range(config.workers)],
        axis=0,
        dtype=np.int32,
    )


@pytest.mark.parametrize("workers", [2, 8, 32])
def test_every_rank_gets_the_int32_sum_bit_exact(workers):
    config = AllReduceConfig(workers=workers, size=3000, seed=workers)
    result = simulate(config)
    total = expected(config)
    assert all(np.array_equal(got, total) for got in result.results)
    assert result.verified and result.retransmissions == [0] * workers
    chunks = -(-3000 // 64)
    assert result.switch["s1"]["jobs"][0] == {
        "accepted": workers * chunks,
        "completed": chunks,
        "results_sent": workers * chunks,
    }
    assert (
        result.arrivals == 2 * workers * chunks
    )  # every UPDATE reached the switch, every copy its worker


def test_each_jobs_sum_is_verified_once_and_a_rank_that_differs_on_its_own(monkeypatch):
    checked = []
    real = allreduce.verify

    def counting(*args, **kwargs):
        checked.append(args[1])  # the seed: config.seed + job
        return real(*args, **kwargs)

    monkeypatch.setattr(allreduce, "verify", counting)
    config = AllReduceConfig(workers=6, jobs=2, size=300, seed=5)
    result = simulate(config)
    assert result.verified and checked == [5, 6]  # 6 ranks, 2 jobs: one check each
    sums = [
        (job, got, m_counted)
        for (job, _rank, _host), got, m_counted in zip(
            result.workers, result.results, contributors(result), strict=True
        )
    ]
    wrong = sums[1][1].copy()
    wrong[7] += 1
    sums[1] = (sums[1][0], wrong, sums[1][2])
    checks = verify_sums(config, {0: 3, 1: 3}, sums)
    assert [ok for ok, _error in checks] == [True, False, True, True, True, True]
    assert checks[1][1] == 1.0


def contributors(result):
    """Each worker's contributors as a full run gives them: every chunk counted by all its ranks."""
    chunks = -(-result.config.size // result.config.elems)
    counts = np.full(chunks, 3, dtype=np.uint16)
    return [Contributors(result.config.elems, counts, np.full(chunks, 0b111, np.uint32))] * len(
        result.workers
    )


def test_lossless_and_large_the_time_is_the_link_bound_formula():
    # docs/simulation.md: T = C * s + (s + 2 d + P), with s = (frame + 24) * 8 / rate. Within 2% is
    # what the issue asks; the model is exactly link-bound here, so it holds to float rounding.
    config = AllReduceConfig(
        workers=8,
        size=1 << 18,
        window=128,
        pipeline=500e-9,
        link=LinkSpec(rate=RATE, delay=1e-6, queue=1 << 20),
    )
    s = (14 + 20 + 8 + 22 + 4 * 64 + 24) * 8 / RATE
    chunks = (1 << 18) // 64
    formula = chunks * s + (s + 2 * 1e-6 + 500e-9)
    assert window_covers_path(config) and lossless_time(config) == pytest.approx(formula, rel=1e-12)
    result = simulate(config)
    assert result.communication_s == pytest.approx(formula, rel=0.02)
    assert result.communication_s == pytest.approx(formula, rel=1e-9)
    assert result.verified and sum(result.retransmissions) == 0
    for _name, up, down in result.links:
        assert (up.frames, down.frames, up.dropped + down.dropped) == (chunks, chunks, 0)
        assert (
            up.peak_queue == 127 * 320
        )  # the first window waits in the NIC; the switch's ports never queue
        assert down.peak_queue == 0


def test_float32_sends_one_more_use_per_slot_and_keeps_to_the_formula():
    # Each slot's first use announces its exponent: C + W packets per worker, the W all zeros, so
    # ZERO frames (the headers alone), and a slot's first chunk leaves when that use's RESULT is back.
    config = AllReduceConfig(workers=4, size=1 << 14, dtype="float32", window=128)
    s, z = (14 + 20 + 8 + 22 + 4 * 64 + 24) * 8 / RATE, (14 + 20 + 8 + 22 + 24) * 8 / RATE
    formula = max(128 * z, 2 * z + 2 * 1e-6) + 256 * s + (s + 2 * 1e-6)
    result = simulate(config)
    assert window_covers_path(config) and lossless_time(config) == pytest.approx(formula, rel=1e-12)
    assert result.communication_s == pytest.approx(formula, rel=1e-9) and result.verified


def test_a_host_that_cannot_keep_up_sets_the_time_with_its_cpu():
    # 1 us of CPU per chunk (send + receive) against 27 ns on the wire: the CPU never idles.
    config = AllReduceConfig(
        workers=4, size=1 << 14, host=HostSpec(send_cost=0.4e-6, recv_cost=0.6e-6)
    )
    result = simulate(config)
    assert result.communication_s == pytest.approx(256 * 1e-6, rel=1e-9) == lossless_time(config)
    assert result.verified


def test_a_window_that_does_not_cover_the_path_is_slower_than_the_link_bound():
    config = AllReduceConfig(
        workers=2, size=1 << 13, window=4, link=LinkSpec(rate=RATE, delay=5e-6)
    )
    assert not window_covers_path(config)
    assert simulate(config).communication_s > 1.5 * lossless_time(config)


@pytest.mark.parametrize("loss", [0.02, BurstLoss(0.0, 0.5, 0.02, 0.2)], ids=["uniform", "burst"])
def test_losses_on_the_links_are_recovered_and_every_sum_stays_exact(loss):
    config = AllReduceConfig(
        workers=4, size=20000, link=LinkSpec(rate=RATE, delay=1e-6, loss=loss), seed=3
    )
    result = simulate(config)
    lost = sum(up.lost + down.lost for _n, up, down in result.links)
    assert lost > 0 and sum(result.retransmissions) >= sum(up.lost for _n, up, _d in result.links)
    assert all(np.array_equal(got, expected(config)) for got in result.results)


def test_at_100_gbps_the_rto_floor_follows_the_path_so_a_late_loss_costs_microseconds():
    # 8 workers x 65,536 int32, 1% loss on every link, seed 1: 30.208 us without loss. With a host's
    # RTO floor (MIN_RTO = 300 us) a worker that loses something of its last slots waits 300 us
    # for it: 361.4 us. With the path's floor (2 min_rtt, the simulator's default) the RTO follows
    # the measured RTT: the slowest finishes at 70.5 us.
    link = LinkSpec(rate=100e9, delay=1e-6, queue=1 << 20, loss=0.01)
    config = AllReduceConfig(workers=8, size=65536, link=link)
    result = simulate(config)
    assert config.min_rto == 0.0 and result.verified and sum(result.retransmissions) == 273
    assert result.communication_s == pytest.approx(70.49909139815489e-6, rel=1e-9)
    assert lossless_time(config) == pytest.approx(30.208e-6, rel=1e-9)


def test_a_multicasts_copies_reaching_their_workers_together_are_one_event():
    # 4 workers x 16 chunks over like links: 64 UPDATEs reach the switch, and each of the 16
    # completions multicasts 4 RESULT copies that reach their workers at one instant: one event,
    # not 4. With the workers' 16 timer events: 96 events for 128 arrivals (144 a copy apiece).
    result = simulate(AllReduceConfig(workers=4, size=1024))
    assert (result.arrivals, result.events, result.verified) == (128, 96, True)
    assert result.communication_s == pytest.approx(
        lossless_time(AllReduceConfig(workers=4, size=1024)), rel=1e-12
    )


def test_a_small_queue_drops_the_first_window_and_the_workers_recover():
    config = AllReduceConfig(
        workers=4, size=20000, link=LinkSpec(rate=RATE, delay=1e-6, queue=3000)
    )
    result = simulate(config)
    for _name, up, _down in result.links:
        # The NIC holds 9 frames behind the one on the wire: 118 of the first window are dropped
        # at once (and some of the resends the stall then brings).
        assert up.peak_queue == 3000 // 320 * 320 and up.dropped >= 128 - 1 - 3000 // 320
    assert all(np.array_equal(got, expected(config)) for got in result.results)


@pytest.mark.parametrize("policy", [Policy(quorum=3), Policy(staleness=1)], ids=str)
def test_float32_under_a_policy_is_within_the_quantization_bound(policy):
    config = AllReduceConfig(
        workers=4,
        size=5000,
        dtype="float32",
        policy=policy,
        link=LinkSpec(rate=10e9, delay=2e-6, loss=0.01),
    )
    result = simulate(config)
    assert result.verified and 0 < result.max_abs_error < 1e-4


def test_the_report_has_every_figure_and_keeps_the_wall_clock_apart():
    config = AllReduceConfig(
        workers=2, size=1000, link=LinkSpec(rate=RATE, delay=1e-6, loss=BurstLoss(0, 0.5, 0.1, 0.5))
    )
    data = report(simulate(config), "abc1234")
    assert set(data) == {"config", "seed", "git", "results", "wall"}
    assert data["config"]["link"]["loss"] == {
        "burst": {"loss_good": 0, "loss_bad": 0.5, "p_gb": 0.1, "p_bg": 0.5}
    }
    assert data["config"]["host"]["nic_rate"] is None  # unlimited: JSON has no infinity
    assert (data["seed"], data["git"]) == (1, "abc1234")
    assert (data["config"]["timeout_s"], data["config"]["min_rto_s"]) == (1e-3, 0.0)
    assert set(data["wall"]) == {"setup_s", "run_s", "arrivals_per_s"}
    assert [link["link"] for link in data["results"]["links"]] == ["h1-s1", "h2-s1"]


def test_the_cyclic_collector_is_off_while_a_run_runs_and_on_after():
    seen: list[bool] = []

    def watch(net) -> None:
        net.sim.at(0.0, lambda _now: seen.append(gc.isenabled()))

    assert gc.isenabled()
    result = simulate(AllReduceConfig(workers=2, size=256), watch=watch)
    assert result.verified and seen == [False] and gc.isenabled()
