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
