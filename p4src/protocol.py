"""The aggregation protocol's contract as code: the one place its numbers and formulas live.

p4src/aggregate.p4 is the switch's side of it and docs/protocol.md the prose; the workers
(ina.hosts), the controller (ina.controller), the benchmarks and the tests import from here.
"""

import secrets
import struct

UDP_PORT = 0xBEE0  # workers send to it; RESULTs come from it
UDP_PORT_MASK = 0xFFF0  # the switch recognises UDP_PORT..UDP_PORT + 15
MSG_UPDATE, MSG_RESULT = 1, 2

# msg_type:8 rank:8 job_id:16 set:1 index:15 exponent:8 flags:8 epoch:32, then E x int32 big-endian
HEADER = struct.Struct("!BBHHBBI")
HEADER_LEN = HEADER.size
SET_SHIFT = 15
INDEX_MASK = (1 << SET_SHIFT) - 1

MAX_WORKERS = 32  # the width of a slot's worker bitmap
MAX_JOBS = 256  # the job counters' size (p4src's MAX_JOBS)
MAX_SLOTS = INDEX_MASK + 1  # the slot index is 15 bits
ELEMS_CHOICES = (8, 16, 32, 64)  # values per packet, a compile-time constant of aggregate.p4
EPOCH_MAX = (1 << 32) - 1  # epochs are 1..EPOCH_MAX; 0 is what a never-used slot holds
FLOOD_GROUP = 1  # the multicast group of every host port (rid 0)
MAX_PORT = 511  # switch ports are v1model's 9 bits


def pool_field(pool_set: int, index: int) -> int:
    """The header's 16-bit pool field: the set in the top bit, the slot index below."""
    return pool_set << SET_SHIFT | index


def job_group(job_id: int) -> int:
    """The multicast group that carries a job's RESULTs to its workers."""
    return 0x100 + job_id


def worker_rid(job_id: int, rank: int) -> int:
    """The replica id of a job's RESULT copy to one worker (the egress rewrite's key)."""
    return 1 + job_id * MAX_WORKERS + rank


def register_index(pool_size: int, pool_set: int, slot: int) -> int:
    """The slot registers' cell of absolute slot `slot` (job base + index) in set `pool_set`."""
    return pool_set * pool_size + slot


def new_epoch() -> int:
    """A fresh job epoch: random, so a slot a previous run left behind (or a forger who never saw
    this run's packets) matches it with probability 2^-32, and never 0."""
    return secrets.randbelow(EPOCH_MAX) + 1
