"""The native port loop (io.c) behind the same surface as ina.switch.io.ports.Ports.

Python opens the sockets (same options and errors as Ports) and the pcap files; C then receives,
runs the native pipeline and transmits without coming back to Python, except for packets to the
CPU port, which reach `deliver` through a callback. ina_io_run blocks, so it runs on a background
thread: the main thread stays in Python, where SIGTERM/SIGINT handlers can set `stop`.
"""

import ctypes
import os
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path

from ina.switch.io.pcap import LINKTYPE_ETHERNET, MAGIC, SNAPLEN
from ina.switch.io.ports import Ports, open_port_socket

HOST_CB = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32)
STATS = ("rx", "tx", "tx_errors", "dropped_oversize")
IO_PROFILE = ("receive", "pipeline", "send")  # io.c's prof[]


def declare(lib: ctypes.CDLL) -> None:
    """Give io.c's functions their C signatures (ctypes would otherwise truncate pointers)."""
    ints = ctypes.POINTER(ctypes.c_int)
    lib.ina_io_new.argtypes = [ctypes.c_int, ints, ints, ints, ints, ctypes.c_int]
    lib.ina_io_new.restype = ctypes.c_void_p
    lib.ina_io_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, HOST_CB]
    lib.ina_io_run.restype = ctypes.c_int
    lib.ina_io_send.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    lib.ina_io_send.restype = ctypes.c_int
    lib.ina_io_stats.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64)]
    lib.ina_io_stats.restype = None
    lib.ina_io_free.argtypes = [ctypes.c_void_p]
    lib.ina_io_free.restype = None
    lib.ina_io_profile.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64)]
    lib.ina_io_profile.restype = None


def _open_pcap(path: Path) -> int:
    """A pcap file with its global header written; C appends records to the raw fd."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    os.write(fd, struct.pack("<IHHiIII", MAGIC, 2, 4, 0, 0, SNAPLEN, LINKTYPE_ETHERNET))
    return fd


class NativePorts:
    """Switch ports served by io.c; `host_port` packets go to `deliver` instead of a socket."""

    def __init__(
        self,
        lib: ctypes.CDLL,
        ports: dict[int, str],
        pcap_dir: str | None = None,
        host_port: int | None = None,
    ):
        self._prepare(lib, owned=True)
        try:
            for port, iface in ports.items():
                self.sockets[port] = open_port_socket(port, iface)
            pcaps: dict[tuple[int, str], int] = {}
            if pcap_dir:
                Path(pcap_dir).mkdir(parents=True, exist_ok=True)
                for port, iface in ports.items():
                    for direction in ("in", "out"):
                        path = Path(pcap_dir) / f"port{port}-{iface}-{direction}.pcap"
                        pcaps[(port, direction)] = _open_pcap(path)
                        self.pcap_fds.append(pcaps[(port, direction)])
            self._start(pcaps, host_port)
        except BaseException:
            self.close()
            raise

    @classmethod
    def borrow(cls, lib: ctypes.CDLL, ports: Ports, host_port: int | None = None) -> "NativePorts":
        """A loop on the sockets and pcap files of an open Ports, so the switch can change data
        paths without reopening them; close() leaves them open for their owner.

        The pcap files must be opened O_APPEND (PcapWriter does): both writers append records.
        """
        self = cls.__new__(cls)
        self._prepare(lib, owned=False)
        self.sockets = dict(ports.sockets)
        self._start({key: writer.fileno() for key, writer in ports.pcaps.items()}, host_port)
        return self

    def _prepare(self, lib: ctypes.CDLL, owned: bool) -> None:
        declare(lib)
        self.lib = lib
        self.sockets: dict[int, socket.socket] = {}
        self.pcap_fds: list[int] = []  # only those this object opened
        self._owned = owned
        self._io: int | None = None
        self._final_stats = dict.fromkeys(STATS, 0)
        self._callback = None  # the CFUNCTYPE object must outlive every call C makes through it
        self._lock = threading.Lock()  # send() from gRPC threads must not race close()

    def _start(self, pcaps: dict[tuple[int, str], int], host_port: int | None) -> None:
        order = list(self.sockets)
        arrays = [
            (ctypes.c_int * len(order))(*values)
            for values in (
                order,
                [self.sockets[port].fileno() for port in order],
                [pcaps.get((port, "in"), -1) for port in order],
                [pcaps.get((port, "out"), -1) for port in order],
            )
        ]
        self._io = self.lib.ina_io_new(len(order), *arrays, -1 if host_port is None else host_port)
        if not self._io:
            raise MemoryError("ina_io_new: out of memory for the port loop's buffers")

    def send(self, outputs: list[tuple[int, bytes]]) -> None:
        """Transmit packets (PacketOut results); safe while run() is going. Unknown ports drop."""
        with self._lock:
            if not self._io:
                return
            for port, data in outputs:
                self.lib.ina_io_send(self._io, port, data, len(data))

    def run(
        self,
        switch_ptr: ctypes.c_void_p,
        deliver: Callable[[list[tuple[int, bytes]]], None],
        stop: threading.Event,
        tick: Callable[[], None] | None = None,
        tick_every: float = 0.05,
    ) -> None:
        """Forward packets until `stop` is set; raises OSError if the loop fails.

        `tick` runs on the calling thread every `tick_every` seconds while the loop goes (the
        switch uses it to send the digests C queued to the controller)."""

        def on_host(port: int, data: int, length: int) -> None:
            deliver([(port, ctypes.string_at(data, length))])  # copy: C reuses the buffer

        if not self._io:
            raise RuntimeError("NativePorts.run after close()")
        self._callback = HOST_CB(on_host)
        result: list[int] = []
        stop_r, stop_w = os.pipe2(os.O_CLOEXEC)
        loop = threading.Thread(
            target=lambda: result.append(
                self.lib.ina_io_run(self._io, switch_ptr, stop_r, self._callback)
            ),
            name="ina-native-ports",
            daemon=True,
        )
        loop.start()
        try:
            # A timed wait: the loop may also end on its own (a fatal error).
            while loop.is_alive() and not stop.wait(tick_every if tick else 0.5):
                if tick is not None:
                    tick()
        finally:
            os.write(stop_w, b"x")
            loop.join()
            os.close(stop_r)
            os.close(stop_w)
        if result and result[0] < 0:
            raise OSError(-result[0], f"native port loop: {os.strerror(-result[0])}")

    @property
    def stats(self) -> dict[str, int]:
        """Counters kept by io.c: rx, tx, tx_errors, dropped_oversize."""
        if not self._io:
            return dict(self._final_stats)  # after close(): the last values
        values = (ctypes.c_uint64 * len(STATS))()
        self.lib.ina_io_stats(self._io, values)
        return dict(zip(STATS, values, strict=True))

    def profile(self) -> dict[str, int]:
        """Ticks the loop spent receiving, in the pipeline and sending (INA_PROFILE builds)."""
        values = (ctypes.c_uint64 * len(IO_PROFILE))()
        with self._lock:
            if self._io:
                self.lib.ina_io_profile(self._io, values)
        return dict(zip(IO_PROFILE, values, strict=True))

    def close(self) -> None:
        """Free the loop (which flushes the pcaps), then close what this object opened."""
        with self._lock:
            if self._io:
                self._final_stats = self.stats
                self.lib.ina_io_free(self._io)
                self._io = None
        if self._owned:
            for sock in self.sockets.values():
                sock.close()
        self.sockets.clear()
        for fd in self.pcap_fds:
            os.close(fd)
        self.pcap_fds.clear()
