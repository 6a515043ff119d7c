"""Zero-block skipping at the worker (docs/protocol.md, "Zero-block skipping"): a chunk of zeros
goes as the header alone flagged ZERO, resends included, and a ZERO RESULT is a sum of zeros."""

import numpy as np

from ina.hosts.baseline import ServerCore
from ina.hosts.core import AllReduceCore
from ina.p4src.protocol import FLAG_ZERO, HEADER, HEADER_LEN, MSG_RESULT, MSG_UPDATE

SWITCH = ("10.0.0.254", 0xBEE0)
EPOCH = 0x5EED0003
# 4 chunks of E = 2 over a window of 2: slot 0 carries chunks 0 (zeros) and 2, slot 1 chunks 1 and 3
# (zeros)
ARRAY = np.array([0, 0, 1, 2, 3, 0, 0, 0], dtype=np.int32)


def core() -> AllReduceCore:
    return AllReduceCore(
        3, 1, 2, EPOCH, elems=2, window=2, timeout=0.01, max_retries=4, switch=SWITCH
    )


def reply(update: bytes, values: bytes | None = None) -> bytes:
    """The switch's RESULT of `update`'s use holding ranks 0 and 1: `values` in full, or (None) ZERO,
    the header alone."""
    fields = list(HEADER.unpack_from(update))
    fields[0], fields[5], fields[6], fields[9] = MSG_RESULT, 0, 2, 0b11
    if values is None:
        fields[5] = FLAG_ZERO
        return HEADER.pack(*fields)
    return HEADER.pack(*fields) + values


def test_a_chunk_of_zeros_goes_as_the_header_alone_and_its_resend_too():
    c = core()
    first = [bytes(p) for p in c.start(ARRAY, now=0.0)]
    assert [p.hex() for p in first] == [
        "010100030000000800005eed00030000000000000000",  # chunk 0: ZERO (0x08), no values
        "010100030001000000005eed000300000000000000000000000100000002",  # chunk 1 in full
    ]
    assert c.stats.zeros == 1
    # lost: the oldest resent as it was, ZERO too (one timer for the path: slot 1 waits for it)
    assert [bytes(p) for p in c.expire(0.01)] == first[:1]
    # The ZERO RESULT of slot 0: its next use (chunk 2, set 1) carries values again, in full
    second = c.receive(reply(first[0]), SWITCH, now=0.011)
    assert (
        bytes(second).hex() == "010100038000000000005eed00030000000100000000" + "0000000300000000"
    )
    # slot 1's sum comes in full; its next use, chunk 3, is zeros: ZERO
    third = c.receive(reply(first[1], bytes.fromhex("0000000500000007")), SWITCH, now=0.012)
    assert bytes(third).hex() == "010100038001000800005eed00030000000100000000"
    assert c.stats.zeros == 2
    # a ZERO RESULT of a use this worker sent values in (the others' were the negatives): zeros
    assert c.receive(reply(bytes(second)), SWITCH, now=0.013) is None
    assert c.receive(reply(bytes(third)), SWITCH, now=0.014) is None
    assert c.finished
    assert np.array_equal(c.result(), np.array([0, 0, 5, 7, 0, 0, 0, 0], dtype=np.int32))


def test_a_header_alone_without_zero_or_a_zero_datagram_with_values_is_forged():
    c = core()
    first = [bytes(p) for p in c.start(ARRAY, now=0.0)]
    full = reply(first[1], bytes(8))
    unflagged = bytearray(reply(first[0]))
    unflagged[7] = 0  # the header alone, not flagged ZERO
    flagged = bytearray(full)
    flagged[7] = FLAG_ZERO  # flagged ZERO, with values
    for data in (unflagged, flagged):
        assert c.receive(bytes(data), SWITCH, now=0.001) is None
    assert (c.stats.forged, c.stats.duplicates) == (2, 0)
    assert c.receive(full, SWITCH, now=0.002) is not None  # the real one still counts


def test_the_host_server_sums_a_zero_update_as_zeros():
    server = ServerCore(3, 2, EPOCH, elems=2)
    zero = HEADER.pack(MSG_UPDATE, 0, 3, 0, 4, FLAG_ZERO, 0, EPOCH, 0, 0)
    values = HEADER.pack(MSG_UPDATE, 1, 3, 0, 2, 0, 0, EPOCH, 0, 0) + bytes.fromhex(
        "fffffffe00000009"
    )
    assert server.handle(zero, ("10.0.0.1", 1)) == []
    [(answer, _), _] = server.handle(values, ("10.0.0.2", 1))
    # exponent 4 (the maximum), count 2, bitmap 0b11, the values (its RESULTs are always in full)
    assert answer.hex() == "02010003000004000002" + "5eed00030000000000000003" + "fffffffe00000009"
    assert server.handle(zero[: HEADER_LEN - 1], ("10.0.0.1", 1)) == []
    assert server.stats["refused"] == 1
