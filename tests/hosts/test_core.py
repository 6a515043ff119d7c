"""The worker's sans-I/O core alone: events in (start, a datagram from a source at a time, the time),
datagrams and deadlines out. No socket, no switch, no clock: every time here is an argument."""

import numpy as np
import pytest

from ina.hosts.core import MIN_RTO, AllReduceCore, WorkerError
from ina.hosts.packets import datagram, parse_header, rewrite
from ina.p4src.protocol import (
    FLAG_ZERO,
    HEADER_LEN,
    MSG_RESULT,
    MSG_STATUS,
    MSG_UPDATE,
    pool_field,
    slot_of,
)

SWITCH = ("10.0.0.254", 0xBEE0)
EPOCH = 0x5EED0003
ARRAY = np.array([1, -2, 3, 2**31 - 1, -5], dtype=np.int32)  # 3 chunks of E = 2 over a window of 2


def make_core(max_retries: int = 12, timeout: float = 0.01) -> AllReduceCore:
    return AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=2, timeout=timeout, max_retries=max_retries, switch=SWITCH
    )


def answer(
    update: bytes,
    exponent: int | None = None,
    msg: int = MSG_RESULT,
    round_: int | None = None,
    bitmap: int = 0b10,
) -> bytes:
    """The switch's answer to an UPDATE (its values; by default a RESULT of its round holding rank 1's
    contribution alone, with its exponent)."""
    words = {"msg_type": msg, "count": bitmap.bit_count(), "bitmap": bitmap}
    if exponent is not None:
        words["exponent"] = exponent
    if round_ is not None:
        words |= {"pool": pool_field(round_ & 1, slot_of(update)), "round": round_}
    return rewrite(update, **words)


def result(
    job: int = 3, pool_set: int = 0, index: int = 0, epoch: int = EPOCH, msg: int = MSG_RESULT
) -> bytes:
    return datagram(msg, epoch, [0, 0], job=job, index=index, round_=pool_set, count=1, bitmap=0b10)


def update_of(index: int, round_: int, values, exponent: int = 0, flags: int = 0) -> bytes:
    """The UPDATE make_core's worker (job 3, rank 1) sends in slot `index`'s use `round_`; no
    `values` with FLAG_ZERO: the header alone."""
    return datagram(
        MSG_UPDATE,
        EPOCH,
        values,
        job=3,
        rank=1,
        index=index,
        round_=round_,
        exponent=exponent,
        flags=flags,
    )


def test_events_in_datagrams_out_with_sets_alternating_per_use():
    core = make_core()
    first = core.start(ARRAY, now=0.0)
    assert [bytes(p) for p in first] == [
        update_of(0, 0, [1, -2]),  # slot 0, set 0: chunk 0
        update_of(1, 0, [3, 2**31 - 1]),  # slot 1, set 0: chunk 1
    ]
    assert core.deadline == 0.01  # no RTT sample yet: the RTO is `timeout`
    sent = [bytes(p) for p in first]
    reply = core.receive(answer(sent[0]), SWITCH, now=0.001)
    assert reply is first[0]  # the slot's own buffer, rewritten in place: no copy per packet
    assert bytes(reply) == update_of(0, 1, [-5, 0])  # slot 0, set 1: chunk 2, padded
    assert core.deadline == pytest.approx(
        0.003
    )  # RTT 1 ms: slot 1, sent at 0, times out at 0 + 1 + 4 * 0.5 ms
    chunk_2 = bytes(reply)
    assert (
        core.receive(answer(sent[1]), SWITCH, now=0.002) is None
    )  # slot 1 has nothing more to carry
    assert not core.finished
    assert core.receive(answer(chunk_2), SWITCH, now=0.003) is None
    assert core.finished and core.deadline == float("inf")
    assert np.array_equal(core.result(), ARRAY)
    s = core.stats
    assert (s.packets_sent, s.packets_received, s.retransmissions, s.duplicates, s.forged) == (
        3,
        3,
        0,
        0,
        0,
    )
    assert (s.elements, s.elapsed) == (6, 0.003)  # elapsed on the clock the events carry
    [again, *_] = core.start(ARRAY[:2], now=1.0)
    assert bytes(again) == update_of(0, 2, [1, -2])  # slot 0's third use: round 2, set 0


def test_the_rto_follows_the_rtt_above_its_floor():
    core = make_core(timeout=0.2)
    [slot_0, _] = core.start(ARRAY, now=0.0)
    core.receive(answer(bytes(slot_0)), SWITCH, now=0.04)
    # RFC 6298's first sample: srtt = 0.04, rttvar = 0.02, RTO = srtt + 4 rttvar = 0.12; slot 1 was sent at 0
    assert core.deadline == pytest.approx(0.12)
    core = make_core(timeout=0.2)
    [slot_0, _] = core.start(ARRAY, now=0.0)
    core.receive(answer(bytes(slot_0)), SWITCH, now=20e-6)
    assert core.deadline == pytest.approx(300e-6)  # 20 + 4 * 10 us is below the floor of 300 us


