"""The aggregation protocol's contract as code: the one place its numbers and formulas live.

p4src/aggregate.p4 is the switch's side of it and docs/protocol.md the prose; the workers
(ina.hosts), the controller (ina.controller), the benchmarks and the tests import from here.
"""

import re
import secrets
import struct
from dataclasses import dataclass

UDP_PORT = 0xBEE0  # workers send to it; RESULTs come from it
UDP_PORT_MASK = 0xFFF0  # the switch recognises UDP_PORT..UDP_PORT + 15
MSG_UPDATE, MSG_RESULT, MSG_STATUS = 1, 2, 3

# The header's fields in wire order with their widths in bits (aggregate.p4's agg_t): the one
# list HEADER, hosts/packets.py's `datagram` and hosts/scapy_layer.py are made from. 22 bytes,
# then E 32-bit words big-endian, each 32 / LANE_BITS two's complement lanes; flags: the FLAG_*
# bits and the lane width's code (below), other bits 0.
FIELDS = (
    ("msg_type", 8),
    ("rank", 8),
    ("job_id", 16),
    ("pool_set", 1),
    ("pool_index", 15),
    ("exponent", 8),
    ("flags", 8),
    ("count", 16),
    ("epoch", 32),
    ("round", 32),
    ("bitmap", 32),
)
_WORDS = {8: "B", 16: "H", 32: "I"}


def _words(fields: tuple[tuple[str, int], ...]) -> tuple[tuple[str, str], ...]:
    """The struct words of the fields, (name, format) each: fields narrower than a byte share a
    word with the fields after them, named by the first one's name before its last "_" (pool_set
    and pool_index are one 16-bit word, `pool`)."""
    words, names, bits = [], [], 0
    for name, width in fields:
        names.append(name)
        bits += width
        if bits in _WORDS:
            shared = names[0].rpartition("_")[0] if len(names) > 1 else name
            words.append((shared, _WORDS[bits]))
            names, bits = [], 0
    assert bits == 0, "the header's fields end inside a word"
    return tuple(words)


WORDS = tuple(name for name, _format in _words(FIELDS))  # HEADER's values, in order, by name


def header_struct(*names: str) -> struct.Struct:
    """The whole header as a struct of the words `names` alone (WORDS names, in wire order), the
    others pad bytes: packed as 0, skipped when unpacked. For the paths that pack or read a few
    words by position at struct's speed (the worker's per-packet path): a field added to the
    header changes none of their calls."""
    if unknown := [name for name in names if name not in WORDS]:
        raise ValueError(f"the header has no word {unknown[0]!r}: its words are {WORDS}")
    if list(names) != sorted(names, key=WORDS.index):
        raise ValueError(f"words {names} are not in wire order {WORDS}")
    return struct.Struct(
        "!" + "".join(f if n in names else f"{struct.calcsize(f)}x" for n, f in _words(FIELDS))
    )


def word_span(name: str) -> tuple[int, int]:
    """Header word `name`'s (byte offset, byte width): for a reader that takes a few words by
    position (the worker's per-answer path, ina.hosts.core)."""
    at = 0
    for word, fmt in _words(FIELDS):
        if word == name:
            return at, struct.calcsize(fmt)
        at += struct.calcsize(fmt)
    raise ValueError(f"the header has no word {name!r}: its words are {WORDS}")


HEADER = header_struct(*WORDS)
HEADER_LEN = HEADER.size
FLAGS_OFFSET = sum(width for _name, width in FIELDS[: [n for n, _w in FIELDS].index("flags")]) // 8
SET_SHIFT = 15
INDEX_MASK = (1 << SET_SHIFT) - 1
_POOL = header_struct(
    "pool"
)  # the pool word alone: a receiver hands a datagram to its slot's owner


def slot_of(datagram) -> int:
    """The slot index a datagram's header names (at least HEADER_LEN bytes)."""
    return _POOL.unpack_from(datagram)[0] & INDEX_MASK


MAX_WORKERS = 32  # the width of a slot's worker bitmap: children per switch
MAX_TREE_WORKERS = 1024  # a hierarchical job's workers: 32 leaves of MAX_WORKERS (issue 31)
MAX_JOB_WORKERS = (1 << 16) - 1  # the count field's width: workers in one job's sum
MAX_JOBS = 256  # the job counters' size (p4src's MAX_JOBS)
MAX_SLOTS = INDEX_MASK + 1  # the slot index is 15 bits
MAX_POOL_SIZE = 1 << 16  # a job's base slot and slot count are bit<16> in aggregate.p4's set_job
ELEMS_CHOICES = (8, 16, 32, 64, 128, 256)  # 32-bit words per packet: aggregate.p4's -DELEMS
# What ina run, ina train and ina worker use unless told: SwitchML's 1 KB packets, since emulation
# costs per packet (docs/performance.md, "Larger packets and a batched worker data path")
DEFAULT_ELEMS = 256
EPOCH_MAX = (1 << 32) - 1  # epochs are 1..EPOCH_MAX; 0 is what a never-used slot holds
ROUND_MASK = (1 << 32) - 1  # rounds wrap; the switch compares them modulo 2^32
MAX_TIMEOUT_US = (1 << 32) - 1  # set_job's timeout is bit<32> microseconds
MAX_STALENESS = 255  # set_job's staleness is bit<8>
FLOOD_GROUP = 1  # the multicast group of every host port (rid 0)
MAX_PORT = 511  # switch ports are v1model's 9 bits


