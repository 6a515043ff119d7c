"""The aggregation header packed and parsed with struct: the workers' hot path.

The layout and its constants are ina.p4src.protocol's; this module only moves bytes.
"""

from typing import NamedTuple

import numpy as np

from ina.p4src.protocol import (
    HEADER,
    HEADER_LEN,
    INDEX_MASK,
    MSG_RESULT,
    SET_SHIFT,
    WORDS,
    pool_field,
)


class Header(NamedTuple):
    msg_type: int
    rank: int
    job: int
    pool_set: int
    index: int
    exponent: int
    flags: int  # FLAG_OVERFLOW, FLAG_FALLBACK and the lane width (protocol.lane_flags)
    count: int  # RESULT and STATUS: workers in the sum
    epoch: int
    round: int  # the use of the slot (round & 1 == pool_set)
    bitmap: int  # RESULT and STATUS: the ranks in the sum


def datagram(
    msg_type: int,
    epoch: int,
    values,
    *,
    job: int = 0,
    index: int = 0,
    round_: int = 0,
    bits: int = 32,
    **fields: int,
) -> bytes:
    """A whole aggregation datagram, its set round_ & 1; `values` in host order as `bits`-bit lanes
    (wraparound to that width applied; the width's code is the caller's to put in `flags`);
    `fields` the header's others by protocol.WORDS name (rank, exponent, flags, count, bitmap,
    ...), 0 unless given. For the paths that are not per packet: the harness, the host server,
    benchmarks' traffic, the tests; a field added to the header needs nothing here."""
    named = {"msg_type": msg_type, "job_id": job, "pool": pool_field(round_ & 1, index)}
    named |= {"epoch": epoch, "round": round_}
    if unknown := (set(fields) - set(WORDS)) | (set(fields) & set(named)):
        raise TypeError(f"datagram() takes no header field {sorted(unknown)[0]!r}")
    header = HEADER.pack(*(named.get(name, fields.get(name, 0)) for name in WORDS))
    return header + lanes(values, bits).tobytes()


def result_for(
    update, count: int, bitmap: int, *, exponent: int | None = None, values=None
) -> bytes:
    """The RESULT a switch answers `update` with: the update's header but for its type, `count`
    workers named by `bitmap` and `exponent` (else the update's); `values` (int32 in host order,
    wrapped; else the update's own payload). For the tests and benches that play the switch."""
    word = {"msg_type": MSG_RESULT, "count": count, "bitmap": bitmap}
    if exponent is not None:
        word["exponent"] = exponent
    answer = rewrite(update, **word)
    return answer if values is None else answer[:HEADER_LEN] + lanes(values, 32).tobytes()


def rewrite(datagram: bytes | bytearray, **words: int) -> bytes:
    """`datagram` with the header words `words` (protocol.WORDS names) replaced, the others and the
    payload kept: how a test or bench answers a packet, a field added to the header kept too."""
    if unknown := set(words) - set(WORDS):
        raise TypeError(f"rewrite() takes no header word {sorted(unknown)[0]!r}")
    word = dict(zip(WORDS, HEADER.unpack_from(datagram), strict=True)) | words
    return HEADER.pack(*(word[name] for name in WORDS)) + bytes(datagram[HEADER_LEN:])


def lanes(values, bits: int) -> np.ndarray:
    """`values` as the wire's big-endian two's complement `bits`-bit lanes (wrapped to the width)."""
    half = 1 << (bits - 1)
    wrapped = (np.asarray(values, dtype=np.int64) + half) % (2 * half) - half
    return wrapped.astype(lane_dtype(bits))


def lane_dtype(bits: int) -> np.dtype:
    """The numpy dtype of one `bits`-bit lane on the wire."""
    return np.dtype(f">i{bits // 8}")


def parse_header(buf) -> Header:
    """The header fields of a received packet."""
    word = dict(zip(WORDS, HEADER.unpack_from(buf), strict=True))
    return Header(
        word["msg_type"],
        word["rank"],
        word["job_id"],
        word["pool"] >> SET_SHIFT,
        word["pool"] & INDEX_MASK,
        word["exponent"],
        word["flags"],
        word["count"],
        word["epoch"],
        word["round"],
        word["bitmap"],
    )


def values_of(buf, elems: int, bits: int = 32) -> np.ndarray:
    """The first `elems` values of a packet's `bits`-bit lanes."""
    return np.frombuffer(buf, dtype=lane_dtype(bits), count=elems, offset=HEADER_LEN).astype(
        np.int64
    )
