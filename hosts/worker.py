"""A worker: reliable, windowed all-reduce through the switch over a plain UDP socket.

The array is cut into chunks of E values. Slot k of the job (k < window) carries chunks k, k+W,
k+2W, ...; each reuse of a slot flips its set, which is how the switch knows an old round is over
(docs/protocol.md). A slot's packet is retransmitted after a timeout that follows the measured
round-trip time (RFC 6298's estimator, never below `timeout`), doubling per retry, until its
result arrives; results for a set the slot is no longer waiting on are duplicates.

For floats the exponent of a chunk travels one use of the slot ahead: use 0 of every slot is an
all-zero packet announcing the exponent of the slot's first chunk, and each chunk's packet announces
the next one's. int32 needs none of that and is summed exactly (with int32 wraparound).
"""

import concurrent.futures
import contextlib
import os
import socket
import time
from dataclasses import dataclass, field

import numpy as np

from ina.hosts import packets
from ina.hosts.quantize import chunk_exponents, quantize, scale_for

SO_RCVBUFFORCE = 33  # Linux


class WorkerError(Exception):
    """The all-reduce cannot finish; the message says what to check."""


@dataclass
class Stats:
    packets_sent: int = 0
    packets_received: int = 0
    retransmissions: int = 0
    timeouts: int = 0
    duplicates: int = 0
    elapsed: float = 0.0
    elements: int = 0

    @property
    def goodput(self) -> float:
        """Aggregated elements per second."""
        return self.elements / self.elapsed if self.elapsed else 0.0


@dataclass
class _Slot:
    first_sent: float = 0.0  # when this use was first sent (for RTT samples of unretransmitted uses)
    uses: int = 0  # uses of this slot since the job was set up (set = uses % 2)
    chunk: int = -1  # chunk in flight (-1: exponent-only bootstrap)
    sent_at: float = 0.0
    retries: int = 0
    done: bool = True
    packet: bytearray = field(default_factory=bytearray)


def _config(name: str, value, default, cast=str):
    if value is not None:
        return value
    env = os.environ.get(f"INA_{name.upper()}")
    return cast(env) if env is not None else default


