"""The worker core's best-effort hook (docs/protocol.md, "Best effort and the host fallback"): a
FALLBACK STATUS sends the slot's use to the job's host server, flagged, and the server's RESULT
completes it."""

import numpy as np

from ina.hosts.core import AllReduceCore
from ina.hosts.packets import rewrite
from ina.p4src.protocol import (
    FLAG_FALLBACK,
    FLAGS_OFFSET,
    MSG_RESULT,
    MSG_STATUS,
    pool_field,
)

SWITCH = ("10.0.0.254", 0xBEE0)
SERVER = ("10.2.0.1", 40000)
EPOCH = 0x5EED0003
ARRAY = np.array([1, -2, 3, 2**31 - 1, -5], dtype=np.int32)  # 3 chunks of E = 2 over a window of 2


def make_core() -> AllReduceCore:
    return AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=2, timeout=0.01, max_retries=12, switch=SWITCH,
        fallback=SERVER,
    )  # fmt: skip


def reply(
    update: bytes, msg: int, flags: int = 0, round_: int | None = None, bitmap: int = 0
) -> bytes:
    """An answer to `update` (its values): a RESULT or STATUS with `flags`, of its round or `round_`."""
    words = {"msg_type": msg, "flags": flags, "count": bitmap.bit_count(), "bitmap": bitmap}
    return rewrite(update, **words, **({} if round_ is None else {"round": round_}))


def test_a_fallback_status_resends_the_use_flagged_and_the_servers_result_completes_it():
    core = make_core()
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    notice = reply(first[0], MSG_STATUS, FLAG_FALLBACK)
    resent = core.receive(notice, SWITCH, now=0.001)
    assert resent is not None
    # the same UPDATE, flagged FALLBACK: the switch forwards it to the server
    assert (
        bytes(resent)
        == first[0][:FLAGS_OFFSET] + bytes([FLAG_FALLBACK]) + first[0][FLAGS_OFFSET + 1 :]
    )
    assert (core.stats.fallbacks, core.stats.retransmissions) == (1, 1)
    # told again (another worker's diverted UPDATE): nothing more
    assert core.receive(notice, SWITCH, now=0.002) is None
    assert (core.stats.fallbacks, core.stats.duplicates) == (1, 1)
    # its RTO resend stays flagged (one timer for the path: slot 1's, sent earlier, goes first)
    assert [bytes(p)[FLAGS_OFFSET] for p in core.expire(1.0)] == [0]
    assert [bytes(p)[FLAGS_OFFSET] for p in core.expire(core.deadline)] == [FLAG_FALLBACK]
    # the server's RESULT (flags 0) completes the use; the slot's next use starts unflagged
    summed = reply(first[0], MSG_RESULT, bitmap=0b11)
    following = core.receive(summed, SERVER, now=1.001)
    assert following is not None and following[FLAGS_OFFSET] == 0
    assert core.stats.forged == 0


def test_fallback_notices_of_another_use_and_answers_from_elsewhere_change_nothing():
    core = make_core()
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    assert core.receive(reply(first[0], MSG_STATUS, FLAG_FALLBACK, round_=2), SWITCH, 0.001) is None
    assert (core.stats.fallbacks, core.stats.duplicates) == (0, 1)
    # a RESULT from neither the switch nor the job's server is forged
    assert (
        core.receive(reply(first[0], MSG_RESULT, bitmap=0b11), ("10.2.0.9", 40000), 0.002) is None
    )
    assert core.stats.forged == 1
    # ... and one from the server is taken
    assert core.receive(reply(first[0], MSG_RESULT, bitmap=0b11), SERVER, 0.003) is not None


def test_a_core_without_a_server_takes_nothing_from_one():
    core = AllReduceCore(3, 1, 2, EPOCH, 2, 2, 0.01, 12, SWITCH)
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    assert core.receive(reply(first[0], MSG_RESULT, bitmap=0b11), SERVER, 0.001) is None
    assert core.stats.forged == 1


def test_a_fallback_notice_for_a_slot_without_a_use_now_changes_nothing():
    """Slot 1 in a call of one chunk (no use in it), and slot 1 done, noticed for its next use (the
    others' next call): duplicates, nothing resent or flagged."""
    core = make_core()
    [only] = [bytes(p) for p in core.start(ARRAY[:2], now=0.0)]
    unused = rewrite(only, msg_type=MSG_STATUS, flags=FLAG_FALLBACK, pool=pool_field(0, 1))
    assert core.receive(unused, SWITCH, now=0.001) is None
    assert (core.stats.fallbacks, core.stats.duplicates, core.stats.forged) == (0, 1, 0)

    core = make_core()
    first = [bytes(p) for p in core.start(ARRAY, now=0.0)]
    assert core.receive(reply(first[1], MSG_RESULT, bitmap=0b11), SWITCH, now=0.001) is None
    after = reply(first[1], MSG_STATUS, FLAG_FALLBACK, round_=1)  # slot 1 carried its one chunk
    assert core.receive(after, SWITCH, now=0.002) is None
    assert (core.stats.fallbacks, core.stats.duplicates, core.stats.retransmissions) == (0, 1, 0)
