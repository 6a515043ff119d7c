"""Ring all-reduce between hosts over TCP: the baseline NCCL and Gloo implement, beside the switch
and the parameter server.

Rank r sends to its right neighbour (r + 1) and receives from its left one (r - 1). The flat array
is cut into n segments; n - 1 reduce-scatter steps leave rank r with the whole sum of segment
r + 1, and n - 1 all-gather steps pass each finished segment round the ring. Every worker sends and
receives 2 (n - 1) / n of the array, whatever n. A step's sending runs on a thread while the
received segment is read and summed chunk by chunk, so neither side blocks the other's socket
buffer. Every finished segment is the same bytes on every rank, so all ranks end with identical
sums. A neighbour that cannot be reached, never connects, goes silent or closes its connection
raises RingError naming it, within `timeout` seconds.
"""

import concurrent.futures
import socket
import struct
import time
from typing import NamedTuple

import numpy as np

from ina.hosts.group import Group

PORT = 29500  # each rank listens here on its own host (torch.distributed's customary port)
DTYPES = (np.dtype(np.float32), np.dtype(np.int32))
HELLO = struct.Struct("!I")  # the connecting (left) neighbour's rank


class RingError(Exception):
    """The ring cannot finish; the message names the neighbour and its address."""


class Step(NamedTuple):
    """One step of a rank's ring schedule: the segment it sends right, the one it receives from the
    left, and whether it adds what it receives (reduce-scatter) or copies it (all-gather)."""

    send: int
    recv: int
    reduce: bool


def segment_bounds(size: int, n: int) -> np.ndarray:
    """Where the n segments of a flat array of `size` elements begin and end (n + 1 offsets, as
    even as whole elements allow)."""
    return np.linspace(0, size, n + 1).astype(np.int64)


def schedule(rank: int, n: int) -> list[Step]:
    """Rank `rank`'s 2 (n - 1) steps of a ring of n: n - 1 reduce-scatter steps leave it with the
    whole sum of segment rank + 1, then n - 1 all-gather steps pass each finished segment on. Each
    step after the first sends the segment the step before received, so a chunk can be forwarded as
    soon as it has arrived (the pipelining NCCL does)."""
    reduce_scatter = [Step((rank - s) % n, (rank - s - 1) % n, True) for s in range(n - 1)]
    all_gather = [Step((rank + 1 - s) % n, (rank - s) % n, False) for s in range(n - 1)]
    return reduce_scatter + all_gather


