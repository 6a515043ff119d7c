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
    epoch: int


def pack_update(buf: bytearray, rank: int, job: int, pool_set: int, index: int, exponent: int,
                epoch: int, values: np.ndarray) -> None:
    """Fill `buf` (HEADER_LEN + 4 * E bytes) with one UPDATE; `values` are int32 in host order."""
    HEADER.pack_into(buf, 0, MSG_UPDATE, rank, job, pool_field(pool_set, index), exponent, 0, epoch)
    buf[HEADER_LEN:] = values.astype(">i4", copy=False).tobytes()


def parse_header(buf) -> Header:
    """The header fields of a received packet (the reserved flags byte is not kept)."""
    msg, rank, job, pool, exponent, _flags, epoch = HEADER.unpack_from(buf, 0)
    return Header(msg, rank, job, pool >> SET_SHIFT, pool & INDEX_MASK, exponent, epoch)


def values_of(buf, elems: int) -> np.ndarray:
    return np.frombuffer(buf, dtype=">i4", count=elems, offset=HEADER_LEN).astype(np.int64)
