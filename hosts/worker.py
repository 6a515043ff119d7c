"""A worker: reliable, windowed all-reduce through the switch over a plain UDP socket.

The array is cut into chunks of E values. Slot k of the job (k < window) carries chunks k, k+W,
k+2W, ...; each reuse of a slot flips its set, which is how the switch knows an old round is over
(docs/protocol.md). A slot's packet is retransmitted after a timeout that follows the measured
round-trip time (RFC 6298's estimator, never below `timeout`), doubling per retry, until its
result arrives; results for a set the slot is no longer waiting on are duplicates.

A RESULT counts only if it comes from the switch's address and port and carries this job and the
job's epoch (the per-run token the controller installed, docs/protocol.md); anything else is
counted as forged and ignored, so another host cannot inject values into the sum.

For floats the exponent of a chunk travels one use of the slot ahead: use 0 of every slot is an
all-zero packet announcing the exponent of the slot's first chunk, and each chunk's packet announces
the next one's. int32 needs none of that and is summed exactly (with int32 wraparound).
"""

import concurrent.futures
import contextlib
import math
import os
import select
import socket
import time
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
    UDP_PORT,
)

SO_RCVBUFFORCE = 33  # Linux
MAX_DATAGRAM_ELEMS = (65507 - HEADER_LEN) // 4  # values that fit one UDP datagram over IPv4


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


def _config(name: str, value, default, cast=str):
    if value is not None:
        return value
    env = os.environ.get(f"INA_{name.upper()}")
    if env is None:
        return default
    try:
        return cast(env)
    except ValueError:
        raise ValueError(f"INA_{name.upper()}={env!r} is not a valid {name}") from None


def _check(name: str, value, valid: bool, expected: str) -> None:
    if not valid:
        raise ValueError(f"{name} = {value!r}: expected {expected}")


def _ipv4(name: str, text: str) -> str:
    """The dotted-quad form the kernel reports as a datagram's source, so addresses compare equal."""
    try:
        return socket.inet_ntoa(socket.inet_aton(text))
    except (OSError, TypeError):
        raise ValueError(f"{name} = {text!r}: expected an IPv4 address") from None


def _check_finite(flat: np.ndarray) -> None:
    """Refuse NaN and infinities: block floating point has no encoding for them, and dropping them
    silently would return the other workers' sum as if it were everyone's."""
    bad = ~np.isfinite(flat)
    if bad.any():
        first = int(np.argmax(bad))
        raise WorkerError(f"the array holds {int(bad.sum())} NaN or infinite value(s) (first at flat index "
                          f"{first}: {flat[first]}); in-network aggregation sums finite values only")


