"""A worker's all-reduce protocol as a sans-I/O state machine: events in, datagrams out.

The core holds no socket and reads no clock: each event carries the time, so the same protocol
runs over a UDP socket (ina.hosts.worker), on a harness's virtual clock with chosen packets lost
(ina.hosts.inprocess), or in a simulator. docs/protocol.md ("Worker obligations") is the contract.

The array is cut into chunks of E values. Slot k of the job (k < window) carries chunks k, k+W,
k+2W, ...; each reuse of a slot flips its set, which is how the switch knows an old round is over.
A slot's packet is retransmitted after a timeout that follows the measured round-trip time
(RFC 6298's estimator, never below `timeout`), doubling per retry, until its result arrives;
results for a set the slot is no longer waiting on are duplicates.

A RESULT counts only if it comes from the switch's address and port and carries this job and the
job's epoch (the per-run token the controller installed); anything else is counted as forged and
ignored, so another host cannot inject values into the sum.

For floats the exponent of a chunk travels one use of the slot ahead: use 0 of every slot is an
all-zero packet announcing the exponent of the slot's first chunk, and each chunk's packet announces
the next one's. int32 needs none of that and is summed exactly (with int32 wraparound).
"""

import math
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
INITIAL_RTO = 0.2  # until RTT samples arrive: a first window can queue long
MAX_RTO = 2.0
MAX_BACKOFF = 6  # the timeout doubles per retry up to 2**6 times the RTO

_pack_header, _unpack_header = HEADER.pack_into, HEADER.unpack_from


class WorkerError(Exception):
    """The all-reduce cannot finish; the message says what to check."""


@dataclass
class Stats:
    packets_sent: int = 0
    packets_received: int = 0
    retransmissions: int = 0
    timeouts: int = 0
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
    Bad arguments raise ValueError naming the argument and its range.
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
        self._rto = max(timeout, INITIAL_RTO)

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
        self._retries = [0] * window
        self._sent_at = [now] * window
        self._first_sent = [now] * window  # when the current use was first sent (RTT samples)
        self._remaining = n_chunks
        self._started = now
        self.finished = False
        self.deadline = now + self._rto
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
        first_sent = self._first_sent
        if self._retries[index] == 0:  # RFC 6298, with Karn's rule: no samples from retransmissions
            rtt = now - first_sent[index]
            srtt = self._srtt
            if srtt is None:
                srtt, rttvar = rtt, rtt / 2
            else:
                rttvar = 0.75 * self._rttvar + 0.25 * abs(srtt - rtt)
                srtt = 0.875 * srtt + 0.125 * rtt
            self._srtt, self._rttvar = srtt, rttvar
            self._rto = min(MAX_RTO, max(self.timeout, srtt + 4 * rttvar))
        chunk = self._chunk_of[index]
        plen = self.datagram_size - HEADER_LEN
        if chunk >= 0:
            self._got_view[chunk * plen : (chunk + 1) * plen] = data[HEADER_LEN:]
            self._remaining -= 1
        uses[index] += 1
        following = chunk + window if chunk >= 0 else index
        n_chunks = self._n_chunks
        if following >= n_chunks:
            done[index] = True
            if not self._remaining:
                self.finished, self.deadline = True, math.inf
                stats.elapsed += now - self._started
                stats.elements += n_chunks * self.elems
            return None
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
        self._chunk_of[index], self._retries[index] = following, 0
        self._sent_at[index] = first_sent[index] = now
        stats.packets_sent += 1
        due = now + self._rto
        if due < self.deadline:
            self.deadline = due
        return pkt

    def expire(self, now: float) -> list[bytearray]:
        """Resend every slot whose timeout (the RTO, doubling per retry) has passed, and set the
        next deadline: when the next slot is due, but not before a quarter RTO from now, so a window
        of slightly staggered timers costs one scan, not one per slot."""
        rto, retries, sent_at, stats = self._rto, self._retries, self._sent_at, self.stats
        out, next_due = [], math.inf
        for index, pkt in enumerate(self._pkts):
            if self._done[index]:
                continue
            due = sent_at[index] + rto * (1 << min(retries[index], MAX_BACKOFF))
            if now < due:
                next_due = min(next_due, due)
                continue
            retries[index] += 1
            stats.timeouts += 1
            if retries[index] > self.max_retries:
                raise WorkerError(
                    f"job {self.job_id} rank {self.rank}: no answer from the switch at {self.switch[0]} after "
                    f"{self.max_retries} retransmissions of slot {index}. The switch may be unreachable, "
                    "refusing this worker (admission, or an epoch other than the job's), or dropping slots "
                    f"beyond the job's range (window {self.window}); `ina ctl show-jobs` lists each job's "
                    "slots and epoch, `ina ctl stats` the switch's refused/wrong_epoch/out_of_range counts")
            stats.retransmissions += 1
            stats.packets_sent += 1
            sent_at[index] = now
            out.append(pkt)
            next_due = min(next_due, now + rto * (1 << min(retries[index], MAX_BACKOFF)))
        self.deadline = max(next_due, now + rto / 4) if next_due < math.inf else math.inf
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
