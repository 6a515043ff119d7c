"""Worker cores against a real switch in one process, in virtual time, with chosen losses.

Each job's workers are AllReduceCores (ina.hosts.core); the switch is a real `Switch` running
p4src/aggregate.p4, programmed by the real controller (`Aggregation`) over an in-process P4Runtime
server. Time is virtual: the simulator's event core (ina.sim.events) runs the next event (a frame
reaching the switch or a worker, or a core's deadline), and the switch's clock reads it
(Switch.set_clock: a job's timeout passes in virtual microseconds), so a run is deterministic and
every count exact, whatever the machine's load. The network is ina.sim's model, a star: each
worker is a host on a switch port of its own, joined by a link (`LinkSpec`: rate, propagation
delay, queues, ECN threshold, loss; by default unlimited rate with a fixed one-way `latency`, so
every hop takes exactly that) and with a NIC and CPU costs (`HostSpec`). Each worker datagram
travels in the Ethernet/IPv4/UDP frame its admission entry names (a rank may be given an extra
delay); each RESULT or STATUS frame's UDP payload goes to the worker on the port it leaves by,
with the frame's source address and port, if the frame is addressed to that worker (as its host's
stack would check). Loss rules see every datagram as a `Datagram` when it leaves its sender and
drop chosen UPDATEs, RESULT copies and STATUS answers, or a seeded random share, before the link's
own loss.

Given a `Topology` (ina.topologies.topo: a star, leaf-spine or fat-tree, one or many jobs) the
harness builds it instead: every switch a `Switch` with its own in-process P4Runtime server, all
programmed by the controller's topology setup exactly as `ina run` programs Mininet's (forwarding,
floods, each job on its tree's switches: topologies/tree.py), every host a worker of its job sending
to its tree's leaf with its rank there, every link of `link`; frames
cross the fabric hop by hop, each switch sending on the port its program chose. Loss rules judge an
UPDATE when it leaves its worker and a RESULT or STATUS copy when it leaves the last switch for
the worker (on a star: when it leaves the switch).

Tests, benches and `ina sim` (ina.sim.allreduce) drive it:

    lost = Drop(UPDATE, job=0, rank=1, slot=2, use=1, transmission=0)  # its first copy only
    with InProcessSwitch(elems=8, loss=[lost]) as net:
        cores = net.add_job(0, n_workers=3, window=4, policy=Policy(quorum=2))
        results = net.allreduce({0: arrays})    # {job: [sum per rank]}
        net.stats()                            # the switch's counters, through the controller
"""

import dataclasses
import functools
import math
import random
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import grpc
import numpy as np
from mypy_extensions import mypyc_attr

from ina.compiler import CompileResult, compile_file
from ina.controller.aggregation import Aggregation, Fallback, Job
from ina.controller.aggregation import Worker as WorkerEntry
from ina.controller.allocators import Allocator
from ina.controller.client import SwitchConnection
from ina.hosts.core import MIN_RTO, AllReduceCore
from ina.hosts.packets import parse_header
from ina.p4src import AGGREGATE_P4, aggregate_defines
from ina.p4src.protocol import (
    HEADER_LEN,
    MAX_PORT,
    MSG_RESULT,
    SYNC,
    UDP_PORT,
    Policy,
    slot_of,
)
from ina.sim.events import Simulator
from ina.sim.frames import ETH_IPV4, udp_headers
from ina.sim.links import LinkSpec
from ina.sim.network import Link, Network, Node
from ina.sim.nodes import IDEAL_HOST, Cpu, Host, HostSpec, SwitchNode
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve
from ina.topologies.topo import Topology
from ina.topologies.topology_setup import program_topology
from ina.topologies.tree import job_tree