class Worker:
    def __init__(self, job_id: int, rank: int, n_workers: int, switch_ip: str | None = None,
                 local_ip: str | None = None, udp_port: int | None = None, elems: int | None = None,
                 window: int | None = None, timeout: float | None = None, max_retries: int | None = None,
                 switch_port: int = packets.INA_UDP_PORT):
        self.job_id, self.rank, self.n_workers = job_id, rank, n_workers
        self.switch_port = switch_port
        self.switch_ip = _config("switch_ip", switch_ip, None)
        if not self.switch_ip:
            raise WorkerError("no switch address: pass switch_ip or set INA_SWITCH_IP")
        self.elems = _config("elems", elems, 64, int)
        self.window = _config("window", window, 256, int)
        self.timeout = _config("timeout", timeout, 0.01, float)
        self.max_retries = _config("max_retries", max_retries, 12, int)
        port = _config("udp_port", udp_port, packets.INA_UDP_PORT, int)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:  # a window of results arrives in a burst; beyond rmem_max only root may ask (SO_RCVBUFFORCE)
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        except PermissionError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((local_ip or "", port))
        except OSError as err:
            raise WorkerError(f"cannot bind UDP port {port}: {err.strerror}") from None
        self.slots = [_Slot() for _ in range(self.window)]
        self.stats = Stats()
        self._srtt: float | None = None
        self._rttvar = 0.0
        self._rto = max(self.timeout, 0.2)  # until RTT samples arrive: a first window can queue long
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None

    def close(self) -> None:
        self.sock.close()
        if self._executor:
            self._executor.shutdown()

    def allreduce_async(self, array: np.ndarray) -> concurrent.futures.Future:
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        return self._executor.submit(self.allreduce, array)

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        """The element-wise sum of every worker's `array` (same shape and dtype on every worker)."""
        array = np.asarray(array)
        if array.dtype not in (np.int32, np.float32, np.float64):
            raise WorkerError(f"dtype {array.dtype} is not supported: use int32, float32 or float64")
        flat = array.ravel()
        n_chunks = max(1, -(-flat.size // self.elems))
        chunks = np.zeros((n_chunks, self.elems), dtype=array.dtype)
        chunks.ravel()[: flat.size] = flat
        is_float = array.dtype != np.int32
        exponents = chunk_exponents(chunks) if is_float else np.zeros(n_chunks, dtype=np.int64)
        result = np.zeros((n_chunks, self.elems), dtype=np.float64 if is_float else np.int64)
        self._run(chunks, exponents, result, is_float)
        out = result.ravel()[: flat.size]
        if is_float:
            return out.astype(array.dtype).reshape(array.shape)
        return ((out + 2**31) % 2**32 - 2**31).astype(np.int32).reshape(array.shape)

    def _packet(self, slot: _Slot, index: int, chunk: int, values, exponent: int) -> None:
        if len(slot.packet) != packets.HEADER_LEN + 4 * self.elems:
            slot.packet = bytearray(packets.HEADER_LEN + 4 * self.elems)
        packets.pack_update(slot.packet, self.rank, self.job_id, slot.uses % 2, index, exponent, values)
        slot.chunk, slot.done, slot.retries = chunk, False, 0

    def _send(self, slot: _Slot, now: float) -> None:
        # A full socket buffer (or a pending ARP resolution) is a loss like any other: the timer resends.
        with contextlib.suppress(TimeoutError, BlockingIOError):
            self.sock.sendto(slot.packet, (self.switch_ip, self.switch_port))
        if slot.retries == 0:
            slot.first_sent = now
        slot.sent_at = now
        self.stats.packets_sent += 1

    def _run(self, chunks: np.ndarray, exponents: np.ndarray, result: np.ndarray, is_float: bool) -> None:
        n_chunks = len(chunks)
        window = min(self.window, n_chunks)
        zeros = np.zeros(self.elems, dtype=np.int64)
        scales = np.ones(n_chunks)
        next_exp = lambda c: int(exponents[c]) if c < n_chunks else 0  # noqa: E731
        remaining = n_chunks
        start = time.monotonic()
        for k in range(window):
            slot = self.slots[k]
            if is_float:
                self._packet(slot, k, -1, zeros, next_exp(k))
            else:
                self._packet(slot, k, k, chunks[k], 0)
            self._send(slot, start)
        buf = bytearray(2048)
        view = memoryview(buf)
        self.sock.settimeout(self.timeout / 4)
        last_scan = start
        while remaining:
            try:
                n = self.sock.recv_into(buf)
                got = True
            except TimeoutError:
                got = False
            now = time.monotonic()
            if got and n >= packets.HEADER_LEN + 4 * self.elems:
                self.stats.packets_received += 1
                msg, _rank, job, pool_set, index, exponent = packets.parse_header(view)
                slot = self.slots[index] if index < window else None
                if msg != packets.MSG_RESULT or job != self.job_id or slot is None or slot.done or pool_set != slot.uses % 2:
                    self.stats.duplicates += 1
                else:
                    if slot.retries == 0:
                        self._rtt_sample(now - slot.first_sent)
                    chunk = slot.chunk
                    if chunk >= 0:
                        values = packets.values_of(view, self.elems)
                        result[chunk] = values / scales[chunk] if is_float else values
                        remaining -= 1
                    slot.uses += 1
                    following = chunk + window if chunk >= 0 else index
                    if following < n_chunks:
                        if is_float:
                            scales[following] = scale_for(exponent, self.n_workers)
                            q = quantize(chunks[following], scales[following])
                            self._packet(slot, index, following, q, next_exp(following + window))
                        else:
                            self._packet(slot, index, following, chunks[following], 0)
                        self._send(slot, now)
                    else:
                        slot.done = True
            if now - last_scan >= self._rto / 4:  # scanning every slot per packet would dominate the CPU
                self._retransmit(window, now)
                last_scan = now
        self.stats.elapsed += time.monotonic() - start
        self.stats.elements += n_chunks * self.elems

    def _rtt_sample(self, rtt: float) -> None:
        """Smoothed RTT and variance (RFC 6298) so the retransmission timeout follows the switch's speed."""
        if self._srtt is None:
            self._srtt, self._rttvar = rtt, rtt / 2
        else:
            self._rttvar = 0.75 * self._rttvar + 0.25 * abs(self._srtt - rtt)
            self._srtt = 0.875 * self._srtt + 0.125 * rtt
        self._rto = min(2.0, max(self.timeout, self._srtt + 4 * self._rttvar))

    def _retransmit(self, window: int, now: float) -> None:
        for slot in self.slots[:window]:
            if slot.done or now - slot.sent_at < self._rto * (2 ** min(slot.retries, 6)):
                continue
            slot.retries += 1
            self.stats.timeouts += 1
            if slot.retries > self.max_retries:
                raise WorkerError(
                    f"job {self.job_id} rank {self.rank}: no answer from the switch at {self.switch_ip} after "
                    f"{self.max_retries} retransmissions; the switch may be unreachable or refusing this "
                    "worker (check `ina ctl show-jobs` and the admission table)")
            self.stats.retransmissions += 1
            self._send(slot, now)
