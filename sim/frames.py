"""Ethernet/IPv4/UDP and Ethernet/IPv4/TCP headers of the frames a simulated host sends (the
harness's UPDATEs, the baselines' transport and server): the real bytes, so the switch program
forwards them as any frame and every link serializes their real length. Below hosts/ in the
layers (tests/test_layers.py), so the harness and train/ import it alike."""

import socket
import struct

ETH_IPV4 = b"\x08\x00"  # the Ethernet type of IPv4


def ipv4_checksum(header: bytes) -> int:
    """The IPv4 header checksum of `header` (its checksum field 0): the ones' complement sum."""
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def mac_bytes(mac: str) -> bytes:
    return bytes.fromhex(mac.replace(":", ""))


def _ipv4(src: tuple[str, str], dst: tuple[str, str], protocol: int, l4_len: int) -> bytes:
    """Ethernet and IPv4 (TTL 64, checksum) headers of a frame from `src` to `dst`, each (MAC, IPv4
    address), carrying `l4_len` bytes of `protocol`."""
    ip = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        0,
        20 + l4_len,
        0,
        0,
        64,
        protocol,
        0,
        socket.inet_aton(src[1]),
        socket.inet_aton(dst[1]),
    )
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:]
    return mac_bytes(dst[0]) + mac_bytes(src[0]) + ETH_IPV4 + ip


def udp_headers(
    src: tuple[str, str, int], dst: tuple[str, str, int], payload_len: int, udp_checksum: int = 0
) -> bytes:
    """Ethernet, IPv4 (TTL 64, checksum) and UDP (checksum `udp_checksum`, 0 = none) headers of a
    frame carrying `payload_len` bytes from `src` to `dst`, each (MAC, IPv4 address, UDP port)."""
    udp = struct.pack("!HHHH", src[2], dst[2], 8 + payload_len, udp_checksum)
    return _ipv4(src[:2], dst[:2], socket.IPPROTO_UDP, 8 + payload_len) + udp


TCP = struct.Struct(
    "!HHIIHHHH"
)  # ports, sequence and acknowledgment numbers, offset and flags, window, checksum, urgent
TCP_TIMESTAMPS = struct.Struct(
    "!BBBBII"
)  # NOP, NOP, kind 8, length 10, TSval, TSecr: Linux's 12 option bytes
TCP_HEADERS = (
    14 + 20 + TCP.size + TCP_TIMESTAMPS.size
)  # 66 bytes: Ethernet, IPv4, TCP with timestamps
TCP_MSS = 1500 - (TCP_HEADERS - 14)  # 1,448: a 1500-byte IP packet's TCP payload
TCP_ACK, TCP_PSH = 0x10, 0x08


def tcp_headers(
    src: tuple[str, str, int],
    dst: tuple[str, str, int],
    seq: int,
    ack: int,
    flags: int,
    window: int,
    tsval: int,
    payload_len: int,
) -> bytes:
    """Ethernet, IPv4 and TCP headers (with the timestamp option, as Linux sends; checksum 0, TSecr
    0) of a segment of `payload_len` bytes from `src` to `dst`, each (MAC, IPv4 address, TCP port);
    `seq` and `ack` are taken mod 2^32."""
    tcp = TCP.pack(
        src[2], dst[2], seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, (8 << 12) | flags, window, 0, 0
    )
    options = TCP_TIMESTAMPS.pack(1, 1, 8, 10, tsval & 0xFFFFFFFF, 0)
    return (
        _ipv4(src[:2], dst[:2], socket.IPPROTO_TCP, TCP.size + TCP_TIMESTAMPS.size + payload_len)
        + tcp
        + options
    )


def udp_source(frame: bytes) -> tuple[str, int]:
    """The (IPv4 address, UDP port) a frame (without IP options) comes from."""
    return socket.inet_ntoa(frame[26:30]), int.from_bytes(frame[34:36], "big")
