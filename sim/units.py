"""Rates and durations as people write them (100Gbps, 1.5us): parsed for the CLI, formatted for output."""

import re

_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_RATE = re.compile(r"(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)\s*([kKMGT]?)(?:bps|bit/s|b/s)?")
_PER_SECOND = {
    "ns": 1e9,
    "us": 1e6,
    "ms": 1e3,
    "s": 1.0,
}  # divide by these: 50 / 1e9 is 5e-08, 50 * 1e-9 is not
_DURATION = re.compile(r"(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)\s*(ns|us|ms|s)")


def parse_rate(text: str) -> float:
    """'100Gbps', '10Mbit/s', '2.5G', '1e9' -> bit/s, > 0. Raises ValueError saying what is expected."""
    m = _RATE.fullmatch(text.strip())
    rate = float(m[1]) * _PREFIX[m[2]] if m else 0.0
    if not 0 < rate < float("inf"):
        raise ValueError(
            f"expected a rate > 0 in bit/s, e.g. 100Gbps, 10Mbps or 1e9, got {text[:40]!r}"
        )
    return rate


def parse_seconds(text: str) -> float:
    """'1us', '250ns', '0.5ms', '2s' -> seconds, >= 0 (the unit is required). Raises ValueError."""
    m = _DURATION.fullmatch(text.strip())
    seconds = float(m[1]) / _PER_SECOND[m[2]] if m else -1.0
    if not 0 <= seconds < float("inf"):
        raise ValueError(
            f"expected a duration >= 0 with a unit (ns, us, ms, s), e.g. 1us, got {text[:40]!r}"
        )
    return seconds


def format_rate(bps: float) -> str:
    """bit/s in the largest prefix that keeps the number >= 1: 1e11 -> '100 Gbit/s'."""
    for prefix in ("T", "G", "M", "k"):
        if bps >= _PREFIX[prefix]:
            return f"{bps / _PREFIX[prefix]:.4g} {prefix}bit/s"
    return f"{bps:.4g} bit/s"


def time_unit(seconds: float) -> tuple[str, float]:
    """The largest unit that keeps `seconds` >= 1 in it, and its count per second: 3.2e-5 -> ('us', 1e6)."""
    for unit in ("s", "ms", "us"):
        if seconds * _PER_SECOND[unit] >= 1:
            return unit, _PER_SECOND[unit]
    return "ns", _PER_SECOND["ns"]


def format_seconds(seconds: float) -> str:
    """Seconds in the largest unit that keeps the number >= 1: 3.2e-5 -> '32 us'."""
    unit, per_second = time_unit(seconds)
    return f"{seconds * per_second:.6g} {unit}"
