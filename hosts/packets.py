"""The aggregation header packed and parsed with struct: the workers' hot path.

The layout and its constants are ina.p4src.protocol's; this module only moves bytes.
"""

from typing import NamedTuple

import numpy as np

from ina.p4src.protocol import HEADER, HEADER_LEN, INDEX_MASK, MSG_RESULT, SET_SHIFT, pool_field


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
    return HEADER.pack(
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
    ) + _payload(values)


def result_for(
    update, count: int, bitmap: int, *, exponent: int | None = None, values=None
) -> bytes:
    """The RESULT a switch answers `update` with: the update's rank, job, pool field, flags, epoch
    and round, `count` workers named by `bitmap`, `exponent` (else the update's) and `values`
    (int32 in host order, wrapped; else the update's own payload). For the tests and benches that
    play the switch."""
    _msg, rank, job, pool, own_exponent, flags, _count, epoch, round_, _bitmap = HEADER.unpack_from(
        update
    )
    header = HEADER.pack(
        MSG_RESULT,
        rank,
        job,
        pool,
        own_exponent if exponent is None else exponent,
        flags,
        count,
        epoch,
        round_,
        bitmap,
    )
    return header + (bytes(update[HEADER_LEN:]) if values is None else _payload(values))


def _payload(values) -> bytes:
    """Values as the wire's big-endian int32, wrapped around as the switch's registers do."""
    wrapped = (np.asarray(values, dtype=np.int64) + 2**31) % 2**32 - 2**31
    return wrapped.astype(">i4").tobytes()


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
