"""Packets/s of `ina switch` over real veth pairs: a blaster namespace, the switch, a counter.

    bchA (sender, also counts results) <-> bch-s1 [ina switch] bch-s2 <-> bchB (counter)

Sender and counter are bench/traffic.c (sendmmsg/recvmmsg), so they outrun the switch.

Forwarding: frames to h2's MAC are forwarded from port 1 to port 2 and counted in bchB.
Aggregation: a one-worker job, so every UPDATE completes its slot and the RESULT returns to bchA.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

from ina.controller.aggregation import Aggregation, Worker
from ina.controller.client import SwitchConnection
from ina.hosts.packets import datagram
from ina.p4src.protocol import MSG_UPDATE, UDP_PORT

SWITCH_MAC, SWITCH_IP = "02:aa:00:00:00:01", "10.0.0.254"
EPOCH = 1  # the blasted UPDATEs are built once, so the job's epoch is fixed
H1 = ("00:00:00:00:00:01", "10.0.0.1")
H2 = ("00:00:00:00:00:02", "10.0.0.2")


def sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def setup() -> None:
    teardown()
    for ns, inside, outside in (("bchA", "bchA-0", "bch-s1"), ("bchB", "bchB-0", "bch-s2")):
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", inside, "type", "veth", "peer", "name", outside)
        sh("ip", "link", "set", inside, "netns", ns)
        sh("ip", "-n", ns, "link", "set", inside, "up")
        sh("ip", "link", "set", outside, "up")
        for dev, where in ((inside, ["ip", "netns", "exec", ns]), (outside, [])):
            subprocess.run(
                [*where, "ethtool", "-K", dev, "tx", "off", "rx", "off"], capture_output=True
            )


def teardown() -> None:
    for ns in ("bchA", "bchB"):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    for dev in ("bch-s1", "bch-s2"):
        subprocess.run(["ip", "link", "del", dev], capture_output=True)


def frame(kind: str, elems: int) -> str:
    import struct

    from ina.p4rt.codec import parse_ipv4, parse_mac

    if kind == "forward":
        body = b"x" * 26
        ip = struct.pack(
            "!BBHHHBBHII",
            0x45,
            0,
            20 + len(body),
            0,
            0,
            64,
            17,
            0,
            parse_ipv4(H1[1]),
            parse_ipv4(H2[1]),
        )
        return (
            parse_mac(H2[0]).to_bytes(6, "big")
            + parse_mac(H1[0]).to_bytes(6, "big")
            + b"\x08\x00"
            + ip
            + body
        ).hex()
    agg = datagram(MSG_UPDATE, EPOCH, [0] * elems)
    udp = struct.pack("!HHHH", UDP_PORT, UDP_PORT, 8 + len(agg), 0) + agg
    ip = struct.pack(
        "!BBHHHBBHII",
        0x45,
        0,
        20 + len(udp),
        0,
        0,
        64,
        17,
        0,
        parse_ipv4(H1[1]),
        parse_ipv4(SWITCH_IP),
    )
    return (
        parse_mac(SWITCH_MAC).to_bytes(6, "big")
        + parse_mac(H1[0]).to_bytes(6, "big")
        + b"\x08\x00"
        + ip
        + udp
    ).hex()


# The I/O ceiling: the native port loop (io.c) with a "pipeline" that only swaps ports 1 and 2.
FORWARD_ONLY = """
#include "state.h"
int ina_process(ina_switch *sw, int port, const uint8_t *data, uint32_t len, ina_out *out) {
    sw->stats[INA_ST_RX]++;
    if (out->n >= INA_MAX_OUT || out->used + len > INA_ARENA) return 0;
    memcpy(out->arena + out->used, data, len);
    out->pkts[out->n].port = port == 1 ? 2 : 1;
    out->pkts[out->n].off = out->used;
    out->pkts[out->n].len = len;
    out->n++;
    out->used += (len + 7) & ~7u;
    return 1;
}
ina_switch *ina_new(int drop_port) { return ina_alloc(0, 0, 0, drop_port); }
"""


def _blast(kind: str, elems: int, seconds: float) -> tuple[int, int]:
    """(sent, received): the C sender in bchA, the C counter where the kind's IPv4 packets arrive."""
    from ina.switch.native.build import build_program

    tool = str(build_program(Path(__file__).with_name("traffic.c")))
    where = "bchA-0" if kind == "aggregate" else "bchB-0"
    ns = "bchA" if kind == "aggregate" else "bchB"
    counter = subprocess.Popen(
        ["ip", "netns", "exec", ns, tool, "count", where, str(seconds + 1), "0800"],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.3)
    sender = subprocess.run(
        ["ip", "netns", "exec", "bchA", tool, "send", "bchA-0", str(seconds), frame(kind, elems)],
        capture_output=True,
        text=True,
    )
    received = int(counter.communicate()[0].strip() or 0)
    return int(sender.stdout.strip() or 0), received


