"""A worker's all-reduce protocol as a sans-I/O state machine: events in, datagrams out.

The core holds no socket and reads no clock: each event carries the time, so the same protocol
runs over a UDP socket (ina.hosts.worker), on a harness's virtual clock with chosen packets lost
(ina.hosts.inprocess), or in a simulator. docs/protocol.md is the contract ("Worker obligations")
and the narrative ("Worker loss recovery": slots and rounds, the answers, exponents, RACK, the
turns, the RTO, spurious resends, pacing, held RESULTs). ina.hosts.rto estimates the RTT and the
RTO; ina.hosts.chunks packs the array into chunks and the sums back; ina.hosts.expiry finds the
slots `expire` resends.
"""

import math
import struct
from dataclasses import dataclass
from typing import Final

import numpy as np

from ina.hosts.chunks import Chunks, Contributors
from ina.hosts.expiry import PACE_BURST, SEQ_SHIFT, DueIndex
from ina.hosts.rto import MAX_RTO, MIN_RTO, SAME_TIME, RttEstimator
from ina.hosts.slots import Slot, Waiting
from ina.p4src import protocol
from ina.p4src.protocol import (
    ELEMS_CHOICES,
    EPOCH_MAX,
    LANE_BITS_CHOICES,
    MAX_JOB_WORKERS,
    MAX_JOBS,
    MAX_SLOTS,
    MAX_WORKERS,
    header_struct,
    lane_flags,
    lane_values,
    round_newer,
    word_span,
)

# What the per-answer path reads of the protocol, bound Final: compiled (ina/compiled.py), a Final
# name is a C static, where any other module-level name is a lookup in the module's dict per use
FLAG_FALLBACK: Final = protocol.FLAG_FALLBACK
FLAG_OVERFLOW: Final = protocol.FLAG_OVERFLOW
FLAG_ZERO: Final = protocol.FLAG_ZERO
FLAGS_OFFSET: Final = protocol.FLAGS_OFFSET
HEADER_LEN: Final = protocol.HEADER_LEN
INDEX_MASK: Final = protocol.INDEX_MASK
MSG_RESULT: Final = protocol.MSG_RESULT
MSG_STATUS: Final = protocol.MSG_STATUS
MSG_UPDATE: Final = protocol.MSG_UPDATE
ROUND_MASK: Final = protocol.ROUND_MASK
SET_SHIFT: Final = protocol.SET_SHIFT

MAX_DATAGRAM_ELEMS = (65507 - HEADER_LEN) // 4  # values that fit one UDP datagram over IPv4
PROBE_ALLOWANCES = (
    4  # a counted worker that resent asks once more this many RACK allowances after its STATUS
)
HOLD_BYTES = (
    64 << 20
)  # RESULTs of later uses a worker keeps at most (`_hold`): a bound in memory, not calls

# The words an UPDATE sets (the others 0), as a struct made from protocol.FIELDS: a field added to
# the header changes no call. Every UPDATE is one call of an `_update_struct`: the whole datagram,
# or a ZERO UPDATE's header alone (0 bytes of values).
_UPDATE_HEADER = header_struct(
    "msg_type", "rank", "job_id", "pool", "exponent", "flags", "epoch", "round"
)
# The words an answer is read by, offset and width each from protocol.FIELDS: compiled, `_answer`
# reads them as bytes of a bytes object, no struct call and no tuple of boxed integers
MSG_TYPE_AT: Final = word_span("msg_type")[0]
MSG_TYPE_WIDTH: Final = word_span("msg_type")[1]
JOB_ID_AT: Final = word_span("job_id")[0]
JOB_ID_WIDTH: Final = word_span("job_id")[1]
POOL_AT: Final = word_span("pool")[0]
POOL_WIDTH: Final = word_span("pool")[1]
EXPONENT_AT: Final = word_span("exponent")[0]
EXPONENT_WIDTH: Final = word_span("exponent")[1]
FLAGS_AT: Final = word_span("flags")[0]
FLAGS_WIDTH: Final = word_span("flags")[1]
COUNT_AT: Final = word_span("count")[0]
COUNT_WIDTH: Final = word_span("count")[1]
EPOCH_AT: Final = word_span("epoch")[0]
EPOCH_WIDTH: Final = word_span("epoch")[1]
ROUND_AT: Final = word_span("round")[0]
ROUND_WIDTH: Final = word_span("round")[1]
BITMAP_AT: Final = word_span("bitmap")[0]
BITMAP_WIDTH: Final = word_span("bitmap")[1]
# _answer's words, typed so that compiled (ina/compiled.py) each is a machine integer
Fields = tuple[int, int, int, int, int, int, int, int, int]


def _update_struct(payload_bytes: int) -> struct.Struct:
    """An UPDATE's header words and `payload_bytes` of values: the datagram in one pack_into."""
    return struct.Struct(_UPDATE_HEADER.format + f"{payload_bytes}s")


def _word(data: bytes, at: int, width: int) -> int:
    """The big-endian word of `width` bytes at offset `at` of `data`."""
    if width == 1:
        return data[at]
    if width == 2:
        return data[at] << 8 | data[at + 1]
    if width == 4:
        return data[at] << 24 | data[at + 1] << 16 | data[at + 2] << 8 | data[at + 3]
    return int.from_bytes(data[at : at + width], "big")