def test_the_rto_floor_beside_two_min_rtts_is_a_parameter():
    # The same 20 us answer: RTO = 20 + 4 * 10 = 60 us. A host's floor (MIN_RTO, 300 us) holds it
    # above scheduling noise; in virtual time the path's alone (min_rto = 0) lets it follow the RTT.
    for min_rto, rto in ((MIN_RTO, 300e-6), (100e-6, 100e-6), (0.0, 60e-6)):
        core = AllReduceCore(
            3,
            1,
            2,
            EPOCH,
            elems=2,
            window=2,
            timeout=0.2,
            max_retries=12,
            switch=SWITCH,
            min_rto=min_rto,
        )
        [slot_0, _] = core.start(ARRAY, now=0.0)
        core.receive(answer(bytes(slot_0)), SWITCH, now=20e-6)
        assert core.deadline == pytest.approx(rto)
    with pytest.raises(ValueError, match=r"min_rto = -1e-06: expected 0..2 seconds"):
        AllReduceCore(
            3,
            1,
            2,
            EPOCH,
            elems=2,
            window=2,
            timeout=0.2,
            max_retries=12,
            switch=SWITCH,
            min_rto=-1e-6,
        )


def test_an_answer_one_fastest_round_trip_after_a_resend_answers_the_resend():
    # min_rtt 2.05472 us (sent at 1 us, answered at 3.05472 us: a 100 Gbit/s round trip). Slot 1
    # times out and is resent at 301 us; its answer comes exactly min_rtt later, but 301 us +
    # 2.05472 us - 301 us is 2.0547199999999734 us in floats, one rounding below min_rtt. Not
    # sooner than the path allows: it answers the resend, no spurious resend, no 300 us RTT sample.
    core = make_core(timeout=1e-3)
    [slot_0, slot_1] = [bytes(p) for p in core.start(ARRAY, now=1e-6)]
    core.receive(answer(slot_0), SWITCH, now=3.05472e-6)
    assert core.deadline == 301e-6
    assert [bytes(p) for p in core.expire(301e-6)] == [slot_1]
    core.receive(answer(slot_1), SWITCH, now=301e-6 + 2.05472e-6)
    assert (core.stats.spurious, core.stats.timeouts) == (0, 1)
    assert (
        core._srtt == 3.05472e-6 - 1e-6
    )  # the first answer's alone: a resend's answer is no sample (Karn)


def test_the_rtt_deviation_shrinks_per_window_of_answers_not_per_answer():
    # A window of 64 answers 1 ms after their UPDATEs: RFC 6298's per-sample gain assumes one sample
    # per RTT, and would shrink the first sample's deviation (0.5 ms) to nothing within this one RTT,
    # the RTO to its floor of 2 min_rtt = 2 ms, so the next uses would time out 2 ms after they left
    # (a worker descheduled that long got a spurious resend on lossless runs). Shrinking 64 times
    # slower keeps 4 rttvar at about 1.6 ms: nothing is due 2.3 ms after.
    core = AllReduceCore(
        3, 0, 2, EPOCH, elems=2, window=64, timeout=0.01, max_retries=12, switch=SWITCH
    )
    first = [bytes(p) for p in core.start(np.arange(256, dtype=np.int32), now=0.0)]
    for slot, update in enumerate(first):
        core.receive(answer(update), SWITCH, now=1e-3 + slot * 1e-6)
    assert core.expire(1e-3 + 2.3e-3) == []


@pytest.mark.parametrize(
    ("why", "data", "source"),
    [
        ("another address", answer(result()), ("10.0.0.9", 0xBEE0)),
        ("another port", answer(result()), ("10.0.0.254", 0xBEE1)),
        ("short", result()[:-1], SWITCH),
        ("long", result() + b"x", SWITCH),
        ("an UPDATE", result(msg=MSG_UPDATE), SWITCH),
        ("another job", result(job=4), SWITCH),
        ("another epoch", result(epoch=EPOCH + 1), SWITCH),
        ("a slot beyond the window", result(index=2), SWITCH),
    ],
)
def test_forged_datagrams_are_counted_and_change_nothing(why, data, source):
    core = make_core()
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    assert core.receive(data, source, now=0.001) is None, why
    assert (core.stats.forged, core.stats.duplicates, core.deadline) == (1, 0, 0.01)
    assert (
        core.receive(answer(first[0]), SWITCH, now=0.002) is not None
    )  # the real one still counts


def test_results_a_slot_no_longer_waits_on_are_duplicates():
    core = make_core()
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    core.receive(answer(first[0]), SWITCH, now=0.001)
    assert core.receive(answer(first[0]), SWITCH, now=0.002) is None  # slot 0 now waits on set 1
    core.receive(answer(first[1]), SWITCH, now=0.003)
    assert core.receive(answer(first[1]), SWITCH, now=0.004) is None  # slot 1 is done
    assert (
        core.receive(result(pool_set=1, index=1), SWITCH, now=0.005) is None
    )  # slot 1's next use: held
    assert (core.stats.duplicates, core.stats.held, core.stats.forged, core.finished) == (
        2,
        1,
        0,
        False,
    )


