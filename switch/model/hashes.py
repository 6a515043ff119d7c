"""The hash and checksum algorithms of simple_switch, bit-compatible with BMv2's."""

import random
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass


def csum16(data: bytes) -> int:
    """Internet checksum (RFC 1071): ones' complement of the ones' complement sum of 16-bit words.

    The sum is byte-order independent (RFC 1071 section 2), so it runs over native words in C
    and swaps the folded result once.
    """
    if len(data) % 2:
        data += b"\x00"
    total = sum(memoryview(data).cast("H"))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    if sys.byteorder == "little":
        total = ((total & 0xFF) << 8) | (total >> 8)
    return ~total & 0xFFFF


def _reflected_crc(poly: int, width: int, init: int, xorout: int) -> Callable[[bytes], int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        table.append(crc)
    mask = (1 << width) - 1

    def crc(data: bytes) -> int:
        value = init
        for byte in data:
            value = table[(value ^ byte) & 0xFF] ^ (value >> 8)
        return (value ^ xorout) & mask

    return crc


def _plain_crc16(poly: int, init: int) -> Callable[[bytes], int]:
    def crc(data: bytes) -> int:
        value = init
        for byte in data:
            value ^= byte << 8
            for _ in range(8):
                value = ((value << 1) ^ poly) if value & 0x8000 else value << 1
                value &= 0xFFFF
        return value

    return crc


crc16 = _reflected_crc(0xA001, 16, 0, 0)  # CRC-16/ARC
crc_ccitt = _plain_crc16(0x1021, 0xFFFF)


def crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def identity(data: bytes) -> int:
    return int.from_bytes(data, "big")


def xor16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\x00"
    value = 0
    for i in range(0, len(data), 2):
        value ^= int.from_bytes(data[i : i + 2], "big")
    return value


def random_hash(_data: bytes) -> int:
    return random.getrandbits(64)


@dataclass(frozen=True)
class Algorithm:
    """One hash algorithm as each engine runs it."""

    python: Callable[[bytes], int]
    c: (
        str | None
    )  # state.c's function (data, n, payload, npayload); None: the C generator's own case


ALGORITHMS: dict[str, Algorithm] = {  # BMv2's names; bmv2_schema accepts these and no others
    "csum16": Algorithm(csum16, "ina_csum16"),
    "cksum16": Algorithm(csum16, "ina_csum16"),
    "crc16": Algorithm(crc16, "ina_crc16"),
    "crc16_custom": Algorithm(crc16, "ina_crc16"),
    "crc32": Algorithm(crc32, "ina_crc32"),
    "crc32_custom": Algorithm(crc32, "ina_crc32"),
    "crcCCITT": Algorithm(crc_ccitt, "ina_crc_ccitt"),
    "identity": Algorithm(identity, None),  # C: the packed bytes as one integer, up to 64 bits
    "xor16": Algorithm(xor16, "ina_xor16"),
    "random": Algorithm(random_hash, None),  # C: none (the program runs on the Python engine)
}
