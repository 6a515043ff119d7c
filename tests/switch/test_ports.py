"""AF_PACKET ports: a real switch forwarding between veth pairs whose far ends live in a namespace."""

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from scapy.utils import rdpcap

from ina.compiler import compile_file
from ina.switch.engine import Switch
from ina.switch.io.ports import PortError, Ports

NETNS = "srvp-ns"
LINKS = {1: "srvp1", 2: "srvp2"}  # switch side; the peer "<name>h" sits in NETNS
BASIC_FORWARD = Path(__file__).parents[1] / "p4" / "basic_forward.p4"
# 10.0.0.1 -> 10.0.1.5 UDP "hello"; forwarded to port 2 with a new MAC, TTL 63 and a new checksum
SENT = bytes.fromhex(
    "00000000000100000000000208004500002100010000401165c60a0000010a00010503e807d0000d9b4468656c6c6f"
)
FORWARDED = bytes.fromhex(
    "0a0a0a0a0a0a000000000001080045000021000100003f1166c60a0000010a00010503e807d0000d9b4468656c6c6f"
)
# The same with another payload (the switch checks no UDP checksum): sent last, its arrival
# proves the switch has handled everything before it.
MARK, MARK_FORWARDED = SENT[:-5] + b"mark!", FORWARDED[:-5] + b"mark!"

# Runs inside NETNS: send the frame given in hex on srvp1h, print the first IPv4 frame seen on srvp2h.
PEER_SCRIPT = """
import socket, sys
rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
rx.bind(("srvp2h", 0))
rx.settimeout(5)
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind(("srvp1h", 0))
tx.send(bytes.fromhex(sys.argv[1]))
print(rx.recv(2048).hex())
"""


def through_peer(frame: bytes) -> bytes:
    """`frame` sent from the namespace into port 1; the first IPv4 frame out of port 2."""
    peer = subprocess.run(
        ["ip", "netns", "exec", NETNS, sys.executable, "-c", PEER_SCRIPT, frame.hex()],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert peer.returncode == 0, peer.stderr
    return bytes.fromhex(peer.stdout.strip())


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def _teardown() -> None:
    for name in LINKS.values():
        subprocess.run(["ip", "link", "del", name], capture_output=True)
    subprocess.run(["ip", "netns", "del", NETNS], capture_output=True)


@pytest.fixture
def veths():
    _teardown()
    _sh("ip", "netns", "add", NETNS)
    try:
        for name in LINKS.values():
            _sh(
                "ip",
                "link",
                "add",
                name,
                "type",
                "veth",
                "peer",
                "name",
                f"{name}h",
                "netns",
                NETNS,
            )
            _sh("sysctl", "-q", "-w", f"net.ipv6.conf.{name}.disable_ipv6=1")
            _sh(
                "ip",
                "netns",
                "exec",
                NETNS,
                "sysctl",
                "-q",
                "-w",
                f"net.ipv6.conf.{name}h.disable_ipv6=1",
            )
            _sh("ip", "link", "set", name, "up")
            _sh("ip", "netns", "exec", NETNS, "ip", "link", "set", f"{name}h", "up")
        yield LINKS
    finally:
        _teardown()


@pytest.mark.netns
def test_packets_cross_the_switch_and_land_in_pcaps(veths, tmp_path):
    sw = Switch()
    sw.load(compile_file(BASIC_FORWARD).bmv2)
    sw.tables["MyIngress.ipv4_lpm"].add(
        [("lpm", 0x0A000100, 24)], "MyIngress.ipv4_forward", [0x0A0A0A0A0A0A, 2]
    )
    ports = Ports(veths, str(tmp_path))
    lock, stop = threading.Lock(), threading.Event()
    loop = threading.Thread(target=ports.run, args=(sw.process, ports.send, lock, stop))
    loop.start()
    try:
        assert through_peer(SENT) == FORWARDED
        # Another sender transmitting out of a switch interface: outgoing, so the switch must not see it.
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as other:
            other.bind((LINKS[2], 0))
            other.send(SENT)
        # Its outgoing copy is queued on port 2's socket when send() returns, before the marker
        # exists; the marker forwarded means the switch read past it.
        assert through_peer(MARK) == MARK_FORWARDED
    finally:
        stop.set()
        loop.join()
        ports.close()
    assert ports.stats == {"rx": 2, "tx": 2, "tx_errors": 0}
    assert [bytes(p) for p in rdpcap(str(tmp_path / "port1-srvp1-in.pcap"))] == [SENT, MARK]
    assert [bytes(p) for p in rdpcap(str(tmp_path / "port2-srvp2-out.pcap"))] == [
        FORWARDED,
        MARK_FORWARDED,
    ]
    assert len(rdpcap(str(tmp_path / "port2-srvp2-in.pcap"))) == 0


def test_a_missing_interface_names_the_port_and_the_fix():
    with pytest.raises(
        PortError, match=r"port 3: no network interface 'srvp-none' \(see `ip link`\)"
    ):
        Ports({3: "srvp-none"})
