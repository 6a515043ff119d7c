"""Rates and durations as written on the command line, and as printed."""

import pytest

from ina.sim.units import format_rate, format_seconds, parse_rate, parse_seconds


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("100Gbps", 100e9),
        ("10Mbps", 10e6),
        ("2.5G", 2.5e9),
        ("1e9", 1e9),
        ("40 Gbit/s", 40e9),
        ("1Tb/s", 1e12),
        ("9600", 9600.0),
        ("1.5kbps", 1500.0),
    ],
)
def test_rates(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize("text", ["0", "0Gbps", "-1Gbps", "fast", "1e400", "10 Xbps", "", "nan"])
def test_bad_rates(text):
    with pytest.raises(ValueError, match="expected a rate > 0 in bit/s"):
        parse_rate(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1us", 1e-6),
        ("250ns", 250e-9),
        ("0.5ms", 0.5e-3),
        ("2s", 2.0),
        ("0s", 0.0),
        ("1e3 ns", 1e-6),
    ],
)
def test_durations(text, seconds):
    assert parse_seconds(text) == pytest.approx(seconds, rel=1e-15)


@pytest.mark.parametrize("text", ["1", "-1us", "1 h", "us", "inf s", "1e999s"])
def test_bad_durations(text):
    with pytest.raises(ValueError, match="expected a duration >= 0 with a unit"):
        parse_seconds(text)


def test_printed_in_the_largest_unit_above_one():
    assert [format_rate(x) for x in (100e9, 10e6, 1.5e3, 12)] == [
        "100 Gbit/s",
        "10 Mbit/s",
        "1.5 kbit/s",
        "12 bit/s",
    ]
    assert [format_seconds(x) for x in (2.0, 3.2e-5, 1.5e-3, 4e-9, 0.0)] == [
        "2 s",
        "32 us",
        "1.5 ms",
        "4 ns",
        "0 ns",
    ]
