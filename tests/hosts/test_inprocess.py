"""Worker cores against the real switch (both engines) on the harness's virtual clock: exact sums
for every rank, several jobs at once, and exact retransmission counts for chosen losses."""

import contextlib
from collections import Counter

import numpy as np
import pytest

from ina.hosts.cli import make_array, verify
from ina.hosts.core import PACE_BURST, WorkerError
from ina.hosts.inprocess import RESULT, UPDATE, Datagram, Drop, InProcessSwitch, RandomLoss

ENGINES = ["native", "python"]
INT32_MAX = 2**31 - 1


def retransmissions(net: InProcessSwitch) -> dict[int, list[int]]:
    return {job: [m.core.stats.retransmissions for m in members] for job, members in net.jobs.items()}


def resend_delay(net: InProcessSwitch, lost: Datagram) -> float:
    """Virtual seconds from a lost datagram's first copy to the first resend of its (job, rank, slot,
    use) UPDATE: for a lost RESULT copy, the receiver's resend."""
    times = {d.transmission: t for t, d in net.sent
             if (UPDATE, d.job, d.rank, d.slot, d.use) == (UPDATE, lost.job, lost.rank, lost.slot, lost.use)
             and d.direction == UPDATE}
    first = next(t for t, d in net.sent if d == lost)
    return times[1] - first


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
                assert (s.retransmissions, s.timeouts, s.spurious, s.duplicates, s.forged) == (0, 0, 0, 0, 0)
                assert s.packets_sent == s.packets_received
        # job 0: 13 + 7 chunks; job 7: 12 chunks of 90 floats plus a use 0 per slot announcing exponents
        assert net.stats() == {"jobs": {0: {"accepted": 60, "completed": 20, "results_sent": 60},
                                        7: {"accepted": 60, "completed": 15, "results_sent": 60}}, "ports": {}}
        assert net.dropped == [] and net.stray == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_update_is_resent_by_its_sender_after_one_rtt_and_reordering_window(engine):
    # Latency 10 us per hop: RTT 20 us, reo_wnd 5 us. In slot 2 of a 3-worker job rank 1 resends
    # first ((1 + 2) mod 3 = 0 turns to wait): 25 us after the lost copy, not after an RTO (300 us);
    # its resend completes the slot and the multicast reaches the others before their turn.
    lost = Drop(UPDATE, job=0, rank=1, slot=2, use=1, transmission=0)
    with two_jobs(engine, [lost]) as net:
        assert net.dropped == [Datagram(UPDATE, 0, 1, 2, 1, 1, 0)]
        assert retransmissions(net) == {0: [0, 1, 0], 1: [0, 0]}
        assert resend_delay(net, net.dropped[0]) == pytest.approx(25e-6)
        assert sum(m.core.stats.timeouts for m in net.jobs[0]) == 0
        assert net.stats()["jobs"][0] == {"accepted": 39, "completed": 13, "results_sent": 39}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_update_whose_sender_waits_longest_costs_one_resend_per_worker_in_turn(engine):
    # Rank 0's UPDATE in slot 2: rank 1 goes first (25 us: a duplicate of an incomplete slot), rank
    # 2 second (50 us: another), rank 0 third (75 us): its resend completes the slot.
    lost = Drop(UPDATE, job=0, rank=0, slot=2, use=1, transmission=0)
    with two_jobs(engine, [lost]) as net:
        assert retransmissions(net) == {0: [1, 1, 1], 1: [0, 0]}
        assert resend_delay(net, net.dropped[0]) == pytest.approx(75e-6)
        assert net.stats()["jobs"][0] == {"accepted": 39, "completed": 13, "results_sent": 39, "duplicates": 2}


