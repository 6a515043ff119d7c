"""Argument validators for every `ina` CLI: argparse `type=` functions that check ranges.

A bad value then fails in argparse, before anything is built or started, with one line that names
the argument and the valid range (`ina worker: error: argument --window: expected an integer in
1..32768, got '0'`) and exit status 2. Hex (0x...) is accepted wherever an integer is.
"""

import argparse
import ipaddress
import math
import re
from collections.abc import Callable, Sequence

UDP_PORT_RANGE = (1, 65535)  # 0 is "any port" to bind(), never a port a peer can send to
# Bytes that what one command's arguments size may take, over all its processes on this machine:
# the memory of the project's VM (Vagrantfile), so a command that passes runs there.
MEMORY_BUDGET = 4 << 30
_SHOWN = 40  # characters of a bad value quoted in the message


def _bad(expected: str, text: str) -> argparse.ArgumentTypeError:
    shown = text if len(text) <= _SHOWN else text[:_SHOWN] + "..."
    return argparse.ArgumentTypeError(f"expected {expected}, got {shown!r}")


def _parse_int(text: str) -> int | None:
    """Decimal or 0x/0o/0b; None for anything else (including more digits than Python converts)."""
    for base in (10, 0):
        try:
            return int(text, base)
        except ValueError:
            continue
    return None


def int_range(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An integer in lo..hi (no upper bound when hi is None)."""
    expected = f"an integer in {lo}..{hi}" if hi is not None else f"an integer >= {lo}"

    def parse(text: str) -> int:
        value = _parse_int(text)
        if value is None or value < lo or (hi is not None and value > hi):
            raise _bad(expected, text)
        return value

    parse.__name__ = "int"
    return parse


def memory_refusal(option: str, value: int, bytes_each: int, unit: str) -> str | None:
    """None when `value` units of `bytes_each` bytes fit MEMORY_BUDGET, else the parser error naming
    the option and its range: an argument that sizes memory is refused before anything is allocated,
    so it never ends in MemoryError (or the OOM killer) half-way."""
    limit = MEMORY_BUDGET // bytes_each
    if value <= limit:
        return None
    why = f"{bytes_each} bytes per {unit}, at most {MEMORY_BUDGET >> 30} GiB"
    return f"argument {option}: {_bad(f'an integer in 1..{limit} ({why})', str(value))}"


def int_choice(choices: Sequence[int]) -> Callable[[str], int]:
    """One of a few integers (argparse's `choices` would print its own, less specific message)."""
    expected = "one of " + ", ".join(map(str, choices))

    def parse(text: str) -> int:
        value = _parse_int(text)
        if value not in choices:
            raise _bad(expected, text)
        return value

    parse.__name__ = "int"
    return parse


def float_range(
    lo: float, hi: float | None = None, lo_open: bool = False
) -> Callable[[str], float]:
    """A finite number in [lo, hi] ((lo, hi] with lo_open): nan and inf never pass."""
    upper = f"{hi}]" if hi is not None else "inf)"
    expected = f"a number in {'(' if lo_open else '['}{lo}, {upper}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise _bad(expected, text) from None
        too_low = value <= lo if lo_open else value < lo
        if not math.isfinite(value) or too_low or (hi is not None and value > hi):
            raise _bad(expected, text)
        return value

    parse.__name__ = "float"
    return parse


def ipv4_address(text: str) -> str:
    """A dotted-quad IPv4 address (no host names: workers send to it per packet)."""
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise _bad("an IPv4 address like 10.0.0.1", text) from None


def host_port(lowest_port: int) -> Callable[[str], str]:
    """HOST:PORT with PORT in lowest_port..65535: 1 for an address to dial, 0 for one to listen on
    (any free port); gRPC would take 65536 as 0, silently."""
    expected = f"HOST:PORT with PORT in {lowest_port}..{UDP_PORT_RANGE[1]}"

    def parse(text: str) -> str:
        host, sep, port = text.rpartition(":")
        if not (
            sep
            and host
            and port.isascii()
            and port.isdigit()
            and lowest_port <= int(port) <= UDP_PORT_RANGE[1]
        ):
            raise _bad(expected, text)
        return text

    parse.__name__ = "address"
    return parse


def ipv4_port(text: str) -> tuple[str, int]:
    """IPV4:PORT (PORT in 1..65535) as (address, port): a peer a worker takes answers from."""
    host, _, port = text.rpartition(":")
    try:
        host_port(1)(text)
        return str(ipaddress.IPv4Address(host)), int(port)
    except (argparse.ArgumentTypeError, ValueError):
        raise _bad(f"IPV4:PORT with PORT in 1..{UDP_PORT_RANGE[1]}", text) from None


udp_port = int_range(*UDP_PORT_RANGE)
probability = float_range(0.0, 1.0)
positive_float = float_range(0.0, lo_open=True)

_MACRO_NAME = re.compile(r"[A-Za-z_]\w*\Z")


def macro_define(text: str) -> tuple[str, str]:
    """-D NAME[=VALUE] as cpp takes it: NAME alone defines it as 1."""
    name, eq, value = text.partition("=")
    if not _MACRO_NAME.match(name):
        raise _bad("NAME or NAME=VALUE with NAME a C identifier", text)
    return name, value if eq else "1"


def parsed_by(parse: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type from a domain parser (Policy.parse, DelayDistribution.parse, ...) whose
    ValueError already names the problem: argparse then prefixes the argument's name."""

    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert
