"""A worker: reliable, windowed all-reduce through the switch over a plain UDP socket.

The protocol (slots and sets, exponents, retransmission timers, which RESULTs count) is
ina.hosts.core's sans-I/O AllReduceCore; this module is its driver: one I/O thread sends the
datagrams the cores return to the switch, hands each datagram the socket receives to the core of its
slot with its source and the monotonic clock, and calls a core's timer when its deadline passes.

The thread reads the socket whenever it is open, between all-reduces too: a straggler under a
quorum gets the others' RESULTs of calls it has not started, which its core holds (core.py), and a
socket left unread meanwhile would overflow and lose them.

Under bounded staleness S (docs/protocol.md, "Completion policies") the job's slots are cut into
S + 1 groups, one core each (its `base` the group's first slot); call t runs on group t mod (S + 1),
so up to S + 1 calls are in flight (`allreduce_async`), and a call waits for its group's previous
one. Several arrays may go as one call (`allreduce_many`: ina.hosts.group's layout, each array's
sums split back). The switch refuses a round over a use not done, which bounds how far workers drift apart.

The socket is read in batches (`io="batch"`: recvmmsg through ina.hosts.batch's C helper, one
system call per burst; a start's or expire's list of datagrams sent with sendmmsg, an answer sent at
once) or one datagram per system call (`io="datagram"`); `auto`, the default, batches wherever the
helper builds (gcc), else goes per datagram. Batched, the demo and the in-process worker were
faster and the resends per lost packet at 5% loss as low (docs/performance.md, "The batched path
as the default"). The cores see the same events either way: each datagram of a batch in turn with
the time then, its answer sent before the next. Either path hands a datagram over through
ina.hosts.dispatch, compiled with the core: the batched path's loop over a burst runs there, in C,
and takes a source the core accepts (the switch's, the fallback server's) without building its
address (docs/performance.md, "The I/O loop compiled").
"""

import collections
import concurrent.futures
import contextlib
import os
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ina.hosts import batch
from ina.hosts.core import AllReduceCore, Contributors, Stats, WorkerError, check
from ina.hosts.dispatch import Dispatch
from ina.hosts.group import Group, Reduced
from ina.p4src.protocol import DEFAULT_ELEMS, UDP_PORT, lane_values

SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33  # Linux: buffer sizes beyond wmem_max/rmem_max (root only)
SOCKET_BUFFER = 8 << 20  # bytes each way: a window of datagrams, with the kernel's overhead per one
IO_PATHS = ("auto", "batch", "datagram")  # how the I/O thread reads and writes its socket
# Receive moderation: a wake that took fewer than RX_FEW datagrams (answers arriving one at a time,
# at a slow link's pace) waits up to RX_HOLD seconds, and at most RX_HOLD_SRTT of the RTT, before
# reading again, so one read takes several (docs/performance.md, "Receive moderation")
RX_FEW, RX_HOLD, RX_HOLD_SRTT = 4, 1e-3, 1 / 8


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


@dataclass
class Share:
    """How much of one rank's data the sums held, over its all-reduces: chunks whose sum holds the
    rank's contribution, of all its chunks. A quorum or timeout completes sums without a late rank;
    a persistent straggler's share can be 0 (docs/protocol.md, "Completion policies")."""

    rank: int
    chunks: int = 0
    entered: int = 0

    def add(self, contributors: Contributors) -> None:
        self.chunks += len(contributors.bitmaps)
        self.entered += int(np.count_nonzero(contributors.bitmaps >> self.rank & 1))

    @property
    def fraction(self) -> float:
        """The share entered (1.0 before any all-reduce)."""
        return self.entered / self.chunks if self.chunks else 1.0


