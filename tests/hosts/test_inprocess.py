"""Worker cores against the real switch (both engines) on the harness's virtual clock: exact sums
for every rank, several jobs at once, and exact retransmission counts for chosen losses."""

import contextlib

import numpy as np
import pytest

from ina.hosts.cli import make_array, verify
from ina.hosts.core import WorkerError
from ina.hosts.inprocess import RESULT, UPDATE, Datagram, Drop, InProcessSwitch, RandomLoss

ENGINES = ["native", "python"]
INT32_MAX = 2**31 - 1


def retransmissions(net: InProcessSwitch) -> dict[int, list[int]]:
    return {job: [m.core.stats.retransmissions for m in members] for job, members in net.jobs.items()}


@contextlib.contextmanager
def two_jobs(engine: str, loss=(), timeout=1e-3, size: int = 100):
    """Job 0: 3 workers, int32, window 4: 13 chunks of E = 8, so slot 2 carries chunks 2, 6 and 10
    (uses 0, 1, 2: both sets, one twice). Job 1: 2 workers, float32, window 4. Both run at once; every
    rank's result is checked (int32 bit-exact, floats within docs/accuracy.md's bound)."""
    with InProcessSwitch(elems=8, engine=engine, loss=loss) as net:
        assert net.switch.engine_name == engine
        net.add_job(0, 3, window=4, timeout=timeout)
        net.add_job(1, 2, window=4)
        ints = [make_array(1, rank, size, "int32") for rank in range(3)]
        floats = [make_array(2, rank, size, "float32") for rank in range(2)]
        results = net.allreduce({0: ints, 1: floats})
        for got in results[0]:
            assert np.array_equal(got, np.sum(ints, axis=0, dtype=np.int32))
        for got in results[1]:
            ok, max_error = verify(got, 2, 2, size, "float32", 8)
            assert ok and max_error > 0
            assert np.array_equal(got, results[1][0])  # the same sums and exponents reach every rank
        assert net.stray == []
        yield net


