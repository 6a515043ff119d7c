"""The host parameter server on the simulated links: hosts/baseline.py's `ServerCore` (the same
per-packet logic `ina run --baseline` runs on a socket) on one more host of the topology, on its
first switch, with the workers' real `AllReduceCore`s sending to it instead of their aggregator.
The switches only forward (by MAC). The server's host has the workers' `HostSpec`: each datagram
it takes costs its CPU `recv_cost`, each answer it sends `send_cost` (one per worker for a
RESULT), so a server that cannot keep up with N workers' traffic sets the pace, as does its one
link, which carries N times a worker's.
"""

from collections.abc import Callable

from ina.hosts.baseline import ServerCore
from ina.hosts.inprocess import FRAME_HEADERS, InProcessSwitch
from ina.p4src.protocol import SYNC, UDP_PORT
from ina.sim.allreduce import AllReduceConfig, AllReduceResult, simulate
from ina.sim.frames import udp_headers, udp_source
from ina.topologies.topo import Topology


class ServerRefused(ValueError):
    """A configuration the parameter server cannot serve; the message says why."""


def refusal(config: AllReduceConfig) -> str | None:
    """Why the parameter server cannot run `config`, or None: it serves one job under the sync policy."""
    if config.policy != SYNC:
        return f"the parameter server runs the sync policy only, not {config.policy}"
    if len(config.plain_topology().jobs) != 1:
        return "the parameter server serves one job (as ina run --baseline)"
    return None


class ServerHost:
    """A `ServerCore` on a simulated host: frames in through its CPU, answers out on its link."""

    def __init__(
        self,
        net: InProcessSwitch,
        name: str,
        address: tuple[str, str, int],
        core: ServerCore,
        macs: dict[str, str],
    ):
        """`core` on host `name` at `address` (MAC, IPv4, UDP port), answering the workers whose
        MACs `macs` gives by IPv4 address."""
        self.address, self.core, self.macs = address, core, macs
        self.sim = net.sim
        self.cpu = next(h for h in net.network.hosts if h.name == name).cpu
        self._send = net.attach(name, self.arrive)

    @classmethod
    def for_topology(cls, net: InProcessSwitch, topo: Topology) -> "ServerHost":
        """The parameter server of the topology's one job, on its extra host."""
        job = topo.jobs[0]
        host = topo.hosts[topo.extra_host]
        return cls(
            net,
            topo.extra_host,
            (host.mac, host.ip, UDP_PORT),
            ServerCore(job.id, len(job.workers), job.epoch, net.elems),
            {topo.hosts[w].ip: topo.hosts[w].mac for w in job.workers},
        )

    def arrive(self, when: float, frame: bytes) -> None:
        """A frame reached the server's host: its CPU takes it in turn."""
        self.cpu.run(when, self.cpu.recv_cost, self._handle, frame)

    def _handle(self, now: float, frame: bytes) -> None:
        self.sim.now = now
        for answer, (ip, port) in self.core.handle(frame[FRAME_HEADERS:], udp_source(frame)):
            leaves = self.cpu.depart(now)
            self._send(
                leaves, udp_headers(self.address, (self.macs[ip], ip, port), len(answer)) + answer
            )


def simulate_ps(
    config: AllReduceConfig,
    engine: str = "native",
    watch: Callable[[InProcessSwitch], None] | None = None,
) -> tuple[AllReduceResult, dict[str, int]]:
    """The configuration's all-reduce through the parameter server (`watch` as `simulate`'s); the
    result and the server's counters. Raises ServerRefused for what it cannot serve (`refusal`)."""
    problem = refusal(config)
    if problem:
        raise ServerRefused(problem)
    servers: list[ServerHost] = []
    result = simulate(
        config,
        engine,
        server=lambda net, topo: servers.append(ServerHost.for_topology(net, topo)),
        watch=watch,
    )
    return result, servers[0].core.stats
