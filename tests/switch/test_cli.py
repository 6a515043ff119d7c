"""`ina switch`: clear errors for bad command lines; a real process over a veth pair forwards packets."""

import re
import signal
import socket
import subprocess
import sys

import grpc
import pytest
from scapy.utils import rdpcap

from ina.compiler import compile_file
from ina.controller.aggregation import Aggregation
from ina.controller.client import SwitchConnection
from ina.p4rt.proto import p4runtime_pb2, p4runtime_pb2_grpc
from ina.p4src import AGGREGATE_P4
from ina.switch.cli import main


def test_missing_interface_is_reported(capsys):
    assert main(["--no-p4", "-i", "1@no-such-if0", "--grpc-server-addr", "127.0.0.1:0"]) == 1
    assert "no network interface 'no-such-if0'" in capsys.readouterr().err


def test_needs_a_program_or_no_p4(capsys):
    assert main([]) == 2
    assert "give a BMv2 JSON file or --no-p4" in capsys.readouterr().err


def test_grpc_port_in_use_is_reported(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        assert main(["--no-p4", "--grpc-server-addr", address]) == 1
    assert f"cannot listen on {address}: the port is in use" in capsys.readouterr().err


@pytest.mark.parametrize("address", ["127.0.0.1:65536", "127.0.0.1", "127.0.0.1:\u0663"])
def test_an_address_grpc_would_misread_is_a_usage_error(capsys, address):
    """gRPC listened on a random port for 127.0.0.1:65536 (it takes the port modulo 65536)."""
    with pytest.raises(SystemExit) as exit_:
        main(["--no-p4", "--grpc-server-addr", address])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"ina switch: error: argument --grpc-server-addr: expected HOST:PORT with PORT in 0..65535, got {address!r}"
    )


def test_sigint_stops_the_switch_cleanly(line_reader):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ina",
            "switch",
            "--no-p4",
            "--device-id",
            "3",
            "--grpc-server-addr",
            "127.0.0.1:0",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    next_line = line_reader(proc.stdout)
    try:
        ready = next_line()
        match = re.fullmatch(
            r"ina switch: listening on 127\.0\.0\.1:(\d+) \(P4Runtime, device 3\), ports none\n",
            ready,
        )
        assert match, ready
        with grpc.insecure_channel(f"127.0.0.1:{match[1]}") as channel:
            reply = p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(
                p4runtime_pb2.CapabilitiesRequest()
            )
        assert reply.p4runtime_api_version == "1.4.1"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
        assert next_line().startswith("ina switch: stopped")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_port_spec_is_a_usage_error():
    with pytest.raises(SystemExit) as exit_:
        main(["--no-p4", "-i", "eth0"])
    assert exit_.value.code == 2


@pytest.mark.netns
@pytest.mark.parametrize(
    ("engine", "says"),
    [
        ("auto", "ina switch: native data path (the program runs compiled to C)"),
        ("python", "ina switch: python data path (the Python engine was asked for)"),
    ],
)
def test_switch_process_forwards_between_veths(tmp_path, line_reader, engine, says):
    def sh(*cmd):
        subprocess.run(cmd, check=True, capture_output=True)

    for end in ("srv-a", "srv-b"):
        subprocess.run(["ip", "link", "del", end], capture_output=True)
    sh("ip", "link", "add", "srv-a", "type", "veth", "peer", "name", "srv-a-in")
    sh("ip", "link", "add", "srv-b", "type", "veth", "peer", "name", "srv-b-in")
    for dev in ("srv-a", "srv-a-in", "srv-b", "srv-b-in"):
        sh("ip", "link", "set", dev, "up")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ina",
            "switch",
            "--no-p4",
            "-i",
            "1@srv-a",
            "-i",
            "2@srv-b",
            "--grpc-server-addr",
            "127.0.0.1:50150",
            "--pcap",
            str(tmp_path),
            "--engine",
            engine,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    next_line = line_reader(proc.stdout)
    try:
        assert next_line().startswith(
            "ina switch: listening on 127.0.0.1:50150 (P4Runtime, device 0), ports 1@srv-a, 2@srv-b"
        )
        program = compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})
        with SwitchConnection("127.0.0.1:50150") as conn:
            conn.set_pipeline(program.bmv2, program.p4info)
            assert next_line() == says + "\n"
            Aggregation(conn).install_forwarding([("02:00:00:00:00:02", 2)], [1, 2])
        rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
        rx.bind(("srv-b-in", 0))
        rx.settimeout(3)
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        tx.bind(("srv-a-in", 0))
        frame = bytes.fromhex("02000000000202000000000188b5") + b"through the switch".ljust(
            46, b"."
        )
        marker = frame[:14] + b"marker after it".ljust(46, b".")
        tx.send(frame)
        assert rx.recv(2048) == frame
        tx.send(marker)  # forwarded in order: a second copy of frame would arrive before it
        assert rx.recv(2048) == marker
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
        for end in ("srv-a", "srv-b"):
            subprocess.run(["ip", "link", "del", end], capture_output=True)
    for name in ("port1-srv-a-in.pcap", "port2-srv-b-out.pcap"):  # the kernel's IPv6 chatter aside
        assert [
            bytes(p) for p in rdpcap(str(tmp_path / name)) if bytes(p)[12:14] == b"\x88\xb5"
        ] == [frame, marker]


def test_native_engine_with_a_packet_log_is_a_usage_error(capsys):
    assert main(["--no-p4", "--engine", "native", "--log-console"]) == 2
    assert "per-packet logs come from the Python engine" in capsys.readouterr().err