def test_timeouts_double_per_retry_until_max_retries_fails_naming_the_slot():
    # One timer for the path (RFC 6298 5.4): each expiry resends the oldest use alone and restarts
    # the timer, which doubles per timed-out retry of a slot: slot 0 at 10 ms (timer 20 ms), slot 1
    # at 30, slot 0's second at 50 (timer 40 ms), slot 1's at 90; slot 0's third exceeds max_retries.
    core = make_core(max_retries=2)
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    assert core.expire(0.005) == [] and core.deadline == 0.01  # early: nothing is due
    for when, slot, deadline in (
        (0.01, 0, 0.03),
        (0.03, 1, 0.05),
        (0.05, 0, 0.09),
        (0.09, 1, 0.13),
    ):
        assert [bytes(p) for p in core.expire(when)] == [first[slot]]  # the same datagram again
        assert core.deadline == pytest.approx(deadline)
    assert (core.stats.retransmissions, core.stats.timeouts, core.stats.packets_sent) == (4, 4, 6)
    with pytest.raises(
        WorkerError,
        match=r"^job 3 rank 1: no answer from the switch at 10\.0\.0\.254 after 2 "
        r"retransmissions of slot 0\. .*\(window 2\)",
    ):
        core.expire(core.deadline)


def test_a_retransmitted_use_gives_no_rtt_sample_and_the_backoff_stays_until_one_comes():
    # Karn's rule: the answer to a retransmission may answer either copy, so no RTT sample, and the
    # backed-off RTO (0.02) times the next use too (RFC 6298 5.5-5.7). Slot 0 alone times out at
    # 0.01; its RESULT (no STATUS before it: a loss recovered) releases the path's timer, so slot 1,
    # overdue by the backed-off RTO, goes at 0.02, and chunk 2 (sent at 0.015) one timer after that.
    core = make_core()
    [slot_0, slot_1] = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    assert [bytes(p) for p in core.expire(0.01)] == [slot_0]
    chunk_2 = bytes(core.receive(answer(slot_0), SWITCH, now=0.015))
    assert core.deadline == pytest.approx(0.02)
    assert [bytes(p) for p in core.expire(0.02)] == [slot_1]
    assert core._timer == 0.02  # the backoff stays: no sample came
    assert core.expire(0.035) == [] and core.deadline == pytest.approx(0.04)
    assert [bytes(p) for p in core.expire(0.04)] == [chunk_2]


def rack_core(rank: int = 1, window: int = 4, size: int = 16) -> tuple[AllReduceCore, list[bytes]]:
    """A worker of 2 with E = 2: `size` values, so size / 2 chunks over `window` slots."""
    core = AllReduceCore(
        3, rank, 2, EPOCH, elems=2, window=window, timeout=0.01, max_retries=12, switch=SWITCH
    )
    return core, [bytes(p) for p in core.start(np.arange(size, dtype=np.int32), now=0.0)]


def test_a_slot_sent_before_an_answered_one_is_resent_after_rtt_plus_reordering_window_in_turn():
    # Slot 3 answered after 1 ms: min_rtt 1 ms, reo_wnd = min_rtt / 4, allowance 1.25 ms. Rank 1
    # of 2 goes first in odd slots (1 allowance). In even ones rank 0 goes first, and rank 1's turn
    # comes two allowances later (rank 0's STATUS normally tells rank 1 first): at 3.75 ms.
    core, first = rack_core()
    slot_3 = bytes(core.receive(answer(first[3]), SWITCH, now=0.001))
    assert core.deadline == pytest.approx(0.00125)
    assert core.expire(0.0012) == []
    assert [bytes(p) for p in core.expire(0.00125)] == [first[1]]
    assert core.receive(answer(slot_3), SWITCH, now=0.002) is None  # slot 3 done
    assert core.receive(answer(first[1]), SWITCH, now=0.0023) is not None
    assert core.stats.spurious == 0  # the resend's answer, a full RTT after it
    assert core.expire(0.0023) == []
    assert core.deadline == pytest.approx(3 * 0.00125)
    assert [bytes(p) for p in core.expire(0.00375)] == [first[0], first[2]]
    s = core.stats
    assert (s.retransmissions, s.timeouts, s.spurious) == (3, 0, 0)