SWITCH_MAC, SWITCH_IP = "02:aa:00:00:00:01", "10.0.0.254"
MAX_RETRIES = 12  # a worker's default retransmissions of one packet before it gives up
UPDATE, RESULT, STATUS = (
    "update",
    "result",
    "status",
)  # a Datagram's kind: worker -> switch, switch -> worker
FRAME_HEADERS = 14 + 20 + 8  # Ethernet, IPv4 without options, UDP
_SWITCH_SOURCE = (
    SWITCH_IP,
    UDP_PORT,
)  # what a worker's stack reports as the sender of the switch's frames
_SWITCH_IP_PORT = (
    socket.inet_aton(SWITCH_IP),
    UDP_PORT.to_bytes(2, "big"),
)  # ... as the frames carry it


class Datagram(NamedTuple):
    """What a loss rule sees of one datagram."""

    direction: str  # UPDATE, RESULT or STATUS
    job: int
    rank: int  # the sender of an UPDATE, the receiver of a RESULT copy or STATUS
    slot: int
    pool_set: int
    use: int  # the header's round: the use of the slot since the job's epoch began (a STATUS: the switch's)
    transmission: int  # 0 for the first copy of (direction, job, rank, slot, use), then 1, 2, ...


@mypyc_attr(native_class=False)  # compiled too, it stays picklable: see ina/compiled.py
@dataclass(frozen=True)
class Drop:
    """Drops every datagram whose given fields match (None matches anything)."""

    direction: str | None = None
    job: int | None = None
    rank: int | None = None
    slot: int | None = None
    pool_set: int | None = None
    use: int | None = None
    transmission: int | None = None

    def __call__(self, d: Datagram) -> bool:
        return all(
            want is None or want == got
            for want, got in zip(
                (
                    self.direction,
                    self.job,
                    self.rank,
                    self.slot,
                    self.pool_set,
                    self.use,
                    self.transmission,
                ),
                d,
                strict=True,
            )
        )


class RandomLoss:
    """Drops each UPDATE with probability `update` and each RESULT copy with `result`, from one seeded
    generator: the same seed and traffic drop the same datagrams."""

    def __init__(self, update: float, result: float, seed: int):
        self.update, self.result, self.rng = update, result, random.Random(seed)

    def __call__(self, d: Datagram) -> bool:
        return self.rng.random() < (self.update if d.direction == UPDATE else self.result)


@dataclass(eq=False)
class Member:
    """One worker of a job: its cores (one per staleness group of `group` slots), its host and link
    to its switch, and what its frames carry."""

    rank: int  # in its job (its index in the job's workers; on a star, also the wire's)
    cores: list[AllReduceCore]
    group: int
    entry: (
        WorkerEntry  # its switch's port toward it, MAC, IPv4 address, UDP port: its admission entry
    )
    frame_header: bytes  # the Ethernet/IPv4/UDP headers of its UPDATE frames
    host: Host
    link: Link  # up: host -> switch, down: switch -> host
    switch: SwitchNode  # the switch its link leads to (on a star, the aggregator)
    port: int  # that switch's port for it
    delay: float = 0.0  # added to its UPDATEs' way to the switch
    zero_frame_header: bytes = b""  # ... of its ZERO UPDATEs (the aggregation header alone)
    calls: int = 0  # all-reduces started: call t runs on core t mod len(cores), as a Worker does
    timer_at: list[float] = field(
        default_factory=list
    )  # per core, its earliest timer event in the queue
    address: tuple[bytes, bytes, bytes] = field(
        init=False
    )  # its MAC, IPv4 address and UDP port as frames carry them

    def __post_init__(self) -> None:
        self.address = (
            bytes.fromhex(self.entry.mac.replace(":", "")),
            socket.inet_aton(self.entry.ip),
            self.entry.udp_port.to_bytes(2, "big"),
        )

    @property
    def core(self) -> AllReduceCore:
        """The first group's core: a job without staleness has no other."""
        return self.cores[0]


class Arrivals:
    """Frames (port, frame) reaching one switch at one instant, queued one after another: one
    event runs them in that order, through one call into the switch's program. Nothing can come
    between events queued in a row for one time, so the run is the same as with an event each
    (which `Simulator.scheduled` still counts). `open` until the event starts: a frame that comes
    after needs an event of its own."""

    __slots__ = ("frames", "node", "open")

    def __init__(self, node: SwitchNode, frames: list[tuple[int, bytes]]):
        self.node, self.frames, self.open = node, frames, True


