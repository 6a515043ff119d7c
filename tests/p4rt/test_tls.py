"""TLS options read their files as every user file is read: one line naming the option's file,
and a bounded read, so an option naming /dev/zero ends with an error instead of filling memory."""

import pytest

from ina.files import MAX_FILE_BYTES
from ina.p4rt.tls import TlsError, channel_credentials, server_credentials


def test_a_certificate_option_naming_an_endless_file_is_refused_after_a_bounded_read():
    with pytest.raises(
        TlsError, match=f"^the CA certificate /dev/zero is larger than {MAX_FILE_BYTES >> 20} MiB$"
    ):
        channel_credentials(ca_cert="/dev/zero")


def test_a_missing_key_names_its_option_and_the_reason(tmp_path):
    missing = tmp_path / "server.key"
    with pytest.raises(
        TlsError, match=f"^cannot read the server key {missing}: No such file or directory$"
    ):
        server_credentials(tmp_path / "server.crt", missing)


def test_a_file_that_is_not_pem_is_named(tmp_path):
    (tmp_path / "ca.crt").write_bytes(b"\x00" * 64)
    with pytest.raises(
        TlsError, match=f"^the CA certificate {tmp_path / 'ca.crt'} is not a PEM file$"
    ):
        channel_credentials(ca_cert=tmp_path / "ca.crt")