def test_a_stall_times_out_one_use_per_timer_and_a_spurious_resend_undoes_the_backoff():
    # Window 8, RTT 1 ms (RTO 3 ms), then no answer: slots 1..7 are past the RTO at 3 ms, but the
    # path has one timer (RFC 6298 5.4): slot 1 (the oldest) alone is resent, the timer restarts
    # doubled, and the others wait for it (a worker descheduled past the RTO made every slot of the
    # others' windows time out, each resend spurious).
    core, first = rack_core(rank=0, window=8, size=32)
    core.receive(answer(first[0]), SWITCH, now=0.001)
    assert core.deadline == pytest.approx(0.003)
    assert [bytes(p) for p in core.expire(0.003)] == [first[1]]
    assert core.expire(0.004) == []
    # Slot 1's original answer, 0.6 ms after its resend (sooner than min_rtt): the resend was
    # spurious. The backoff is undone, and the original's 3.6 ms is no sample (it ran past the
    # timer by the timer's own wait): slot 2 is due one RTO (3 ms) after the timer restarted (3 ms),
    # not 2 x 3 ms after; the timer doubles again with it, so slot 3 follows 6 ms later.
    core.receive(answer(first[1]), SWITCH, now=0.0036)
    assert core.stats.spurious == 1
    assert (core._rto, core._timer) == (0.003, 0.003)
    assert core.expire(0.0059) == []
    assert core.deadline == pytest.approx(0.006)
    assert [bytes(p) for p in core.expire(0.006)] == [first[2]]
    assert core.expire(0.0119) == [] and core.deadline == pytest.approx(0.012)
    assert [bytes(p) for p in core.expire(0.012)] == [first[3]]
    assert (core.stats.timeouts, core.stats.retransmissions) == (3, 3)


def test_after_a_timeout_the_deadline_is_the_restarted_timers():
    # RFC 6298 5.5-5.6: the timer restarts at the timeout (3 ms), backed off to 6 ms. Slot 0's next
    # use, sent at 1 ms, was due at 4 ms by the timer before; by the restarted one it waits until
    # 9 ms with the others, so nothing is due before that: no expire call finds nothing.
    core, first = rack_core(rank=0, window=8, size=32)
    core.receive(answer(first[0]), SWITCH, now=0.001)
    assert [bytes(p) for p in core.expire(0.003)] == [first[1]]
    assert core._timer == 2 * core._rto
    assert core.deadline == 0.003 + core._timer
    for early in (0.004, 0.0089):
        assert core.expire(early) == [] and core.deadline == 0.003 + core._timer
    assert [bytes(p) for p in core.expire(core.deadline)] == [first[2]]


def test_expire_resends_only_slots_still_waiting():
    core = make_core()
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    core.receive(answer(first[1]), SWITCH, now=0.001)  # slot 1 done (nothing more to carry)
    assert [bytes(p) for p in core.expire(0.01)] == [first[0]]
    assert core.stats.retransmissions == 1


def test_a_float_use_zero_announces_the_exponent_and_the_switch_maximum_rescales():
    core = AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=1, timeout=0.01, max_retries=1, switch=SWITCH
    )
    [bootstrap] = core.start(np.array([0.5, -0.25], dtype=np.float32), now=0.0)
    # announces 128: all zeros, so ZERO (0x08), the header alone
    assert bytes(bootstrap) == update_of(0, 0, [], exponent=128, flags=FLAG_ZERO)
    scaled = core.receive(answer(bytes(bootstrap), exponent=129), SWITCH, now=0.001)
    assert bytes(scaled) == update_of(0, 1, [1 << 28, -(1 << 27)])  # scaled for 2**1, not 2**0
    core.receive(answer(bytes(scaled)), SWITCH, now=0.002)
    assert np.array_equal(core.result(), np.array([0.5, -0.25], dtype=np.float32))


def test_no_result_before_the_all_reduce_finished_and_unsupported_dtypes_are_refused():
    core = make_core()
    with pytest.raises(WorkerError, match="has not finished"):
        core.result()
    with pytest.raises(WorkerError, match="dtype int64 is not supported"):
        core.start(np.ones(4, dtype=np.int64), now=0.0)


def test_only_timeouts_count_towards_max_retries():
    # A RACK resend needs a later answer, so the switch is reachable: it never gives up the run.
    core = AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=4, timeout=0.01, max_retries=0, switch=SWITCH
    )
    first = [bytes(p) for p in core.start(np.arange(16, dtype=np.int32), now=0.0)]
    core.receive(answer(first[3]), SWITCH, now=0.001)
    assert [bytes(p) for p in core.expire(0.00125)] == [first[1]]  # by RACK: not counted
    assert core.expire(0.003) == []  # slots 0 and 2: rank 0's turn first, rank 1's an RTO later
    with pytest.raises(WorkerError, match="after 0 retransmissions of slot 3"):
        core.expire(
            0.004
        )  # slot 3's next use (sent at 1 ms) at its RTO (3 ms): no later answer reveals it


