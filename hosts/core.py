"""A worker's all-reduce protocol as a sans-I/O state machine: events in, datagrams out.

The core holds no socket and reads no clock: each event carries the time, so the same protocol
runs over a UDP socket (ina.hosts.worker), on a harness's virtual clock with chosen packets lost
(ina.hosts.inprocess), or in a simulator. docs/protocol.md ("Worker obligations") is the contract.

The array is cut into chunks of E values. Slot k of the job (k < window) carries chunks k, k+W,
k+2W, ...; each reuse of a slot flips its set, which is how the switch knows an old round is over.
Loss recovery (docs/protocol.md, "Worker obligations"):
- Time-based loss detection as in RACK (RFC 8985): a slot whose packet was sent before the most
  recently answered one, and is still unanswered `rack_rtt + reo_wnd` after it was sent, is presumed
  lost and resent at once, without waiting for a timer. rack_rtt is the RTT of that latest answer;
  the reordering window reo_wnd starts at min_rtt / 4 and widens by that much per spurious
  retransmission (never beyond srtt).
- Only the worker whose UPDATE was lost can complete the slot, and no worker can tell whether its
  own UPDATE, another's, or its own RESULT copy was lost. So the workers take turns: in slot k,
  worker r waits ((r + k) mod n) further allowances (rack_rtt + reo_wnd) before resending. The
  first one's resend completes the slot if the loss was its own, and the switch's multicast then
  reaches the others before their turn; a lost RESULT copy costs only its receiver a resend (the
  switch answers it from the completed set). A worker that resent waits a whole round (n
  allowances) before its next RACK resend of the slot. A lost UPDATE costs (n - 1) / 2 wasted resends on
  average instead of n - 1; the turn rotates with the slot so no rank always waits longest.
- The retransmission timeout (RTO) is the last resort, for losses with no later answer to reveal
  them (the last slots, a stall), and never fires before a slot's turn: a slot RACK covers waits for
  its turn alone. (Otherwise, with an RTT of milliseconds, the RTO's floor of 2 min_rtt came before
  the second turn, 2.5 RTTs: both workers resent, as timeouts that doubled every slot's RTO.)
  RFC 6298's estimator (its deviation shrinking `window` times slower than it grows: the RFC
  assumes a sample per RTT, a window gives `window`), at least max(MIN_RTO, RTO_MIN_RTTS x min_rtt)
  and at most MAX_RTO; `timeout` is the RTO until the first RTT sample. The RTO doubles per
  timed-out retry of the same packet (the backoff is shared by all slots: the RTO of the path, not
  of a packet) until a fresh RTT sample (Karn's rule: none from a retransmitted use). Only timeouts
  count towards `max_retries`: a RACK resend needs later answers, so the switch is there.
- Spurious retransmissions: an answer sooner than min_rtt after a slot's resend cannot answer the
  resend, so the original got through. The core counts it (`Stats.spurious`), takes the original's
  RTT as a sample (Eifel: the path got slower), undoes the RTO backoff and widens reo_wnd.
- Pacing: at most PACE_BURST resends leave at once; the rest follow PACE_BURST per
  srtt * PACE_BURST / window, so after a stall the window is resent over one RTT, not in one burst,
  and late answers that arrive meanwhile spare their slots the resend.
Results for a set the slot is no longer waiting on are duplicates.

A RESULT counts only if it comes from the switch's address and port and carries this job and the
job's epoch (the per-run token the controller installed); anything else is counted as forged and
ignored, so another host cannot inject values into the sum.

For floats the exponent of a chunk travels one use of the slot ahead: use 0 of every slot is an
all-zero packet announcing the exponent of the slot's first chunk, and each chunk's packet announces
the next one's. int32 needs none of that and is summed exactly (with int32 wraparound).
"""

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ina.hosts.quantize import chunk_exponents, quantize, scale_for
from ina.p4src.protocol import (
    ELEMS_CHOICES,
    EPOCH_MAX,
    HEADER,
    HEADER_LEN,
    INDEX_MASK,
    MAX_JOBS,
    MAX_SLOTS,
    MAX_WORKERS,
    MSG_RESULT,
    MSG_UPDATE,
    SET_SHIFT,
)

