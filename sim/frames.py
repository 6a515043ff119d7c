"""Ethernet/IPv4/UDP headers for the frames a simulated host sends that no worker core builds (the
baselines' transport and server): the real bytes, so the switch program forwards them as any frame
and every link serializes their real length."""

import socket
import struct

from ina.hosts.inprocess import ipv4_checksum

_ETH_IPV4 = b"\x08\x00"


def mac_bytes(mac: str) -> bytes:
    return bytes.fromhex(mac.replace(":", ""))


def udp_headers(src: tuple[str, str, int], dst: tuple[str, str, int], payload_len: int,
                udp_checksum: int = 0) -> bytes:
    """Ethernet, IPv4 (TTL 64, checksum) and UDP (checksum `udp_checksum`, 0 = none) headers of a
    frame carrying `payload_len` bytes from `src` to `dst`, each (MAC, IPv4 address, UDP port)."""
    (src_mac, src_ip, src_port), (dst_mac, dst_ip, dst_port) = src, dst
    udp = struct.pack("!HHHH", src_port, dst_port, 8 + payload_len, udp_checksum)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + payload_len, 0, 0, 64, socket.IPPROTO_UDP, 0,
                     socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:]
    return mac_bytes(dst_mac) + mac_bytes(src_mac) + _ETH_IPV4 + ip + udp


def udp_source(frame: bytes) -> tuple[str, int]:
    """The (IPv4 address, UDP port) a frame (without IP options) comes from."""
    return socket.inet_ntoa(frame[26:30]), int.from_bytes(frame[34:36], "big")