def test_a_status_of_the_slots_round_with_this_workers_bit_allows_one_more_ask_then_only_its_timer():
    # Rank 2 of 3, every answer 1 ms after its packet: allowance 1.25 ms. Rank 2 goes first in slot
    # 1 and resends it by RACK at 1.25 ms; the STATUS of that resend (1.3 ms) says it is counted and
    # waits for others, who had the STATUS too and resend at once. Later transmissions are answered,
    # which would make RACK resend slot 1 again a round of turns (3 allowances) after its resend;
    # it asks once more four allowances after the STATUS (6.3 ms), in case its RESULT copy (or their
    # STATUS copy) was lost, and then only two rounds of turns after that (13.8 ms).
    core = AllReduceCore(
        3, 2, 3, EPOCH, elems=2, window=4, timeout=0.01, max_retries=12, switch=SWITCH
    )
    first = [
        bytes(p) for p in core.start(np.arange(24, dtype=np.int32), now=0.0)
    ]  # 3 uses per slot
    nxt = [bytes(core.receive(answer(first[k]), SWITCH, now=0.001)) for k in (0, 2, 3)]
    assert [bytes(p) for p in core.expire(0.00125)] == [first[1]]
    assert core.receive(answer(first[1], msg=MSG_STATUS, bitmap=0b100), SWITCH, now=0.0013) is None
    assert core.stats.statuses == 1
    last = [
        bytes(core.receive(answer(p), SWITCH, now=0.002)) for p in nxt
    ]  # sent after slot 1's resend
    assert all(
        core.receive(answer(p), SWITCH, now=0.003) is None for p in last
    )  # slots 0, 2, 3 done
    assert core.expire(0.0062) == []
    assert core.deadline == pytest.approx(0.0013 + 4 * 0.00125)
    assert [bytes(p) for p in core.expire(core.deadline)] == [first[1]]
    assert (core.stats.retransmissions, core.stats.timeouts) == (2, 0)
    assert (
        core.receive(answer(first[1], msg=MSG_STATUS, bitmap=0b100), SWITCH, now=0.0073) is None
    )  # still waiting
    assert core.expire(0.0073) == []
    assert core.deadline == pytest.approx(
        0.0063 + 6 * 0.00125
    )  # no more asking: two rounds of turns


def test_the_answer_a_worker_behind_gets_at_once_does_not_shorten_racks_allowance():
    # Every slot answered after 1 ms (srtt 1 ms), then the next use of slot 3 only 0.1 ms after it
    # left: the others had sent theirs long before and waited for this worker's. RACK takes it as the
    # latest answer, but allows at least srtt (0.8875 ms after it) plus reo_wnd (min_rtt / 4 =
    # 0.025 ms): slot 0's next use (sent at 1 ms, rank 0 first) is due at 1.9125 ms, not 1.125.
    core, first = rack_core(rank=0)
    nxt = [bytes(core.receive(answer(first[k]), SWITCH, now=0.001)) for k in range(4)]
    core.receive(answer(nxt[3]), SWITCH, now=0.0011)
    assert core.expire(0.0012) == []
    assert core.deadline == pytest.approx(0.001 + 0.875e-3 + 0.0125e-3 + 0.025e-3)
    assert [bytes(p) for p in core.expire(core.deadline)] == [nxt[0], nxt[2]]


def test_the_answer_to_a_resend_moves_no_rack_state():
    # Slot 1 resent by RACK at 1.25 ms and answered 1.1 ms later: as the latest answered
    # transmission it would make slot 3's next use (sent at 1 ms) overdue at once (1 + 1.1 + 0.25
    # ms); it is not RACK's, so that use waits for its RTO (3 ms after it left), after the turn of
    # slots 0 and 2 (rank 1 goes second there: 3 allowances).
    core, first = rack_core()
    slot_3 = bytes(core.receive(answer(first[3]), SWITCH, now=0.001))
    assert [bytes(p) for p in core.expire(0.00125)] == [first[1]]
    assert core.receive(answer(first[1]), SWITCH, now=0.00235) is not None
    assert core.expire(0.00235) == []
    assert [bytes(p) for p in core.expire(0.00375)] == [first[0], first[2]]
    assert core.deadline == pytest.approx(0.004)
    assert [bytes(p) for p in core.expire(0.004)] == [slot_3]


def test_the_use_after_a_resent_one_is_no_rack_evidence():
    # Slot 1 needed a resend (1.25 ms): maybe its RESULT copy was lost and the others sent the next
    # use long ago. That use is answered 0.05 ms after it leaves; as RACK's latest answer it would
    # make slot 3's next use (sent at 1 ms) overdue at once. It is not: nothing goes before the
    # turn of slots 0 and 2 (3 allowances of 1.25 ms).
    core, first = rack_core()
    core.receive(answer(first[3]), SWITCH, now=0.001)
    assert [bytes(p) for p in core.expire(0.00125)] == [first[1]]
    after = bytes(core.receive(answer(first[1]), SWITCH, now=0.00235))
    assert core.receive(answer(after), SWITCH, now=0.0024) is None  # slot 1 done
    assert core.expire(0.0024) == []
    assert core.deadline == pytest.approx(3 * 0.00125)