class Ring:
    def __init__(
        self,
        rank: int,
        peers: list[tuple[str, int]],
        timeout: float = 10.0,
        chunk_bytes: int = 1 << 18,
    ):
        """`peers[i]` is rank i's listening address (this rank binds its own)."""
        if not 0 <= rank < len(peers):
            raise ValueError(f"rank {rank} is not in 0..{len(peers) - 1}")
        self.rank, self.n, self.peers = rank, len(peers), peers
        self.timeout, self.chunk_bytes = timeout, chunk_bytes
        self.left = self.right = None
        self._sender = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        if self.n > 1:
            self._connect()

    def _name(self, rank: int) -> str:
        ip, port = self.peers[rank]
        return f"rank {rank} at {ip}:{port}"

    def _connect(self) -> None:
        """Listen, connect to the right neighbour (retrying until it listens), accept the left one."""
        deadline = time.monotonic() + self.timeout
        left, right = (self.rank - 1) % self.n, (self.rank + 1) % self.n
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind(self.peers[self.rank])
            listener.listen(1)
            while self.right is None:
                try:
                    self.right = socket.create_connection(
                        self.peers[right], timeout=max(deadline - time.monotonic(), 0.01)
                    )
                except OSError as err:
                    if time.monotonic() >= deadline:
                        raise RingError(
                            f"ring rank {self.rank}: cannot reach {self._name(right)} within "
                            f"{self.timeout:g} s: {err.strerror or err}"
                        ) from None
                    time.sleep(0.05)
            self.right.sendall(HELLO.pack(self.rank))
            listener.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                self.left, _ = listener.accept()
            except TimeoutError:
                raise RingError(
                    f"ring rank {self.rank}: no connection from {self._name(left)} within "
                    f"{self.timeout:g} s"
                ) from None
        finally:
            listener.close()
        for sock in (self.left, self.right):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(self.timeout)
        hello = bytearray(HELLO.size)
        self._recv_into(memoryview(hello), left)
        if HELLO.unpack(hello)[0] != left:
            raise RingError(
                f"ring rank {self.rank}: expected {self._name(left)}, rank {HELLO.unpack(hello)[0]} "
                "connected instead"
            )

    def close(self) -> None:
        for sock in (self.left, self.right):
            if sock is not None:
                sock.close()
        self._sender.shutdown()

    def allreduce(self, array: np.ndarray) -> np.ndarray:
        """The element-wise sum of every rank's `array` (float32 or int32, same shape everywhere);
        int32 wraps modulo 2^32 as numpy's does."""
        if array.dtype not in DTYPES:
            raise ValueError(f"ring all-reduce takes float32 or int32, not {array.dtype}")
        out = np.array(array, copy=True).reshape(-1)
        if self.n == 1:
            return out.reshape(array.shape)
        bounds = segment_bounds(out.size, self.n)
        segments = [out[bounds[i] : bounds[i + 1]] for i in range(self.n)]
        left = (self.rank - 1) % self.n
        for step in schedule(self.rank, self.n):
            self._exchange(segments[step.send], segments[step.recv], left, step.reduce)
        return out.reshape(array.shape)

    def allreduce_many(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        """The sums of several arrays of one dtype as one all-reduce of their concatenation
        (ina.hosts.group's layout unpadded, as `Worker.allreduce_many` groups them: one ring pass,
        not one per array), each in its shape.
        int32 sums are a separate call's; a float32 sum may differ from one in its last bits, the
        segments (so the order of the additions) being the concatenation's (identical on every rank)."""
        group = Group(arrays, None, ValueError)
        return group.sums(self.allreduce(group.flat))

    def _exchange(self, send: np.ndarray, recv: np.ndarray, left: int, reduce: bool) -> None:
        """Send `send` right while receiving `recv`'s counterpart from the left, chunk by chunk, and
        add it into `recv` (reduce) or copy it there."""
        sending = self._sender.submit(self._send, send.tobytes())
        per_chunk = max(self.chunk_bytes // recv.itemsize, 1)
        buf = np.empty(min(per_chunk, recv.size), dtype=recv.dtype)
        for start in range(0, recv.size, per_chunk):
            part = recv[start : start + per_chunk]
            chunk = buf[: part.size]
            self._recv_into(memoryview(chunk).cast("B"), left)
            if reduce:
                part += chunk
            else:
                part[:] = chunk
        sending.result()

    def _send(self, data: bytes) -> None:
        right = (self.rank + 1) % self.n
        try:
            self.right.sendall(data)
        except TimeoutError:
            raise RingError(
                f"ring rank {self.rank}: {self._name(right)} took nothing for {self.timeout:g} s"
            ) from None
        except OSError as err:
            raise RingError(
                f"ring rank {self.rank}: lost {self._name(right)}: {err.strerror or err}"
            ) from None

    def _recv_into(self, view: memoryview, left: int) -> None:
        got = 0
        while got < len(view):
            try:
                n = self.left.recv_into(view[got:])
            except TimeoutError:
                raise RingError(
                    f"ring rank {self.rank}: nothing from {self._name(left)} for {self.timeout:g} s"
                ) from None
            except OSError as err:
                raise RingError(
                    f"ring rank {self.rank}: lost {self._name(left)}: {err.strerror or err}"
                ) from None
            if n == 0:
                raise RingError(f"ring rank {self.rank}: {self._name(left)} closed the connection")
            got += n
