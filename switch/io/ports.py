"""The switch's ports: raw AF_PACKET sockets on Linux interfaces, drained in batches by one loop.

PACKET_IGNORE_OUTGOING keeps the switch from reading back its own transmissions. The loop holds
the engine lock around each batch, so P4Runtime writes land between batches, never mid-packet.
"""

import os
import select
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from ina.switch.io.pcap import PcapWriter

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33  # Linux: buffer sizes above rmem_max/wmem_max (root only)
BATCH = 64
MAX_FRAME = 65536


class PortError(Exception):
    """A port that cannot be opened; the message names the interface and the fix."""


def open_port_socket(port: int, iface: str) -> socket.socket:
    """A non-blocking raw socket on `iface` for switch port `port`; PortError says what to fix.

    Shared by Ports and the native port loop so both see the same frames and give the same errors.
    """
    if not os.path.exists(f"/sys/class/net/{iface}"):
        raise PortError(f"port {port}: no network interface '{iface}' (see `ip link`)")
    sock = None
    try:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # hears nothing until bound
        sock.bind((iface, ETH_P_ALL))  # from here on: every frame of `iface` only
        sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
        sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 16 << 20)
        sock.setblocking(False)
    except PermissionError:
        if sock is not None:
            sock.close()
        raise PortError("raw sockets need root (CAP_NET_RAW): run `ina switch` as root") from None
    except OSError as err:
        if sock is not None:
            sock.close()
        raise PortError(f"port {port} on '{iface}': {err.strerror}") from None
    return sock


class Ports:
    def __init__(self, ports: dict[int, str], pcap_dir: str | None = None):
        self.sockets: dict[int, socket.socket] = {}
        self.by_fd: dict[int, int] = {}
        self.pcaps: dict[tuple[int, str], PcapWriter] = {}
        self.stats = {"rx": 0, "tx": 0, "tx_errors": 0}
        for port, iface in ports.items():
            try:
                sock = open_port_socket(port, iface)
            except PortError:
                self.close()
                raise
            self.sockets[port] = sock
            self.by_fd[sock.fileno()] = port
            if pcap_dir:
                Path(pcap_dir).mkdir(parents=True, exist_ok=True)
                for direction in ("in", "out"):
                    self.pcaps[(port, direction)] = PcapWriter(
                        Path(pcap_dir) / f"port{port}-{iface}-{direction}.pcap"
                    )

    def send(self, outputs: list[tuple[int, bytes]]) -> None:
        for port, data in outputs:
            sock = self.sockets.get(port)
            if sock is None:
                continue  # a port with no interface behind it: the packet leaves nowhere, like BMv2
            try:
                sock.send(data)
                self.stats["tx"] += 1
            except OSError:
                self.stats["tx_errors"] += 1
            if self.pcaps:
                self.pcaps[(port, "out")].write(data)

    def run(
        self,
        process: Callable[[int, bytes], list[tuple[int, bytes]]],
        deliver: Callable,
        lock: threading.Lock,
        stop: threading.Event,
    ) -> None:
        """Receive, process and send until `stop` is set."""
        poller = select.epoll()
        for fd in self.by_fd:
            poller.register(fd, select.EPOLLIN)
        try:
            while not stop.is_set():
                for fd, _events in poller.poll(0.2):
                    port = self.by_fd[fd]
                    sock = self.sockets[port]
                    batch = []
                    for _ in range(BATCH):
                        try:
                            batch.append(sock.recv(MAX_FRAME))
                        except BlockingIOError:
                            break
                    if not batch:
                        continue
                    self.stats["rx"] += len(batch)
                    outputs = []
                    with lock:
                        for data in batch:
                            outputs += process(port, data)
                    if self.pcaps:
                        for data in batch:
                            self.pcaps[(port, "in")].write(data)
                    deliver(outputs)
        finally:
            poller.close()

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
        for pcap in self.pcaps.values():
            pcap.close()
