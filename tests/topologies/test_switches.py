"""The command line a Mininet switch node starts its target with."""

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

import pytest

from ina.topologies.switches import P4Switch


class Intf(NamedTuple):
    name: str


def node(pcap: bool) -> SimpleNamespace:
    """What `P4Switch.command` reads of its node (a real one needs Mininet's shell)."""
    lo, eth1 = Intf("lo"), Intf("s1-eth1")
    return SimpleNamespace(
        name="s1",
        target="builtin",
        intfList=lambda: [lo, eth1],
        ports={eth1: 1},
        grpc_addr="127.0.0.1:50001",
        device_id=0,
        run_dir=Path("/tmp/run"),
        pcap=pcap,
        p4runtime_compat=None,
    )


@pytest.mark.parametrize("pcap", [False, True])
def test_the_switch_captures_only_when_asked(pcap):
    base = [sys.executable, "-m", "ina", "switch", "--no-p4", "-i", "1@s1-eth1"]
    base += ["--grpc-server-addr", "127.0.0.1:50001", "--device-id", "0"]
    assert P4Switch.command(node(pcap)) == base + (["--pcap", "/tmp/run/s1-pcap"] if pcap else [])


def test_bmv2_logs_its_start_and_warnings_not_every_packet():
    """simple_switch_grpc logs at trace unless told: several KB per packet into its file."""
    bmv2 = SimpleNamespace(**{**vars(node(False)), "target": "bmv2", "log_path": Path("/r/s1.log")})
    assert P4Switch.command(bmv2) == [
        "simple_switch_grpc",
        "--no-p4",
        "--device-id",
        "0",
        "-i",
        "1@s1-eth1",
        "--log-file",
        "/r/s1",
        "--log-level",
        "info",
        "--",
        "--grpc-server-addr=127.0.0.1:50001",
    ]
