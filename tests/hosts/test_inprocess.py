"""Worker cores against the real switch (both engines) on the harness's virtual clock: exact sums
for every rank, several jobs at once, and exact retransmission counts for chosen losses."""

import contextlib
import math
from collections import Counter

import numpy as np
import pytest

from ina import compiled
from ina.hosts.cli import make_array, verify
from ina.hosts.core import MIN_RTO, PACE_BURST, AllReduceCore, WorkerError
from ina.hosts.inprocess import (
    FRAME_HEADERS,
    RESULT,
    STATUS,
    UPDATE,
    Datagram,
    Drop,
    InProcessSwitch,
    RandomLoss,
)
from ina.p4src.protocol import Policy, slot_of

ENGINES = ["native", "python"]
INT32_MAX = 2**31 - 1


def retransmissions(net: InProcessSwitch) -> dict[int, list[int]]:
    return {
        job: [m.core.stats.retransmissions for m in members] for job, members in net.jobs.items()
    }


def resend_delay(net: InProcessSwitch, lost: Datagram) -> float:
    """Virtual seconds from a lost datagram's first copy to the first resend of its (job, rank, slot,
    use) UPDATE: for a lost RESULT copy, the receiver's resend."""
    times = {
        d.transmission: t
        for t, d in net.sent
        if (UPDATE, d.job, d.rank, d.slot, d.use)
        == (UPDATE, lost.job, lost.rank, lost.slot, lost.use)
        and d.direction == UPDATE
    }
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
            assert np.array_equal(
                got, results[1][0]
            )  # the same sums and exponents reach every rank
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
                assert (s.retransmissions, s.timeouts, s.spurious, s.duplicates, s.forged) == (
                    0,
                    0,
                    0,
                    0,
                    0,
                )
                assert s.packets_sent == s.packets_received
        # job 0: 13 + 7 chunks; job 7: 12 chunks of 90 floats plus a use 0 per slot announcing exponents
        assert net.stats() == {
            "jobs": {
                0: {"accepted": 60, "completed": 20, "results_sent": 60},
                7: {"accepted": 60, "completed": 15, "results_sent": 60},
            },
            "ports": {},
        }
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
def test_a_lost_update_whose_sender_waits_longest_is_resent_on_the_status_of_the_first_in_turn(
    engine,
):
    # Rank 0's UPDATE in slot 2: rank 1 goes first (25 us: a duplicate of an incomplete slot). The
    # switch multicasts a STATUS: rank 0, missing from its bitmap, resends at once (45 us, before its
    # turn at 75 us) and completes the slot; rank 2, counted, skips its turn (50 us).
    lost = Drop(UPDATE, job=0, rank=0, slot=2, use=1, transmission=0)
    with two_jobs(engine, [lost]) as net:
        assert retransmissions(net) == {0: [1, 1, 0], 1: [0, 0]}
        assert [m.core.stats.statuses for m in net.jobs[0]] == [0, 1, 1]
        assert resend_delay(net, net.dropped[0]) == pytest.approx(45e-6)
        assert net.stats()["jobs"][0] == {
            "accepted": 39,
            "completed": 13,
            "results_sent": 39,
            "duplicates": 1,
        }