@functools.cache
def program(elems: int, pool_size: int, bits: int = 32) -> CompileResult:
    return compile_file(AGGREGATE_P4, defines=aggregate_defines(elems, pool_size, bits))


def update_frame_header(
    entry: WorkerEntry, payload_len: int, switch_mac: str = SWITCH_MAC, switch_ip: str = SWITCH_IP
) -> bytes:
    """Ethernet (to the aggregating switch's MAC), IPv4 (TTL 64, to its IP) and UDP (to UDP_PORT)
    headers of a worker's UPDATEs; UPDATEs all have one length, so every frame of a worker shares them."""
    src, dst = (entry.mac, entry.ip, entry.udp_port), (switch_mac, switch_ip, UDP_PORT)
    return udp_headers(src, dst, payload_len)


class InProcessSwitch:
    """A switch (or a topology's switches), the controller and any number of jobs' worker cores on
    one virtual clock.

    `engine` is the Switch's ("native" or "python"). Every worker's link is `link` (ina.sim.links:
    rate, delay, queue, ECN threshold, loss, seeded from `seed`), or, without one, of unlimited
    rate with `latency` virtual seconds one way: every hop then takes exactly `latency`. `host` is
    every worker host's NIC rate and CPU costs (`hosts`: a topology's hosts that differ, by name),
    `pipeline` the switch's per-frame latency. `loss` rules drop a datagram when any of them returns
    True (`dropped` lists what they dropped; `sent`
    every datagram with the virtual time it left, so tests can tell when a loss was repaired and how
    resends were spaced; `record=False` keeps no `sent`, for long runs). `network` has every link's
    counters; `on_finished(member, core)`, if set, is called after a datagram reaches a core whose
    call has every result (a workload's next step starts then: sim/workload.py). Without a
    `topology` the network is a star whose jobs `add_job` adds; with one, the topology's switches,
    links and jobs (every job's workers with first RTO `timeout`; `jobs` has them). `server` names a
    topology host the workers send to instead of their aggregator (a host parameter server, whose
    endpoint `attach` gives it). `min_rto` is every worker's RTO floor (hosts/core.py: a host's by
    default). Use it as a context manager, or call close().
    """

    def __init__(
        self,
        elems: int = 8,
        pool_size: int = 256,
        engine: str = "native",
        latency: float = 10e-6,
        loss: Sequence[Callable[[Datagram], bool]] = (),
        link: LinkSpec | None = None,
        host: HostSpec = IDEAL_HOST,
        pipeline: float = 0.0,
        seed: int = 0,
        record: bool = True,
        trace: bool = False,
        topology: Topology | None = None,
        timeout: float = 1e-3,
        server: str | None = None,
        min_rto: float = MIN_RTO,
        hosts: Mapping[str, HostSpec] | None = None,
        allocator: Allocator | None = None,
        bits: int = 32,
    ):
        self.elems, self.loss, self.min_rto = elems, list(loss), min_rto
        self.bits = bits  # the switch's lane width (-DLANE_BITS) and its workers'
        self.link = LinkSpec(delay=latency) if link is None else link
        self.host_spec = host
        self.host_specs = dict(
            hosts or {}
        )  # a topology's hosts that differ from `host` (a slow host), by name
        self.sim = Simulator()
        self.network = Network(self.sim, seed, trace)
        self.jobs: dict[int, list[Member]] = {}
        self.dropped: list[Datagram] = []
        self.sent: list[tuple[float, Datagram]] = []
        self.stray: list[tuple[int, bytes]] = []  # frames out of a switch port that no worker takes
        self._record = record
        self._judged = record or bool(
            self.loss
        )  # every datagram numbered (and logged) as it leaves
        self._members: dict[Node | None, Member] = {}  # by host
        # (host, a frame's Ethernet/IPv4/UDP headers) -> the worker there that takes the frame and
        # the source its stack reports, or None: the headers decide both, and a run has few
        self._deliveries: dict[
            tuple[Node | None, bytes], tuple[Member, tuple[str, int]] | None
        ] = {}
        self._copies: dict[
            tuple[str, int, int, int, int], int
        ] = {}  # (direction, job, rank, slot, use) -> sent
        self._servers: dict[str, grpc.Server] = {}  # switch name -> its P4Runtime server
        self._endpoints: dict[
            Node | None, Callable[[float, bytes], None]
        ] = {}  # `attach`ed receivers by host
        self._host_links: dict[
            str, Link
        ] = {}  # a topology's host -> its link (host at the `a` end)
        self._server = server
        self._conn: SwitchConnection | None = None
        self.on_finished: Callable[[Member, AllReduceCore], None] | None = (
            None  # a core got its last result
        )
        compiled = program(elems, pool_size, bits)
        try:
            if topology is None:
                self.node = self._add_switch("s1", engine, pipeline)
                self._conn = SwitchConnection(self._address("s1"), election_id=1)
                self._conn.set_pipeline(compiled.bmv2, compiled.p4info)
                self.controller = Aggregation(self._conn, allocator)
                self.controller.set_switch_address(SWITCH_MAC, SWITCH_IP)
            else:
                self._build(topology, engine, pipeline, compiled, timeout, allocator)
        except BaseException:
            self.close()  # no server outlives a harness that failed to start
            raise

    def __enter__(self) -> "InProcessSwitch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        for server in self._servers.values():
            server.stop(None)

    @property
    def switch(self) -> Switch:
        """The star's switch (a topology's first job's aggregator)."""
        return self.node.switch

    @property
    def now(self) -> float:
        """The virtual time of the last thing that happened."""
        return self.sim.now

    def _add_switch(self, name: str, engine: str, pipeline: float) -> SwitchNode:
        """A switch node with its own P4Runtime server on a free local port."""
        switch = Switch(engine=engine)
        lock = threading.Lock()  # the P4Runtime server's threads share the switch
        self._servers[name] = serve(P4RuntimeService(switch, lock), "127.0.0.1:0")
        return self.network.add_switch(SwitchNode(name, switch, lock, pipeline))

    def _address(self, name: str) -> str:
        return f"127.0.0.1:{self._servers[name].bound_port}"

    def _build(
        self,
        topo: Topology,
        engine: str,
        pipeline: float,
        compiled: CompileResult,
        timeout: float,
        allocator: Allocator | None = None,
    ) -> None:
        """The topology's switches, hosts and links, programmed as `ina run` programs them, and a
        member per worker of each job."""
        switches = {name: self._add_switch(name, engine, pipeline) for name in topo.switches}
        self.node = (
            switches[topo.jobs[0].aggregator] if topo.jobs else next(iter(switches.values()))
        )
        nodes: dict[str, Host | SwitchNode] = dict(switches)
        nodes.update(
            (name, self.network.add_host(name, self.host_specs.get(name, self.host_spec)))
            for name in topo.hosts
        )
        links = {}
        for link in topo.links:
            a, b = nodes[link.a], nodes[link.b]
            links[link.a if link.a in topo.hosts else link.b] = self.network.connect(
                a, link.ports.get(link.a, 0), b, link.ports.get(link.b, 0), self.link
            )
        self._host_links = links
        installed = program_topology(
            topo.with_grpc({n: self._address(n) for n in topo.switches}),
            compiled.bmv2,
            compiled.p4info,
            allocator=allocator,
        )
        entries = {(name, job.job_id): job for name, jobs in installed.items() for job in jobs}
        for job in topo.jobs:
            tree = job_tree(topo, job)
            self.jobs[job.id] = []
            for rank, name in enumerate(job.workers):
                leaf, wire_rank = tree.endpoints[name]
                entry = entries[leaf, job.id].workers[wire_rank]
                target = topo.hosts[self._server] if self._server else topo.switches[leaf]
                self.jobs[job.id].append(
                    self._member(
                        job.id,
                        rank,
                        # a parameter server knows the job's workers by their rank in the job
                        dataclasses.replace(entry, rank=rank) if self._server else entry,
                        # the workers its switch sums (its leaf's; a server sums the whole job)
                        len(job.workers) if self._server else len(entries[leaf, job.id].workers),
                        len(job.workers),
                        entries[tree.root, job.id].epoch,
                        job.slots,
                        job.policy,
                        timeout,
                        MAX_RETRIES,
                        0.0,
                        links[name],
                        (target.mac, target.ip),
                    )
                )

    def _member(
        self,
        job_id: int,
        rank: int,
        entry: WorkerEntry,
        n_workers: int,
        job_workers: int,
        epoch: int,
        window: int,
        policy: Policy,
        timeout: float,
        max_retries: int,
        delay: float,
        link: Link,
        switch: tuple[str, str] = (SWITCH_MAC, SWITCH_IP),
        fallback: tuple[str, int] | None = None,
    ) -> Member:
        """A worker of rank `rank` in its job on `link`'s host (its `a` end), with a core per
        staleness group, sending as `entry.rank` (its rank at its switch: the wire's) to the
        aggregating switch at `switch` (MAC, IPv4 address)."""
        groups = policy.staleness + 1
        group = window // groups
        cores = [
            AllReduceCore(
                job_id,
                entry.rank,
                n_workers,
                epoch,
                self.elems,
                group,
                timeout,
                max_retries,
                (switch[1], UDP_PORT),
                base=g * group,
                min_rto=self.min_rto,
                job_workers=job_workers,
                fallback=fallback,
                bits=self.bits,
            )
            for g in range(groups)
        ]
        host, aggregator = link.a, link.b
        assert isinstance(host, Host) and isinstance(aggregator, SwitchNode)  # a worker's link
        member = Member(
            rank,
            cores,
            group,
            entry,
            update_frame_header(entry, cores[0].datagram_size, *switch),
            host,
            link,
            aggregator,
            link.b_port,
            delay,
            zero_frame_header=update_frame_header(entry, HEADER_LEN, *switch),
            timer_at=[math.inf] * groups,
        )
        self._members[link.a] = member
        return member

    def add_job(
        self,
        job_id: int,
        n_workers: int,
        window: int,
        num_slots: int | None = None,
        epoch: int | None = None,
        timeout: float | Sequence[float] = 1e-3,
        max_retries: int = MAX_RETRIES,
        policy: Policy = SYNC,
        delays: dict[int, float] | None = None,
        fallback: Fallback | None = None,
    ) -> list[AllReduceCore]:
        """Install a job with its completion `policy` through the controller (num_slots defaults to
        the window; epoch to a fresh random one) and make its workers, each a host on a switch port
        of its own; `timeout` is every worker's, or one per rank; `delays` adds virtual seconds to
        chosen ranks' UPDATEs (a straggler). Under the policy's staleness S each worker has S + 1
        cores, on groups of window // (S + 1) slots, as a Worker does. Returns the (first) cores by
        rank. With a host `fallback` server (best effort: its host is `add_host`'s) the job may get
        fewer slots than `num_slots` (the window shrinks to them) or share them. A star's alone (a
        topology's jobs come with it)."""
        if self._conn is None:
            raise ValueError(
                "add_job builds a star's jobs; a topology's come with it (InProcessSwitch(topology=...))"
            )
        timeouts = [timeout] * n_workers if isinstance(timeout, float | int) else list(timeout)
        first_port = 1 + len(self.network.hosts)
        if first_port + n_workers - 1 > MAX_PORT:
            raise ValueError(
                f"the switch has ports 1..{MAX_PORT} for workers; {n_workers} more do not fit"
            )
        entries = [
            WorkerEntry(
                rank,
                first_port + rank,
                f"02:00:00:00:{job_id:02x}:{rank:02x}",
                f"10.1.{job_id}.{rank + 1}",
            )
            for rank in range(n_workers)
        ]
        job = self.controller.add_job(
            job_id, entries, num_slots or window, epoch, policy, fallback=fallback
        )
        window = min(window, job.num_slots)
        members = []
        for entry, worker_timeout in zip(entries, timeouts, strict=True):
            host = self.network.add_host(f"h{entry.port}", self.host_spec)
            link = self.network.connect(host, 0, self.node, entry.port, self.link)
            members.append(
                self._member(
                    job_id,
                    entry.rank,
                    entry,
                    n_workers,
                    n_workers,
                    job.epoch,
                    window,
                    policy,
                    worker_timeout,
                    max_retries,
                    (delays or {}).get(entry.rank, 0.0),
                    link,
                    fallback=None if fallback is None else (fallback.ip, fallback.udp_port),
                )
            )
        self.jobs[job_id] = members
        return [m.core for m in members]

    def resume(self, job_id: int, job: Job, server: tuple[str, str] | None = None) -> None:
        """The job's workers start a new run as the controller now holds it (`job`: after a move,
        its fresh epoch, and its slots bounding their window): docs/protocol.md, "Moving a job's
        range"; or, given a `server` (MAC, IPv4 address: its host fallback server's, after a
        preemption took all its slots), with `job`'s epoch through that server as their aggregator.
        Their calls in flight must have finished (the drain)."""
        self.jobs[job_id] = [
            self._member(
                job_id,
                m.rank,
                m.entry,
                m.core.n_workers,
                m.core.job_workers,
                job.epoch,
                min(m.group * len(m.cores), job.num_slots),
                job.policy,
                m.core.timeout,
                m.core.max_retries,
                m.delay,
                m.link,
                server or (SWITCH_MAC, SWITCH_IP),
                None if server else m.core.fallback,
            )
            for m in self.jobs[job_id]
        ]
        self._deliveries.clear()  # it remembers the old members

    def add_host(self, name: str, port: int) -> None:
        """One more host of the star, on switch `port` (a job's host fallback server), for `attach`."""
        host = self.network.add_host(name, self.host_spec)
        self._host_links[name] = self.network.connect(host, 0, self.node, port, self.link)

    def attach(
        self, host: str, receive: Callable[[float, bytes], None]
    ) -> Callable[[float, bytes], None]:
        """An endpoint on a topology's `host` beside (or instead of) its worker core, for a baseline's
        transport or server: every frame a switch sends to the host that no worker core takes is
        given to `receive(time, frame)` when it arrives. Returns `send(time, frame)`, which puts a
        frame on the host's link at `time` (calls in time order) toward its switch."""
        link = self._host_links[host]
        self._endpoints[link.a] = receive
        switch = link.b
        assert isinstance(switch, SwitchNode)  # a host's link leads to its switch

        def send(when: float, frame: bytes) -> None:
            arrival = link.up.send(when, frame)
            if arrival is not None:
                self._to_switch(arrival, switch, link.b_port, frame)

        return send

    def stats(self, switch: str | None = None) -> dict[str, dict[int, dict[str, int]]]:
        """A switch's non-zero counters (the star's, or the named one's), read by the controller
        (Aggregation.stats)."""
        if switch is None and self._conn is not None:
            return self.controller.stats()
        with SwitchConnection(self._address(switch or self.node.name), election_id=None) as conn:
            return Aggregation(conn).stats()

    def allreduce(self, arrays: dict[int, Sequence[np.ndarray]]) -> dict[int, list[np.ndarray]]:
        """Run the all-reduce of `arrays[job][rank]` for the given jobs at once, until every core has
        its result and no frame is in flight; returns each rank's result per job. A core's
        WorkerError (max_retries) propagates."""
        cores = {
            job_id: [self.start(job_id, rank, array) for rank, array in enumerate(job_arrays)]
            for job_id, job_arrays in arrays.items()
        }
        self.run()
        return {
            job_id: [core.result() for core in job_cores] for job_id, job_cores in cores.items()
        }

    def start(self, job_id: int, rank: int, array: np.ndarray) -> AllReduceCore:
        """Begin one rank's all-reduce of `array` now, on its own: ranks need not run their calls
        together (a straggler a call or two behind the others), and under staleness a rank's calls
        overlap (each on the next group's core, whose previous call must have finished). `run` runs
        it; the core (returned) says when it finished and what it got."""
        member = self.jobs[job_id][rank]
        core = member.cores[member.calls % len(member.cores)]
        member.calls += 1
        self._transmit(member, core, core.start(array, self.sim.now))
        return core

    def run(self, until: Callable[[], bool] | None = None) -> None:
        """Run events until `until()` holds (checked after each) or none is left."""
        self.sim.run(until)

    # --- events -----------------------------------------------------------------------------
    def _transmit(self, member: Member, core: AllReduceCore, datagrams: list[bytearray]) -> None:
        """A core's datagrams through its host's CPU onto its link (unless a rule drops them), then
        its timer at its new deadline."""
        now, cpu, uplink, at = self.sim.now, member.host.cpu, member.link.up, self.sim.at
        for data in datagrams:
            leaves = cpu.depart(now)
            if self._judged and self._lost(UPDATE, data, member.rank, leaves):
                continue
            header = member.zero_frame_header if len(data) == HEADER_LEN else member.frame_header
            frame = header + data
            arrival = uplink.send(leaves, frame)
            if arrival is not None:
                self._to_switch(arrival + member.delay, member.switch, member.port, frame)
        cores = member.cores
        group = 0 if len(cores) == 1 else cores.index(core)
        deadline = max(core.deadline, now)  # an overdue deadline: expire at once
        if deadline < member.timer_at[group]:
            member.timer_at[group] = deadline
            at(deadline, self._timer, member, group)

    def _timer(self, when: float, member: Member, group: int) -> None:
        """A core's deadline, unless an earlier timer superseded this one or the core's deadline moved
        later (then wait for that) or away (finished: the clock does not advance for it)."""
        if member.timer_at[group] != when:
            return
        member.timer_at[group] = math.inf
        deadline = member.cores[group].deadline
        if when < deadline < math.inf:
            member.timer_at[group] = deadline
            self.sim.at(deadline, self._timer, member, group)
        elif when >= deadline:
            member.host.cpu.run(when, 0.0, self._expire, member, group)

    def _expire(self, now: float, member: Member, group: int) -> None:
        self.sim.now = now
        core = member.cores[group]
        self._transmit(member, core, core.expire(now))

    def _to_switch(self, arrival: float, node: SwitchNode, port: int, frame: bytes) -> None:
        """A frame will reach a switch's `port` at `arrival`: an event, or one more frame of the
        event queued last for that instant if that is the switch's and has not run (`Arrivals`)."""
        sim = self.sim
        last = sim.last(arrival)
        if last:
            batch = last[0]
            if isinstance(batch, Arrivals) and batch.node is node and batch.open:
                batch.frames.append((port, frame))
                sim.joined()
                return
        sim.at(arrival, self._at_switch, Arrivals(node, [(port, frame)]))

    def _at_switch(self, when: float, arrivals: Arrivals) -> None:
        """Frames reach a switch: each frame the program sends for each of them, in order, goes
        into its output port's egress, on to the next switch, or to the worker on that port if it
        takes it (else it is stray). Copies that reach their workers at one instant, queued one
        after another (a multicast over like links), are one event running them in that order:
        nothing can come between events queued in a row for one time, so the run is the same,
        with fewer events."""
        self.sim.now = when
        arrivals.open = False
        node = arrivals.node
        leaves, at, deliveries = when + node.pipeline, self.sim.at, self._deliveries
        for sent in node.process_all(when, arrivals.frames):
            batch: list[tuple[Cpu, Member, bytes, tuple[str, int]]] = []
            batch_at = math.nan  # the arrival of the batch last queued, while nothing was after it
            for out_port, out_frame in sent:
                far = node.peer[out_port]
                egress = node.egress[out_port]  # None where no link is: then nothing takes it
                if type(far) is SwitchNode:
                    assert egress is not None
                    arrival = egress.send(leaves, out_frame)
                    if arrival is not None:
                        self._to_switch(arrival, far, node.peer_port[out_port], out_frame)
                        batch_at = math.nan
                    continue
                key = (far, out_frame[:FRAME_HEADERS])
                delivery = deliveries[key] if key in deliveries else self._delivery(key)
                if delivery is None or len(out_frame) < FRAME_HEADERS + HEADER_LEN:
                    endpoint = self._endpoints.get(far)
                    if endpoint is None:
                        self.stray.append((out_port, out_frame))
                    else:
                        assert egress is not None
                        arrival = egress.send(leaves, out_frame)
                        if arrival is not None:
                            at(arrival, endpoint, out_frame)
                            batch_at = math.nan
                    continue
                member, source = delivery
                payload = out_frame[FRAME_HEADERS:]
                if self._judged and self._lost(
                    RESULT if payload[0] == MSG_RESULT else STATUS, payload, member.rank, leaves
                ):
                    continue
                assert egress is not None
                arrival = egress.send(leaves, out_frame)
                if arrival == batch_at:
                    batch.append((member.host.cpu, member, payload, source))
                elif arrival is not None:
                    batch, batch_at = [(member.host.cpu, member, payload, source)], arrival
                    at(arrival, self._at_workers, batch)

    def _at_workers(
        self, when: float, batch: list[tuple[Cpu, Member, bytes, tuple[str, int]]]
    ) -> None:
        """Frames reach workers' hosts: each CPU takes its payload in its turn."""
        for cpu, member, payload, source in batch:
            if cpu.idle(when, cpu.recv_cost):  # the common case, as a direct call
                self._receive(when, member, payload, source)
            else:
                cpu.run(when, cpu.recv_cost, self._receive, member, payload, source)

    def _delivery(self, key: tuple[Node | None, bytes]) -> tuple[Member, tuple[str, int]] | None:
        """Which worker on the host takes a frame with these headers (if it holds a datagram), and
        from what source (None: none takes it); remembered in `_deliveries`."""
        host, headers = key
        member = self._members.get(host)
        delivery = (
            (member, self._source(headers))
            if member is not None and self._addressed_to(member, headers)
            else None
        )
        self._deliveries[key] = delivery
        return delivery

    def _receive(self, now: float, member: Member, payload: bytes, source: tuple[str, int]) -> None:
        self.sim.now = now
        cores = member.cores
        core = (
            cores[0]
            if len(cores) == 1
            else cores[min(slot_of(payload) // member.group, len(cores) - 1)]
        )
        reply = core.receive(
            payload, source, now
        )  # a slot beyond the groups: its core calls it forged
        self._transmit(member, core, [] if reply is None else [reply])
        if core.finished and self.on_finished is not None:
            self.on_finished(member, core)

    @staticmethod
    def _addressed_to(member: Member, headers: bytes) -> bool:
        """What the worker's host would take, by a frame's `headers` (FRAME_HEADERS bytes): its MAC,
        IPv4/UDP to its address and port, no IP options."""
        mac, ip, udp_port = member.address
        return (
            len(headers) == FRAME_HEADERS
            and headers[:6] == mac
            and headers[12:14] == ETH_IPV4
            and headers[14] == 0x45
            and headers[23] == socket.IPPROTO_UDP
            and headers[30:34] == ip
            and headers[36:38] == udp_port
        )

    @staticmethod
    def _source(frame: bytes) -> tuple[str, int]:
        """The (IPv4 address, UDP port) a frame comes from, as the receiving socket reports it."""
        ip, port = frame[26:30], frame[34:36]
        if (ip, port) == _SWITCH_IP_PORT:
            return _SWITCH_SOURCE
        return socket.inet_ntoa(ip), int.from_bytes(port, "big")

    def _lost(self, direction: str, data: bytes | bytearray, rank: int, when: float) -> bool:
        """Number the datagram (its round, the copy of that round), log it, and ask the rules; `rank`
        is the sender of an UPDATE, the receiver of a RESULT or STATUS copy."""
        header = parse_header(data)
        key = (direction, header.job, rank, header.index, header.round)
        transmission = self._copies.get(key, 0)
        self._copies[key] = transmission + 1
        datagram = Datagram(
            direction, header.job, rank, header.index, header.pool_set, header.round, transmission
        )
        if self._record:
            self.sent.append((when, datagram))
        if any(rule(datagram) for rule in self.loss):
            self.dropped.append(datagram)
            return True
        return False
