"""The worker's sans-I/O core alone: events in (start, a datagram from a source at a time, the time),
datagrams and deadlines out. No socket, no switch, no clock: every time here is an argument."""

import numpy as np
import pytest

from ina.hosts.core import INITIAL_RTO, AllReduceCore, WorkerError
from ina.p4src.protocol import HEADER, MSG_RESULT, MSG_UPDATE, pool_field

SWITCH = ("10.0.0.254", 0xBEE0)
EPOCH = 0x5EED0003
ARRAY = np.array([1, -2, 3, 2**31 - 1, -5], dtype=np.int32)  # 3 chunks of E = 2 over a window of 2


def make_core(max_retries: int = 12, timeout: float = 0.01) -> AllReduceCore:
    return AllReduceCore(3, 1, 2, EPOCH, elems=2, window=2, timeout=timeout, max_retries=max_retries, switch=SWITCH)


def answer(update: bytes, exponent: int | None = None) -> bytes:
    """The switch's RESULT for an UPDATE, as if it were the only contribution."""
    return bytes([MSG_RESULT]) + update[1:6] + bytes([update[6] if exponent is None else exponent]) + update[7:]


def result(job: int = 3, pool_set: int = 0, index: int = 0, epoch: int = EPOCH, msg: int = MSG_RESULT) -> bytes:
    return HEADER.pack(msg, 0, job, pool_field(pool_set, index), 0, 0, epoch) + bytes(8)


def test_events_in_datagrams_out_with_sets_alternating_per_use():
    core = make_core()
    first = core.start(ARRAY, now=0.0)
    assert [p.hex() for p in first] == [
        "0101000300000000" "5eed0003" "00000001" "fffffffe",  # slot 0, set 0: chunk 0
        "0101000300010000" "5eed0003" "00000003" "7fffffff",  # slot 1, set 0: chunk 1
    ]
    assert core.deadline == INITIAL_RTO  # no RTT sample yet
    sent = [bytes(p) for p in first]
    reply = core.receive(answer(sent[0]), SWITCH, now=0.001)
    assert reply is first[0]  # the slot's own buffer, rewritten in place: no copy per packet
    assert reply.hex() == "0101000380000000" "5eed0003" "fffffffb" "00000000"  # slot 0, set 1: chunk 2, padded
    assert core.deadline == pytest.approx(0.011)  # RTT 1 ms: the RTO falls to its floor, `timeout`
    chunk_2 = bytes(reply)
    assert core.receive(answer(sent[1]), SWITCH, now=0.002) is None  # slot 1 has nothing more to carry
    assert not core.finished
    assert core.receive(answer(chunk_2), SWITCH, now=0.003) is None
    assert core.finished and core.deadline == float("inf")
    assert np.array_equal(core.result(), ARRAY)
    s = core.stats
    assert (s.packets_sent, s.packets_received, s.retransmissions, s.duplicates, s.forged) == (3, 3, 0, 0, 0)
    assert (s.elements, s.elapsed) == (6, 0.003)  # elapsed on the clock the events carry
    [again, *_] = core.start(ARRAY[:2], now=1.0)
    assert again.hex().startswith("0101000300000000")  # slot 0's third use: set 0 again


def test_the_rto_follows_the_rtt_above_its_floor():
    core = make_core()
    [slot_0, _] = core.start(ARRAY, now=0.0)
    core.receive(answer(bytes(slot_0)), SWITCH, now=0.04)
    # RFC 6298's first sample: srtt = 0.04, rttvar = 0.02, RTO = srtt + 4 rttvar = 0.12
    assert core.deadline == pytest.approx(0.04 + 0.12)


@pytest.mark.parametrize(("why", "data", "source"), [
    ("another address", answer(result()), ("10.0.0.9", 0xBEE0)),
    ("another port", answer(result()), ("10.0.0.254", 0xBEE1)),
    ("short", result()[:-1], SWITCH),
    ("long", result() + b"x", SWITCH),
    ("an UPDATE", result(msg=MSG_UPDATE), SWITCH),
    ("another job", result(job=4), SWITCH),
    ("another epoch", result(epoch=EPOCH + 1), SWITCH),
    ("a slot beyond the window", result(index=2), SWITCH),
])
def test_forged_datagrams_are_counted_and_change_nothing(why, data, source):
    core = make_core()
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    assert core.receive(data, source, now=0.001) is None, why
    assert (core.stats.forged, core.stats.duplicates, core.deadline) == (1, 0, INITIAL_RTO)
    assert core.receive(answer(first[0]), SWITCH, now=0.002) is not None  # the real one still counts