def test_the_result_of_a_slot_counted_by_a_status_is_no_rtt_sample():
    # Three answers after 1 ms: srtt 1 ms, rttvar 0.5 ms shrunk twice by 1/16 (window 4), so the RTO
    # is 1 + 4 x 0.439 = 2.758 ms. Slot 1, counted (STATUS) and waiting for the other worker, gets
    # its RESULT 3 ms after it was sent: the others' recovery, not the path, so the RTO stays.
    core, first = rack_core()
    for slot in (3, 0, 2):
        core.receive(answer(first[slot]), SWITCH, now=0.001)
    core.receive(answer(first[1], msg=MSG_STATUS, bitmap=0b10), SWITCH, now=0.0011)
    core.receive(answer(first[1]), SWITCH, now=0.003)
    assert core.expire(0.003) == []
    assert core.deadline == pytest.approx(
        0.001 + 0.001 + 4 * 0.0005 * (15 / 16) ** 2
    )  # second uses, at their RTO


def test_a_status_that_lacks_this_worker_after_an_rtt_is_its_loss_and_resent_at_once():
    # Another worker's resend found slot 1 without this worker: its copy (sent at 0, RTT 1 ms) had
    # time to arrive, so it was lost and goes again now, not at this worker's turn (2.5 ms).
    core, first = rack_core(rank=0)
    core.receive(answer(first[3]), SWITCH, now=0.001)
    assert (
        bytes(core.receive(answer(first[1], msg=MSG_STATUS, bitmap=0b10), SWITCH, now=0.0013))
        == first[1]
    )
    assert (core.stats.retransmissions, core.stats.timeouts, core.stats.duplicates) == (1, 0, 0)
    # A second STATUS within an RTT of that resend may not have seen it: nothing goes.
    assert core.receive(answer(first[1], msg=MSG_STATUS, bitmap=0b10), SWITCH, now=0.002) is None
    assert (core.stats.retransmissions, core.stats.duplicates) == (1, 1)


def test_a_status_that_lacks_this_worker_within_srtt_of_its_copy_waits_for_that_copy():
    # srtt 0.9 ms (answers after 1 ms and 0.2 ms), min_rtt 0.2 ms. Slot 2's next use left at 1 ms:
    # a STATUS without this worker 0.5 ms later may predate its copy's arrival (queued, not lost),
    # so nothing goes; one 1 ms later does (its copy had srtt to arrive).
    core, first = rack_core(rank=0)
    nxt = {k: bytes(core.receive(answer(first[k]), SWITCH, now=0.001)) for k in (2, 3)}
    core.receive(answer(nxt[3]), SWITCH, now=0.0012)
    assert core.receive(answer(nxt[2], msg=MSG_STATUS, bitmap=0b10), SWITCH, now=0.0015) is None
    assert core.stats.retransmissions == 0
    assert (
        bytes(core.receive(answer(nxt[2], msg=MSG_STATUS, bitmap=0b10), SWITCH, now=0.002))
        == nxt[2]
    )


def test_a_status_that_another_workers_resend_brought_allows_no_early_ask():
    # Rank 2 of 3 goes last in slot 0 and never resent it; a STATUS saying it is counted (another
    # worker's resend) stops its turns, and only the timer of two rounds of turns is left (7.5 ms):
    # asking again is for the worker whose resend the STATUS answered.
    core = AllReduceCore(
        3, 2, 3, EPOCH, elems=2, window=4, timeout=0.01, max_retries=12, switch=SWITCH
    )
    first = [bytes(p) for p in core.start(np.arange(24, dtype=np.int32), now=0.0)]
    nxt = [bytes(core.receive(answer(first[k]), SWITCH, now=0.001)) for k in (1, 2, 3)]
    assert core.receive(answer(first[0], msg=MSG_STATUS, bitmap=0b101), SWITCH, now=0.0013) is None
    last = [bytes(core.receive(answer(p), SWITCH, now=0.002)) for p in nxt]
    assert all(
        core.receive(answer(p), SWITCH, now=0.003) is None for p in last
    )  # slots 1, 2, 3 done
    assert core.expire(0.003) == []
    assert core.deadline == pytest.approx(6 * 0.00125)
    assert core.stats.retransmissions == 0


def test_a_status_of_the_next_round_means_this_workers_result_was_lost_and_asks_for_it_at_once():
    # Slot 1 carries rounds 0 and 1. Rank 1 of 2 is on round 0; a STATUS of round 1 says the other
    # worker started round 1, so round 0 was done and its RESULT copy here was lost: round 0 goes
    # again (the switch answers it from the completed set), before any turn.
    core, first = rack_core(rank=1, window=4, size=16)
    core.receive(answer(first[3]), SWITCH, now=0.001)
    status = answer(first[1], msg=MSG_STATUS, round_=1, bitmap=0b01)
    assert bytes(core.receive(status, SWITCH, now=0.0011)) == first[1]
    assert core.stats.retransmissions == 1
    nxt = core.receive(answer(first[1]), SWITCH, now=0.0021)
    assert parse_header(nxt).round == 1  # on to round 1


