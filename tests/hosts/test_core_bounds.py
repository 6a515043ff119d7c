"""The worker core at the exact limits its mutants showed untested (scripts/mutation.py, #35): its
arguments' inclusive bounds, the elapsed time of a call that did not start at 0, and a STATUS that
comes exactly srtt after this worker's copy."""

import math

import numpy as np
import pytest
from test_core import EPOCH, SWITCH, answer, rack_core, result, update_of

from ina.hosts.core import MAX_DATAGRAM_ELEMS, PACE_BURST, AllReduceCore, WorkerError
from ina.hosts.packets import datagram, result_for
from ina.hosts.rto import MAX_RTO, SAME_TIME
from ina.p4src.protocol import (
    ELEMS_CHOICES,
    EPOCH_MAX,
    HEADER_LEN,
    MAX_JOBS,
    MAX_SLOTS,
    MAX_WORKERS,
    MSG_RESULT,
    MSG_STATUS,
)


def core_with(**given) -> AllReduceCore:
    arguments = {"elems": 2, "window": 2, "timeout": 0.01, "max_retries": 3, "switch": SWITCH}
    arguments |= given
    job, rank, n = (arguments.pop(name, default) for name, default in JOB_DEFAULTS)
    return AllReduceCore(job, rank, n, arguments.pop("epoch", EPOCH), **arguments)


JOB_DEFAULTS = (("job_id", 3), ("rank", 1), ("n_workers", 2))


def test_a_datagram_holds_at_most_the_values_one_udp_datagram_over_ipv4_carries():
    assert MAX_DATAGRAM_ELEMS == (65507 - HEADER_LEN) // 4 == 16371
    assert core_with(elems=MAX_DATAGRAM_ELEMS).elems == 16371


@pytest.mark.parametrize(
    "given",
    [
        {"epoch": 1},
        {"epoch": EPOCH_MAX},
        {"window": MAX_SLOTS},
        {"window": 2, "base": MAX_SLOTS - 2},
        {"timeout": 2.0**-20},
        {"job_id": 0},
        {"job_id": MAX_JOBS - 1},
        {"n_workers": MAX_WORKERS},
        {"rank": 0, "n_workers": 1},
        {"elems": 1},
        {"min_rto": MAX_RTO},
        {"min_rto": 0.0},
        {"switch": ("10.0.0.254", 1)},
        {"switch": ("10.0.0.254", 0xFFFF)},
    ],
    ids=str,
)
def test_bounds_are_inclusive(given):
    core = core_with(**given)
    assert [getattr(core, name) for name in given] == list(given.values())


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"elems": 16372},
            f"elems = 16372: expected 1..16371 (the switch runs one of {ELEMS_CHOICES})",
        ),
        ({"epoch": 0}, "epoch = 0: expected 1..4294967295"),
        ({"epoch": EPOCH_MAX + 1}, "epoch = 4294967296: expected 1..4294967295"),
        ({"window": MAX_SLOTS + 1}, "window = 32769: expected 1..32768"),
        ({"window": 0}, "window = 0: expected 1..32768"),
        ({"max_retries": -1}, "max_retries = -1: expected 0 or more"),
        ({"base": -1}, "base = -1: expected 0..32768 - window"),
        ({"window": 2, "base": MAX_SLOTS - 1}, "base = 32767: expected 0..32768 - window"),
        ({"timeout": 0.0}, "timeout = 0.0: expected a finite number of seconds > 0"),
        ({"timeout": float("inf")}, "timeout = inf: expected a finite number of seconds > 0"),
        ({"job_id": MAX_JOBS}, "job_id = 256: expected 0..255"),
        ({"job_id": -1}, "job_id = -1: expected 0..255"),
        ({"n_workers": 0, "rank": 0}, "n_workers = 0: expected 1..32"),
        ({"n_workers": MAX_WORKERS + 1}, "n_workers = 33: expected 1..32"),
        ({"rank": 2}, "rank = 2: expected 0..1 (n_workers - 1)"),
        ({"rank": -1}, "rank = -1: expected 0..1 (n_workers - 1)"),
        ({"min_rto": MAX_RTO * 2}, "min_rto = 4.0: expected 0..2 seconds"),
        ({"min_rto": -1.0}, "min_rto = -1.0: expected 0..2 seconds"),
        ({"elems": 0}, f"elems = 0: expected 1..16371 (the switch runs one of {ELEMS_CHOICES})"),
        ({"switch": ("10.0.0.254", 0)}, "switch_port = 0: expected 1..65535"),
        ({"switch": ("10.0.0.254", 0x10000)}, "switch_port = 65536: expected 1..65535"),
    ],
    ids=str,
)
def test_one_past_a_bound_is_refused_naming_it(given, message):
    with pytest.raises(ValueError) as err:
        core_with(**given)
    assert str(err.value) == message


def test_elapsed_is_the_time_from_start_to_the_last_sum_on_the_events_clock():
    core = core_with()
    sent = [bytes(p) for p in core.start(np.array([1, 2, 3, 4], dtype=np.int32), now=2.0)]
    for packet in sent:
        core.receive(answer(packet), SWITCH, now=2.5)
    assert core.finished
    assert core.stats.elapsed == 0.5


def test_a_status_exactly_srtt_after_this_workers_copy_is_its_loss():
    # As test_core's within-srtt case, on a binary clock so the times are exact: samples of
    # 2**-10 and 2**-12 s give srtt = 29/32 * 2**-10; slot 2's next use left at 2**-10, and a
    # STATUS without this worker srtt later says that copy had time to arrive: it goes again.
    core, first = rack_core(rank=0)
    t = 2.0**-10
    nxt = {k: bytes(core.receive(answer(first[k]), SWITCH, now=t)) for k in (2, 3)}
    core.receive(answer(nxt[3]), SWITCH, now=t + 2.0**-12)
    srtt = 29 / 32 * 2.0**-10
    assert core._rtt.srtt == srtt
    status = answer(nxt[2], msg=MSG_STATUS, bitmap=0b10)
    assert bytes(core.receive(status, SWITCH, now=t + srtt)) == nxt[2]
    assert core.stats.retransmissions == 1


def test_a_result_that_arrives_before_the_first_call_is_held_for_it():
    # Under a quorum the others may be a use ahead before this worker's first call: no slot is
    # on a use yet, so the RESULT is kept for when one gets there.
    core = core_with()
    assert core.receive(result(), SWITCH, now=0.0) is None
    assert (core.stats.held, core.stats.duplicates, core.stats.forged) == (1, 0, 0)


def test_goodput_is_elements_per_second_of_the_events_clock_and_zero_before_any():
    core = core_with()
    assert core.stats.goodput == 0.0
    sent = [bytes(p) for p in core.start(np.array([1, 2, 3, 4], dtype=np.int32), now=2.0)]
    for packet in sent:
        core.receive(answer(packet), SWITCH, now=2.5)
    assert core.stats.goodput == 4 / 0.5


def test_the_results_held_per_slot_are_bounded_by_64_mib_and_never_below_two_uses():
    # window * datagram bytes per use held: 64 MiB over one slot of 65504-byte datagrams is 1024
    # uses; over the whole slot space it would be none, and two are kept anyway.
    assert core_with(window=1, elems=MAX_DATAGRAM_ELEMS).hold_rounds == (64 << 20) // 65504 == 1024
    assert core_with(window=MAX_SLOTS, elems=MAX_DATAGRAM_ELEMS).hold_rounds == 2


def test_float_arrays_with_nan_or_infinity_are_refused_before_anything_is_sent():
    for dtype in ("float32", "float64"):
        core = core_with()
        array = np.array([1.0, np.nan, np.inf, 2.0], dtype=dtype)
        with pytest.raises(WorkerError) as err:
            core.start(array, now=0.0)
        assert str(err.value) == (
            "the array holds 2 NaN or infinite value(s) (first at flat index 1: nan); in-network "
            "aggregation sums finite values only"
        )
        assert core.stats.packets_sent == 0


def test_giving_up_on_a_counted_slot_names_the_ranks_it_waits_for():
    # Rank 1 of 4, counted by a STATUS (bitmap 0b0010): its timeouts run out waiting for 0, 2, 3.
    core = AllReduceCore(
        3, 1, 4, EPOCH, elems=2, window=1, timeout=0.01, max_retries=0, switch=SWITCH
    )
    [first] = [bytes(p) for p in core.start(np.array([1, 2], dtype=np.int32), now=0.0)]
    assert core.receive(answer(first, msg=MSG_STATUS, bitmap=0b0010), SWITCH, now=0.001) is None
    with pytest.raises(WorkerError) as err:
        for _ in range(8):
            core.expire(core.deadline)
    assert str(err.value).startswith(
        "job 3 rank 1: slot 0 was still waiting for rank(s) [0, 2, 3] after 0 retransmissions "
        "(the switch counted this worker's UPDATE)."
    )


def test_a_cores_slots_are_the_jobs_from_base_on_and_the_slot_below_base_is_not_its():
    core = core_with(base=3)
    sent = [bytes(p) for p in core.start(np.array([1, 2, 3, 4], dtype=np.int32), now=0.0)]
    assert sent == [update_of(3, 0, [1, 2]), update_of(4, 0, [3, 4])]  # the job's slots 3 and 4
    assert core.receive(result(index=2), SWITCH, now=0.0005) is None
    assert core.stats.forged == 1
    for packet in sent:
        assert core.receive(answer(packet), SWITCH, now=0.001) is None
    assert core.finished and core.result().tolist() == [1, 2, 3, 4]
    assert core.stats.forged == 1


def test_a_status_for_a_slot_this_call_does_not_use_is_a_duplicate():
    core = core_with(window=2)
    core.start(np.array([1, 2], dtype=np.int32), now=0.0)  # one chunk: slot 1 is not used
    assert core.receive(result(index=1, msg=MSG_STATUS), SWITCH, now=0.001) is None
    assert (core.stats.duplicates, core.stats.held, core.stats.forged) == (1, 0, 0)


def test_exactly_pace_burst_due_slots_leave_in_one_call():
    # One worker (every turn first): the last slot's answer at 1 ms puts the PACE_BURST sent before
    # it past one allowance (1.25 ms) at once, by RACK (a timeout would resend the oldest alone).
    core = core_with(window=PACE_BURST + 1, rank=0, n_workers=1)
    sent = [bytes(p) for p in core.start(np.arange(2 * (PACE_BURST + 1), dtype=np.int32), now=0.0)]
    core.receive(answer(sent[PACE_BURST], bitmap=1), SWITCH, now=0.001)
    assert [bytes(p) for p in core.expire(0.00125)] == sent[:PACE_BURST]
    assert core.deadline == pytest.approx(0.00125 + 0.003)  # their RTO (3 ms): none left to pace


def test_held_results_of_several_later_uses_are_all_kept_until_taken():
    # 4 uses held per slot (64 MiB over 256 slots of 65504-byte datagrams). Slot 0 is on use 2
    # after two calls; the RESULTs of uses 3 and 4 come early and are both taken, one per call.
    core = core_with(window=256, elems=MAX_DATAGRAM_ELEMS)
    assert core.hold_rounds == 4
    one = np.arange(MAX_DATAGRAM_ELEMS, dtype=np.int32)  # one chunk: slot 0's one use per call
    for call in range(3):
        [update] = core.start(one, now=float(call))
        if call == 2:
            for round_ in (3, 4):
                early = datagram(MSG_RESULT, EPOCH, 2 * one, job=3, round_=round_, count=2)
                assert core.receive(early, SWITCH, now=2.1) is None
            assert core.stats.held == 2
        assert core.receive(answer(bytes(update)), SWITCH, now=call + 0.5) is None
        assert core.finished
    for call in (3, 4):
        assert core.start(one, now=float(call)) == []  # taken from the held RESULT, nothing sent
        assert core.finished and core.result().tolist() == (2 * one).tolist()


def test_each_update_announces_the_exponent_of_the_chunk_a_window_later():
    # Floats: a slot's first use carries the exponent alone; every UPDATE's exponent byte is the
    # chunk a window (2) later's, 0 past the last chunk.
    core = core_with(window=2)
    array = np.array([1, 1, 100, 100, 1e4, 1e4, 1e6, 1e6], dtype=np.float32)
    pending = [bytes(p) for p in core.start(array, now=0.0)]
    announced = []
    while pending:
        update = pending.pop(0)
        announced.append(update[6])
        reply = core.receive(result_for(update, 2, 0b11), SWITCH, now=0.001)
        if reply is not None:
            pending.append(bytes(reply))
    assert announced == [129, 135, 142, 148, 0, 0]
    assert core.finished


def test_a_spurious_resends_original_is_no_rtt_sample_and_its_backoff_is_undone():
    # Sampled 1 ms (RTO 3 ms); the next use (sent at 1 ms) times out at 4 ms, and its answer 0.1 ms
    # after the resend is the original's. Its 3.1 ms ran past the timer by the timer's own wait: no
    # sample, so the next use, sent at 4.1 ms, is due one unchanged RTO later (3 ms, not doubled).
    core = core_with(window=1, min_rto=0.0, timeout=0.05)
    [first] = [bytes(p) for p in core.start(np.arange(6, dtype=np.int32), now=0.0)]
    second = bytes(core.receive(answer(first), SWITCH, now=0.001))
    assert core.deadline == pytest.approx(0.004)
    assert [bytes(p) for p in core.expire(0.004)] == [second]
    assert core.receive(answer(second), SWITCH, now=0.0041) is not None
    assert core.stats.spurious == 1
    assert core.deadline == pytest.approx(0.0041 + 0.003)


def test_a_use_answered_past_the_timer_is_no_rtt_sample_and_a_later_one_is():
    # Window 3, one worker, sampled 1 ms (RTO 3 ms). At the timeout (3 ms) slot 1, the oldest, is
    # resent alone; slot 2, sent at 0 too, waits on that one timer (now 6 ms). Its answer at 7 ms,
    # past the timer, is no sample (a timer of its own would have resent it: Karn): the RTO stays
    # 3 ms and the backoff 1. Its next use, sent at 7 ms and answered at 8 ms, is one: the backoff ends.
    core = core_with(window=3, n_workers=1, rank=0, min_rto=0.0, timeout=0.05)
    first = [bytes(p) for p in core.start(np.arange(12, dtype=np.int32), now=0.0)]
    core.receive(answer(first[0], bitmap=1), SWITCH, now=0.001)
    assert [bytes(p) for p in core.expire(0.003)] == [first[1]]
    assert (core._rto, core._timer) == (0.003, 0.006)
    nxt = bytes(core.receive(answer(first[2], bitmap=1), SWITCH, now=0.007))
    assert (core._rto, core._timer) == (0.003, 0.006)
    core.receive(answer(nxt, bitmap=1), SWITCH, now=0.008)
    # srtt 1 ms, rttvar 0.5 ms shrunk by 1/12 (a window of answers per RTT): RTO 2.83 ms
    assert core._timer == core._rto == pytest.approx(0.001 + 4 * 0.0005 * (1 - 0.25 / 3))


def test_an_answer_one_fastest_round_trip_after_a_resend_answers_the_resend():
    """Sampled 1.5 ms (min_rtt); the next use, sent at 1.5 ms, is resent at its RTO (6 ms). An answer
    exactly min_rtt - SAME_TIME after the resend is the resend's (no margin); one a float step
    sooner is the original's: that resend was spurious."""
    on_time = 0.006 + (0.0015 - SAME_TIME)
    assert on_time - 0.006 == 0.0015 - SAME_TIME  # 1.5 ms: exact in floats, no rounding decides
    for answered, spurious in ((on_time, 0), (math.nextafter(on_time, 0), 1)):
        core = core_with(window=1, min_rto=0.0, timeout=0.05)
        [first] = [bytes(p) for p in core.start(np.arange(6, dtype=np.int32), now=0.0)]
        second = bytes(core.receive(answer(first), SWITCH, now=0.0015))
        assert [bytes(p) for p in core.expire(0.006)] == [second]
        core.receive(answer(second), SWITCH, now=answered)
        assert (core.stats.spurious, core.stats.timeouts) == (spurious, 1)


def test_a_status_counting_a_resend_allows_one_probe_four_allowances_later():
    # Allowance 1.25 ms (RTT 1 ms + reo_wnd); the resend at 4 ms waits for the doubled RTO (10 ms)
    # until its STATUS at 4.5 ms brings the probe forward to 4.5 + 4 * 1.25 = 9.5 ms.
    core = core_with(window=1, min_rto=0.0, timeout=0.05)
    [first] = [bytes(p) for p in core.start(np.arange(6, dtype=np.int32), now=0.0)]
    second = bytes(core.receive(answer(first), SWITCH, now=0.001))
    assert [bytes(p) for p in core.expire(0.004)] == [second]
    assert core.deadline == pytest.approx(0.010)
    assert core.receive(answer(second, msg=MSG_STATUS), SWITCH, now=0.0045) is None
    assert core.deadline == pytest.approx(0.0095)


def test_a_counted_slot_sent_before_the_latest_answer_waits_at_least_the_rto():
    # One worker, samples 20 ms then 1 ms: srtt 17.625 ms, rttvar 12.25 ms, RTO 66.625 ms, allowance
    # 17.875 ms. Slot 1 (sent at 0, before the latest answered use) is counted by a STATUS: it
    # waits 2 allowances (35.75 ms) raised to the RTO; slot 2, not counted, is resent by RACK.
    core = core_with(window=3, min_rto=0.0, timeout=0.05, rank=0, n_workers=1)
    sent = [bytes(p) for p in core.start(np.arange(10, dtype=np.int32), now=0.0)]
    next_use = bytes(core.receive(answer(sent[0], bitmap=1), SWITCH, now=0.020))
    assert core.receive(answer(next_use, bitmap=1), SWITCH, now=0.021) is None  # slot 0 done
    assert core.receive(answer(sent[1], msg=MSG_STATUS, bitmap=1), SWITCH, now=0.021) is None
    assert [bytes(p) for p in core.expire(0.021)] == [sent[2]]
    assert core.deadline == pytest.approx(0.066625)


def slots_of(datagrams) -> list[int]:
    """The job's slot each datagram is for (its pool field's index)."""
    return [int.from_bytes(bytes(p)[4:6], "big") & 0x7FFF for p in datagrams]


def test_a_slot_sent_after_the_latest_answer_waits_its_turn_when_that_is_past_the_rto():
    # Rank 7 of 8: slot 0 is last in turn (position 7). Sampled 1 ms (allowance 1.25 ms, RTO
    # 3 ms): slot 0's next use, sent at 1 ms, is due 8 allowances later (11 ms), not at its RTO
    # (4 ms); slot 1 (position 0) at its RTO, 3 ms.
    core = core_with(window=2, rank=7, n_workers=8, min_rto=0.0, timeout=0.05)
    sent = [bytes(p) for p in core.start(np.arange(8, dtype=np.int32), now=0.0)]
    assert core.receive(answer(sent[0], bitmap=1 << 7), SWITCH, now=0.001) is not None
    assert slots_of(core.expire(0.003)) == [1]
    assert slots_of(core.expire(0.0109)) == []
    assert slots_of(core.expire(0.011)) == [0]


def test_a_resent_slot_sent_before_the_latest_answer_waits_n_workers_allowances():
    # Rank 1 of 2, allowance 1.25 ms: slot 1 (first in turn) is resent by RACK at 1.25 ms; slot 2's
    # use sent after that resend is answered, so the resend is overtaken in turn: due 2 allowances
    # after it (3.75 ms), with slot 0 (third in turn: 3 allowances after 0).
    core = core_with(window=3, min_rto=0.0, timeout=0.05)
    sent = [bytes(p) for p in core.start(np.arange(18, dtype=np.int32), now=0.0)]
    second = bytes(core.receive(answer(sent[2]), SWITCH, now=0.001))
    assert slots_of(core.expire(0.00125)) == [1]
    third = bytes(core.receive(answer(second), SWITCH, now=0.002))
    assert core.receive(answer(third), SWITCH, now=0.003) is None  # slot 2 done
    assert slots_of(core.expire(0.0037)) == []
    assert slots_of(core.expire(0.00375)) == [0, 1]


def test_the_deadline_comes_forward_to_the_first_uncounted_slot_behind_the_latest_answer():
    # One worker, window 3: slot 1 is counted by a STATUS, so when slot 0's second answer makes
    # slots 1 and 2 overtaken, the deadline is slot 2's (sent at 0) one allowance: 17.875 ms.
    core = core_with(window=3, min_rto=0.0, timeout=0.05, rank=0, n_workers=1)
    sent = [bytes(p) for p in core.start(np.arange(10, dtype=np.int32), now=0.0)]
    next_use = bytes(core.receive(answer(sent[0], bitmap=1), SWITCH, now=0.020))
    assert core.receive(answer(sent[1], msg=MSG_STATUS, bitmap=1), SWITCH, now=0.0205) is None
    assert core.deadline == 0.05  # the first RTO, `timeout`
    assert core.receive(answer(next_use, bitmap=1), SWITCH, now=0.021) is None  # slot 0 done
    assert core.deadline == pytest.approx(0.017875)


def test_a_use_after_a_result_held_before_the_first_call_is_rack_evidence():
    # Slot 1's first RESULT came before the call: its next use is sent with the call and, never
    # resent, its answer is RACK's latest: slot 0 (sent before it) is due one allowance after.
    core = core_with(window=2)
    assert core.receive(result(index=1), SWITCH, now=0.0) is None
    sent = [bytes(p) for p in core.start(np.arange(8, dtype=np.int32), now=0.0)]
    assert slots_of(sent) == [0, 1]
    assert core.receive(answer(sent[1]), SWITCH, now=0.001) is None  # slot 1 done
    assert core.deadline == pytest.approx(0.00125)


def status_of(update: bytes, round_: int) -> bytes:
    """A STATUS of `round_` of the update's slot, rank 0 counted (not this worker, rank 1)."""
    return answer(update, msg=MSG_STATUS, round_=round_, bitmap=0b01)


def test_a_status_rounds_ahead_skips_the_uses_before_and_their_chunks_have_no_sum():
    # The second call starts slot 0 at use 1; a STATUS of use 5 means uses 1-3 were done without
    # this worker: chunks 0-2 have no sum and the slot goes on with use 4, chunk 3.
    core = core_with(window=1)
    [first] = core.start(np.array([5, 6], dtype=np.int32), now=0.0)
    assert core.receive(answer(bytes(first)), SWITCH, now=0.001) is None
    [update] = [bytes(p) for p in core.start(np.arange(10, dtype=np.int32), now=1.0)]
    following = bytes(core.receive(status_of(update, 5), SWITCH, now=1.001))
    assert following == update_of(0, 4, [6, 7])
    last = bytes(core.receive(answer(following), SWITCH, now=1.002))
    assert core.receive(answer(last), SWITCH, now=1.003) is None
    assert core.finished and core.result().tolist() == [0, 0, 0, 0, 0, 0, 6, 7, 8, 9]
    assert core.contributors().counts.tolist() == [0, 0, 0, 1, 1]


def test_a_float_slots_first_use_gone_skips_no_chunk():
    # Slot 1's first use carries the exponent alone: gone, it takes no chunk from the count, and
    # the call finishes with the last answer (chunk 1, sent without the maximum, has no sum).
    core = core_with(window=2)
    sent = [bytes(p) for p in core.start(np.arange(1, 9, dtype=np.float32), now=0.0)]
    pending = [sent[0], bytes(core.receive(status_of(sent[1], 2), SWITCH, now=0.001))]
    finished = []
    while pending:
        reply = core.receive(result_for(pending.pop(0), 2, 0b11), SWITCH, now=0.002)
        finished.append(core.finished)
        if reply is not None:
            pending.append(bytes(reply))
    assert finished == [False, False, False, False, True]
    assert core.result().tolist() == [1.0, 2.0, 0.0, 0.0, 5.0, 6.0, 7.0, 8.0]


def test_a_status_past_the_last_use_finishes_the_call_without_sending():
    core = core_with(window=1)
    [update] = [bytes(p) for p in core.start(np.array([7, 8], dtype=np.int32), now=0.0)]
    assert core.receive(status_of(update, 2), SWITCH, now=0.001) is None
    assert core.finished and core.result().tolist() == [0, 0]
    assert core.stats.packets_sent == 1


def test_the_use_after_a_gone_one_is_answered_at_once_and_is_no_rack_evidence():
    # Slot 0's use 1 (after a STATUS of use 2) is answered 0.2 ms after it leaves: an RTT sample
    # (RTO 0.6 ms) but not RACK's latest answer, so slot 1 (sent at 0) waits for its RTO.
    core = core_with(window=2, min_rto=0.0)
    sent = [bytes(p) for p in core.start(np.arange(12, dtype=np.int32), now=0.0)]
    following = bytes(core.receive(status_of(sent[0], 2), SWITCH, now=0.001))
    assert core.receive(answer(following), SWITCH, now=0.0012) is not None
    assert core.deadline == pytest.approx(0.0006)