def test_results_a_slot_no_longer_waits_on_are_duplicates():
    core = make_core()
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    core.receive(answer(first[0]), SWITCH, now=0.001)
    assert core.receive(answer(first[0]), SWITCH, now=0.002) is None  # slot 0 now waits on set 1
    core.receive(answer(first[1]), SWITCH, now=0.003)
    assert core.receive(answer(first[1]), SWITCH, now=0.004) is None  # slot 1 is done
    assert core.receive(result(pool_set=1, index=1), SWITCH, now=0.005) is None  # a use slot 1 never sent
    assert (core.stats.duplicates, core.stats.forged, core.finished) == (3, 0, False)


def test_timeouts_double_per_retry_until_max_retries_fails_naming_the_slot():
    core = make_core(max_retries=2)
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    assert core.expire(0.1) == [] and core.deadline == INITIAL_RTO  # early: nothing is due
    assert [bytes(p) for p in core.expire(0.2)] == first  # the same datagrams again
    assert core.deadline == pytest.approx(0.2 + 2 * INITIAL_RTO)
    assert [bytes(p) for p in core.expire(core.deadline)] == first
    assert core.deadline == pytest.approx(0.6 + 4 * INITIAL_RTO)
    assert (core.stats.retransmissions, core.stats.timeouts, core.stats.packets_sent) == (4, 4, 6)
    with pytest.raises(WorkerError, match=r"^job 3 rank 1: no answer from the switch at 10\.0\.0\.254 after 2 "
                                          r"retransmissions of slot 0\. .*\(window 2\)"):
        core.expire(core.deadline)


def test_a_retransmitted_use_gives_no_rtt_sample_and_the_next_use_starts_afresh():
    # Karn's rule: the answer to a retransmission may answer either copy, so the RTO stays 0.2 s
    # (an RTT of 0.25 s would raise it to 0.75 s and put the next timer at 1.0).
    core = make_core()
    [slot_0, _] = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    core.expire(0.2)
    chunk_2 = bytes(core.receive(answer(slot_0), SWITCH, now=0.25))
    assert core.deadline == pytest.approx(0.25 + INITIAL_RTO)
    # The new use starts with no retries: due after one RTO, while slot 1's retry waits two.
    assert [bytes(p) for p in core.expire(core.deadline)] == [chunk_2]


def test_expire_resends_only_slots_still_waiting():
    core = make_core()
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    core.receive(answer(first[1]), SWITCH, now=0.001)  # slot 1 done (nothing more to carry)
    assert [bytes(p) for p in core.expire(0.2)] == [first[0]]
    assert core.stats.retransmissions == 1


def test_a_float_use_zero_announces_the_exponent_and_the_switch_maximum_rescales():
    core = AllReduceCore(3, 1, 2, EPOCH, elems=2, window=1, timeout=0.01, max_retries=1, switch=SWITCH)
    [bootstrap] = core.start(np.array([0.5, -0.25], dtype=np.float32), now=0.0)
    assert bootstrap.hex() == "0101000300008000" "5eed0003" "00000000" "00000000"  # announces 128
    update = core.receive(answer(bytes(bootstrap), exponent=129), SWITCH, now=0.001)
    assert update.hex() == "0101000380000000" "5eed0003" "10000000" "f8000000"  # scaled for 2**1, not 2**0
    core.receive(answer(bytes(update)), SWITCH, now=0.002)
    assert np.array_equal(core.result(), np.array([0.5, -0.25], dtype=np.float32))


def test_no_result_before_the_all_reduce_finished_and_unsupported_dtypes_are_refused():
    core = make_core()
    with pytest.raises(WorkerError, match="has not finished"):
        core.result()
    with pytest.raises(WorkerError, match="dtype int64 is not supported"):
        core.start(np.ones(4, dtype=np.int64), now=0.0)
