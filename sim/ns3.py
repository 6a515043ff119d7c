"""ina's network model against ns-3: the same UDP frames through a star with a bottleneck port.

A scenario is N senders and one receiver on one switch, every link of one rate and delay, and
UDP frames sent at given times with given sizes, all to the receiver: the switch's port toward it
is the bottleneck where the senders' frames meet and queue. `run_ina` moves them through ina's model
(sim/links.py's channels and a real `SwitchNode` running p4src/aggregate.p4, its MAC forwarding
installed by the controller, pipeline latency 0 as ns-3's router has none); `run_ns3` runs
scripts/ns3_star.py in ns-3's own virtualenv (`make ns3`: `.venv` -> `.venv-ns3`, beside ina's as
p4runtime-shell's is); `compare` sets them side by side per packet. docs/simulation.md ("Against
ns-3") has the mapping between the two and the figures; tests/sim/test_ns3.py and
scripts/ns3_compare.py run it.

Queues are bytes in both, and both count the frames waiting (not the one on the wire), but ns-3's
device counts its packets, each 24 bytes longer than the frame it stands for: a queue of k frames of
F bytes is k x F bytes in ina and k x (F + 24) in ns-3, so drops are compared where the frames that
compete for the queue are of one size.
"""

import json
import math
import socket
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ina.hosts.inprocess import InProcessSwitch
from ina.sim.frames import ETH_IPV4, ipv4_checksum
from ina.sim.links import LinkSpec
from ina.topologies.topo import Host, Topology, build

NS3_STAR = Path(__file__).resolve().parent.parent / "scripts" / "ns3_star.py"
UDP_HEADERS = 14 + 20 + 8  # Ethernet, IPv4, UDP: the smallest frame
RECEIVER = "r"
DEST_PORT = 5000


def ns3_venv() -> Path:
    """ns-3's virtualenv: this interpreter's environment with `-ns3` appended (.venv -> .venv-ns3)."""
    return Path(f"{sys.prefix}-ns3")


def ns3_python() -> Path:
    return ns3_venv() / "bin" / "python"


def ns3_missing() -> str | None:
    """Why ns-3 cannot run here (None: it can): scripts/side_venv.sh stamps a virtualenv once
    everything in it is installed."""
    if not (ns3_venv() / ".ina-installed").exists():
        return f"ns-3 is not installed in {ns3_venv()} (`make ns3` installs it; .ci/run does in CI)"
    return None


@dataclass(frozen=True)
class Scenario:
    """`senders` hosts send `packets` (sender 0..N-1, send time in ns, Ethernet frame bytes without
    FCS) to one receiver through one switch; every link `rate` bit/s and `delay_ns`, every egress
    queue `queue_frames` frames of the largest packet (None: unbounded)."""

    name: str
    senders: int
    rate: int
    delay_ns: int
    queue_frames: int | None
    packets: tuple[tuple[int, int, int], ...]

    @property
    def largest(self) -> int:
        return max(size for _, _, size in self.packets)

    def ns3_request(self) -> dict:
        """The scenario as scripts/ns3_star.py reads it (unbounded: 65,536 frames)."""
        return {
            "name": self.name,
            "senders": self.senders,
            "rate_bps": self.rate,
            "delay_ns": self.delay_ns,
            "queue_frames": self.queue_frames if self.queue_frames is not None else 1 << 16,
            "packets": [list(p) for p in self.packets],
        }


@dataclass(frozen=True)
class Outcome:
    """Each packet's delivery time in ns (None: dropped) and the drops at the bottleneck port."""

    delivered_ns: tuple[float | None, ...]
    bottleneck_drops: int


def star(senders: int) -> Topology:
    """Hosts h1..hN and the receiver on one switch s1 (ports 1..N, then N + 1)."""
    hosts = [f"h{i}" for i in range(1, senders + 1)] + [RECEIVER]
    return build(
        {
            "name": "ns3-star",
            "switches": {"s1": {}},
            "hosts": hosts,
            "links": [[h, "s1"] for h in hosts],
        }
    )


def udp_frame(src: Host, dst: Host, size: int, index: int) -> bytes:
    """An Ethernet/IPv4/UDP frame of `size` bytes from `src` to `dst`, its payload led by `index`."""
    payload = index.to_bytes(4, "big").ljust(size - UDP_HEADERS, b"\0")[: size - UDP_HEADERS]
    udp = struct.pack("!HHHH", DEST_PORT, DEST_PORT, 8 + len(payload), 0)
    ip = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        0,
        20 + len(udp) + len(payload),
        0,
        0,
        64,
        socket.IPPROTO_UDP,
        0,
        socket.inet_aton(src.ip),
        socket.inet_aton(dst.ip),
    )
    ip = ip[:10] + struct.pack("!H", ipv4_checksum(ip)) + ip[12:]
    mac = bytes.fromhex(dst.mac.replace(":", "") + src.mac.replace(":", ""))
    return mac + ETH_IPV4 + ip + udp + payload