def test_a_result_of_a_later_round_means_this_workers_result_was_lost_and_asks_for_it_at_once():
    # Slot 1 carries rounds 0 and 1. Rank 1 of 2 is on round 0 (srtt 1 ms from slot 3's answer);
    # under a quorum or timeout the other worker ran ahead: round 1's RESULT comes, which the switch
    # sent after round 0's, so this worker's copy of round 0's was lost. Nobody else waits on round
    # 0 to resend it, so it goes now (it used to wait for its turn: up to 2n allowances).
    core, first = rack_core(rank=1, window=4, size=16)
    core.receive(answer(first[3]), SWITCH, now=0.001)
    ahead = answer(first[1], round_=1, bitmap=0b01)
    # Within srtt of its copy: that copy may still be on its way (queued), so its turn decides.
    assert core.receive(ahead, SWITCH, now=0.0009) is None
    assert (core.stats.held, core.stats.retransmissions) == (1, 0)
    assert bytes(core.receive(ahead, SWITCH, now=0.0011)) == first[1]
    assert (core.stats.held, core.stats.retransmissions) == (2, 1)
    # The switch answers the resend from the completed set; round 1 is taken from the held copy.
    assert core.receive(answer(first[1]), SWITCH, now=0.0021) is None
    assert core.stats.packets_sent == 6  # 4 first uses, slot 3's next, the resend: not round 1
    # A done slot's later RESULT (the next all-reduce's) is held and asks for nothing.
    assert core.receive(answer(first[1], round_=2), SWITCH, now=0.01) is None
    assert (core.stats.held, core.stats.retransmissions) == (3, 1)


def test_a_status_without_this_workers_bit_or_of_another_round_changes_nothing():
    core, first = rack_core()
    for other in (
        answer(first[1], msg=MSG_STATUS, bitmap=0b01),  # not counted: keep resending
        answer(first[1], msg=MSG_STATUS, round_=0xFFFFFFFE),
    ):  # an earlier round
        assert core.receive(other, SWITCH, now=0.0005) is None
    assert (core.stats.duplicates, core.stats.statuses) == (2, 0)
    core.receive(answer(first[3]), SWITCH, now=0.001)
    assert [bytes(p) for p in core.expire(0.00125)] == [first[1]]


def test_a_result_of_a_later_round_is_held_never_taken_for_the_slots_round_and_taken_when_it_gets_there():
    # Slot 0 carries chunks 0 and 4 (rounds 0, 1) of 8; round 2 is the next all-reduce's first use.
    core, first = rack_core(window=4, size=16)
    later = answer(
        first[0], round_=2, bitmap=0b01
    )  # rank 0 ran ahead: its sum alone, of values 0, 1
    assert core.receive(later, SWITCH, now=0.001) is None and core.stats.held == 1
    nxt = core.receive(answer(first[0]), SWITCH, now=0.002)  # round 0's own RESULT
    assert parse_header(nxt).round == 1
    beyond = answer(bytes(nxt), round_=1 + core.hold_rounds)  # too far ahead to keep
    assert core.receive(beyond, SWITCH, now=0.003) is None and core.stats.duplicates == 1
    for data in (bytes(nxt), *first[1:]):
        while (data := core.receive(answer(data), SWITCH, now=0.004)) is not None:
            data = bytes(data)
    assert core.finished and core.result()[:2].tolist() == [0, 1]
    sent = core.start(
        np.full(2, 7, dtype=np.int32), now=1.0
    )  # one chunk, on slot 0 at round 2: held
    assert sent == [] and core.finished
    assert core.result().tolist() == [0, 1] and core.contributors().bitmaps.tolist() == [0b01]
    assert core.stats.packets_sent == 8  # 8 chunks; the held use was never sent


