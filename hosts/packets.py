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
    flags: int  # reserved: 0
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
) -> bytes:
    """A whole aggregation datagram, its set round_ & 1; `values` int32 in host order (int32
    wraparound applied). For the paths that are not per packet: the harness, the host server,
    benchmarks' traffic; a field they do not name keeps its default."""
    wrapped = (np.asarray(values, dtype=np.int64) + 2**31) % 2**32 - 2**31
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
        + wrapped.astype(">i4").tobytes()
    )


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


def values_of(buf, elems: int) -> np.ndarray:
    return np.frombuffer(buf, dtype=">i4", count=elems, offset=HEADER_LEN).astype(np.int64)