class Worker:
    """One worker of a job. Bad arguments raise ValueError naming the argument and its range."""

    def __init__(
        self,
        job_id: int,
        rank: int,
        n_workers: int,
        switch_ip: str | None = None,
        local_ip: str | None = None,
        udp_port: int | None = None,
        elems: int | None = None,
        window: int | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        switch_port: int = UDP_PORT,
        epoch: int | None = None,
        staleness: int = 0,
        io: str | None = None,
        bits: int = 32,
        job_workers: int | None = None,
        fallback: tuple[str, int] | None = None,
        rx_hold: float | None = None,
    ):
        # rank and n_workers are this worker's at its switch; job_workers the whole job's (None:
        # n_workers), its scale (hierarchical aggregation: hosts/core.py)
        self.job_id, self.rank, self.n_workers = job_id, rank, n_workers
        self.switch_port = switch_port
        switch_ip = _config("switch_ip", switch_ip, None)
        if not switch_ip:
            raise WorkerError("no switch address: pass switch_ip or set INA_SWITCH_IP")
        self.switch_ip = _ipv4("switch_ip", switch_ip)
        self.epoch = _config("epoch", epoch, None, lambda s: int(s, 0))
        if self.epoch is None:
            raise WorkerError(
                f"no epoch for job {job_id}: pass the epoch the controller installed "
                "(`ina ctl show-jobs` shows it) or set INA_EPOCH"
            )
        self.elems = _config("elems", elems, DEFAULT_ELEMS, int)
        self.window = _config("window", window, 256, int)
        self.timeout = _config("timeout", timeout, 0.01, float)
        self.max_retries = _config("max_retries", max_retries, 12, int)
        self.staleness = staleness
        check(
            "staleness",
            staleness,
            0 <= staleness < max(self.window, 1),
            f"0..{self.window - 1} (window - 1)",
        )
        port = _config("udp_port", udp_port, UDP_PORT, int)
        io = _config("worker_io", io, "auto")  # INA_WORKER_IO
        self.rx_hold = _config("rx_hold", rx_hold, RX_HOLD, float)  # INA_RX_HOLD; 0: no moderation
        check("rx_hold", self.rx_hold, 0 <= self.rx_hold <= 0.01, "0..0.01 seconds")
        check("io", io, io in IO_PATHS, " or ".join(IO_PATHS))
        if io == "batch" and batch.helper() is None:
            raise WorkerError(batch.refusal())
        self.io = "batch" if io != "datagram" and batch.helper() is not None else "datagram"
        self.stats = Stats()  # every group's, summed (elapsed: of calls that may overlap)
        group = self.window // (staleness + 1)
        self._group = group
        self._cores = [
            AllReduceCore(
                job_id,
                rank,
                n_workers,
                self.epoch,
                self.elems,
                group,
                self.timeout,
                self.max_retries,
                (self.switch_ip, switch_port),
                base=g * group,
                stats=self.stats,
                bits=bits,  # the switch's lanes: float arrays only below 32
                job_workers=job_workers,
                fallback=fallback,  # the job's host fallback server (best effort): (IP, UDP port)
            )
            for g in range(staleness + 1)
        ]
        check("udp_port", port, 0 <= port <= 0xFFFF, "0..65535")
        self.contributors: Contributors | None = (
            None  # the last all-reduce's, per chunk (see allreduce)
        )
        self.share = Share(rank)  # of this rank's contributions, how many the sums held
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # A window of results arrives in a burst, and a window of UPDATEs leaves in one: where the
        # host's link is slower than the host (`ina run --bw`), they wait in its queue charged to
        # this socket, and past the default send buffer (212,992 bytes: 92 UPDATEs of 256
        # elements) a send waits and is then lost (_send): 2-8 of each worker's UPDATEs per run.
        for force, size in ((SO_RCVBUFFORCE, socket.SO_RCVBUF), (SO_SNDBUFFORCE, socket.SO_SNDBUF)):
            try:  # beyond rmem_max/wmem_max only root may ask (the FORCE options)
                self.sock.setsockopt(socket.SOL_SOCKET, force, SOCKET_BUFFER)
            except PermissionError:
                self.sock.setsockopt(socket.SOL_SOCKET, size, SOCKET_BUFFER)
        try:  # no SO_REUSEADDR: another socket must not share this port and read our RESULTs
            self.sock.bind((_ipv4("local_ip", local_ip) if local_ip else "", port))
        except OSError as err:
            self.sock.close()
            raise WorkerError(f"cannot bind UDP port {port}: {err.strerror}") from None
        self.sock.setblocking(False)  # drain every queued datagram without a poll() per packet
        self._calls = 0  # all-reduces asked for: call t runs on group t mod (staleness + 1)
        self._waiting: collections.deque = (
            collections.deque()
        )  # (core, array, future) not started yet
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()  # a new call or close() wakes the I/O thread
        self._closing = False
        # the I/O thread, from `start` or the first call
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()  # set once the I/O thread's path is set up

    def close(self) -> None:
        self._closing = True
        os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join()
        self.sock.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def allreduce_async(self, array: np.ndarray) -> concurrent.futures.Future:
        """Start the all-reduce of `array` as soon as its group's previous call finished; the future
        gives a `Reduced` (sum and contributors), or raises WorkerError. Up to staleness + 1 run at
        once; every worker must ask for its calls in the same order."""
        return self._submit(np.array(array))

    def allreduce_many_async(self, arrays: list[np.ndarray]) -> concurrent.futures.Future:
        """Start the all-reduce of several arrays of one dtype as one call (ina.hosts.group: each
        array padded to whole chunks, so its sums are bit for bit a call of its own's); the future
        gives a `Reduced` per array, in order. Every worker must pass the same arrays' shapes in the
        same order; a call like any other (`allreduce_async`)."""
        values = lane_values(self.elems, self._cores[0].bits)
        group = Group(arrays, values)
        split: concurrent.futures.Future = concurrent.futures.Future()

        def done(whole: concurrent.futures.Future) -> None:
            if (err := whole.exception()) is not None:
                split.set_exception(group.refusal(err))
            else:
                split.set_result(group.split(*whole.result()))

        self._submit(group.flat).add_done_callback(done)
        return split

    def allreduce_many(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """The sums of several arrays of one dtype, all-reduced as one call; their contributors come
        with `allreduce_many_async`'s. A WorkerError names an array of another dtype, or an empty
        list."""
        return [reduced.total for reduced in self.allreduce_many_async(arrays).result()]

    def _submit(self, array: np.ndarray) -> concurrent.futures.Future:
        """Queue the all-reduce of `array` (the worker's own copy) for the I/O thread."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            if self._closing:
                raise WorkerError("the worker is closed")
            self._waiting.append((self._cores[self._calls % len(self._cores)], array, future))
            self._calls += 1
            self._start_thread()
        os.write(self._wake_w, b"x")
        return future

    def start(self) -> None:
        """Start the I/O thread and set up its path (the batch path's buffers) now, not in the first
        call: ~5 ms a timed first call would otherwise count (ina worker and ina train's workers
        start before their start barrier)."""
        with self._lock:
            self._start_thread()
        self._ready.wait()

    def _start_thread(self) -> None:
        """The I/O thread, started once (the caller holds the lock)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"ina-worker-{self.rank}", daemon=True
            )
            self._thread.start()

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        """The element-wise sum of every worker's `array` (same shape and dtype on every worker).

        Under a quorum or timeout policy a chunk's sum may hold only some workers' arrays (or none,
        0): `self.contributors` then says, per chunk, how many and which (average over the count)."""
        reduced = self.allreduce_async(array).result()
        self.contributors = reduced.contributors
        return reduced.total

    def _run(self) -> None:
        """The I/O thread: until close(), each datagram with its source and the time into the core of
        its slot, its answer out; once the socket is empty, start the calls whose group is free and
        run the cores' timers whose deadline passed, else sleep until a deadline, a datagram or a
        wake-up. Draining first matters after a stall (this process descheduled): the answers that
        queued meanwhile are taken before a core decides what is lost. After a read that took few
        datagrams (answers at a slow link's pace, a wake each) while a call runs, it waits `_hold`
        before reading again, never past a core's deadline, so the next read takes several (receive
        moderation; a new call's wake-up waits no longer than that). A core's WorkerError (or any
        error: no caller may wait on a dead thread) fails its call and every call after it."""
        cores, monotonic = self._cores, time.monotonic
        running: dict[int, concurrent.futures.Future] = {}  # group -> its call in flight
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        try:
            path = self._batch_path if self.io == "batch" else self._datagram_path
            drain, send_all = path(running, (self.switch_ip, self.switch_port))
            self._ready.set()
            few = False  # the last read took a few datagrams: answers come one at a time
            while not self._closing:
                if got := drain():
                    few = got < RX_FEW
                    continue  # answers queued during a stall reach the cores before their timers run
                now = monotonic()
                self._start_waiting(running, send_all, now)
                deadline = min(core.deadline for core in cores)
                for core in cores:
                    if core.deadline <= now:
                        send_all(core.expire(now))
                        deadline = min(deadline, core.deadline)
                if few and running and (pause := min(self._hold(), deadline - now)) > 0:
                    few = False  # one wait, then read: if nothing came, poll as usual
                    time.sleep(pause)
                    continue
                if deadline > now:
                    for fd, _ in poller.poll(
                        None if deadline == float("inf") else (deadline - now) * 1000
                    ):
                        if fd == self._wake_r:
                            os.read(fd, 4096)
        except Exception as err:
            with self._lock:
                self._closing = True
                failed = [*running.values(), *(future for _, _, future in self._waiting)]
            for future in failed:
                future.set_exception(err)
        finally:
            self._ready.set()  # `start` waits no longer if the path could not be set up

    def _hold(self) -> float:
        """How long a wake that took few datagrams waits for more: RX_HOLD_SRTT of the smoothed
        RTT, at most `rx_hold` (0 before the first RTT sample)."""
        srtt = self._cores[0].srtt
        return min(self.rx_hold, srtt * RX_HOLD_SRTT) if srtt else 0.0

    def _dispatch(self, running: dict, addr: tuple[str, int]) -> Dispatch:
        """What hands a received datagram to the core of its slot and sends its answer at once
        (ina.hosts.dispatch: compiled with the core)."""
        return Dispatch(
            self._cores,
            self._group,
            addr,
            self.sock.sendto,
            lambda pkt: self._send(pkt, addr),
            lambda core: self._finish(core, running),
        )

    def _datagram_path(self, running: dict, addr: tuple[str, int]) -> tuple[Callable, Callable]:
        """(drain, send_all) one datagram per system call: drain hands the core of its slot one
        datagram and sends its answer (False when none waits); send_all sends a list in order."""
        size = self._cores[0].datagram_size
        buf = bytearray(size + 1)  # one byte more, so a longer datagram shows as one
        view = memoryview(buf)
        whole = view[:size]  # what a datagram of the expected size is: no new view per packet
        recvfrom_into, handle = self.sock.recvfrom_into, self._dispatch(running, addr).handle

        def drain() -> int:
            try:
                n, source = recvfrom_into(buf)
            except BlockingIOError:
                return 0
            handle(whole if n == size else view[:n], source, time.monotonic())
            return 1

        def send_all(pkts: list[bytearray]) -> None:
            for pkt in pkts:
                self._send(pkt, addr)

        return drain, send_all

    def _batch_path(self, running: dict, addr: tuple[str, int]) -> tuple[Callable, Callable]:
        """(drain, send_all) in batches: drain hands the cores every datagram one recvmmsg took, in
        order, each at the time it is handed (as the datagram path does), and sends each answer at
        once, as the datagram path does (False when none waits); send_all sends a list with one
        sendmmsg per batch.QUEUE. The loop over a burst is ina.hosts.dispatch's, compiled with the
        core. An answer is not held for a sendmmsg: its core stamped it sent when it returned it,
        and one held behind others left later than its stamp, by up to the time their datagrams
        took, a skew RACK may read as reordering (once measured as spurious resends, not
        reproduced since); and a burst's answers sent with one sendmmsg saved no CPU, the kernel's
        work per datagram being the cost (docs/performance.md, "The I/O loop compiled")."""
        io = batch.BatchSocket(self.sock, self._cores[0].datagram_size, addr, self.timeout / 4)
        receive, queue, flush = io.receive, io.queue, io.flush
        burst = self._dispatch(running, addr).burst

        def drain() -> int:
            n = receive()
            if n:
                burst(io, n)
            return n

        def send_all(pkts: list[bytearray]) -> None:
            for pkt in pkts:
                queue(pkt)
            flush()

        return drain, send_all

    def _start_waiting(self, running: dict, send_all: Callable, now: float) -> None:
        """Start, in call order, the waiting calls whose group has no call in flight."""
        while True:
            with self._lock:
                if not self._waiting or self._cores.index(self._waiting[0][0]) in running:
                    return
                core, array, future = self._waiting.popleft()
            try:
                sent = core.start(array, now)
            except (
                WorkerError
            ) as err:  # refused before anything changed (dtype, NaN): this call only
                future.set_exception(err)
                continue
            running[self._cores.index(core)] = future
            send_all(sent)
            self._finish(core, running)

    def _finish(self, core: AllReduceCore, running: dict) -> None:
        """Hand a finished call's sum to its future."""
        if core.finished and (future := running.pop(self._cores.index(core), None)) is not None:
            contributors = core.contributors()
            self.share.add(contributors)
            future.set_result(Reduced(core.result(), contributors))

    def _send(self, pkt: bytearray, addr: tuple[str, int]) -> None:
        """Send once the socket is writable; a buffer full (or ARP pending) for timeout/4 is a loss
        the timer resends, like any other."""
        with contextlib.suppress(TimeoutError, BlockingIOError):
            try:
                self.sock.sendto(pkt, addr)
            except BlockingIOError:
                if select.select([], [self.sock], [], self.timeout / 4)[1]:
                    self.sock.sendto(pkt, addr)