def measure_ceiling(seconds: float) -> dict:
    """Delivered packets/s of the native port loop doing no P4 work: what the links allow."""
    import ctypes
    import threading

    from ina.switch.io.ports import Ports
    from ina.switch.native.build import build
    from ina.switch.native.portloop import NativePorts

    lib = build(FORWARD_ONLY)
    lib.ina_new.restype, lib.ina_new.argtypes = ctypes.c_void_p, [ctypes.c_int]
    setup()
    ports = Ports({1: "bch-s1", 2: "bch-s2"})
    loop = NativePorts.borrow(lib, ports, None)
    stop = threading.Event()
    thread = threading.Thread(
        target=loop.run, args=(ctypes.c_void_p(lib.ina_new(511)), lambda _o: None, stop)
    )
    thread.start()
    try:
        sent, received = _blast("forward", 8, seconds)
    finally:
        stop.set()
        thread.join()
        loop.close()
        ports.close()
        teardown()
    return {"kind": "ceiling", "offered_pps": sent / seconds, "delivered_pps": received / seconds}


def measure(
    kind: str,
    elems: int,
    seconds: float,
    bmv2: dict,
    p4info,
    grpc_port: int = 50350,
    engine: str = "auto",
    profile: str | None = None,
) -> dict:
    """Delivered packets/s for one configuration; the switch runs as a real process: `ina switch`
    with the given engine, or BMv2's simple_switch_grpc for engine "simple_switch"."""
    setup()
    address = f"127.0.0.1:{grpc_port}"
    ports = ["-i", "1@bch-s1", "-i", "2@bch-s2"]
    if engine == "simple_switch":
        cmd = ["simple_switch_grpc", "--no-p4", *ports, "--", f"--grpc-server-addr={address}"]
    else:
        cmd = [
            sys.executable,
            "-m",
            "ina",
            "switch",
            "--no-p4",
            *ports,
            "--grpc-server-addr",
            address,
            "--engine",
            engine,
            *(["--profile", profile] if profile else []),
        ]
    switch = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with SwitchConnection(address, timeout=20) as conn:
            conn.set_pipeline(bmv2, p4info)
            agg = Aggregation(conn)
            agg.set_switch_address(SWITCH_MAC, SWITCH_IP)
            agg.install_forwarding([(H1[0], 1), (H2[0], 2)])
            # port 1: the sender; the job needs 8 slots (slot index 0 is reused)
            agg.add_job(0, [Worker(0, 1, *H1)], num_slots=8, epoch=EPOCH)
        sent, received = _blast(kind, elems, seconds)
    finally:
        switch.terminate()
        switch.wait()
        teardown()
    result = {
        "kind": kind,
        "elems": elems,
        "engine": engine,
        "offered_pps": sent / seconds,
        "delivered_pps": received / seconds,
    }
    if profile:
        result["profile"] = json.loads(Path(profile).read_text())  # written by the switch at exit
    return result


def load_program(elems: int, out: Path, target: str = "builtin"):
    """BMv2 JSON and P4Info of aggregate.p4: ina's compiler, or p4c-bm2-ss for target bmv2."""
    from ina.topologies.runner import compile_program

    out.mkdir(parents=True, exist_ok=True)
    return compile_program(target, elems, 64, out)
