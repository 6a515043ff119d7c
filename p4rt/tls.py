"""TLS credentials for P4Runtime over gRPC, from PEM files, for the switch's server and the controller.

Both sides read files the same way so a missing or unreadable file is one clear error naming the
option's file, not a failed handshake much later.
"""

from pathlib import Path

import grpc

from ina.files import FileError, read_bytes


class TlsError(Exception):
    """A TLS option that cannot work: unreadable file or an incomplete combination."""


def _read(path: str | Path, what: str) -> bytes:
    try:
        data = read_bytes(path, what)  # bounded: a certificate option naming /dev/zero ends too
    except FileError as err:
        raise TlsError(str(err)) from None
    if b"-----BEGIN" not in data:
        raise TlsError(f"the {what} {path} is not a PEM file")
    return data


def server_credentials(
    cert: str | Path, key: str | Path, ca_cert: str | Path | None = None, client_auth: bool = False
) -> grpc.ServerCredentials:
    """The server's certificate and key; with `client_auth`, clients need a certificate `ca_cert` signed."""
    if client_auth and ca_cert is None:
        raise TlsError(
            "client authentication needs the CA certificate that signs client certificates"
        )
    return grpc.ssl_server_credentials(
        [(_read(key, "server key"), _read(cert, "server certificate"))],
        root_certificates=_read(ca_cert, "CA certificate") if ca_cert else None,
        require_client_auth=client_auth,
    )


def channel_credentials(
    ca_cert: str | Path | None = None, cert: str | Path | None = None, key: str | Path | None = None
) -> grpc.ChannelCredentials:
    """Verify the server against `ca_cert` (else the system's CAs); `cert` + `key` identify the client."""
    if (cert is None) != (key is None):
        raise TlsError("a client certificate and its key go together: give both or neither")
    return grpc.ssl_channel_credentials(
        root_certificates=_read(ca_cert, "CA certificate") if ca_cert else None,
        private_key=_read(key, "client key") if key else None,
        certificate_chain=_read(cert, "client certificate") if cert else None,
    )