@pytest.mark.parametrize("engine", ENGINES)
def test_the_loser_resends_on_the_status_before_its_turn_and_rto_when_the_rtt_is_milliseconds(
    engine,
):
    # 1 ms per hop: RTT 2 ms (real runs' queueing makes it milliseconds), so the RTO sits at its floor,
    # 2 min_rtt = 4 ms, below the second turn (2 x (RTT + reo_wnd) = 5 ms). Rank 0's UPDATE in slot 1
    # of use 6: rank 1 resends first (a duplicate, 2.5 ms), and rank 0 on the STATUS an RTT later:
    # no timeout (which would double the RTO for every slot) and no resend at both workers at once.
    lost = Drop(UPDATE, job=0, rank=0, slot=1, use=6, transmission=0)
    with InProcessSwitch(elems=8, engine=engine, latency=1e-3, loss=[lost]) as net:
        net.add_job(0, 2, window=4, timeout=0.05)
        arrays = [make_array(1, rank, 256, "int32") for rank in range(2)]
        results = net.allreduce({0: arrays})
        assert all(
            np.array_equal(got, np.sum(arrays, axis=0, dtype=np.int32)) for got in results[0]
        )
        assert retransmissions(net) == {0: [1, 1]}
        assert [m.core.stats.timeouts for m in net.jobs[0]] == [0, 0]
        assert resend_delay(net, net.dropped[0]) == pytest.approx(2e-3 + 0.5e-3 + 2e-3, abs=1e-6)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_burst_of_lost_updates_is_resent_in_turn_without_a_timeout(engine):
    rules = [Drop(UPDATE, job=0, rank=1, slot=slot, use=1, transmission=0) for slot in (0, 1, 2)]
    with two_jobs(engine, rules) as net:
        assert len(net.dropped) == 3
        # Slot 0: rank 0 first, then rank 1 on its STATUS; slot 1: rank 2, then rank 1; slot 2: rank 1.
        assert retransmissions(net) == {0: [1, 3, 1], 1: [0, 0]}
        assert sum(m.core.stats.timeouts for m in net.jobs[0]) == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_stall_is_recovered_paced_not_in_one_burst(engine):
    # Every first copy of every slot's second use is lost: no answer comes for an RTO (300 us, 15
    # RTTs). Each worker then resends its 16 slots, at most PACE_BURST at a time: the oldest alone
    # at the RTO (one timer for the path); its RESULT (a loss recovered) releases the timer, so the
    # next go at once, paced; the rest by RACK, once the uses after those are answered.
    with InProcessSwitch(
        elems=8, engine=engine, loss=[Drop(UPDATE, job=0, use=1, transmission=0)]
    ) as net:
        net.add_job(0, 2, window=16)
        arrays = [make_array(1, rank, 400, "int32") for rank in range(2)]
        results = net.allreduce({0: arrays})
        assert all(
            np.array_equal(got, np.sum(arrays, axis=0, dtype=np.int32)) for got in results[0]
        )
        assert retransmissions(net) == {0: [16, 16]}
        assert [m.core.stats.timeouts for m in net.jobs[0]] == [2, 2]
        bursts = Counter((t, d.rank) for t, d in net.sent if d.transmission)
        # per worker: the 2 timeouts alone, one pair, and 3 bursts of PACE_BURST
        assert sorted(Counter(bursts.values()).items()) == [(1, 4), (2, 2), (PACE_BURST, 6)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_lost_result_copy_is_answered_from_the_completed_set(engine):
    # Slot 2's last use: only rank 1 still waits on it, and the switch answers its retransmission alone.
    with two_jobs(engine, [Drop(RESULT, job=0, rank=1, slot=2, use=2, transmission=0)]) as net:
        assert net.dropped == [Datagram(RESULT, 0, 1, 2, 0, 2, 0)]
        assert retransmissions(net) == {0: [0, 1, 0], 1: [0, 0]}
        assert resend_delay(net, net.dropped[0]) == pytest.approx(
            25e-6 - 10e-6
        )  # the copy left the switch 1 hop after the UPDATE
        assert net.stats()["jobs"][0] == {
            "accepted": 39,
            "completed": 13,
            "results_sent": 39,
            "retrans_answered": 1,
        }


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
        assert {UPDATE, RESULT} <= {d.direction for d in net.dropped}
        counts = retransmissions(
            net
        )  # whoever lost an UPDATE or RESULT had to resend (a STATUS: maybe not)
        assert all(counts[d.job][d.rank] > 0 for d in net.dropped if d.direction != STATUS)


@pytest.mark.parametrize(("loss", "seed"), [(0.01, 1), (0.05, 2), (0.10, 3)])
def test_seeded_loss_costs_about_one_and_a_half_resends_per_lost_packet(loss, seed):
    # 2 workers: a lost UPDATE costs 1 or 2 resends (whose turn comes first), a lost RESULT copy 1,
    # or 2 when the other worker's next use of the slot waits on it.
    with InProcessSwitch(elems=8, loss=[RandomLoss(loss, loss, seed)]) as net:
        net.add_job(0, 2, window=16)
        arrays = [make_array(1, rank, 8000, "int32") for rank in range(2)]
        results = net.allreduce({0: arrays})
        assert all(
            np.array_equal(got, np.sum(arrays, axis=0, dtype=np.int32)) for got in results[0]
        )
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
        # Rank 0 is counted in every slot (STATUS), so it says whom the slot waits for.
        with pytest.raises(
            WorkerError,
            match=r"job 0 rank 0: slot \d was still waiting for rank\(s\) \[1\] after 2 ",
        ):
            net.allreduce({0: [np.ones(16, dtype=np.int32)] * 2})


def check_sums(
    net: InProcessSwitch, job: int, arrays: list[np.ndarray], results: list[np.ndarray]
) -> list:
    """Every rank's sum of each chunk is exactly (int32 wraparound) the numpy sum of the ranks its
    bitmap names, the count is their number, and a chunk with no sum is 0. Returns each rank's
    Contributors."""
    elems = net.elems
    per_rank = []
    for member, got in zip(net.jobs[job], results, strict=True):
        contributors = member.core.contributors()
        for chunk, (count, bitmap) in enumerate(
            zip(contributors.counts, contributors.bitmaps, strict=True)
        ):
            ranks = [r for r in range(len(arrays)) if int(bitmap) >> r & 1]
            part = slice(chunk * elems, (chunk + 1) * elems)
            expected = np.sum(
                [arrays[r][part] for r in ranks] or [np.zeros(elems, np.int32)],
                axis=0,
                dtype=np.int32,
            )
            assert count == len(ranks) and np.array_equal(got[part], expected), (member.rank, chunk)
        per_rank.append(contributors)
    return per_rank


def int_arrays(n: int, size: int) -> list[np.ndarray]:
    return [make_array(11, rank, size, "int32") for rank in range(n)]


@pytest.mark.parametrize(
    ("n", "lost", "resends", "statuses"),
    [
        # Slot 2's turns: rank r waits 1 + (r + 2) mod n allowances. The loser's resend, if first,
        # completes the slot; else the first in turn resends, and the STATUS the switch multicasts tells
        # every counted worker to skip its turn and the loser to resend at once: two resends at most.
        (2, 0, [1, 0], [0, 0]),
        (2, 1, [1, 1], [1, 0]),
        (4, 1, [0, 1, 1, 0], [1, 0, 1, 1]),
        (4, 2, [0, 0, 1, 0], [0, 0, 0, 0]),
    ],
)
def test_a_single_lost_update_costs_its_senders_resend_and_at_most_one_other(
    n, lost, resends, statuses
):
    with InProcessSwitch(
        elems=8, loss=[Drop(UPDATE, job=0, rank=lost, slot=2, use=1, transmission=0)]
    ) as net:
        net.add_job(0, n, window=4)
        arrays = int_arrays(n, 100)
        results = net.allreduce({0: arrays})[0]
        assert all(c.counts.tolist() == [n] * 13 for c in check_sums(net, 0, arrays, results))
        assert retransmissions(net) == {0: resends}
        assert [m.core.stats.statuses for m in net.jobs[0]] == statuses
        assert [m.core.stats.timeouts for m in net.jobs[0]] == [0] * n
        assert (
            net.stats()["jobs"][0].get("duplicates", 0) == sum(resends) - 1
        )  # each multicasts a STATUS


@pytest.mark.parametrize(
    ("n", "rank", "use", "resends"),
    [
        # The last use of slot 2 (round 3): only the loser waits; the switch answers its resend with the
        # RESULT from the completed slot.
        (2, 1, 3, [0, 1]),
        (4, 1, 3, [0, 1, 0, 0]),
        # Mid-run (round 1): the others' next use (round 2) waits on the loser too. Rank 1 goes last in
        # slot 2 of 4: rank 2 resends round 2 first, and the STATUS of round 2 tells rank 1 its RESULT
        # copy of round 1 was lost, so it asks at once; rank 2 goes first and is answered before
        # anyone's turn.
        (2, 1, 1, [1, 1]),
        (4, 1, 1, [0, 1, 1, 0]),
        (4, 2, 1, [0, 0, 1, 0]),
    ],
)
def test_a_single_lost_result_copy_costs_its_receiver_one_resend_and_the_others_their_turns(
    n, rank, use, resends
):
    with InProcessSwitch(
        elems=8, loss=[Drop(RESULT, job=0, rank=rank, slot=2, use=use, transmission=0)]
    ) as net:
        net.add_job(0, n, window=4)
        arrays = int_arrays(n, 128)
        results = net.allreduce({0: arrays})[0]
        check_sums(net, 0, arrays, results)
        assert retransmissions(net) == {0: resends}
        assert net.stats()["jobs"][0]["retrans_answered"] == 1
        # A resend of round 2 is a duplicate: its STATUS reaches the n - 1 workers counted in round 2.
        assert sum(m.core.stats.statuses for m in net.jobs[0]) == (sum(resends) - 1) * (n - 1)
        assert [m.core.stats.timeouts for m in net.jobs[0]] == [0] * n


@pytest.mark.parametrize("engine", ENGINES)
def test_quorum_3_of_4_completes_without_a_worker_whose_updates_are_all_lost(engine):
    # Rank 3 reaches the switch never; the others complete every slot with 3 and their sums are
    # exactly theirs. Rank 3 takes the multicast RESULTs of its rounds all the same and finishes.
    with InProcessSwitch(elems=8, engine=engine, loss=[Drop(UPDATE, job=0, rank=3)]) as net:
        net.add_job(0, 4, window=4, policy=Policy(quorum=3))
        arrays = int_arrays(4, 100)
        results = net.allreduce({0: arrays})[0]
        for contributors in check_sums(net, 0, arrays, results):
            assert contributors.counts.tolist() == [3] * 13 and set(
                contributors.bitmaps.tolist()
            ) == {0b0111}
        assert all(np.array_equal(got, results[0]) for got in results)
        assert retransmissions(net) == {0: [0, 0, 0, 0]}
        assert net.stats()["jobs"][0] == {"accepted": 39, "completed": 13, "results_sent": 52}


def test_quorum_3_of_4_with_a_straggler_answers_its_late_contributions_with_the_result():
    # Rank 3's UPDATEs take 35 us more than the others' (RTT 20 us) and its multicast copies are all
    # lost: it learns each sum from the switch's answer to its late contribution (never added), or,
    # once the others are two uses of a slot ahead, from a STATUS that the use is gone.
    loss = [Drop(RESULT, job=0, rank=3, transmission=0)]
    with InProcessSwitch(elems=8, loss=loss) as net:
        net.add_job(0, 4, window=4, policy=Policy(quorum=3), delays={3: 35e-6})
        arrays = int_arrays(4, 400)
        results = net.allreduce({0: arrays})[0]
        per_rank = check_sums(net, 0, arrays, results)
        for contributors in per_rank[:3]:
            assert contributors.missing.size == 0 and set(contributors.counts.tolist()) == {3}
        late = per_rank[3]
        assert 0 < late.missing.size < 50 and not (late.bitmaps[late.counts > 0] & 0b1000).any()
        assert all(
            np.array_equal(results[3][c * 8 : c * 8 + 8], results[0][c * 8 : c * 8 + 8])
            for c in range(50)
            if late.counts[c]
        )
        counters = net.stats()["jobs"][0]
        assert counters["late"] == 50 - late.missing.size and counters["stale"] > 0
        assert (counters["accepted"], counters["completed"]) == (150, 50)


def test_a_result_of_a_later_round_on_the_same_set_is_not_taken_for_the_round_a_slot_is_on():
    # Rank 3 is 100 us late and loses round 0's multicast in slot 0: while it waits on round 0, the
    # RESULTs of rounds 1 and 2 (set 0 again) reach it. Taking round 2's for round 0 would give chunk
    # 0 the sum of chunk 8; it is ignored, and chunk 0 has no sum once the switch says round 0 is gone.
    loss = [Drop(RESULT, job=0, rank=3, slot=0, use=0, transmission=0)]
    with InProcessSwitch(elems=8, loss=loss) as net:
        net.add_job(0, 4, window=4, policy=Policy(quorum=3), delays={3: 100e-6})
        arrays = int_arrays(4, 100)
        results = net.allreduce({0: arrays})[0]
        late = check_sums(net, 0, arrays, results)[3]
        assert 0 in late.missing and not results[3][:8].any()
        assert net.jobs[0][3].core.stats.duplicates >= 2


@pytest.mark.parametrize(
    ("timeout_us", "resends", "statuses"),
    [
        # Past 50 us, the first resend of each slot (the RTO, 1 ms: no use is answered without one, so
        # there is never an RTT sample) completes it; the other worker's resend gets the RESULT.
        (50, [13, 13, 13], [0, 0, 0]),
        # Before the deadline (5 ms) the switch answers a resend with a STATUS to every worker (so both
        # counted ones hear of each); the RTO doubles per timeout (no RTT sample comes), one use per
        # expiry of the path's timer, until a resend passes the deadline and completes the slot.
        # Rank 2's RESULTs all come past its timer: no RTT sample, so its RTO stays the first (1 ms),
        # backed off, and it resends 18 times.
        (5000, [17, 17, 18], [8, 8, 0]),
    ],
)
def test_a_timeout_completes_each_slot_with_the_workers_that_sent(timeout_us, resends, statuses):
    # Rank 2 never reaches the switch; ranks 0 and 1 complete every slot with the two of them once
    # the deadline passed (the switch's clock is the harness's), and rank 2 takes the RESULTs.
    with InProcessSwitch(elems=8, loss=[Drop(UPDATE, job=0, rank=2)]) as net:
        net.add_job(0, 3, window=4, policy=Policy(timeout_us=timeout_us))
        arrays = int_arrays(3, 100)
        results = net.allreduce({0: arrays})[0]
        for contributors in check_sums(net, 0, arrays, results):
            assert contributors.counts.tolist() == [2] * 13 and set(
                contributors.bitmaps.tolist()
            ) == {0b011}
        assert retransmissions(net) == {0: resends}
        assert [m.core.stats.statuses for m in net.jobs[0]] == statuses
        counters = net.stats()["jobs"][0]
        assert (counters["completed"], counters["timeouts"], counters["retrans_answered"]) == (
            13,
            13,
            13,
        )


@pytest.mark.parametrize(
    "policy",
    [
        Policy(),
        Policy(quorum=3),
        Policy(quorum=2, timeout_us=200),
        Policy(timeout_us=50),
        Policy(staleness=2),
    ],
    ids=str,
)
def test_under_one_percent_loss_every_sum_is_exactly_the_contributions_its_bitmap_names(policy):
    with InProcessSwitch(elems=8, loss=[RandomLoss(0.01, 0.01, seed=21)]) as net:
        net.add_job(0, 4, window=16, policy=policy)
        arrays = int_arrays(4, 4000)
        results = net.allreduce({0: arrays})[0]
        per_rank = check_sums(net, 0, arrays, results)
        assert net.dropped
        if policy == Policy():
            assert all(c.counts.tolist() == [4] * 500 for c in per_rank)
        # A second all-reduce on the same slots: their rounds carry on.
        again = net.allreduce({0: [a[:800] for a in arrays]})[0]
        check_sums(net, 0, [a[:800] for a in arrays], again)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_a_worker_two_calls_behind_under_a_quorum_takes_every_sum_the_others_had(dtype):
    # Ranks 0-2 complete calls 0 and 1 under quorum 3 of 4 before rank 3 starts call 0, and call 2
    # while rank 3 catches up: every RESULT reaching rank 3 is of a use its slot is not on yet (the
    # switch replaced those uses long ago). It holds them and takes each when its slot gets there:
    # no chunk is missing, its sums are the others' to the bit, and it sends nothing.
    with InProcessSwitch(elems=8) as net:
        cores = net.add_job(0, 4, window=4, policy=Policy(quorum=3))
        calls = [
            [make_array(20 + call, rank, 100, dtype) for rank in range(4)] for call in range(3)
        ]
        got: dict[int, list] = {rank: [] for rank in range(4)}

        def run(call: int, ranks: range) -> None:
            for rank in ranks:
                net.start(0, rank, calls[call][rank])
            net.run(until=lambda: all(cores[r].finished for r in ranks))
            for rank in ranks:
                got[rank].append((cores[rank].result(), cores[rank].contributors()))

        run(0, range(3))
        run(1, range(3))
        run(0, range(3, 4))
        run(2, range(3))
        run(1, range(3, 4))
        net.run()
        run(2, range(3, 4))
        for call in range(3):
            first, _ = got[0][call]
            for result, contributors in (got[rank][call] for rank in range(4)):
                assert np.array_equal(result, first), call
                assert contributors.counts.tolist() == [3] * 13 and set(
                    contributors.bitmaps.tolist()
                ) == {0b0111}
            if dtype == "int32":
                assert np.array_equal(first, np.sum(calls[call][:3], axis=0, dtype=np.int32))
        assert (
            cores[3].stats.packets_sent == 0
            and cores[3].stats.held == net.stats()["jobs"][0]["completed"]
        )


def scan(core: AllReduceCore, now: float) -> tuple[list[int], float]:
    """What `expire` must resend at `now`, by a scan of every waiting slot in transmission order
    with the core's own `_due` (what expire did before its index); of those timed out, the oldest
    alone (one timer for the path). And the first transmission a paced burst leaves for the next
    gap (inf: none)."""
    due, timer_expired = [], False
    for index in core._unanswered:
        when, timed_out, _probe = core._due(index)
        if when <= now:
            if not (timed_out and timer_expired):
                due.append(index)
            timer_expired |= timed_out
    if len(due) > PACE_BURST:
        return due[:PACE_BURST], core._seq_of[due[PACE_BURST]]
    return due, math.inf


def deadline_after(core: AllReduceCore, now: float, resent: list[int], cut: float) -> float:
    """The deadline `expire` must leave: the earliest due time, by a scan, of the waiting slots it
    did not resend, as a timeout's restart of the timer left them; a paced burst's rest one gap
    away (those sent after it not looked at); the slots resent, a timer away."""
    waits = [core._due(i)[0] for i in core._unanswered if i not in resent and core._seq_of[i] < cut]
    if cut < math.inf:
        waits.append(now + (core._srtt or core._rto) * PACE_BURST / core._window)
    if resent:
        waits.append(now + core._timer)
    return min(waits, default=math.inf)


@pytest.mark.fuzz
@pytest.mark.skipif(
    compiled.active("ina.hosts.inprocess"),
    reason="patches AllReduceCore.expire, which the compiled harness calls directly; make test "
    "runs it on the interpreted modules (INA_COMPILED=0)",
)
@pytest.mark.parametrize("seed", [3, 4])
def test_expire_resends_and_rearms_exactly_as_a_scan_of_every_waiting_slot(
    monkeypatch, seed, fuzz_cases
):
    # Heavy seeded loss on 8 workers and windows of 16 and 4 (under staleness 3), and 20% loss
    # with the RTO's floor the path's alone: stalls left behind answered slots (RACK by turn),
    # resends (n allowances), STATUS-counted slots (2n, probes; at 20%, more due at once than
    # PACE_BURST lets leave), timeouts and paced bursts. Every expire call is checked against the scan.
    calls = Counter()
    expire = AllReduceCore.expire

    def checked(core: AllReduceCore, now: float) -> list[bytearray]:
        want, cut = scan(core, now)
        pkts = [core._pkts[index] for index in want]
        out = expire(core, now)
        assert out == pkts and [id(p) for p in out] == [id(p) for p in pkts]
        assert core.deadline == deadline_after(core, now, want, cut)
        calls["resent" if out else "idle"] += 1
        return out

    monkeypatch.setattr(AllReduceCore, "expire", checked)
    for policy, loss, min_rto in (
        (Policy(), 0.08, MIN_RTO),
        (Policy(staleness=3), 0.08, MIN_RTO),
        (Policy(), 0.2, 0.0),
    ):
        with InProcessSwitch(
            elems=8, loss=[RandomLoss(loss, loss, seed)], record=False, min_rto=min_rto
        ) as net:
            net.add_job(0, 8, window=16, timeout=1e-3, policy=policy)
            arrays = [make_array(seed, rank, 2000 * fuzz_cases(1), "int32") for rank in range(8)]
            results = net.allreduce({0: arrays})[0]
            assert all(np.array_equal(r, np.sum(arrays, axis=0, dtype=np.int32)) for r in results)
    assert calls["resent"] > 50 and calls["idle"] > 50


def test_frames_reaching_the_switch_at_one_instant_run_in_one_call_in_the_order_sent():
    """Every hop takes `latency`: each rank's window of UPDATEs reaches the switch at one instant,
    in the order sent, in one call into the native program (its direct entry)."""
    with InProcessSwitch(elems=8) as net:
        net.add_job(0, 4, window=2)
        backend = net.switch.pipeline
        direct, calls = backend.direct, []

        def spy(frames):
            calls.append([(port, slot_of(frame[FRAME_HEADERS:])) for port, frame in frames])
            return direct(frames)

        backend.direct = spy
        arrays = [make_array(1, rank, 32, "int32") for rank in range(4)]
        results = net.allreduce({0: arrays})
    expected = np.sum(arrays, axis=0, dtype=np.int32)
    assert all(np.array_equal(got, expected) for got in results[0])
    assert calls[0] == [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1), (4, 0), (4, 1)]
    # 4 chunks: both slots' RESULTs reach every rank at one instant, slot 0's copies first
    assert calls[1:] == [[(1, 0), (2, 0), (3, 0), (4, 0), (1, 1), (2, 1), (3, 1), (4, 1)]]
