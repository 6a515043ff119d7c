"""The aggregation header (docs/protocol.md) packed and parsed with struct: the workers' hot path.

    msg_type:8  rank:8  job_id:16  set:1 index:15  exponent:8  flags:8   then E x int32 big-endian
"""

import struct

import numpy as np

HEADER = struct.Struct("!BBHHBB")
HEADER_LEN = HEADER.size
MSG_UPDATE, MSG_RESULT = 1, 2
INA_UDP_PORT = 0xBEE0


def pack_update(buf: bytearray, rank: int, job: int, pool_set: int, index: int, exponent: int,
                values: np.ndarray) -> None:
    """Fill `buf` (HEADER_LEN + 4 * E bytes) with one UPDATE; `values` are int32 in host order."""
    HEADER.pack_into(buf, 0, MSG_UPDATE, rank, job, (pool_set << 15) | index, exponent, 0)
    buf[HEADER_LEN:] = values.astype(">i4", copy=False).tobytes()


def parse_header(buf) -> tuple[int, int, int, int, int, int]:
    """(msg_type, rank, job, set, index, exponent) of a received packet."""
    msg, rank, job, pool, exponent, _flags = HEADER.unpack_from(buf, 0)
    return msg, rank, job, pool >> 15, pool & 0x7FFF, exponent


def values_of(buf, elems: int) -> np.ndarray:
    return np.frombuffer(buf, dtype=">i4", count=elems, offset=HEADER_LEN).astype(np.int64)
