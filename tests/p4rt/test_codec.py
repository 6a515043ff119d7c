"""P4Runtime value codec: canonical bytes, width checks, MAC/IPv4 text."""

import pytest

from ina.p4rt import codec


@pytest.mark.parametrize(
    ("value", "width", "data"),
    [
        (0, 9, b"\x00"),
        (1, 9, b"\x01"),
        (0x1FF, 9, b"\x01\xff"),
        (0x0A000001, 32, b"\x0a\x00\x00\x01"),
        (0x0000AB, 48, b"\xab"),
    ],
)
def test_encode_is_shortest_big_endian(value, width, data):
    assert codec.encode(value, width) == data
    assert codec.decode(data) == value


def test_encode_refuses_values_wider_than_the_field():
    with pytest.raises(ValueError, match="512 does not fit in 9 bits"):
        codec.encode(512, 9)
    with pytest.raises(ValueError, match="does not fit"):
        codec.encode(-1, 8)


def test_decode_checked_accepts_padding_and_names_the_field():
    assert codec.decode_checked(b"\x00\x00\x00\x05", 9, "port") == 5
    with pytest.raises(ValueError, match=r"^port: 1024 does not fit in 9 bits$"):
        codec.decode_checked(b"\x04\x00", 9, "port")
    with pytest.raises(ValueError, match="port: empty"):
        codec.decode_checked(b"", 9, "port")


def test_mac_and_ipv4_text():
    assert codec.parse_mac("02:aa:00:00:00:1") == 0x02AA00000001
    assert codec.format_mac(0x02AA00000001) == "02:aa:00:00:00:01"
    assert codec.parse_ipv4("10.0.0.254") == 0x0A0000FE
    assert codec.format_ipv4(0x0A0000FE) == "10.0.0.254"
    with pytest.raises(ValueError, match="not a MAC"):
        codec.parse_mac("02:aa:00:00:01")
    with pytest.raises(ValueError, match="not an IPv4"):
        codec.parse_ipv4("10.0.0.256")


@pytest.mark.parametrize(
    ("text", "width", "value"),
    [
        (7, 8, 7),
        ("42", 16, 42),
        ("0x1ff", 9, 0x1FF),
        ("ff:ff:ff:ff:ff:ff", 48, 0xFFFFFFFFFFFF),
        ("192.168.1.2", 32, 0xC0A80102),
    ],
)
def test_parse_value(text, width, value):
    assert codec.parse_value(text, width) == value


def test_parse_value_errors_name_the_input():
    with pytest.raises(ValueError, match="'banana' is not a number"):
        codec.parse_value("banana", 8)
    with pytest.raises(ValueError, match=r"10\.0\.0\.1: 167772161 does not fit in 16 bits"):
        codec.parse_value("10.0.0.1", 16)
