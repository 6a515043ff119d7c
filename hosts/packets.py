"""The aggregation header packed and parsed with struct: the workers' hot path.

The layout and its constants are ina.p4src.protocol's; this module only moves bytes.
"""

from typing import NamedTuple

import numpy as np

from ina.p4src.protocol import HEADER, HEADER_LEN, INDEX_MASK, SET_SHIFT, pool_field


class Header(NamedTuple):
    msg_type: int
    rank: int
    job: int
    pool_set: int
    index: int
    exponent: int
    flags: int  # FLAG_OVERFLOW and the lane width (protocol.lane_flags)
    count: int  # RESULT and STATUS: workers in the sum
    epoch: int
    round: int  # the use of the slot (round & 1 == pool_set)
    bitmap: int  # RESULT and STATUS: the ranks in the sum


def datagram(
    msg_type: int,
    epoch: int,
    values,
    *,
    rank: int = 0,
    job: int = 0,
    index: int = 0,
    round_: int = 0,
    exponent: int = 0,
    flags: int = 0,
    count: int = 0,
    bitmap: int = 0,
    bits: int = 32,
) -> bytes:
    """A whole aggregation datagram, its set round_ & 1; `values` in host order as `bits`-bit lanes
    (wraparound to that width applied; the width's code is the caller's to put in `flags`). For the
    paths that are not per packet: the harness, the host server, benchmarks' traffic; a field they
    do not name keeps its default."""
    return (
        HEADER.pack(
            msg_type,
            rank,
            job,
            pool_field(round_ & 1, index),
            exponent,
            flags,
            count,
            epoch,
            round_,
            bitmap,
        )
        + lanes(values, bits).tobytes()
    )


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
    msg, rank, job, pool, exponent, flags, count, epoch, round_, bitmap = HEADER.unpack_from(buf)
    return Header(
        msg,
        rank,
        job,
        pool >> SET_SHIFT,
        pool & INDEX_MASK,
        exponent,
        flags,
        count,
        epoch,
        round_,
        bitmap,
    )


def values_of(buf, elems: int, bits: int = 32) -> np.ndarray:
    """The first `elems` values of a packet's `bits`-bit lanes."""
    return np.frombuffer(buf, dtype=lane_dtype(bits), count=elems, offset=HEADER_LEN).astype(
        np.int64
    )