@pytest.mark.parametrize("engine", ENGINES)
def test_the_second_turn_is_not_preempted_by_the_rto_when_the_rtt_is_milliseconds(engine):
    # 1 ms per hop: RTT 2 ms (real runs' queueing makes it milliseconds), so the RTO sits at its floor,
    # 2 min_rtt = 4 ms, below the second turn (2 x (RTT + reo_wnd) = 5 ms). Rank 0's UPDATE in slot 1
    # of use 6: rank 1 resends first (a duplicate), rank 0 second, by RACK: no timeout (which would
    # double the RTO for every slot) and no resend at both workers at once.
    lost = Drop(UPDATE, job=0, rank=0, slot=1, use=6, transmission=0)
    with InProcessSwitch(elems=8, engine=engine, latency=1e-3, loss=[lost]) as net:
        net.add_job(0, 2, window=4, timeout=0.05)
        arrays = [make_array(1, rank, 256, "int32") for rank in range(2)]
        results = net.allreduce({0: arrays})
        assert all(np.array_equal(got, np.sum(arrays, axis=0, dtype=np.int32)) for got in results[0])
        assert retransmissions(net) == {0: [1, 1]}
        assert [m.core.stats.timeouts for m in net.jobs[0]] == [0, 0]
        assert resend_delay(net, net.dropped[0]) == pytest.approx(2 * (2e-3 + 0.5e-3), abs=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_burst_of_lost_updates_is_resent_in_turn_without_a_timeout(engine):
    rules = [Drop(UPDATE, job=0, rank=1, slot=slot, use=1, transmission=0) for slot in (0, 1, 2)]
    with two_jobs(engine, rules) as net:
        assert len(net.dropped) == 3
        assert retransmissions(net) == {0: [2, 3, 1], 1: [0, 0]}  # slot 0: rank 0 first, slot 1: 2, 0, 1
        assert sum(m.core.stats.timeouts for m in net.jobs[0]) == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_stall_is_recovered_paced_not_in_one_burst(engine):
    # Every first copy of every slot's second use is lost: no answer comes for an RTO (300 us, 15
    # RTTs). Each worker then resends its 16 slots, at most PACE_BURST at a time.
    with InProcessSwitch(elems=8, engine=engine, loss=[Drop(UPDATE, job=0, use=1, transmission=0)]) as net:
        net.add_job(0, 2, window=16)
        arrays = [make_array(1, rank, 400, "int32") for rank in range(2)]
        results = net.allreduce({0: arrays})
        assert all(np.array_equal(got, np.sum(arrays, axis=0, dtype=np.int32)) for got in results[0])
        assert retransmissions(net) == {0: [16, 16]}
        assert [m.core.stats.timeouts for m in net.jobs[0]] == [PACE_BURST] * 2  # the oldest, then RACK
        bursts = Counter((t, d.rank) for t, d in net.sent if d.transmission)
        assert max(bursts.values()) == PACE_BURST and len(bursts) == 2 * 16 // PACE_BURST


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_result_copy_is_answered_from_the_completed_set(engine):
    # Slot 2's last use: only rank 1 still waits on it, and the switch answers its retransmission alone.
    with two_jobs(engine, [Drop(RESULT, job=0, rank=1, slot=2, use=2, transmission=0)]) as net:
        assert net.dropped == [Datagram(RESULT, 0, 1, 2, 0, 2, 0)]
        assert retransmissions(net) == {0: [0, 1, 0], 1: [0, 0]}
        assert resend_delay(net, net.dropped[0]) == pytest.approx(25e-6 - 10e-6)  # the copy left the switch 1 hop after the UPDATE
        assert net.stats()["jobs"][0] == {"accepted": 39, "completed": 13, "results_sent": 39,
                                          "retrans_answered": 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_result_copy_mid_run_is_answered_while_the_others_moved_on(engine):
    # Use 1 of slot 2: ranks 0 and 2 already sent use 2 (the other set); rank 1's bit in use 1's set
    # stays, so its retransmission is still answered from the completed set.
    lost = Drop(RESULT, job=0, rank=1, slot=2, use=1, transmission=0)
    with two_jobs(engine, [lost]) as net:
        assert net.dropped == [Datagram(RESULT, 0, 1, 2, 1, 1, 0)]
        assert retransmissions(net) == {0: [0, 1, 0], 1: [0, 0]}
        assert net.stats()["jobs"][0]["retrans_answered"] == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_random_loss_both_ways_keeps_every_sum_exact(engine):
    with two_jobs(engine, [RandomLoss(update=0.01, result=0.01, seed=5)], size=2000) as net:
        assert {d.direction for d in net.dropped} == {UPDATE, RESULT}
        counts = retransmissions(net)
        assert all(counts[d.job][d.rank] > 0 for d in net.dropped)  # whoever lost one had to resend


@pytest.mark.parametrize(("loss", "seed"), [(0.01, 1), (0.05, 2), (0.10, 3)])
def test_seeded_loss_costs_about_one_and_a_half_resends_per_lost_packet(loss, seed):
    # 2 workers: a lost UPDATE costs 1 or 2 resends (whose turn comes first), a lost RESULT copy 1,
    # or 2 when the other worker's next use of the slot waits on it.
    with InProcessSwitch(elems=8, loss=[RandomLoss(loss, loss, seed)]) as net:
        net.add_job(0, 2, window=16)
        arrays = [make_array(1, rank, 8000, "int32") for rank in range(2)]
        results = net.allreduce({0: arrays})
        assert all(np.array_equal(got, np.sum(arrays, axis=0, dtype=np.int32)) for got in results[0])
        resent = sum(retransmissions(net)[0])
        assert len(net.dropped) <= resent <= 1.6 * len(net.dropped)  # 1.51 at 1%: issue 14 asks 1.5


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
