"""A simulated network: nodes joined by full-duplex links, each direction a `Channel`.

The network is data plus the channels built from it: which node's port leads where, at what rate,
with what queue and loss. Runners (hosts/inprocess.py: a star, or any topology) move frames through it on one
`Simulator`. Each link direction's loss draws from its own generator, seeded from the run's seed
and the direction's name, so the same seed loses the same frames whatever else the run does.
"""

import random
from dataclasses import dataclass

from ina.sim.events import Simulator
from ina.sim.links import Channel, LinkSpec, loss_model
from ina.sim.nodes import IDEAL_HOST, Host, HostSpec, SwitchNode

Node = Host | SwitchNode


@dataclass(eq=False)
class Link:
    """A link between port `a_port` of `a` and port `b_port` of `b`: `up` carries a -> b, `down` b -> a."""

    a: Node
    a_port: int
    b: Node
    b_port: int
    spec: LinkSpec
    up: Channel
    down: Channel

    @property
    def name(self) -> str:
        return f"{self.a.name}-{self.b.name}"


class Network:
    """Hosts, switches and the links between them, on one simulator and one seed."""

    def __init__(self, sim: Simulator, seed: int = 0, trace: bool = False):
        self.sim, self.seed, self.trace = sim, seed, trace
        self.hosts: list[Host] = []
        self.switches: list[SwitchNode] = []
        self.links: list[Link] = []

    def add_host(self, name: str, spec: HostSpec = IDEAL_HOST) -> Host:
        host = Host(name, spec, self.sim)
        self.hosts.append(host)
        return host

    def add_switch(self, node: SwitchNode) -> SwitchNode:
        self.switches.append(node)
        return node

    def connect(self, a: Node, a_port: int, b: Node, b_port: int, spec: LinkSpec) -> Link:
        """Join two ports with a link of `spec`; a host's end sends at most at its NIC's rate."""
        link = Link(
            a,
            a_port,
            b,
            b_port,
            spec,
            self._channel(a, a_port, b, b_port, spec),
            self._channel(b, b_port, a, a_port, spec),
        )
        for node, port, channel, far, far_port in (
            (a, a_port, link.up, b, b_port),
            (b, b_port, link.down, a, a_port),
        ):
            if isinstance(node, Host):
                node.egress = channel
            else:
                node.egress[port], node.peer[port], node.peer_port[port] = channel, far, far_port
        self.links.append(link)
        return link

    def _channel(
        self, src: Node, src_port: int, dst: Node, dst_port: int, spec: LinkSpec
    ) -> Channel:
        name = f"{src.name}:{src_port}->{dst.name}:{dst_port}"
        rate = min(spec.rate, src.spec.nic_rate) if isinstance(src, Host) else spec.rate
        rng = random.Random(
            f"{self.seed}/{name}"
        )  # a str seed is hashed with SHA-512: the same every run
        return Channel(
            name, rate, spec.delay, spec.queue, spec.ecn, loss_model(spec.loss, rng), self.trace
        )

    @property
    def arrivals(self) -> int:
        """Frames that reached a node (a host or a switch)."""
        return sum(link.up.stats.delivered + link.down.stats.delivered for link in self.links)
