"""The aggregation header packed and parsed with struct: the workers' hot path.

The layout and its constants are ina.p4src.protocol's; this module only moves bytes.
"""

from typing import NamedTuple

import numpy as np

from ina.p4src.protocol import HEADER, HEADER_LEN, INDEX_MASK, MSG_UPDATE, SET_SHIFT, pool_field


class Header(NamedTuple):
    msg_type: int
    rank: int
    job: int
    pool_set: int
    index: int
    exponent: int
    count: int  # RESULT and STATUS: contributions in the sum
    epoch: int
    round: int  # the use of the slot (round & 1 == pool_set)
    bitmap: int  # RESULT and STATUS: the ranks in the sum


def pack_update(buf: bytearray, rank: int, job: int, index: int, exponent: int, epoch: int, round_: int,
                values: np.ndarray) -> None:
    """Fill `buf` (HEADER_LEN + 4 * E bytes) with one UPDATE of `round_` (its set is round_ & 1);
    `values` are int32 in host order."""
    HEADER.pack_into(buf, 0, MSG_UPDATE, rank, job, pool_field(round_ & 1, index), exponent, 0, epoch, round_, 0)
    buf[HEADER_LEN:] = values.astype(">i4", copy=False).tobytes()


def parse_header(buf) -> Header:
    """The header fields of a received packet."""
    msg, rank, job, pool, exponent, count, epoch, round_, bitmap = HEADER.unpack_from(buf, 0)
    return Header(msg, rank, job, pool >> SET_SHIFT, pool & INDEX_MASK, exponent, count, epoch, round_, bitmap)


def values_of(buf, elems: int) -> np.ndarray:
    return np.frombuffer(buf, dtype=">i4", count=elems, offset=HEADER_LEN).astype(np.int64)
