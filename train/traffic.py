"""What the links carried during a run, and what they must carry in theory.

A run is network-bound only if the links are busy and nothing else is: so besides the bytes and
packets every host link carried each way, a measurement has the drops of the shaped queues (TCLink's
HTB: a drop would be a loss the protocols must repair, not a bandwidth cost), the switch process's
CPU time and the machine's CPU use over the same interval.

Theory counts the Ethernet frames a worker's link carries each way per iteration (what HTB meters:
the frame from its destination MAC to its payload's end): the switch and the parameter server send
one UPDATE per E elements of every bucket, plus one per slot used (a float all-reduce's first use
of each slot only announces the exponent of the slot's first chunk: hosts/core.py; its values are
all zeros, so it goes as a ZERO UPDATE, the header alone: docs/protocol.md), and get one RESULT
back for each (the switch's to a use of ZERO UPDATEs is ZERO too; the parameter server's is whole),
every one in its own Ethernet/IPv4/UDP frame with the aggregation header; the ring sends 2 (n - 1) / n of every bucket in
TCP segments of at most 1,448 bytes (MTU 1,500 with TCP timestamps: 66 bytes of headers per segment)
and receives as much; its acknowledgements are left out (a few percent, the measurement shows
them). The parameter server's own link carries every worker's traffic: n times a worker's.
"""

import json
import math
import os
from pathlib import Path

import numpy as np

from ina.p4src.protocol import HEADER_LEN
from ina.sim.frames import TCP_HEADERS, TCP_MSS
from ina.topologies.net import Network

UDP_FRAME = 14 + 20 + 8  # Ethernet, IPv4, UDP headers


def expected_bytes(
    aggregation: str,
    buckets: list[int],
    workers: int,
    elems: int,
    window: int,
    grouped: bool = False,
) -> dict:
    """Bytes of frames per iteration: a worker's link each way ("worker_link") and the busiest link's
    busier direction ("busiest_link"), for float32 buckets of these element counts, all-reduced a
    call each or `grouped` as one (ina.hosts.group: the ring's of their concatenation; the switch's
    and server's each bucket in whole chunks, one window of announcements in all)."""
    if aggregation == "ring" and grouped:
        buckets = [sum(buckets)]
    if aggregation == "ring":
        sent = 0.0
        for size in buckets:
            bounds = np.linspace(0, size, workers + 1).astype(np.int64)
            segment_bytes = 4 * np.diff(bounds)  # each rank sends every segment but one twice
            per_rank = 2 * (segment_bytes.sum() - segment_bytes.mean()) if workers > 1 else 0
            frames = (
                2 * sum(math.ceil(s / TCP_MSS) for s in segment_bytes) * (workers - 1) / workers
            )
            sent += per_rank + frames * TCP_HEADERS
        return {"worker_link": sent, "busiest_link": sent}
    frame, zero = UDP_FRAME + HEADER_LEN + 4 * elems, UDP_FRAME + HEADER_LEN
    chunks = [math.ceil(size / elems) for size in buckets]
    # each all zeros: a ZERO UPDATE, the first use of every slot a call uses
    announcements = min(sum(chunks), window) if grouped else sum(min(c, window) for c in chunks)
    up = sum(chunks) * frame + announcements * zero
    # the switch answers a use of ZERO UPDATEs with a ZERO RESULT; the server with a whole one
    down = up if aggregation == "switch" else up + announcements * (frame - zero)
    return {
        "worker_link": (up + down) / 2,
        "busiest_link": (up if aggregation == "switch" else down)
        * (workers if aggregation == "ps" else 1),
    }


def snapshot(network: Network) -> dict:
    """Counters now: per host link the frames each way and the queues' drops, CPU seconds of the
    switch processes and of the whole machine (busy, total)."""
    links = {}
    for link in network.net.links:
        host, switch = sorted(
            (link.intf1, link.intf2), key=lambda i: i.node in network.net.switches
        )
        links[host.node.name] = {"up": _counters(host), "down": _counters(switch)}
    tick = os.sysconf("SC_CLK_TCK")
    switch_cpu = (
        sum(
            sum(
                map(
                    int,
                    Path(f"/proc/{s.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[11:13],
                )
            )
            for s in network.switches()
            if s.alive()
        )
        / tick
    )
    cpu = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = cpu[3] + cpu[4]
    return {
        "links": links,
        "switch_cpu_s": switch_cpu,
        "machine_busy_s": (sum(cpu) - idle) / tick,
        "machine_s": sum(cpu) / tick,
    }


def _counters(intf) -> dict:
    """Frames sent out of `intf` (bytes, packets) and the drops of its queues, read in its node's
    namespace."""
    stats = json.loads(intf.node.cmd(f"ip -s -j link show dev {intf.name}"))[0]["stats64"]["tx"]
    qdiscs = json.loads(intf.node.cmd(f"tc -s -j qdisc show dev {intf.name}") or "[]")
    return {
        "bytes": stats["bytes"],
        "packets": stats["packets"],
        "drops": stats["dropped"] + sum(q.get("drops", 0) for q in qdiscs),
    }


def difference(before: dict, after: dict) -> dict:
    """What happened between two snapshots."""
    return {
        "links": {
            host: {
                way: {k: after["links"][host][way][k] - v for k, v in counters.items()}
                for way, counters in ways.items()
            }
            for host, ways in before["links"].items()
        },
        **{k: after[k] - before[k] for k in ("switch_cpu_s", "machine_busy_s", "machine_s")},
    }