# The header's flags byte (docs/protocol.md, "Flags"): bits are assigned here and nowhere else.
FLAG_OVERFLOW = 0x01  # a RESULT in which at least one lane saturated: the workers redo that chunk
# FALLBACK: in a STATUS from the switch, the UPDATE's use is summed by the job's host fallback
# server (its slot/set is held by another job); in an UPDATE, the sender's chunk for the host,
# forwarded there by the switch.
FLAG_FALLBACK = 0x02
# ZERO: the packet has no value block after its header, its values are all zero (docs/protocol.md,
# "Zero-block skipping"). An UPDATE's: the sender's chunk is all zeros, counted like any
# contribution, nothing added; an answer's: every contribution in its use was ZERO.
FLAG_ZERO = 0x08
LANE_BITS_CHOICES = (32, 16, 8)  # bits per value: aggregate.p4's -DLANE_BITS (elements.p4)
LANE_SHIFT = 4  # the flags' top four bits name the lane width (LANE_MASK), as lane_flags says
LANE_MASK = 0xF0


def lane_flags(bits: int) -> int:
    """The flags' width code of `bits`-bit lanes: 0 for 32 (the header before lanes), 1 for 16, 2 for
    8. Every UPDATE carries its own; a switch built for another width drops it as malformed."""
    return LANE_BITS_CHOICES.index(bits) << LANE_SHIFT


def lane_values(elems: int, bits: int) -> int:
    """Values per packet of a switch built with ELEMS=`elems` and LANE_BITS=`bits`."""
    return elems * 32 // bits


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


def slot_round(use: int) -> int:
    """The header's round of a worker's `use`-th use (0, 1, 2, ...) of a slot: its set is round & 1."""
    return use & ROUND_MASK


def round_newer(a: int, b: int) -> bool:
    """Whether round `a` is later than `b`, as the switch decides it (modulo 2^32)."""
    return 0 < (a - b) & ROUND_MASK < 1 << 31


@dataclass(frozen=True)
class Policy:
    """A job's completion policy (docs/protocol.md, "Completion policies").

    quorum: contributions that complete a slot (None: all the job's workers, i.e. sync);
    timeout_us: a slot completes with what it has once this long has passed since its first
    contribution, checked on the slot's later packets (0: never); staleness: how many rounds
    (all-reduce calls) workers may be apart, which their slot layout bounds (0: sync)."""

    quorum: int | None = None
    timeout_us: int = 0
    staleness: int = 0

    @classmethod
    def parse(cls, text: str) -> "Policy":
        """`sync`, or comma-separated `quorum:K`, `timeout:T` (T in us, or with a unit: 500us,
        2ms, 1s) and `stale:S`, e.g. `quorum:3,timeout:5ms`. Raises ValueError naming the part."""
        quorum, timeout_us, staleness = None, 0, 0
        if text.strip() != "sync":
            for part in filter(None, (p.strip() for p in text.split(","))):
                name, _, value = part.partition(":")
                if name == "quorum" and value.isdigit():
                    quorum = int(value)
                elif name == "timeout" and (m := re.fullmatch(r"(\d+)(us|ms|s)?", value)):
                    timeout_us = int(m[1]) * {"us": 1, "ms": 1000, "s": 1_000_000}[m[2] or "us"]
                elif name == "stale" and value.isdigit():
                    staleness = int(value)
                else:
                    raise ValueError(
                        f"bad policy part {part!r}: use sync, quorum:K, timeout:T[us|ms|s] or stale:S"
                    )
        policy = cls(quorum, timeout_us, staleness)
        policy.check()
        return policy

    def check(self, workers: int = MAX_TREE_WORKERS) -> None:
        """Raise ValueError naming the field out of its range (for a job of `workers` workers; by
        default the largest job, a hierarchical one: each use checks its job's own size)."""
        if self.quorum is not None and not 1 <= self.quorum <= workers:
            raise ValueError(f"quorum {self.quorum} is out of range 1..{workers}")
        if not 0 <= self.timeout_us <= MAX_TIMEOUT_US:
            raise ValueError(f"timeout {self.timeout_us} us is out of range 0..{MAX_TIMEOUT_US}")
        if not 0 <= self.staleness <= MAX_STALENESS:
            raise ValueError(f"staleness {self.staleness} is out of range 0..{MAX_STALENESS}")

    def needed(self, workers: int) -> int:
        """Contributions that complete a slot of a job with `workers` workers."""
        return workers if self.quorum is None else self.quorum

    def __str__(self) -> str:
        parts = [f"quorum:{self.quorum}"] if self.quorum is not None else []
        parts += [f"timeout:{self.timeout_us}us"] if self.timeout_us else []
        parts += [f"stale:{self.staleness}"] if self.staleness else []
        return ",".join(parts) or "sync"


SYNC = Policy()  # every worker contributes to every slot: SwitchML's behaviour, the default
