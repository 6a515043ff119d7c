"""Many datagrams per system call on a worker's UDP socket: hosts/mmsg.c (recvmmsg, sendmmsg),
compiled and cached by the switch's native build (ina.switch.native.build: gcc under limits, by
content under ~/.cache/ina) and loaded with ctypes.

In emulation a worker's cost is per packet, and a system call per datagram was most of it
(docs/performance.md, "Where a packet's time goes at the worker"). Where the helper cannot be built
(no gcc), `helper()` says why and the worker keeps its per-datagram path (hosts/worker.py).
"""

import ctypes
import hashlib
import os
import socket
import struct
from pathlib import Path

from ina.switch.native.build import BuildError, _compile, cache_dir

SOURCE = Path(__file__).with_name("mmsg.c")
FLAGS = ["-O2", "-fPIC", "-shared", "-Wall"]
BATCH = 64  # datagrams per recvmmsg: a window's answers arrive in bursts of about this many
QUEUE = 256  # datagrams packed before a sendmmsg (mmsg.c's CHUNK): a window start sends several
_IPV4 = struct.Struct("=I")  # an IPv4 address as sockaddr_in holds it (network byte order)

_loaded: ctypes.CDLL | None = None
_refusal: str | None = None


def helper() -> ctypes.CDLL | None:
    """The loaded helper, built once per content; None when it cannot be (`refusal()` says why)."""
    global _loaded, _refusal
    if _loaded is None and _refusal is None:
        source = SOURCE.read_text()
        digest = hashlib.sha256("\0".join([source, *FLAGS]).encode()).hexdigest()[:20]
        target = cache_dir() / f"mmsg-{digest}.so"
        try:
            _compile(target, source, FLAGS, [])
            lib = ctypes.CDLL(str(target))
        except (BuildError, OSError) as err:
            _refusal = f"the batched data path is off: {err}"
            return None
        pointer, u32 = ctypes.c_void_p, ctypes.c_uint32
        lib.ina_mmsg_recv.argtypes = [ctypes.c_int, pointer, ctypes.c_uint, ctypes.c_uint, pointer]
        lib.ina_mmsg_send.argtypes = [
            *(ctypes.c_int, pointer, pointer, ctypes.c_uint, u32, ctypes.c_uint, ctypes.c_int)
        ]
        lib.ina_mmsg_recv.restype = lib.ina_mmsg_send.restype = ctypes.c_int
        _loaded = lib
    return _loaded


def refusal() -> str | None:
    """Why `helper()` gave None (after it did), else None."""
    return _refusal


def _address(buffer: bytearray | ctypes.Array) -> int:
    """The address of a buffer's first byte (it must not be resized while C may write it)."""
    return ctypes.addressof(ctypes.c_char.from_buffer(buffer))


def wire_ip(ip: str) -> int:
    """A dotted-quad IPv4 address as recvmmsg reports a source's (and sendmmsg takes a peer's)."""
    return _IPV4.unpack(socket.inet_aton(ip))[0]


def address(ip: int, port: int) -> tuple[str, int]:
    """A source recvmmsg reported (`wire_ip`'s form, port) as recvfrom gives it."""
    return socket.inet_ntoa(_IPV4.pack(ip)), port


def _raise(code: int) -> None:
    raise OSError(-code, os.strerror(-code))


class BatchSocket:
    """A non-blocking UDP socket's datagrams in batches: `receive` takes what is queued (up to
    BATCH) into buffers of its own; `queue` packs a datagram to `peer` (a copy: the caller may reuse
    its buffer at once) and `flush` sends every packed one, in order, with one sendmmsg per QUEUE.
    `size` is the datagram size the caller expects: each buffer holds one byte more, so a longer
    datagram shows as longer (cut at size + 1)."""

    def __init__(self, sock: socket.socket, size: int, peer: tuple[str, int], wait: float):
        lib = helper()
        if lib is None:
            raise BuildError(_refusal or "no helper")
        self._recv, self._send = lib.ina_mmsg_recv, lib.ina_mmsg_send
        self.fd, self.size, self.stride = sock.fileno(), size, size + 1
        self.peer = peer
        self._peer_ip = wire_ip(peer[0])
        self._wait_ms = max(1, round(wait * 1000))
        self._rx = bytearray(self.stride * BATCH)
        view = memoryview(self._rx)
        self.views = [view[i * self.stride : (i + 1) * self.stride] for i in range(BATCH)]
        self.wholes = [v[:size] for v in self.views]  # a datagram of the expected size, no new view
        self._info = (ctypes.c_uint32 * (3 * BATCH))()
        self.info = memoryview(self._info).cast("B").cast("I")  # length, IPv4, port per datagram
        self._tx = bytearray(self.stride * QUEUE)
        self._tx_view = memoryview(self._tx)
        self._lens = (ctypes.c_uint32 * QUEUE)()
        self._queued = self._at = 0
        self._rx_at, self._info_at = _address(self._rx), _address(self._info)
        self._tx_at, self._lens_at = _address(self._tx), _address(self._lens)

    def receive(self) -> int:
        """How many datagrams arrived (0: none waits); the i-th is views[i][:info[3i]], from the
        source info[3i + 1] (`wire_ip`'s form), port info[3i + 2]. Raises OSError as recvfrom
        would."""
        n = self._recv(self.fd, self._rx_at, self.stride, BATCH, self._info_at)
        if n < 0:
            _raise(n)
        return n

    def queue(self, datagram: bytes | bytearray | memoryview) -> None:
        """Pack a copy of `datagram` (at most size + 1 bytes) for the next flush."""
        if self._queued == QUEUE:
            self.flush()
        n = len(datagram)
        self._tx_view[self._at : self._at + n] = datagram
        self._lens[self._queued] = n
        self._queued += 1
        self._at += n

    def flush(self) -> None:
        """Send every packed datagram; a socket buffer still full after `wait` loses the rest, as a
        full buffer loses a datagram on the per-datagram path. Raises OSError as sendto would."""
        if self._queued:
            ip, port = self._peer_ip, self.peer[1]
            n = self._send(
                self.fd, self._tx_at, self._lens_at, self._queued, ip, port, self._wait_ms
            )
            self._queued = self._at = 0
            if n < 0:
                _raise(n)