MAX_DATAGRAM_ELEMS = (65507 - HEADER_LEN) // 4  # values that fit one UDP datagram over IPv4
MIN_RTO = 300e-6  # the RTO's floor in seconds, whatever the measured RTT: scheduling noise on a host
RTO_MIN_RTTS = 2  # ... and in minimum RTTs: a timeout never fires within the fastest answer seen
MAX_RTO = 2.0
MAX_BACKOFF = 6  # the RTO doubles per timed-out retry up to 2**6 times
PACE_BURST = 4  # resends that leave at once; more are spread over one srtt per window

_pack_header, _unpack_header = HEADER.pack_into, HEADER.unpack_from


class WorkerError(Exception):
    """The all-reduce cannot finish; the message says what to check."""


@dataclass
class Stats:
    packets_sent: int = 0
    packets_received: int = 0
    retransmissions: int = 0  # every resend: timeouts + those RACK's time-based detection sent
    timeouts: int = 0  # resends because the RTO passed
    spurious: int = 0  # resends whose original was answered after all (answer within min_rtt)
    duplicates: int = 0
    forged: int = 0  # datagrams that were not this job's RESULTs from the switch
    elapsed: float = 0.0
    elements: int = 0

    @property
    def goodput(self) -> float:
        """Aggregated elements per second."""
        return self.elements / self.elapsed if self.elapsed else 0.0


def check(name: str, value, valid: bool, expected: str) -> None:
    if not valid:
        raise ValueError(f"{name} = {value!r}: expected {expected}")


def _check_finite(flat: np.ndarray) -> None:
    """Refuse NaN and infinities: block floating point has no encoding for them, and dropping them
    silently would return the other workers' sum as if it were everyone's."""
    bad = ~np.isfinite(flat)
    if bad.any():
        first = int(np.argmax(bad))
        raise WorkerError(f"the array holds {int(bad.sum())} NaN or infinite value(s) (first at flat index "
                          f"{first}: {flat[first]}); in-network aggregation sums finite values only")