class Worker:
    """One worker of a job. Bad arguments raise ValueError naming the argument and its range."""

    def __init__(self, job_id: int, rank: int, n_workers: int, switch_ip: str | None = None,
                 local_ip: str | None = None, udp_port: int | None = None, elems: int | None = None,
                 window: int | None = None, timeout: float | None = None, max_retries: int | None = None,
                 switch_port: int = UDP_PORT, epoch: int | None = None):
        self.job_id, self.rank, self.n_workers = job_id, rank, n_workers
        self.switch_port = switch_port
        switch_ip = _config("switch_ip", switch_ip, None)
        if not switch_ip:
            raise WorkerError("no switch address: pass switch_ip or set INA_SWITCH_IP")
        self.switch_ip = _ipv4("switch_ip", switch_ip)
        self.epoch = _config("epoch", epoch, None, lambda s: int(s, 0))
        if self.epoch is None:
            raise WorkerError(f"no epoch for job {job_id}: pass the epoch the controller installed "
                              "(`ina ctl show-jobs` shows it) or set INA_EPOCH")
        self.elems = _config("elems", elems, 64, int)
        self.window = _config("window", window, 256, int)
        self.timeout = _config("timeout", timeout, 0.01, float)
        self.max_retries = _config("max_retries", max_retries, 12, int)
        port = _config("udp_port", udp_port, UDP_PORT, int)
        self._check_arguments(port)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:  # a window of results arrives in a burst; beyond rmem_max only root may ask (SO_RCVBUFFORCE)
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        except PermissionError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        try:  # no SO_REUSEADDR: another socket must not share this port and read our RESULTs
            self.sock.bind((_ipv4("local_ip", local_ip) if local_ip else "", port))
        except OSError as err:
            self.sock.close()
            raise WorkerError(f"cannot bind UDP port {port}: {err.strerror}") from None
        self._uses = [0] * self.window  # uses of each slot since the job was set up (set = uses % 2)
        self.stats = Stats()
        self._srtt: float | None = None
        self._rttvar = 0.0
        self._rto = max(self.timeout, 0.2)  # until RTT samples arrive: a first window can queue long
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None

    def _check_arguments(self, port: int) -> None:
        _check("job_id", self.job_id, 0 <= self.job_id < MAX_JOBS, f"0..{MAX_JOBS - 1}")
        _check("n_workers", self.n_workers, 1 <= self.n_workers <= MAX_WORKERS, f"1..{MAX_WORKERS}")
        _check("rank", self.rank, 0 <= self.rank < self.n_workers, f"0..{self.n_workers - 1} (n_workers - 1)")
        _check("epoch", self.epoch, 1 <= self.epoch <= EPOCH_MAX, f"1..{EPOCH_MAX}")
        _check("elems", self.elems, 1 <= self.elems <= MAX_DATAGRAM_ELEMS,
               f"1..{MAX_DATAGRAM_ELEMS} (the switch runs one of {ELEMS_CHOICES})")
        _check("window", self.window, 1 <= self.window <= MAX_SLOTS, f"1..{MAX_SLOTS}")
        _check("timeout", self.timeout, math.isfinite(self.timeout) and self.timeout > 0,
               "a finite number of seconds > 0")
        _check("max_retries", self.max_retries, self.max_retries >= 0, "0 or more")
        _check("udp_port", port, 0 <= port <= 0xFFFF, "0..65535")
        _check("switch_port", self.switch_port, 1 <= self.switch_port <= 0xFFFF, "1..65535")

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
        if array.dtype != np.int32:
            _check_finite(flat)
        n_chunks = max(1, -(-flat.size // self.elems))
        chunks = np.zeros((n_chunks, self.elems), dtype=array.dtype)
        chunks.ravel()[: flat.size] = flat
        if array.dtype == np.int32:
            got = self._run(chunks, None, None)
            return got.astype(np.int32).ravel()[: flat.size].reshape(array.shape)
        exponents = chunk_exponents(chunks)
        scales = np.ones(n_chunks)
        got = self._run(chunks, exponents, scales)
        out = (got.astype(np.float64) / scales[:, None]).ravel()[: flat.size]
        return out.astype(array.dtype).reshape(array.shape)

    def _run(self, chunks: np.ndarray, exponents: np.ndarray | None,
             scales: np.ndarray | None) -> np.ndarray:
        """The summed int32 payloads per chunk (big-endian), for int32 (`exponents` None) or floats.

        Hot loop, so slot state lives in local lists and payloads are precomputed in one big-endian
        buffer: a packet is a header packed in place plus a memcpy. For floats each chunk is
        quantized up front with its own exponent, right whenever the switch's maximum equals it;
        otherwise it is quantized when the exponent arrives. `scales` receives each chunk's scale.
        """
        n_chunks, elems = chunks.shape
        window = min(self.window, n_chunks)
        plen, hl = 4 * elems, HEADER_LEN
        size = hl + plen
        start = time.monotonic()
        is_float = exponents is not None
        if is_float:
            scale_of = [scale_for(e, self.n_workers) for e in range(256)]
            own_exp = exponents.tolist()
            payload = quantize(chunks, np.array(scale_of)[exponents][:, None]).astype(">i4")
        else:
            own_exp = [0] * n_chunks
            payload = chunks.astype(">i4")
        own_exp.append(0)  # the exponent announced after the last chunk
        pview = memoryview(payload.reshape(-1).view(np.uint8))
        got = bytearray(n_chunks * plen)
        gview = memoryview(got)
        sock, addr = self.sock, (self.switch_ip, self.switch_port)
        job_id, rank, epoch = self.job_id, self.rank, self.epoch
        sendto, recvfrom_into, monotonic = sock.sendto, sock.recvfrom_into, time.monotonic
        pack_header, unpack_header = HEADER.pack_into, HEADER.unpack_from
        update, result = MSG_UPDATE, MSG_RESULT
        uses = self._uses
        pkts = [bytearray(size) for _ in range(window)]
        chunk_of = [-1] * window  # chunk in flight per slot (-1: exponent-only bootstrap)
        done = [False] * window
        retries = [0] * window
        sent_at = [start] * window
        first_sent = [start] * window  # when the current use was first sent (RTT samples)
        scale_list = [1.0] * n_chunks
        sent = received = duplicates = forged = 0
        srtt, rttvar, rto = self._srtt, self._rttvar, self._rto
        sock.setblocking(False)  # drain every queued datagram without a poll() per packet
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        wait_ms = self.timeout / 4 * 1000
        remaining = n_chunks
        try:
            for k in range(window):
                pkt = pkts[k]
                pool = (uses[k] & 1) << SET_SHIFT | k
                if is_float:
                    pack_header(pkt, 0, update, rank, job_id, pool, own_exp[k], 0, epoch)
                else:
                    chunk_of[k] = k
                    pack_header(pkt, 0, update, rank, job_id, pool, 0, 0, epoch)
                    pkt[hl:] = pview[k * plen : (k + 1) * plen]
                self._send(pkt, addr)
            sent += window
            buf = bytearray(size + 1)  # one byte more, so a longer datagram shows as one
            view = memoryview(buf)
            last_scan = start
            while remaining:
                try:
                    n, source = recvfrom_into(buf)
                except BlockingIOError:
                    now = monotonic()
                    if now - last_scan >= rto / 4:
                        self._retransmit(now, rto, pkts, done, sent_at, retries, addr)
                        last_scan = now
                    poller.poll(wait_ms)
                    continue
                now = monotonic()
                received += 1
                if n != size or source != addr:
                    forged += 1
                else:
                    msg, _rank, job, pool, exponent, _flags, their_epoch = unpack_header(buf, 0)
                    index = pool & INDEX_MASK
                    if msg != result or job != job_id or their_epoch != epoch or index >= window:
                        forged += 1
                    elif done[index] or pool >> SET_SHIFT != uses[index] & 1:
                        duplicates += 1
                    else:
                        if retries[index] == 0:  # RFC 6298: the timeout follows the RTT
                            rtt = now - first_sent[index]
                            if srtt is None:
                                srtt, rttvar = rtt, rtt / 2
                            else:
                                rttvar = 0.75 * rttvar + 0.25 * abs(srtt - rtt)
                                srtt = 0.875 * srtt + 0.125 * rtt
                            rto = min(2.0, max(self.timeout, srtt + 4 * rttvar))
                        chunk = chunk_of[index]
                        if chunk >= 0:
                            gview[chunk * plen : (chunk + 1) * plen] = view[hl:size]
                            remaining -= 1
                        uses[index] += 1
                        following = chunk + window if chunk >= 0 else index
                        if following < n_chunks:
                            pkt = pkts[index]
                            if is_float:
                                announce = own_exp[min(following + window, n_chunks)]
                                scale_list[following] = scale_of[exponent]
                                if exponent == own_exp[following]:
                                    pkt[hl:] = pview[following * plen : (following + 1) * plen]
                                else:
                                    q = quantize(chunks[following], scale_of[exponent])
                                    pkt[hl:] = q.astype(">i4").tobytes()
                            else:
                                announce = 0
                                pkt[hl:] = pview[following * plen : (following + 1) * plen]
                            pool = (uses[index] & 1) << SET_SHIFT | index
                            pack_header(pkt, 0, update, rank, job_id, pool, announce, 0, epoch)
                            chunk_of[index], retries[index] = following, 0
                            try:
                                sendto(pkt, addr)
                            except BlockingIOError:
                                self._send(pkt, addr)
                            sent += 1
                            sent_at[index] = first_sent[index] = now
                        else:
                            done[index] = True
                if now - last_scan >= rto / 4:  # scanning every slot per packet would cost the CPU
                    self._retransmit(now, rto, pkts, done, sent_at, retries, addr)
                    last_scan = now
        finally:
            sock.settimeout(self.timeout / 4)
            self._srtt, self._rttvar, self._rto = srtt, rttvar, rto
            stats = self.stats
            stats.packets_sent += sent
            stats.packets_received += received
            stats.duplicates += duplicates
            stats.forged += forged
        if scales is not None:
            scales[:] = scale_list
        stats.elapsed += time.monotonic() - start
        stats.elements += n_chunks * elems
        return np.frombuffer(got, dtype=">i4").reshape(n_chunks, elems)

    def _send(self, pkt: bytearray, addr: tuple[str, int]) -> None:
        """Send once the socket is writable; a buffer full (or ARP pending) for timeout/4 is a loss
        the timer resends, like any other."""
        with contextlib.suppress(TimeoutError, BlockingIOError):
            try:
                self.sock.sendto(pkt, addr)
            except BlockingIOError:
                if select.select([], [self.sock], [], self.timeout / 4)[1]:
                    self.sock.sendto(pkt, addr)

    def _retransmit(self, now: float, rto: float, pkts: list[bytearray], done: list[bool],
                    sent_at: list[float], retries: list[int], addr: tuple[str, int]) -> None:
        """Resend every slot whose timeout (rto, doubling per retry) has passed."""
        for index, pkt in enumerate(pkts):
            if done[index] or now - sent_at[index] < rto * (2 ** min(retries[index], 6)):
                continue
            retries[index] += 1
            self.stats.timeouts += 1
            if retries[index] > self.max_retries:
                raise WorkerError(
                    f"job {self.job_id} rank {self.rank}: no answer from the switch at {self.switch_ip} after "
                    f"{self.max_retries} retransmissions of slot {index}. The switch may be unreachable, "
                    "refusing this worker (admission, or an epoch other than the job's), or dropping slots "
                    f"beyond the job's range (window {self.window}); `ina ctl show-jobs` lists each job's "
                    "slots and epoch, `ina ctl stats` the switch's refused/wrong_epoch/out_of_range counts")
            self.stats.retransmissions += 1
            self._send(pkt, addr)
            self.stats.packets_sent += 1
            sent_at[index] = now