def run_ina(scenario: Scenario) -> Outcome:
    """The scenario in ina's model: each frame into its sender's egress channel at its time, through
    the switch's program (MAC forwarding) into the egress of the port it chose, to the receiver."""
    topo = star(scenario.senders)
    queue = math.inf if scenario.queue_frames is None else scenario.queue_frames * scenario.largest
    link = LinkSpec(rate=scenario.rate, delay=scenario.delay_ns * 1e-9, queue=queue)
    delivered: list[float | None] = [None] * len(scenario.packets)
    with InProcessSwitch(topology=topo, link=link) as net:
        sim, node = net.sim, net.node
        hosts = {host.name: host for host in net.network.hosts}
        receiver = hosts[RECEIVER]
        switch = topo.switches["s1"]
        bottleneck = node.egress[switch.hosts[RECEIVER]]

        def reach(when: float, index: int) -> None:
            delivered[index] = when * 1e9

        def at_switch(when: float, port: int, frame: bytes, index: int) -> None:
            for out_port, out_frame in node.process(when, port, frame):
                arrival = node.egress[out_port].send(when + node.pipeline, out_frame)
                if arrival is not None and node.peer[out_port] is receiver:
                    sim.at(arrival, reach, index)

        def send(when: float, name: str, frame: bytes, index: int) -> None:
            arrival = hosts[name].egress.send(when, frame)
            if arrival is not None:
                sim.at(arrival, at_switch, switch.hosts[name], frame, index)

        for index, (sender, at_ns, size) in enumerate(scenario.packets):
            name = f"h{sender + 1}"
            sim.at(
                at_ns * 1e-9,
                send,
                name,
                udp_frame(topo.hosts[name], topo.hosts[RECEIVER], size, index),
                index,
            )
        sim.run()
    return Outcome(tuple(delivered), bottleneck.stats.dropped)


def run_ns3(scenarios: list[Scenario], python: Path | None = None) -> tuple[str, list[Outcome]]:
    """The scenarios in ns-3 (one process: loading ns-3 takes tens of seconds): its version and an
    outcome per scenario. Raises RuntimeError with ns-3's error output when the script fails."""
    request = json.dumps({"scenarios": [s.ns3_request() for s in scenarios]})
    done = subprocess.run(
        [str(python or ns3_python()), str(NS3_STAR)],
        input=request,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"scripts/ns3_star.py failed ({done.returncode}): {done.stderr.strip()[-2000:]}"
        )
    answer = json.loads(done.stdout)
    return answer["ns3"], [
        Outcome(tuple(r["delivered_ns"]), r["bottleneck_drops"]) for r in answer["scenarios"]
    ]


@dataclass(frozen=True)
class Comparison:
    """One scenario in both: packets, drops in each, packets dropped by one and not the other, and
    over the packets both delivered the largest difference in delivery time (ns) and relative to
    the packet's time in flight in ns-3 (delivery - send)."""

    name: str
    packets: int
    ina_drops: int
    ns3_drops: int
    drops_differ: int
    max_diff_ns: float
    max_relative: float


def compare(scenario: Scenario, ina: Outcome, ns3: Outcome) -> Comparison:
    both = [
        (sent, a, b)
        for (_, sent, _), a, b in zip(
            scenario.packets, ina.delivered_ns, ns3.delivered_ns, strict=True
        )
        if a is not None and b is not None
    ]
    differ = sum(
        (a is None) != (b is None) for a, b in zip(ina.delivered_ns, ns3.delivered_ns, strict=True)
    )
    return Comparison(
        scenario.name,
        len(scenario.packets),
        ina.bottleneck_drops,
        ns3.bottleneck_drops,
        differ,
        max((abs(a - b) for _, a, b in both), default=0.0),
        max((abs(a - b) / (b - sent) for sent, a, b in both), default=0.0),
    )


def trains(
    senders: int, frames: int, size: int, period_ns: int, skew_ns: int
) -> tuple[tuple[int, int, int], ...]:
    """`frames` frames of `size` bytes from each sender, one every `period_ns`, sender i starting
    `skew_ns` x i after 1 us. Chosen so that no frame reaches the switch at the instant another
    starts leaving its queue: at such a tie ina lets the leaving frame go first, ns-3 runs
    whichever of its two events was scheduled first."""
    return tuple(
        (i, 1000 + skew_ns * i + k * period_ns, size) for k in range(frames) for i in range(senders)
    )


def paced(senders: int, sizes: tuple[int, ...], gap_ns: int) -> tuple[tuple[int, int, int], ...]:
    """One frame every `gap_ns`, senders in turn, sizes in turn: with a gap longer than twice the
    largest frame's time on the wire (the switch stores a frame whole, then forwards it) no frame
    waits for another."""
    return tuple(
        (k % senders, 1000 + k * gap_ns, sizes[k % len(sizes)]) for k in range(4 * len(sizes))
    )


GBPS = 10**9
SCENARIOS = (
    # Every frame alone on the wire: delivery = send + 2 x (serialization + delay); sizes padded
    # (42), minimal (60), the aggregation protocol's (318) and a full MTU (1514).
    Scenario("uncongested", 4, GBPS, 1000, None, paced(4, (42, 60, 318, 1000, 1514), 30_000)),
    # 4 senders each hand 8 frames to their NIC at once (318, 700, 1000 and 1514 bytes, 113 ns
    # apart): they queue at the NICs, then again at the bottleneck; the last waits 210 us in all.
    Scenario(
        "queueing",
        4,
        GBPS,
        1000,
        None,
        tuple(
            (i, 1000 + 113 * i, size)
            for i, size in enumerate((318, 700, 1000, 1514))
            for _ in range(8)
        ),
    ),
    # 4 senders at 0.9 of the line rate each into a queue of 10 frames of 1000 bytes: the queue
    # fills, then drop-tail takes what does not fit.
    Scenario("dropping", 4, GBPS, 1000, 10, trains(4, 24, 1000, 9101, 97)),
    # 3 senders of full frames at 0.92 of 100 Mbit/s, 10 us links, a queue of 5.
    Scenario("dropping-100M", 3, GBPS // 10, 10_000, 5, trains(3, 16, 1514, 133_337, 1031)),
)