class AllReduceCore:
    """One worker's protocol state across all-reduces (slot uses, RTT estimate, stats).

    Events (each returns the datagrams to send to `switch`, in order):
      start(array, now) -> list          begin the all-reduce of `array`
      receive(data, source, now) -> datagram or None
                                         a datagram `data` (bytes-like) arrived from `source`
      expire(now) -> list                call it whenever now >= `deadline`: retransmissions
    State: `deadline` (inf when nothing waits), `finished`, `result()`, `stats`.
    A datagram is the core's own buffer for its slot, not a copy: send it before the next event.
    `timeout` is the RTO until the first RTT sample; then the RTO follows the measured RTT (the
    module's docstring). Bad arguments raise ValueError naming the argument and its range.
    """

    def __init__(self, job_id: int, rank: int, n_workers: int, epoch: int, elems: int, window: int,
                 timeout: float, max_retries: int, switch: tuple[str, int]):
        self.job_id, self.rank, self.n_workers, self.epoch = job_id, rank, n_workers, epoch
        self.elems, self.window, self.timeout, self.max_retries = elems, window, timeout, max_retries
        self.switch = switch  # (IPv4 address, UDP port): the only source a RESULT is taken from
        self._check_arguments()
        self.datagram_size = HEADER_LEN + 4 * elems
        self.stats = Stats()
        self.deadline = math.inf
        self.finished = False  # True once the all-reduce `start` began has its every result
        self._pkts: list[bytearray] = []
        self._uses = [0] * window  # uses of each slot since the job was set up (set = uses % 2)
        self._srtt: float | None = None
        self._rttvar = 0.0
        # RFC 6298 assumes a sample per RTT; a window of answers gives `window`. The deviation grows
        # with the RFC's gain but shrinks `window` times slower, so a scheduling spike is remembered
        # for about an RTT, not forgotten after a few answers.
        self._shrink = 0.25 / window
        self._min_rtt = math.inf
        self._floor = MIN_RTO  # max(MIN_RTO, RTO_MIN_RTTS * min_rtt)
        self._rto = timeout
        self._backoff = 0
        self._timer = timeout  # the RTO times 2 ** backoff: how long a slot waits for its timer
        self._reo_mult = 1
        self._reo_wnd = 0.0  # reo_mult * min_rtt / 4; stops widening at srtt
        self._allowance = math.inf  # rack_rtt + reo_wnd: how long an answer may take (RACK)
        self._sequence = 0  # transmissions so far: orders them, ties in time included
        self._rack_seq = 0  # the latest transmission that was answered (RACK.xmit_ts as an order)

    def _check_arguments(self) -> None:
        check("job_id", self.job_id, 0 <= self.job_id < MAX_JOBS, f"0..{MAX_JOBS - 1}")
        check("n_workers", self.n_workers, 1 <= self.n_workers <= MAX_WORKERS, f"1..{MAX_WORKERS}")
        check("rank", self.rank, 0 <= self.rank < self.n_workers, f"0..{self.n_workers - 1} (n_workers - 1)")
        check("epoch", self.epoch, 1 <= self.epoch <= EPOCH_MAX, f"1..{EPOCH_MAX}")
        check("elems", self.elems, 1 <= self.elems <= MAX_DATAGRAM_ELEMS,
              f"1..{MAX_DATAGRAM_ELEMS} (the switch runs one of {ELEMS_CHOICES})")
        check("window", self.window, 1 <= self.window <= MAX_SLOTS, f"1..{MAX_SLOTS}")
        check("timeout", self.timeout, math.isfinite(self.timeout) and self.timeout > 0,
              "a finite number of seconds > 0")
        check("max_retries", self.max_retries, self.max_retries >= 0, "0 or more")
        check("switch_port", self.switch[1], 1 <= self.switch[1] <= 0xFFFF, "1..65535")

    def start(self, array: np.ndarray, now: float) -> list[bytearray]:
        """Begin the all-reduce of `array` (int32, float32 or float64; the same shape and dtype on
        every worker): the first window of UPDATEs. Payloads are packed up front into one big-endian
        buffer, so a packet is a header packed in place plus a memcpy. For floats each chunk is
        quantized with its own exponent, right whenever the switch's maximum equals it; otherwise it
        is quantized again when the maximum arrives."""
        array = np.asarray(array)
        if array.dtype not in (np.int32, np.float32, np.float64):
            raise WorkerError(f"dtype {array.dtype} is not supported: use int32, float32 or float64")
        flat = array.ravel()
        if array.dtype != np.int32:
            _check_finite(flat)
        elems = self.elems
        n_chunks = max(1, -(-flat.size // elems))
        chunks = np.zeros((n_chunks, elems), dtype=array.dtype)
        chunks.ravel()[: flat.size] = flat
        window = min(self.window, n_chunks)
        self._shape, self._dtype, self._n_chunks, self._window = array.shape, array.dtype, n_chunks, window
        self._is_float = array.dtype != np.int32
        if self._is_float:
            exponents = chunk_exponents(chunks)
            self._scale_of = [scale_for(e, self.n_workers) for e in range(256)]
            self._own_exp = exponents.tolist()
            payload = quantize(chunks, np.array(self._scale_of)[exponents][:, None]).astype(">i4")
        else:
            self._scale_of = []
            self._own_exp = [0] * n_chunks
            payload = chunks.astype(">i4")
        self._own_exp.append(0)  # the exponent announced after the last chunk
        self._chunks = chunks
        self._payload = memoryview(payload.reshape(-1).view(np.uint8))
        self._got = bytearray(n_chunks * 4 * elems)
        self._got_view = memoryview(self._got)
        self._scales = [1.0] * n_chunks
        self._pkts = [bytearray(self.datagram_size) for _ in range(window)]
        self._chunk_of = [-1] * window  # chunk in flight per slot (-1: exponent-only bootstrap)
        self._done = [False] * window
        self._retries = [0] * window  # resends of each slot's current use (Karn's rule, turns)
        self._timeouts = [0] * window  # ... of which timed out: max_retries bounds these
        self._sent_at = [now] * window  # the latest transmission of each slot's current use
        self._first_sent = [now] * window  # when the current use was first sent (RTT samples)
        first = self._sequence + 1
        self._seq_of = list(range(first, first + window))  # each slot's latest transmission, in order
        self._sequence += window
        self._unanswered = OrderedDict.fromkeys(range(window))  # waiting slots, oldest transmission first
        self._remaining = n_chunks
        self._started = now
        self.finished = False
        self.deadline = now + self._timer
        plen, payload_view, uses = 4 * elems, self._payload, self._uses
        for k, pkt in enumerate(self._pkts):
            pool = (uses[k] & 1) << SET_SHIFT | k
            if self._is_float:
                _pack_header(pkt, 0, MSG_UPDATE, self.rank, self.job_id, pool, self._own_exp[k], 0, self.epoch)
            else:
                self._chunk_of[k] = k
                _pack_header(pkt, 0, MSG_UPDATE, self.rank, self.job_id, pool, 0, 0, self.epoch)
                pkt[HEADER_LEN:] = payload_view[k * plen : (k + 1) * plen]
        self.stats.packets_sent += window
        return list(self._pkts)

    def receive(self, data: bytes | bytearray | memoryview, source: tuple[str, int], now: float) -> bytearray | None:
        """A datagram arrived: take it if it is the RESULT a slot waits on, and return the slot's
        next UPDATE, if any. The per-packet path: values are copied in place, headers packed in place."""
        stats = self.stats
        stats.packets_received += 1
        if len(data) != self.datagram_size or source != self.switch:
            stats.forged += 1
            return None
        msg, _rank, job, pool, exponent, _flags, epoch = _unpack_header(data, 0)
        index = pool & INDEX_MASK
        window = self._window
        if msg != MSG_RESULT or job != self.job_id or epoch != self.epoch or index >= window:
            stats.forged += 1
            return None
        uses, done = self._uses, self._done
        if done[index] or pool >> SET_SHIFT != uses[index] & 1:
            stats.duplicates += 1
            return None
        first_sent, sent_at, seq_of, unanswered = self._first_sent, self._sent_at, self._seq_of, self._unanswered
        elapsed = now - sent_at[index]
        if self._retries[index] == 0:  # Karn's rule: an RTT sample only from a use sent once
            self._sample(elapsed)
        elif elapsed < self._min_rtt < math.inf:  # too soon to answer the resend: the original got through
            self._spurious(now - first_sent[index])
            elapsed = -1.0  # not this transmission's answer: no RACK update
        rack_seq = self._rack_seq
        if elapsed >= 0 and seq_of[index] > rack_seq:
            rack_seq = self._rack_seq = seq_of[index]
            self._allowance = elapsed + self._reo_wnd
        del unanswered[index]
        chunk = self._chunk_of[index]
        plen = self.datagram_size - HEADER_LEN
        if chunk >= 0:
            self._got_view[chunk * plen : (chunk + 1) * plen] = data[HEADER_LEN:]
            self._remaining -= 1
        uses[index] += 1
        following = chunk + window if chunk >= 0 else index
        n_chunks = self._n_chunks
        pkt = None
        if following < n_chunks:
            pkt = self._pkts[index]
            if self._is_float:
                own_exp = self._own_exp
                announce = own_exp[min(following + window, n_chunks)]
                scale = self._scales[following] = self._scale_of[exponent]
                if exponent == own_exp[following]:
                    pkt[HEADER_LEN:] = self._payload[following * plen : (following + 1) * plen]
                else:
                    pkt[HEADER_LEN:] = quantize(self._chunks[following], scale).astype(">i4").tobytes()
            else:
                announce = 0
                pkt[HEADER_LEN:] = self._payload[following * plen : (following + 1) * plen]
            pool = (uses[index] & 1) << SET_SHIFT | index
            _pack_header(pkt, 0, MSG_UPDATE, self.rank, self.job_id, pool, announce, 0, self.epoch)
            self._chunk_of[index], self._retries[index], self._timeouts[index] = following, 0, 0
            sent_at[index] = first_sent[index] = now
            seq_of[index] = self._sequence = self._sequence + 1
            unanswered[index] = None
            stats.packets_sent += 1
        else:
            done[index] = True
            if not self._remaining:
                self.finished, self.deadline = True, math.inf
                stats.elapsed += now - self._started
                stats.elements += n_chunks * self.elems
                return None
        # The oldest waiting slot is the first due: by RTO, or, if sent before the latest answered
        # transmission, by RACK once one allowance passes (expire then tells whose turn it is).
        oldest = next(iter(unanswered))
        due = sent_at[oldest] + self._timer
        if seq_of[oldest] < rack_seq and self._allowance < self._timer:
            due = sent_at[oldest] + self._allowance
        if due < self.deadline:
            self.deadline = due
        return pkt

    def _sample(self, rtt: float) -> None:
        """An RTT sample: RFC 6298's estimator and the RTO (its floor from the fastest answer seen);
        a fresh sample ends the backoff."""
        srtt = self._srtt
        if srtt is None:
            srtt, rttvar = rtt, rtt / 2
        else:
            err, rttvar = abs(srtt - rtt), self._rttvar
            rttvar += (err - rttvar) * (0.25 if err > rttvar else self._shrink)
            srtt = 0.875 * srtt + 0.125 * rtt
        if rtt < self._min_rtt:
            self._min_rtt = rtt
            self._floor = max(MIN_RTO, RTO_MIN_RTTS * rtt)
            self._reo_wnd = self._reo_mult * rtt / 4
        rto = srtt + 4 * rttvar
        if rto < self._floor:
            rto = self._floor
        self._srtt, self._rttvar, self._backoff = srtt, rttvar, 0
        self._rto = self._timer = rto if rto < MAX_RTO else MAX_RTO

    def _spurious(self, rtt: float) -> None:
        """The answer to a slot's original, after it was resent: the resend was not needed. Take the
        original's RTT (the path was slower than the timer allowed), which also undoes the backoff,
        and widen the reordering window (at most srtt) so the next delay is not called a loss."""
        self.stats.spurious += 1
        if self._reo_wnd < self._srtt:
            self._reo_mult += 1
            self._reo_wnd = self._reo_mult * self._min_rtt / 4
        self._sample(rtt)

    def expire(self, now: float) -> list[bytearray]:
        """Resend the slots that are due, oldest transmission first: presumed lost by RACK (sent
        before the latest answered one, unanswered after their turn's allowances) or past the RTO.
        At most PACE_BURST leave per call; if more are due, the next deadline is one pacing gap
        away. Sets the deadline to the next slot's due time."""
        rto = self._timer
        retries, sent_at, seq_of, stats = self._retries, self._sent_at, self._seq_of, self.stats
        rack_seq, allowance, rank, n_workers = self._rack_seq, self._allowance, self.rank, self.n_workers
        out: list[bytearray] = []
        next_due = math.inf
        for index in list(self._unanswered):
            # Its turn (once resent, a whole round of turns): RACK's if a later transmission was
            # answered, else the RTO's, which never fires before the turn either.
            turns = n_workers if retries[index] else 1 + (rank + index) % n_workers
            due = sent_at[index] + turns * allowance
            timed_out = seq_of[index] > rack_seq
            if timed_out and (due < sent_at[index] + rto or not rack_seq):
                due = sent_at[index] + rto
            if now < due:
                if due < next_due:
                    next_due = due
                continue
            if len(out) == PACE_BURST:
                next_due = min(next_due, now + (self._srtt or self._rto) * PACE_BURST / self._window)
                break
            retries[index] += 1
            if timed_out:
                self._timeouts[index] += 1
            if self._timeouts[index] > self.max_retries:
                raise WorkerError(
                    f"job {self.job_id} rank {self.rank}: no answer from the switch at {self.switch[0]} after "
                    f"{self.max_retries} retransmissions of slot {index}. The switch may be unreachable, "
                    "refusing this worker (admission, or an epoch other than the job's), or dropping slots "
                    f"beyond the job's range (window {self.window}); `ina ctl show-jobs` lists each job's "
                    "slots and epoch, `ina ctl stats` the switch's refused/wrong_epoch/out_of_range counts")
            if timed_out:
                stats.timeouts += 1
                if self._timeouts[index] > self._backoff:  # a slot's n-th timeout: the RTO doubles n times
                    self._backoff = min(self._timeouts[index], MAX_BACKOFF)
                    self._timer = self._rto * (1 << self._backoff)
            stats.retransmissions += 1
            stats.packets_sent += 1
            sent_at[index] = now
            self._sequence += 1
            seq_of[index] = self._sequence
            self._unanswered.move_to_end(index)
            out.append(self._pkts[index])
        if out:  # the resent slots' timers, with the backoff they may have raised
            next_due = min(next_due, now + self._timer)
        self.deadline = next_due
        return out

    def result(self) -> np.ndarray:
        """The finished all-reduce's sum, in the shape and dtype `start` was given."""
        if not self.finished:
            raise WorkerError("the all-reduce has not finished")
        got = np.frombuffer(self._got, dtype=">i4").reshape(self._n_chunks, self.elems)
        size = math.prod(self._shape)
        if not self._is_float:
            return got.astype(np.int32).ravel()[:size].reshape(self._shape)
        out = (got.astype(np.float64) / np.array(self._scales)[:, None]).ravel()[:size]
        return out.astype(self._dtype).reshape(self._shape)
