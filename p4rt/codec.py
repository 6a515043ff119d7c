"""P4Runtime values: unsigned integers as big-endian bytes (canonical = shortest), MAC and IPv4 text."""

import ipaddress


def encode(value: int, bitwidth: int) -> bytes:
    """The canonical byte string of `value`: shortest big-endian form, b"\\x00" for zero."""
    check_fits(value, bitwidth, "value")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    return int.from_bytes(data, "big")


class DoesNotFit(ValueError):
    """A value outside 0..2**bitwidth-1: a ValueError callers can tell from malformed text."""


def check_fits(value: int, bitwidth: int, what: str) -> None:
    if value < 0 or value >> bitwidth:
        raise DoesNotFit(f"{what}: {value} does not fit in {bitwidth} bits")


def decode_checked(data: bytes, bitwidth: int, what: str) -> int:
    """Decode a value a client sent; any width that holds the value is accepted, as the spec asks."""
    if not data:
        raise ValueError(f"{what}: empty byte string")
    value = decode(data)
    check_fits(value, bitwidth, what)
    return value


def parse_mac(text: str) -> int:
    parts = text.split(":")
    if len(parts) != 6 or not all(len(p) in (1, 2) for p in parts):
        raise ValueError(f"'{text}' is not a MAC address (expected aa:bb:cc:dd:ee:ff)")
    return int("".join(p.zfill(2) for p in parts), 16)


def format_mac(value: int) -> str:
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


def parse_ipv4(text: str) -> int:
    try:
        return int(ipaddress.IPv4Address(text))
    except ValueError:
        raise ValueError(f"'{text}' is not an IPv4 address") from None


def format_ipv4(value: int) -> str:
    return str(ipaddress.IPv4Address(value))


def parse_value(value: str | int, bitwidth: int) -> int:
    """An int, or text: decimal, 0x.., a MAC address or a dotted IPv4 address."""
    if isinstance(value, int):
        result = value
    elif value.count(":") == 5:
        result = parse_mac(value)
    elif value.count(".") == 3:
        result = parse_ipv4(value)
    else:
        try:
            result = int(value, 0)
        except ValueError:
            raise ValueError(f"'{value}' is not a number, MAC or IPv4 address") from None
    check_fits(result, bitwidth, str(value))
    return result