def _answer(data: bytes) -> Fields:
    """The words of an answer (at least HEADER_LEN bytes) the core reads: msg_type, job_id, pool,
    exponent, flags, count, epoch, round, bitmap."""
    return (
        _word(data, MSG_TYPE_AT, MSG_TYPE_WIDTH),
        _word(data, JOB_ID_AT, JOB_ID_WIDTH),
        _word(data, POOL_AT, POOL_WIDTH),
        _word(data, EXPONENT_AT, EXPONENT_WIDTH),
        _word(data, FLAGS_AT, FLAGS_WIDTH),
        _word(data, COUNT_AT, COUNT_WIDTH),
        _word(data, EPOCH_AT, EPOCH_WIDTH),
        _word(data, ROUND_AT, ROUND_WIDTH),
        _word(data, BITMAP_AT, BITMAP_WIDTH),
    )


class WorkerError(Exception):
    """The all-reduce cannot finish; the message says what to check."""


@dataclass
class Stats:
    packets_sent: int = 0
    packets_received: int = 0
    retransmissions: int = 0  # every resend: timeouts + those RACK's time-based detection sent
    timeouts: int = 0  # resends because the RTO passed
    spurious: int = 0  # resends whose original was answered after all (answer within min_rtt)
    statuses: int = 0  # STATUS answers saying a slot's use counted this worker and waits for others
    duplicates: int = 0
    held: int = (
        0  # RESULTs of a later use of a slot, kept until the slot gets there (others ran ahead)
    )
    forged: int = 0  # datagrams that were not this job's RESULTs from the switch
    fallbacks: int = 0  # uses the switch sent to the job's host fallback server (FALLBACK)
    redone: int = 0  # uses that sent a chunk again because its RESULT said OVERFLOW
    zeros: int = 0  # UPDATEs sent as the header alone, flagged ZERO: their chunk was all zeros
    elapsed: float = 0.0
    elements: int = 0

    @property
    def goodput(self) -> float:
        """Aggregated elements per second."""
        return self.elements / self.elapsed if self.elapsed else 0.0


def check(name: str, value, valid: bool, expected: str) -> None:
    if not valid:
        raise ValueError(f"{name} = {value!r}: expected {expected}")


class NonFiniteError(WorkerError):
    """NaN or infinities refused: block floating point has no encoding for them, and dropping them
    silently would return the other workers' sum as if it were everyone's. `count` of them, the
    first (`value`) at flat index `index` of the array, or of `arrays[array]` in a group
    (ina.hosts.group names the array)."""

    def __init__(self, count: int, index: int, value: float, array: int | None = None):
        self.count, self.index, self.value, self.array = count, index, value, array
        held, at = (
            ("the array holds", "") if array is None else ("the arrays hold", f"arrays[{array}], ")
        )
        super().__init__(
            f"{held} {count} NaN or infinite value(s) (first at {at}flat index {index}: {value}); "
            "in-network aggregation sums finite values only"
        )


def _check_finite(flat: np.ndarray) -> None:
    """Refuse NaN and infinities (NonFiniteError)."""
    bad = ~np.isfinite(flat)
    if bad.any():
        first = int(np.argmax(bad))
        raise NonFiniteError(int(bad.sum()), first, float(flat[first]))


class AllReduceCore:
    """One worker's protocol state across all-reduces (slot rounds, RTT estimate, stats).

    Events (each returns the datagrams to send to `switch`, in order):
      start(array, now) -> list          begin the all-reduce of `array`
      receive(data, source, now) -> datagram or None
                                         a datagram `data` (bytes-like) arrived from `source`
      expire(now) -> list                call it whenever now >= `deadline`: retransmissions
    State: `deadline` (inf when nothing waits), `finished`, `result()`, `contributors()`, `stats`.
    Each slot's current use is in one state, which the events move (docs/protocol.md, "Worker loss
    recovery"):
      waiting  sent (`_next_use`), in `_waiting`; resent (`_resend`) by `expire` at its turn or
               RTO, or by `receive` at once when a STATUS says its copy was lost
      counted  waiting, and a STATUS said the switch has this worker's copy (`_status`): resent
               only as the one probe that STATUS allows, or at the RTO
      taken    its RESULT came (`_take`; a later use's is held, `_hold`): the chunk's sum is stored
               and the slot's next use sent (taken at once if its RESULT is held)
      gone     a STATUS of a later round of the set (`_gone`): the uses skipped have no sum, and
               the slot goes on to the use before that round
      done     the slot's last use of this all-reduce is taken (`_slot_done`); all done: `finished`
    A datagram is the core's own buffer for its slot, not a copy: send it before the next event.
    `timeout` is the RTO until the first RTT sample; then the RTO follows the measured RTT
    (ina.hosts.rto). Bad arguments raise ValueError naming the argument and its range.
    """

    def __init__(
        self,
        job_id: int,
        rank: int,
        n_workers: int,
        epoch: int,
        elems: int,
        window: int,
        timeout: float,
        max_retries: int,
        switch: tuple[str, int],
        base: int = 0,
        stats: Stats | None = None,
        min_rto: float = MIN_RTO,
        job_workers: int | None = None,
        fallback: tuple[str, int] | None = None,
        bits: int = 32,
    ):
        # rank and n_workers are this worker's at its switch (the wire's rank, the turns);
        # job_workers is the whole job's worker count, the scale every worker quantizes for
        # (hierarchical aggregation: the leaf's workers are a share of the job's)
        self.job_id, self.rank, self.n_workers, self.epoch = job_id, rank, n_workers, epoch
        self.job_workers = n_workers if job_workers is None else job_workers
        self.elems, self.window, self.timeout, self.max_retries = (
            elems,
            window,
            timeout,
            max_retries,
        )
        self.min_rto = (
            min_rto  # the RTO's floor in seconds beside twice the fastest answer (ina.hosts.rto)
        )
        self.switch = switch  # (IPv4 address, UDP port): the only source a RESULT is taken from
        # ... beside the job's host fallback server, which sums the uses the switch could not
        # (docs/protocol.md, "Best effort and the host fallback")
        self.fallback = fallback
        self.base = base  # the job's slot of this core's slot 0: under staleness, its group's first
        self.bits = bits  # the switch's lane width: elems 32-bit words carry lane_values values
        self._check_arguments()
        self._flags = lane_flags(bits)  # every UPDATE's
        self._epoch_word: object = epoch  # boxed once: compiled, a pack call takes objects
        self.datagram_size = HEADER_LEN + 4 * elems
        self.stats = stats or Stats()  # a worker's cores (one per staleness group) may share theirs
        self.deadline = math.inf
        self.finished = False  # True once the all-reduce `start` began has its every result
        self._pack_datagram = _update_struct(4 * elems).pack_into  # an UPDATE with its values
        self._pack_header = _update_struct(0).pack_into  # a ZERO UPDATE: the header alone
        self._window = 0  # the slots the current all-reduce uses (the first ones)
        self._slots = [Slot(k) for k in range(window)]  # each slot's state (ina.hosts.slots)
        # A straggler under a quorum falls behind for as long as it is slower (a 3x one, hundreds of
        # calls in a training run): what bounds it is memory, so the uses a slot may hold follow.
        self.hold_rounds = max(2, HOLD_BYTES // (window * self.datagram_size))
        self._rtt = RttEstimator(timeout, min_rto, window)
        self._allowance = math.inf  # rack_rtt + reo_wnd: how long an answer may take (RACK)
        self._sequence = 0  # transmissions so far: orders them, ties in time included
        self._rack_seq = 0  # the latest transmission that was answered (RACK.xmit_ts as an order)
        # When the path's retransmission timer last expired (RFC 6298, 5.4-5.6): a slot past its
        # RTO times out no sooner than the (backed-off) timer after that.
        self._timer_from = -math.inf

    def _check_arguments(self) -> None:
        check("job_id", self.job_id, 0 <= self.job_id < MAX_JOBS, f"0..{MAX_JOBS - 1}")
        check("n_workers", self.n_workers, 1 <= self.n_workers <= MAX_WORKERS, f"1..{MAX_WORKERS}")
        check(
            "rank",
            self.rank,
            0 <= self.rank < self.n_workers,
            f"0..{self.n_workers - 1} (n_workers - 1)",
        )
        check(
            "job_workers",
            self.job_workers,
            self.n_workers <= self.job_workers <= MAX_JOB_WORKERS,
            f"{self.n_workers}..{MAX_JOB_WORKERS} (n_workers..)",
        )
        check("epoch", self.epoch, 1 <= self.epoch <= EPOCH_MAX, f"1..{EPOCH_MAX}")
        check(
            "elems",
            self.elems,
            1 <= self.elems <= MAX_DATAGRAM_ELEMS,
            f"1..{MAX_DATAGRAM_ELEMS} (the switch runs one of {ELEMS_CHOICES})",
        )
        check("bits", self.bits, self.bits in LANE_BITS_CHOICES, f"one of {LANE_BITS_CHOICES}")
        check("window", self.window, 1 <= self.window <= MAX_SLOTS, f"1..{MAX_SLOTS}")
        check(
            "base", self.base, 0 <= self.base <= MAX_SLOTS - self.window, f"0..{MAX_SLOTS} - window"
        )
        check(
            "timeout",
            self.timeout,
            math.isfinite(self.timeout) and self.timeout > 0,
            "a finite number of seconds > 0",
        )
        check("max_retries", self.max_retries, self.max_retries >= 0, "0 or more")
        check("min_rto", self.min_rto, 0 <= self.min_rto <= MAX_RTO, f"0..{MAX_RTO:g} seconds")
        check("switch_port", self.switch[1], 1 <= self.switch[1] <= 0xFFFF, "1..65535")

    def start(self, array: np.ndarray, now: float) -> list[bytearray]:
        """Begin the all-reduce of `array` (int32, float32 or float64; the same shape and dtype on
        every worker): the first window of UPDATEs. Payloads are packed up front into one big-endian
        buffer, so a packet is a header packed in place plus a memcpy. For floats each chunk is
        quantized with its own exponent, right whenever the switch's maximum equals it; otherwise it
        is quantized again when the maximum arrives."""
        array = np.asarray(array)
        if array.dtype not in (np.int32, np.float32, np.float64):
            raise WorkerError(
                f"dtype {array.dtype} is not supported: use int32, float32 or float64"
            )
        if array.dtype != np.int32:
            _check_finite(array.ravel())
        elif self.bits != 32:
            raise WorkerError(
                f"int32 arrays are summed in 32-bit lanes only (bits = {self.bits}): a narrow "
                "lane that saturates has no smaller scale to redo it at"
            )
        values = lane_values(self.elems, self.bits)
        self._chunks = chunks = Chunks(array, values, self.job_workers, self.bits)
        n_chunks = chunks.n
        window = min(self.window, n_chunks)
        self._n_chunks, self._window, self._is_float = n_chunks, window, chunks.is_float
        slots = self._slots
        for k in range(window):  # each slot's final use in this all-reduce
            last = slots[k].round + len(range(k, n_chunks, window)) - (not self._is_float)
            slots[k].begin(bytearray(self.datagram_size), last & ROUND_MASK, now)
        self._probing: set[int] = set()  # the slots whose probe_at is set
        self._waiting = Waiting()  # the waiting slots, oldest transmission first
        # The same waiting transmissions ordered for `expire`, so it finds the due ones without a
        # scan; every transmission goes to the end of its `order` (kept here: the per-packet path).
        self._index = DueIndex(self.rank, self.n_workers, slots)
        self._order = self._index.order
        self._remaining = n_chunks
        self._started = now
        self.finished = False
        self.deadline = math.inf
        # A float slot's first use carries no chunk (the exponent only) and counts as chunk
        # index - window, so the next is always chunk + window. A use whose RESULT is held is not sent.
        first = [
            self._next_use(k, k - window if self._is_float else k, None, now) for k in range(window)
        ]
        return [pkt for pkt in first if pkt is not None]

    def receive(
        self, data: bytes | bytearray | memoryview, source: tuple[str, int], now: float
    ) -> bytearray | None:
        """A datagram arrived: take it if it is the RESULT (or STATUS) of the round a slot is on, and
        return the slot's next UPDATE, if any. The per-packet path: headers are read and packed in
        place, and a RESULT's bytes are kept as its chunk's sums (a buffer is copied once)."""
        stats = self.stats
        stats.packets_received += 1
        size = len(data)  # the whole datagram, or the header alone flagged ZERO
        if (size != self.datagram_size and size != HEADER_LEN) or (
            source != self.switch and source != self.fallback
        ):
            stats.forged += 1
            return None
        raw = data if isinstance(data, bytes) else bytes(data)
        fields: Fields = _answer(raw)
        msg, job, pool, exponent, flags, count, epoch, round_, bitmap = fields
        index = (pool & INDEX_MASK) - self.base
        if (
            (size == HEADER_LEN) != ((flags & FLAG_ZERO) != 0)
            or msg not in (MSG_RESULT, MSG_STATUS)
            or job != self.job_id
            or epoch != self.epoch
            or not 0 <= index < self.window
        ):
            stats.forged += 1
            return None
        if flags & FLAG_FALLBACK:
            return self._fall_back(index, round_, now)
        slot = self._slots[index]
        if index >= self._window or round_ != slot.round or slot.done:
            return self._other_round(msg, index, round_, raw, now)
        if msg == MSG_STATUS:
            return self._status_of_use(index, bitmap, now)
        elapsed = now - slot.sent_at
        # answered before RACK's overtake below: the index drops this transmission rather than
        # queue it as overtaken (a tuple kept per answer until `expire` next runs)
        self._waiting.remove(slot)
        if slot.status:
            pass  # counted, the slot waited for others' resends: its time says nothing of the path
        elif slot.retries == 0:
            rtt = self._rtt
            # Karn's rule: an RTT sample only from a use sent once, and answered within the timer:
            # one past it waited on the path's one timer (only the oldest is resent), as a resent
            # one would have with a timer of its own, often on the others' recovery. Sampled, such
            # waits lifted the srtt a STATUS is judged by to seconds on BMv2, and no worker then
            # heard that its copy was lost. Without a sample, no RACK evidence either.
            if elapsed <= rtt.timer:
                rtt.sample(elapsed)
                if (
                    slot.seq > self._rack_seq and not slot.behind
                ):  # RACK: the latest answer, its RTT
                    self._rack_seq = slot.seq
                    self._index.overtake(self._rack_seq)
                    # ... but at least srtt: a use completes when the last worker's copy arrives, so
                    # the one a worker sends last (it was behind) is answered at once, and that
                    # short time would make its every use in flight look overdue.
                    srtt = rtt.smoothed  # sampled
                    self._allowance = (elapsed if elapsed >= srtt else srtt) + rtt.reo_wnd
        elif elapsed < self._rtt.min_rtt - SAME_TIME < math.inf:
            # Too soon to answer the resend: the original got through. (An answer exactly one
            # fastest round trip after the resend answers it: no margin, and float rounding decided.)
            stats.spurious += 1  # the backoff undone
            self._rtt.spurious()
        elif slot.timeouts:
            # The resend of a timed-out use answered, no STATUS before it: that timeout recovered a
            # loss (or let the switch's timeout policy complete the slot). The path works: those
            # overdue go now, paced (TCP's go-back once its retransmission is acknowledged), not
            # one timer each.
            self._timer_from = -math.inf
        # A resend's answer moves no RACK state: the switch answers it from a completed set at
        # once, far sooner than a use that waits for every worker, and as the latest answer it
        # would make every use sent before it look overdue after that short time.
        return self._take(index, round_, exponent, count, bitmap, raw, now)

    def _other_round(
        self, msg: int, index: int, round_: int, data: bytes, now: float
    ) -> bytearray | None:
        """An answer for a round slot `index` is not on (or a slot without a use in this
        all-reduce): a later use's RESULT is held; a STATUS of a later round of the set says the
        use is gone, one of the next round that this worker's RESULT copy was lost; the rest are
        duplicates."""
        slot = self._slots[index]
        if msg == MSG_RESULT and self._hold(index, round_, data):
            if index < self._window and not slot.done and self._latest_copy_lost(index, now):
                # The others are past the use this worker waits on: its RESULT left the switch
                # before this one and was lost. Asked for now: nobody else will resend that use.
                pkt = self._resend(index, now)
                self._rearm()
                return pkt
            return None
        if msg == MSG_STATUS and index < self._window and not slot.done:
            current = slot.round
            ahead = (round_ - current) & ROUND_MASK
            if not ahead & 1 and round_newer(round_, current):
                return self._gone(index, round_, now)
            if ahead == 1 and self._latest_copy_lost(index, now):
                # Another worker is on the next use, so it had this use's RESULT, and this
                # worker's copy was lost: the switch answers a resend from the completed set.
                pkt = self._resend(index, now)
                self._rearm()
                return pkt
        self.stats.duplicates += 1
        return None

    def _fall_back(self, index: int, round_: int, now: float) -> bytearray | None:
        """The switch's FALLBACK STATUS: use `round_` of slot `index` is summed by the job's host
        fallback server. If the slot is on that use, its UPDATE is resent now flagged FALLBACK, and
        so is every resend of it (the flag stays in the slot's buffer until its next use): the
        switch forwards it to the server, whose RESULT completes the use as the switch's would."""
        slot = self._slots[index]
        if (
            index >= self._window
            or slot.done
            or round_ != slot.round
            or slot.pkt[FLAGS_OFFSET] & FLAG_FALLBACK
        ):
            self.stats.duplicates += 1  # another use's, or told already
            return None
        slot.pkt[FLAGS_OFFSET] |= FLAG_FALLBACK
        self.stats.fallbacks += 1
        pkt = self._resend(index, now)
        self._rearm()
        return pkt

    def _status_of_use(self, index: int, bitmap: int, now: float) -> bytearray | None:
        """A STATUS of the use slot `index` is on: with this worker's bit the slot is counted and
        waits for others; without it, this worker's latest copy was lost if it had time to arrive."""
        stats, slot = self.stats, self._slots[index]
        if bitmap >> self.rank & 1:  # counted: the slot waits for others
            if not slot.status and slot.retries:  # its own resend's STATUS
                slot.probe_at = now
                self._probing.add(index)
                self.deadline = min(self.deadline, now + PROBE_ALLOWANCES * self._allowance)
            if not slot.status and slot.seq < self._rack_seq:
                self._index.count(index)
            slot.status = bitmap
            stats.statuses += 1
        elif self._latest_copy_lost(index, now):
            # Another worker's resend found the slot without this worker, whose latest copy
            # had time to arrive before it: lost. Resent now, not at its turn.
            pkt = self._resend(index, now)
            self._rearm()
            return pkt
        else:
            stats.duplicates += 1  # this worker's latest copy may still be on its way
        return None

    def _latest_copy_lost(self, index: int, now: float) -> bool:
        """Told by a STATUS that the switch lacks this worker's copy of slot `index`'s use: lost, if
        sent at least srtt ago (it had time to arrive before the STATUS left). A copy sent later,
        or queued longer than usual, may still be on its way: then its turn decides."""
        srtt = self._rtt.srtt
        return srtt is not None and now - self._slots[index].sent_at >= srtt

    def _hold(self, index: int, round_: int, data: bytes) -> bool:
        """Keep the RESULT of a later use of slot `index` (at most `hold_rounds` uses ahead), to take
        when the slot gets there: under a quorum or timeout the others run ahead, and the switch
        replaces a use once it is done, so its multicast RESULT is this worker's only copy. Held
        uses the slot has left behind (a gone use skipped them) are dropped first."""
        slot = self._slots[index]
        current = slot.round
        if (round_ - current) & ROUND_MASK >= self.hold_rounds:
            return False
        held = slot.held
        for old in [r for r in held if (r - current) & ROUND_MASK >= self.hold_rounds]:
            del held[old]
        held[round_] = data
        self.stats.held += 1
        return True

    def _take(
        self,
        index: int,
        round_: int,
        exponent: int,
        count: int,
        bitmap: int,
        data: bytes,
        now: float,
    ) -> bytearray | None:
        """The RESULT `data` of the use `round_` slot `index` is on: its chunk's sum, then the slot's
        next use (None: held too, and taken, or the slot is done)."""
        slot = self._slots[index]
        chunk = slot.chunk
        if chunk >= 0 and data[FLAGS_OFFSET] & FLAG_OVERFLOW and not slot.blind:
            return self._redo(index, round_, chunk, now)
        if chunk >= 0:
            if not slot.blind:
                self._chunks.store(chunk, data, count, bitmap)
            self._remaining -= 1
        if round_ == slot.last_round:
            self._slot_done(index, now)
            return None
        slot.round = (round_ + 1) & ROUND_MASK
        # This worker resent the use and was not told it was counted: its RESULT copy or its UPDATE
        # was lost. After a lost RESULT copy the others sent the next use long before this worker,
        # so that use is answered as soon as this copy arrives, which says nothing of the uses
        # this worker sent before it: no RACK evidence (after a lost UPDATE, one sample is lost).
        slot.behind = slot.retries > 0 and not slot.status
        return self._next_use(index, chunk + self._window, exponent, now)

    def _redo(self, index: int, round_: int, chunk: int, now: float) -> bytearray | None:
        """The use's sum saturated a lane (its RESULT says OVERFLOW, and so did every worker's copy):
        the slot's next use carries the chunk again at the scale that cannot overflow, so the
        slot's schedule is one use longer, and announces the same exponent again (this RESULT's
        maximum comes back with the redo's)."""
        if not self._chunks.redo(chunk):
            raise WorkerError(
                f"job {self.job_id} rank {self.rank}: chunk {chunk}'s sum saturated a lane at the "
                "scale that cannot overflow: the workers' arrays differ in shape, or a worker "
                "quantizes for another worker count"
            )
        self.stats.redone += 1
        slot = self._slots[index]
        slot.last_round = (slot.last_round + 1) & ROUND_MASK
        slot.round = (round_ + 1) & ROUND_MASK
        slot.behind = slot.retries > 0 and not slot.status
        return self._next_use(index, chunk, self._chunks.agreed(chunk), now)

    def _next_use(
        self, index: int, chunk: int, exponent: int | None, now: float
    ) -> bytearray | None:
        """The slot's next use, carrying `chunk` (< 0: a float slot's first use, the exponent alone),
        scaled for the switch's maximum `exponent` (None: not known, the chunk gets no sum); announces
        the exponent of the chunk a window later. Taken at once if its RESULT is held (None)."""
        slot, chunks = self._slots[index], self._chunks
        pkt, round_ = slot.pkt, slot.round
        slot.chunk = chunk
        slot.blind = exponent is None and self._is_float
        held_uses = slot.held
        held = held_uses.pop(round_, None) if held_uses else None  # seldom any: no call then
        if held is not None:
            chunks.agree(chunk, exponent)
            fields: Fields = _answer(held)
            _msg, _job, _pool, exponent, _flags, count, _epoch, _round, bitmap = fields
            return self._take(index, round_, exponent, count, bitmap, held, now)
        values = chunks.payload(chunk, exponent) if chunk >= 0 else b""  # agrees the exponent
        announce = chunks.exponents[
            min(chunk + self._window, self._n_chunks)
        ]  # the chunk a window later's
        pool = (round_ & 1) << SET_SHIFT | self.base + index
        # All zeros (a float slot's first use, or a chunk of zeros): the header alone, flagged ZERO
        if chunk < 0 or chunks.zero(chunk):
            del pkt[HEADER_LEN:]  # the next use's values put the bytes back
            self.stats.zeros += 1
            pack = self._pack_header  # its "0s" packs none of `values`
            flags = self._flags | FLAG_ZERO
        else:
            if len(pkt) != self.datagram_size:  # after a ZERO use: the values' bytes back
                pkt.extend(bytes(self.datagram_size - HEADER_LEN))
            pack = self._pack_datagram
            flags = self._flags
        pack(
            pkt,
            0,
            MSG_UPDATE,
            self.rank,
            self.job_id,
            pool,
            announce,
            flags,
            self._epoch_word,
            round_,
            values,
        )
        slot.retries = slot.timeouts = slot.status = 0
        slot.sent_at = slot.first_sent = now
        self._sequence += 1
        slot.seq = self._sequence
        self._order.append(self._sequence << SEQ_SHIFT | index)
        self._waiting.append(slot)
        self.stats.packets_sent += 1
        self._rearm()
        return pkt

    def _gone(self, index: int, newer: int, now: float) -> bytearray | None:
        """A STATUS saying the slot's set holds the later round `newer`: the uses from the current
        one up to newer - 2 were done and replaced without this worker's RESULT, so their chunks have
        no sum. The slot moves on to use newer - 1, which is done too (whoever started `newer` had
        its RESULT), so the switch answers it with that RESULT, or with another STATUS if it has
        been replaced meanwhile: every STATUS moves the slot on, so this ends."""
        if self.bits != 32:  # a skipped use may have been a redo: which chunk comes next is unknown
            raise WorkerError(
                f"job {self.job_id} rank {self.rank}: slot {index} skipped uses done without this "
                f"worker, which {self.bits}-bit lanes cannot do (an overflowed chunk's redo "
                "shifts a slot's chunks): run narrow lanes with the sync policy"
            )
        slot = self._slots[index]
        self._waiting.remove(slot)
        skipped = (newer - 1 - slot.round) & ROUND_MASK
        chunk, window, n_chunks = slot.chunk, self._window, self._n_chunks
        self._remaining -= len(range(chunk, min(chunk + skipped * window, n_chunks), window)) - (
            chunk < 0
        )
        following = chunk + skipped * window
        if following >= n_chunks:
            self._slot_done(index, now)
            return None
        slot.round = (newer - 1) & ROUND_MASK
        slot.behind = True
        return self._next_use(index, following, None, now)

    def _slot_done(self, index: int, now: float) -> None:
        """The slot has carried its last chunk of this all-reduce: the next one starts at the use after."""
        slot = self._slots[index]
        slot.round = (slot.last_round + 1) & ROUND_MASK
        slot.done = True
        self._waiting.remove(slot)
        if not self._remaining:
            self.finished, self.deadline = True, math.inf
            self.stats.elapsed += now - self._started
            self.stats.elements += self._n_chunks * self._chunks.elems
        else:
            self._rearm()

    def _rearm(self) -> None:
        """Bring the deadline forward to when the first waiting slot may be due: the oldest
        transmission by its RTO; the oldest not counted by a STATUS, if sent before the latest
        answered one, by RACK once one allowance passes (expire then tells whose turn it is)."""
        rack = self._waiting.oldest
        if rack is None:
            return
        timer = self._rtt.timer
        due = rack.sent_at + timer
        if self._allowance < timer:
            if rack.status:
                rack = next((slot for slot in self._waiting if not slot.status), rack)
            if rack.seq < self._rack_seq and not rack.status:
                due = min(due, rack.sent_at + self._allowance)
        if due < self.deadline:
            self.deadline = due

    @property
    def srtt(self) -> float | None:
        """The smoothed RTT in seconds (None before the first sample), read-only: what a driver
        may time its reads by (hosts/worker.py's receive moderation)."""
        return self._rtt.srtt

    # The estimator's figures, as `expire`'s replay in tests/hosts/test_inprocess.py reads them.
    @property
    def _srtt(self) -> float | None:
        """The smoothed RTT (None before the first sample)."""
        return self._rtt.srtt

    @property
    def _rto(self) -> float:
        """The RTO without backoff."""
        return self._rtt.rto

    @property
    def _timer(self) -> float:
        """The RTO with its backoff: how long a slot waits for its timeout."""
        return self._rtt.timer

    @property
    def _unanswered(self) -> list[int]:
        """The waiting slots, oldest transmission first."""
        return [slot.index for slot in self._waiting]

    @property
    def _seq_of(self) -> list[int]:
        """Each slot's latest transmission, in order."""
        return [slot.seq for slot in self._slots]

    @property
    def _pkts(self) -> list[bytearray]:
        """Each slot's datagram buffer in the current all-reduce."""
        return [slot.pkt for slot in self._slots[: self._window]]

    def _due(self, index: int) -> tuple[float, bool, bool]:
        """When slot `index` is due for a resend, whether that is a timeout (else RACK's turn), and
        whether it is the one ask a STATUS allows (a probe)."""
        slot, allowance = self._slots[index], self._allowance
        sent, status = slot.sent_at, slot.status
        # Its turn (once resent, n allowances): RACK's if a later transmission was answered,
        # else the RTO's, which never fires before the turn either. A use the switch counted
        # (a STATUS) needs this worker's resend only if its RESULT was lost: it waits 2n
        # allowances (the others' turns come late by the skew of their RTTs) and the RTO.
        position = (self.rank + index) % self.n_workers
        timed_out = slot.seq > self._rack_seq
        if status:
            due = sent + 2 * self.n_workers * allowance
        elif slot.retries:
            due = sent + self.n_workers * allowance
        elif timed_out:
            due = sent + (1 + position) * allowance
        else:  # RACK: the first in turn after one allowance, the others two apart (docs/protocol.md, turns)
            due = sent + (1 + 2 * position) * allowance
        rtt, since = self._rtt, self._timer_from
        if since < sent:
            since = sent
        if timed_out and (due < since + rtt.timer or not self._rack_seq):
            due = since + rtt.timer
        elif status and due < sent + rtt.rto:
            due = sent + rtt.rto
        # Counted: the STATUS reached the missing workers too, whose resends complete the slot
        # within an RTT (two, if their last RESULT copy was lost). The worker whose resend the
        # STATUS answered asks once more PROBE_ALLOWANCES after it (its RESULT copy may be
        # lost, or their STATUS copy), then by the timer above (a straggler is not pestered).
        probe_due = slot.probe_at + PROBE_ALLOWANCES * allowance
        if status and probe_due < due:
            return probe_due, False, True
        return due, timed_out, False

    def expire(self, now: float) -> list[bytearray]:
        """Resend the slots that are due, oldest transmission first: presumed lost by RACK (sent
        before the latest answered one, unanswered after their turn's allowances) or past the RTO
        (the oldest of those alone: the path has one timer, restarted by each timeout).
        At most PACE_BURST leave per call; if more are due, the next deadline is one pacing gap
        away. Sets the deadline to the next slot's due time as the resends left it (after a
        timeout, by the restarted timer).

        The due slots are found without a scan of the window (ina.hosts.expiry): the resends and
        the deadline are those of a scan of every waiting slot."""
        due_now, waits = self._index.due(now, self._due, self._rtt.timer, self._probing)
        resend = sorted(due_now)
        # One timer for the path (RFC 6298, 5.4): when it expires, the oldest use past it is resent
        # alone and the timer restarts; the others wait for it again. (A timer per slot resent the
        # whole window, paced, whenever a worker was descheduled longer than the RTO: every resend
        # spurious, 500-950 per grouped `ina train` run.)
        timeouts = [seq for seq in resend if due_now[seq][1]]
        if len(timeouts) > 1:
            resend = [seq for seq in resend if seq == timeouts[0] or not due_now[seq][1]]
        paced = len(resend) > PACE_BURST  # more are due: the next leave one pacing gap later
        cut = resend[PACE_BURST] if paced else 0
        del resend[PACE_BURST:]
        stats, out, restarted = self.stats, [], False
        for seq in resend:
            index, timed_out, probe = due_now[seq]
            slot = self._slots[index]
            if timed_out:
                slot.timeouts += 1
            if slot.timeouts > self.max_retries:
                self._give_up(index)
            if timed_out:
                stats.timeouts += 1
                self._rtt.timed_out(slot.timeouts)
                self._timer_from, restarted = now, True
            if probe:
                slot.probe_at = math.inf
                self._probing.discard(index)
            out.append(self._resend(index, now))
        if restarted:
            # The timer restarted now, backed off (RFC 6298 5.5-5.6): the uses it times are due by
            # it, not by the timer the index read (an expire at that earlier time found nothing),
            # those it held back too (a probe may come first). One pass over the waiting slots per
            # timeout (seldom), none per answer; a slot resent now has a new seq, in neither.
            for slot in self._waiting:
                if slot.seq in waits or slot.seq in due_now:
                    waits[slot.seq] = self._due(slot.index)[0]
        if paced:
            next_due = min((due for seq, due in waits.items() if seq < cut), default=math.inf)
            next_due = min(
                next_due, now + (self._rtt.srtt or self._rtt.rto) * PACE_BURST / self._window
            )
        else:
            next_due = min(waits.values(), default=math.inf)
        if out:  # the resent slots' timers, with the backoff they may have raised
            next_due = min(next_due, now + self._rtt.timer)
        self.deadline = next_due
        return out

    def _give_up(self, index: int) -> None:
        """Slot `index` timed out more than max_retries times: say why the all-reduce cannot finish."""
        status = self._slots[index].status
        if status:
            waiting = [r for r in range(self.n_workers) if not status >> r & 1]
            raise WorkerError(
                f"job {self.job_id} rank {self.rank}: slot {index} was still waiting for rank(s) {waiting} "
                f"after {self.max_retries} retransmissions (the switch counted this worker's UPDATE). Are "
                "they running, with this job's epoch? A quorum or timeout policy (`ina ctl add-job "
                "--policy`) completes a slot without them"
            )
        raise WorkerError(
            f"job {self.job_id} rank {self.rank}: no answer from the switch at {self.switch[0]} after "
            f"{self.max_retries} retransmissions of slot {index}. The switch may be unreachable, "
            "refusing this worker (admission, or an epoch other than the job's), built for other "
            f"lanes than this worker's {self.bits}-bit ones (-DLANE_BITS; it drops their UPDATEs as "
            "malformed), or dropping slots beyond the job's range (window "
            f"{self.window}); `ina ctl show-jobs` lists each job's slots and epoch, `ina ctl "
            "show-stats` the switch's refused/malformed/wrong_epoch/out_of_range counts"
        )

    def _resend(self, index: int, now: float) -> bytearray:
        """Slot `index`'s current use again (by RACK, the RTO, or a STATUS that lacks this worker):
        the latest transmission of the slot from now on."""
        slot = self._slots[index]
        slot.retries += 1
        self.stats.retransmissions += 1
        self.stats.packets_sent += 1
        slot.sent_at = now
        self._sequence += 1
        slot.seq = self._sequence
        self._order.append(self._sequence << SEQ_SHIFT | index)
        self._waiting.append(slot)  # to the end: the latest transmission
        return slot.pkt

    def contributors(self) -> Contributors:
        """Whose contributions each chunk's sum in `result()` holds (counts and bitmaps per chunk)."""
        if not self.finished:
            raise WorkerError("the all-reduce has not finished")
        return self._chunks.contributors()

    def result(self) -> np.ndarray:
        """The finished all-reduce's sum of the counted contributions (`contributors()` says whose), in
        the shape and dtype `start` was given; 0 where a chunk has no sum."""
        if not self.finished:
            raise WorkerError("the all-reduce has not finished")
        return self._chunks.result()
