"""docs/security.md's TLS recipe against a real gRPC server with `ina switch`'s TLS options: with
client authentication, the switch's own certificate is refused from a client (it is issued for
serverAuth only) and the controller's is accepted. The certificates come from the docs' recipe
itself (tests/tls_recipe.py), so a recipe that drifted would fail here."""

import contextlib
import subprocess
import threading
from collections.abc import Iterator

import grpc
import pytest
from tls_recipe import make_pki, recipe

from ina.controller.cli import main as ctl_main
from ina.p4rt.proto import p4runtime_pb2, p4runtime_pb2_grpc
from ina.switch.cli import build_parser, server_credentials
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve

BOUND = 20  # seconds: a deadline only a hang reaches


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


@contextlib.contextmanager
def switch_with_client_auth(pki) -> Iterator[str]:
    """A P4Runtime server with the credentials `ina switch` builds from its TLS options; its address."""
    args = build_parser().parse_args(
        [
            "--no-p4",
            "--grpc-server-ssl",
            "--grpc-server-cert",
            str(pki / "server.crt"),
            "--grpc-server-key",
            str(pki / "server.key"),
            "--grpc-server-cacert",
            str(pki / "ca.crt"),
            "--grpc-server-with-client-auth",
        ]
    )
    server = serve(
        P4RuntimeService(Switch(), threading.Lock()), "127.0.0.1:0", server_credentials(args)
    )
    try:
        yield f"127.0.0.1:{server.bound_port}"
    finally:
        server.stop(None)


def capabilities(address: str, pki, identity: str) -> grpc.StatusCode:
    """The status of a Capabilities call from a client presenting `identity`.crt and its key."""
    credentials = grpc.ssl_channel_credentials(
        (pki / "ca.crt").read_bytes(),
        (pki / f"{identity}.key").read_bytes(),
        (pki / f"{identity}.crt").read_bytes(),
    )
    with grpc.secure_channel(address, credentials) as channel:
        try:
            p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(
                p4runtime_pb2.CapabilitiesRequest(), timeout=BOUND
            )
        except grpc.RpcError as err:
            return err.code()
    return grpc.StatusCode.OK


def test_the_recipe_is_read_from_the_docs():
    """Three keys and certificates, and an extension file for each issued certificate."""
    lines = recipe()
    assert [line.split()[:2] for line in lines if line.startswith("openssl")] == [
        ["openssl", "req"]
    ] * 2 + [["openssl", "x509"], ["openssl", "req"], ["openssl", "x509"]]
    assert [line for line in lines if line.startswith("echo")] == [
        'echo "subjectAltName=IP:10.0.0.254,DNS:switch1" > server.ext',
        'echo "extendedKeyUsage=serverAuth" >> server.ext',
        'echo "extendedKeyUsage=clientAuth" > client.ext',
    ]


@pytest.mark.parametrize(
    ("identity", "use"),
    [("server", "TLS Web Server Authentication"), ("client", "TLS Web Client Authentication")],
)
def test_each_certificate_is_for_one_use(pki, identity, use):
    shown = subprocess.run(
        [
            "openssl",
            "x509",
            "-in",
            str(pki / f"{identity}.crt"),
            "-noout",
            "-ext",
            "extendedKeyUsage",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown.split("\n", 1)[1].strip() == use


def test_the_switch_refuses_its_own_certificate_from_a_client_and_accepts_the_controllers(pki):
    with switch_with_client_auth(pki) as address:
        assert capabilities(address, pki, "server") == grpc.StatusCode.UNAVAILABLE
        assert capabilities(address, pki, "client") == grpc.StatusCode.OK


def test_ina_ctl_with_the_switchs_certificate_is_refused(pki, capsys):
    with switch_with_client_auth(pki) as address:
        tls = ["--grpc-addr", address, "--timeout", "2", "--ssl", "--ca-cert", str(pki / "ca.crt")]
        assert (
            ctl_main(
                [
                    *tls,
                    "--cert",
                    str(pki / "server.crt"),
                    "--key",
                    str(pki / "server.key"),
                    "show-jobs",
                ]
            )
            == 1
        )
        assert capsys.readouterr().err.startswith(
            f"ina ctl: no P4Runtime server answers at {address} within 2.0 s"
        )
        assert (
            ctl_main(
                [
                    *tls,
                    "--cert",
                    str(pki / "client.crt"),
                    "--key",
                    str(pki / "client.key"),
                    "show-jobs",
                ]
            )
            == 1
        )
        assert capsys.readouterr().err.startswith(
            f"ina ctl: {address}: get pipeline: "
        )  # through TLS: no program
