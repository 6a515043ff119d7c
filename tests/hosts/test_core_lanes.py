"""The worker core's narrow lanes (docs/protocol.md, "Lanes at the workers"): a RESULT flagged OVERFLOW
sends the chunk again, in the slot's next use, and the redo's RESULT is the chunk's sum."""

import numpy as np
import pytest

from ina.hosts.core import AllReduceCore, WorkerError
from ina.hosts.packets import rewrite
from ina.p4src.protocol import FLAG_OVERFLOW, FLAG_ZERO, FLAGS_OFFSET, MSG_RESULT, pool_field

SWITCH = ("10.0.0.254", 0xBEE0)
EPOCH = 0x5EED0003
ARRAY = np.array([1.5, -2.25, 3.0, 0.5], dtype=np.float32)  # one chunk: E = 2 words of 16-bit lanes


def started() -> tuple[AllReduceCore, bytes]:
    """A worker of 2 in 16-bit lanes, window 1, its chunk's first UPDATE sent (the exponent's use
    answered)."""
    core = AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=1, timeout=0.01, max_retries=4, switch=SWITCH, bits=16
    )
    [announce] = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    assert announce[FLAGS_OFFSET] & FLAG_ZERO  # a float slot's first use: the exponent alone
    chunk = core.receive(
        rewrite(announce, msg_type=MSG_RESULT, count=2, bitmap=0b11), SWITCH, 0.001
    )
    assert chunk is not None
    return core, bytes(chunk)


def summed(update: bytes, flags: int = 0) -> bytes:
    """The RESULT of `update`'s use holding both workers, its values the update's, `flags` added."""
    return rewrite(
        update, msg_type=MSG_RESULT, count=2, bitmap=0b11, flags=update[FLAGS_OFFSET] | flags
    )


def test_an_overflowed_chunk_is_sent_again_in_the_next_use_and_its_redo_is_the_sum():
    plain, chunk = started()
    assert plain.receive(summed(chunk), SWITCH, now=0.002) is None
    assert plain.finished and plain.stats.redone == 0

    core, chunk = started()
    saturated = summed(chunk, FLAG_OVERFLOW)[:-4] + b"\x7f\xff\x7f\xff"  # lanes at their maximum
    redo = core.receive(saturated, SWITCH, now=0.002)
    # chunk 0 again, the slot's next use (round 2, set 0), the same values at the same scale
    assert redo is not None and bytes(redo) == rewrite(chunk, pool=pool_field(0, 0), round=2)
    assert (core.stats.redone, core.finished) == (1, False)
    assert core.receive(summed(bytes(redo)), SWITCH, now=0.003) is None
    assert core.finished
    assert np.array_equal(core.result(), plain.result())  # the saturated sum was not kept


def test_a_chunk_that_overflows_again_after_its_redo_fails_naming_it():
    core, chunk = started()
    redo = bytes(core.receive(summed(chunk, FLAG_OVERFLOW), SWITCH, now=0.002))
    with pytest.raises(WorkerError, match="chunk 0's sum saturated a lane at the scale that"):
        core.receive(summed(redo, FLAG_OVERFLOW), SWITCH, now=0.003)


def test_the_answer_to_a_redo_sent_once_is_racks_latest():
    """Window 2: slot 0's chunk overflows at 2 ms and is redone; the redo (sent once) answered 1 ms
    later is RACK's latest answer, so slot 1's chunk, sent before it at 1 ms and unanswered, is due
    one allowance (RTT 1 ms + reo_wnd 0.25 ms) after it left: 2.25 ms, past already, and resent
    at once, not at its RTO (3.34 ms)."""
    core = AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=2, timeout=0.01, max_retries=4, switch=SWITCH, bits=16,
        min_rto=0.0,
    )  # fmt: skip
    announces = [bytes(p) for p in core.start(np.concatenate([ARRAY, -ARRAY]), now=0.0)]
    chunks = [bytes(core.receive(summed(a), SWITCH, now=0.001)) for a in announces]
    redo = bytes(core.receive(summed(chunks[0], FLAG_OVERFLOW), SWITCH, now=0.002))
    assert core.receive(summed(redo), SWITCH, now=0.003) is None
    assert core.deadline == pytest.approx(0.00225)
    assert [bytes(p) for p in core.expire(0.003)] == [chunks[1]]