def test_a_status_of_a_later_round_marks_the_chunks_gone_and_moves_to_the_round_before_it():
    # Slot 0 carries chunks 0, 4, 8 (rounds 0, 1, 2) of 10. Its set 0 holds round 4: rounds 0 to 2
    # were done and replaced without this worker's RESULT, which ends slot 0's part of this
    # all-reduce (chunks 0, 4 and 8 have no sum); round 3 is where the next all-reduce starts.
    core = AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=4, timeout=0.01, max_retries=12, switch=SWITCH
    )
    array = np.arange(20, dtype=np.int32)
    first = [bytes(p) for p in core.start(array, now=0.0)]
    assert core.receive(answer(first[0], msg=MSG_STATUS, round_=4), SWITCH, now=0.001) is None
    # Slot 1 (chunks 1, 5, 9): set 0 holds round 2, so round 0 is gone and round 1 goes out.
    after = core.receive(answer(first[1], msg=MSG_STATUS, round_=2), SWITCH, now=0.001)
    assert (
        parse_header(after).round == 1
        and after[HEADER_LEN:] == array[10:12].astype(">i4").tobytes()
    )
    for data in (bytes(after), first[2], first[3]):
        while (data := core.receive(answer(data, bitmap=0b11), SWITCH, now=0.002)) is not None:
            data = bytes(data)
    assert core.finished
    contributors = core.contributors()
    assert list(contributors.missing) == [0, 1, 4, 8]
    assert list(contributors.counts) == [0, 0, 2, 2, 0, 2, 2, 2, 0, 2]
    assert list(contributors.bitmaps[2:4]) == [3, 3]
    got = core.result()
    assert not got[[0, 1, 2, 3, 8, 9, 16, 17]].any() and np.array_equal(got[4:8], array[4:8])
    assert contributors.element_counts(got.shape)[:6].tolist() == [0, 0, 0, 0, 2, 2]
    [again, *_] = core.start(array, now=1.0)
    assert parse_header(again).round == 3  # slot 0 starts after the rounds it was told of


def test_a_float_chunk_beyond_the_agreed_exponent_is_clipped_so_n_contributions_cannot_overflow():
    # The switch's maximum for chunk 0 is 2^0 (another worker's announcement alone was counted),
    # but this worker's chunk reaches 3.0: it is clipped to the largest value n = 2 sum safely.
    core = AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=1, timeout=0.01, max_retries=1, switch=SWITCH
    )
    [bootstrap] = core.start(np.array([3.0, -0.25], dtype=np.float32), now=0.0)
    update = core.receive(answer(bytes(bootstrap), exponent=128, bitmap=0b01), SWITCH, now=0.001)
    assert np.frombuffer(update[HEADER_LEN:], ">i4").tolist() == [
        (2**31 - 1) // 2,
        -(2**31 - 1) // 8,
    ]


def test_the_wire_rank_and_the_jobs_worker_count_for_the_scale_are_two_values():
    """Hierarchical aggregation: rank 1 of a leaf's 2 workers in a job of 32 sends rank 1 and
    quantizes floats for 32 contributions, as a core of a 32-worker switch does."""
    floats = np.array([0.5, -0.25, 3.0, 1.0], dtype=np.float32)
    args = {"elems": 2, "window": 2, "timeout": 0.01, "max_retries": 3, "switch": SWITCH}
    leaf = AllReduceCore(3, 1, 2, EPOCH, job_workers=32, **args)
    flat = AllReduceCore(3, 1, 32, EPOCH, **args)
    sent = []
    for core in (leaf, flat):
        [first, _] = core.start(floats, 0.0)  # a float slot's first use: the exponent alone
        sent.append(bytes(core.receive(answer(bytes(first)), SWITCH, 1e-3)))
    assert sent[0] == sent[1] and parse_header(sent[0]).rank == 1
    assert sent[0][HEADER_LEN:] != bytes(4 * 2)  # chunk 2's values, scaled for 32
    with pytest.raises(ValueError, match=r"job_workers = 1: expected 2\.\.65535"):
        AllReduceCore(3, 1, 2, EPOCH, job_workers=1, **args)


def test_a_lossless_all_reduce_leaves_no_transmission_in_the_expiry_index():
    """Each answered transmission leaves the index as it is answered: none waits in its queues for
    an `expire` that a lossless run never calls (they held one entry per answer before)."""
    core = AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=4, timeout=0.01, max_retries=1, switch=SWITCH
    )
    pending = [bytes(p) for p in core.start(np.arange(64, dtype=np.int32), now=0.0)]
    now = 0.0
    while pending:
        now += 0.001
        reply = core.receive(answer(pending.pop(0)), SWITCH, now)
        if reply is not None:
            pending.append(bytes(reply))
    index = core._index
    assert core.finished and core.stats.packets_sent == 32
    assert (len(index.order), [len(q) for q in index._overtaken], index._counted) == (
        0,
        [0, 0, 0],
        [],
    )


def test_racks_deadline_skips_the_oldest_slot_a_status_counted():
    # Rank 1 of 2, window 4. A STATUS counts slot 0 (it waits for the other worker, so RACK has no
    # say over it); slot 2 is answered after 1 ms (srtt 1 ms, allowance 1.25 ms, RTO 3 ms). The
    # deadline is slot 1's RACK allowance (the oldest not counted, sent before the answered one):
    # 1.25 ms, not the counted slot 0's RTO (3 ms).
    core = AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=4, timeout=0.01, max_retries=12, switch=SWITCH
    )
    first = [bytes(p) for p in core.start(np.arange(24, dtype=np.int32), now=0.0)]
    assert core.receive(answer(first[0], msg=MSG_STATUS, bitmap=0b10), SWITCH, now=0.0005) is None
    assert core.receive(answer(first[2]), SWITCH, now=0.001) is not None
    assert core.deadline == pytest.approx(0.00125)