@pytest.mark.parametrize("engine", ENGINES)
def test_several_jobs_sum_exactly_for_every_rank_without_a_retransmission(engine):
    with InProcessSwitch(elems=8, engine=engine) as net:
        net.add_job(0, 3, window=4)
        net.add_job(7, 4, window=3)
        ints = [make_array(3, rank, 100, "int32") for rank in range(3)]
        ints[0][:5], ints[1][:5], ints[2][:5] = INT32_MAX, 5, 0  # (2^31 - 1) + 5 wraps to -2^31 + 4
        floats = [make_array(4, rank, 90, "float32") for rank in range(4)]
        results = net.allreduce({0: ints, 7: floats})
        expected = np.sum(ints, axis=0, dtype=np.int32)
        assert list(expected[:5]) == [-(2**31) + 4] * 5
        assert all(np.array_equal(got, expected) for got in results[0])
        for got in results[7]:
            ok, max_error = verify(got, 4, 4, 90, "float32", 8)
            assert ok and max_error > 0
        # A second all-reduce continues every slot's set alternation on the switch.
        again = net.allreduce({0: [a[:50] for a in ints]})
        assert all(np.array_equal(got, expected[:50]) for got in again[0])
        for members in net.jobs.values():
            for m in members:
                s = m.core.stats
                assert (s.retransmissions, s.timeouts, s.duplicates, s.forged) == (0, 0, 0, 0)
                assert s.packets_sent == s.packets_received
        # job 0: 13 + 7 chunks; job 7: 12 chunks of 90 floats plus a use 0 per slot announcing exponents
        assert net.stats() == {"jobs": {0: {"accepted": 60, "completed": 20, "results_sent": 60},
                                        7: {"accepted": 60, "completed": 15, "results_sent": 60}}, "ports": {}}
        assert net.dropped == [] and net.stray == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_update_costs_its_sender_one_retransmission(engine):
    # Rank 1's timer is the shortest, so its retransmission completes the slot before the others' run out.
    lost = Drop(UPDATE, job=0, rank=1, slot=2, use=1, transmission=0)
    with two_jobs(engine, [lost], timeout=[2e-3, 1e-3, 2e-3]) as net:
        assert net.dropped == [Datagram(UPDATE, 0, 1, 2, 1, 1, 0)]
        assert retransmissions(net) == {0: [0, 1, 0], 1: [0, 0]}
        assert net.stats()["jobs"][0] == {"accepted": 39, "completed": 13, "results_sent": 39}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_update_times_out_every_worker_of_the_slot_when_their_timers_match(engine):
    # The slot cannot complete without the lost contribution, and every worker sent its own at the
    # same moment with the same RTO: all three time out together. Queued in rank order, rank 0's copy
    # is a duplicate of an incomplete slot, rank 1's completes it, rank 2's is answered from it.
    with two_jobs(engine, [Drop(UPDATE, job=0, rank=1, slot=2, use=1, transmission=0)]) as net:
        assert retransmissions(net) == {0: [1, 1, 1], 1: [0, 0]}
        assert net.stats()["jobs"][0] == {"accepted": 39, "completed": 13, "results_sent": 39, "duplicates": 1,
                                          "retrans_answered": 1}
        assert [m.core.stats.duplicates for m in net.jobs[0]] == [0, 0, 1]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_result_copy_is_answered_from_the_completed_set(engine):
    # Slot 2's last use: only rank 1 still waits on it, and the switch answers its retransmission alone.
    with two_jobs(engine, [Drop(RESULT, job=0, rank=1, slot=2, use=2, transmission=0)]) as net:
        assert net.dropped == [Datagram(RESULT, 0, 1, 2, 0, 2, 0)]
        assert retransmissions(net) == {0: [0, 1, 0], 1: [0, 0]}
        assert net.stats()["jobs"][0] == {"accepted": 39, "completed": 13, "results_sent": 39,
                                          "retrans_answered": 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_result_copy_mid_run_is_answered_while_the_others_moved_on(engine):
    # Use 1 of slot 2: ranks 0 and 2 already sent use 2 (the other set); rank 1's bit in use 1's set
    # stays, so its retransmission is still answered from the completed set.
    lost = Drop(RESULT, job=0, rank=1, slot=2, use=1, transmission=0)
    with two_jobs(engine, [lost], timeout=[2e-3, 1e-3, 2e-3]) as net:
        assert net.dropped == [Datagram(RESULT, 0, 1, 2, 1, 1, 0)]
        assert retransmissions(net) == {0: [0, 1, 0], 1: [0, 0]}
        assert net.stats()["jobs"][0]["retrans_answered"] == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_random_loss_both_ways_keeps_every_sum_exact(engine):
    with two_jobs(engine, [RandomLoss(update=0.01, result=0.01, seed=5)], size=2000) as net:
        assert {d.direction for d in net.dropped} == {UPDATE, RESULT}
        counts = retransmissions(net)
        assert all(counts[d.job][d.rank] > 0 for d in net.dropped)  # whoever lost one had to resend


def test_the_same_seed_drops_the_same_datagrams():
    dropped = []
    for _ in range(2):
        with two_jobs("native", [RandomLoss(update=0.02, result=0.02, seed=9)], size=400) as net:
            dropped.append(net.dropped)
    assert dropped[0] == dropped[1] and dropped[0]


def test_a_worker_cut_off_from_the_switch_fails_after_max_retries():
    with InProcessSwitch(elems=8, loss=[Drop(UPDATE, job=0, rank=1)]) as net:
        net.add_job(0, 2, window=2, max_retries=2)
        with pytest.raises(WorkerError, match=r"job 0 rank \d: no answer from the switch at 10\.0\.0\.254 after 2 "):
            net.allreduce({0: [np.ones(16, dtype=np.int32)] * 2})
