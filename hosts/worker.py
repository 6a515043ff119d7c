"""A worker: reliable, windowed all-reduce through the switch over a plain UDP socket.

The protocol (slots and sets, exponents, retransmission timers, which RESULTs count) is
ina.hosts.core's sans-I/O AllReduceCore; this module is its driver: it sends the datagrams the core
returns to the switch, hands it every datagram the socket receives with its source and the
monotonic clock, and calls the core's timer when its deadline passes.
"""

import concurrent.futures
import contextlib
import os
import select
import socket
import time

import numpy as np

from ina.hosts.core import AllReduceCore, Contributors, Stats, WorkerError, check
from ina.p4src.protocol import UDP_PORT

SO_RCVBUFFORCE = 33  # Linux


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


def _ipv4(name: str, text: str) -> str:
    """The dotted-quad form the kernel reports as a datagram's source, so addresses compare equal."""
    try:
        return socket.inet_ntoa(socket.inet_aton(text))
    except (OSError, TypeError):
        raise ValueError(f"{name} = {text!r}: expected an IPv4 address") from None


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
        self._core = AllReduceCore(job_id, rank, n_workers, self.epoch, self.elems, self.window, self.timeout,
                                   self.max_retries, (self.switch_ip, switch_port))
        check("udp_port", port, 0 <= port <= 0xFFFF, "0..65535")
        self.stats: Stats = self._core.stats
        self.contributors: Contributors | None = None  # the last all-reduce's, per chunk (see allreduce)
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
        """The element-wise sum of every worker's `array` (same shape and dtype on every worker).

        Under a quorum or timeout policy a chunk's sum may hold only some workers' arrays (or none,
        0): `self.contributors` then says, per chunk, how many and which (average over the count)."""
        core, sock, addr = self._core, self.sock, (self.switch_ip, self.switch_port)
        sock.setblocking(False)  # drain every queued datagram without a poll() per packet
        try:
            for pkt in core.start(array, time.monotonic()):
                self._send(pkt, addr)
            self._drive(core, addr)
        finally:
            sock.settimeout(self.timeout / 4)
        self.contributors = core.contributors()
        return core.result()

    def _drive(self, core: AllReduceCore, addr: tuple[str, int]) -> None:
        """Until the core has every result: each datagram with its source and the time into the core,
        its answer out; once the socket is empty, the core's timer if its deadline passed, else sleep until
        either. Draining first matters after a stall (this process descheduled): the answers that
        queued meanwhile are taken before the core decides what is lost."""
        size = core.datagram_size
        buf = bytearray(size + 1)  # one byte more, so a longer datagram shows as one
        view = memoryview(buf)
        whole = view[:size]  # what a datagram of the expected size is: no new view per packet
        sock = self.sock
        receive, expire, sendto, recvfrom_into = core.receive, core.expire, sock.sendto, sock.recvfrom_into
        monotonic = time.monotonic
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        while not core.finished:
            try:
                n, source = recvfrom_into(buf)
            except BlockingIOError:
                now = monotonic()
                if now < core.deadline:
                    poller.poll((core.deadline - now) * 1000)
                    continue
            else:
                now = monotonic()
                pkt = receive(whole if n == size else view[:n], source, now)
                if pkt is not None:
                    try:
                        sendto(pkt, addr)
                    except BlockingIOError:
                        self._send(pkt, addr)
                continue  # answers queued during a stall reach the core before its timers run
            for pkt in expire(now):
                self._send(pkt, addr)

    def _send(self, pkt: bytearray, addr: tuple[str, int]) -> None:
        """Send once the socket is writable; a buffer full (or ARP pending) for timeout/4 is a loss
        the timer resends, like any other."""
        with contextlib.suppress(TimeoutError, BlockingIOError):
            try:
                self.sock.sendto(pkt, addr)
            except BlockingIOError:
                if select.select([], [self.sock], [], self.timeout / 4)[1]:
                    self.sock.sendto(pkt, addr)
