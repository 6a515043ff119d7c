"""The ring all-reduce as NCCL runs it, on the simulated links: chunked and pipelined over RoCE's
reliable transport (ina.sim.transport; or over TCP, ina.sim.tcp, as emulation's hosts/ring.py runs), through the same switches (forwarding by MAC, the real
program) as the in-network all-reduce.

Each job's workers form a ring in rank order and follow hosts/ring.py's schedule (`schedule`: n - 1
reduce-scatter steps, then n - 1 all-gather steps). A step's segment is cut into chunks of `chunk`
bytes, each one message on the connection to the right neighbour; a chunk of a step is sent as
soon as the same chunk of the step before has arrived (and been added), so the steps overlap: the
pipelining NCCL does. The values travel in the frames: what a rank adds is the bytes its
neighbour's frames carried. Adding costs nothing (NCCL's reduction kernels run far faster than the
link), and the transport runs in the NIC, so the hosts' CPU costs do not apply.

`lossless_time` is docs/simulation.md's formula for a lossless ring on a star.
"""

import time
from collections.abc import Callable
from typing import Protocol

import numpy as np

from ina.hosts.inprocess import InProcessSwitch
from ina.hosts.ring import schedule, segment_bounds
from ina.sim.allreduce import (
    AllReduceConfig,
    AllReduceResult,
    cycle_collection_paused,
    harness,
    job_arrays,
    link_stats,
)
from ina.sim.events import Simulator
from ina.sim.links import wire_bits
from ina.sim.tcp import TcpSpec
from ina.sim.transport import DATA_OVERHEAD, ROCE, Address, TransportSpec
from ina.topologies.topo import Topology

CHUNK = (
    1 << 15
)  # bytes per message: the unit a step forwards as soon as it has it (NCCL pipelines finer still: LL128 moves 128-byte lines)


class Connection(Protocol):
    """What the ring needs of a transport's sending end: messages posted in order, delivered in
    order to the receiver's `deliver`, and its counters."""

    frames_sent: int
    retransmissions: int

    def post(self, now: float, data: bytes) -> None: ...


class Endpoint(Protocol):
    """A host's end of a transport: every frame reaching the host is handed to `receive`."""

    def receive(self, now: float, frame: bytes) -> None: ...


class Transport(Protocol):
    """A transport the ring runs over (sim/transport.py's RoCE, sim/tcp.py's TCP): an endpoint per
    host on its link, and one-way connections between endpoints."""

    def endpoint(
        self, sim: Simulator, address: Address, send: Callable[[float, bytes], None], rate: float
    ) -> Endpoint: ...

    def connect(
        self,
        sender: Endpoint,
        receiver: Endpoint,
        flow: int,
        deliver: Callable[[float, bytes], None],
    ) -> Connection: ...


TRANSPORTS: dict[str, TransportSpec | TcpSpec] = {
    "roce": ROCE,
    "tcp": TcpSpec(),
}  # `ina sim --ring-transport`


def chunks(length: int, per_chunk: int) -> list[slice]:
    """A segment of `length` elements cut into chunks of `per_chunk` (an empty one is one empty chunk)."""
    return [
        slice(start, min(start + per_chunk, length)) for start in range(0, length, per_chunk)
    ] or [slice(0, 0)]


class RingRank:
    """One rank of a ring: its array, its schedule, and the chunk it expects next from the left."""

    def __init__(self, rank: int, n: int, array: np.ndarray, chunk: int):
        self.rank = rank
        self.out = np.array(array, copy=True).reshape(-1)
        bounds = segment_bounds(self.out.size, n)
        self.segments = [self.out[bounds[i] : bounds[i + 1]] for i in range(n)]
        self.per_chunk = max(1, chunk // self.out.itemsize)
        self.steps = schedule(rank, n)
        self.step = self.chunk = 0  # what the next message from the left is
        self.sender: Connection | None = None
        self.finished_at: float | None = None

    def start(self, now: float) -> None:
        """Post the first step's chunks (the rank's own values)."""
        segment = self.segments[self.steps[0].send]
        for part in chunks(segment.size, self.per_chunk):
            self.sender.post(now, segment[part].tobytes())

    def delivered(self, now: float, data: bytes) -> None:
        """The next chunk arrived from the left: add or copy it, then forward it in the next step."""
        step = self.steps[self.step]
        segment = self.segments[step.recv]
        parts = chunks(segment.size, self.per_chunk)
        part = segment[parts[self.chunk]]
        values = np.frombuffer(data, dtype=part.dtype)
        if step.reduce:
            part += values
        else:
            part[:] = values
        if self.step + 1 < len(self.steps):
            self.sender.post(now, part.tobytes())  # the next step sends what this one received
        self.chunk += 1
        if self.chunk == len(parts):
            self.step, self.chunk = self.step + 1, 0
            if self.step == len(self.steps):
                self.finished_at = now


def _endpoint(net: InProcessSwitch, topo: Topology, host: str, transport: Transport) -> Endpoint:
    """The transport's endpoint on `host`, at its uplink's rate, receiving through the harness's
    endpoint hook."""
    uplink = next(link.up for link in net.network.links if link.a.name == host)
    address = (topo.hosts[host].mac, topo.hosts[host].ip)
    endpoint = transport.endpoint(
        net.sim,
        address,
        net.attach(host, lambda when, frame: endpoint.receive(when, frame)),
        uplink.rate,
    )
    return endpoint


def simulate_ring(
    config: AllReduceConfig,
    transport: Transport = ROCE,
    chunk: int = CHUNK,
    engine: str = "native",
    watch: Callable[[InProcessSwitch], None] | None = None,
) -> AllReduceResult:
    """Every job's ring all-reduce at once on the configuration's topology and links (each job's
    arrays as `simulate` makes them; `watch` as `simulate`'s). A connection past its retries raises
    TransportError."""
    started = time.perf_counter()
    topo = config.topology()
    arrays = job_arrays(config, topo)
    rings: list[tuple[int, str, RingRank, Connection]] = []
    with harness(config, topo, engine) as net:
        for job in topo.jobs:
            n = len(job.workers)
            ranks = [RingRank(r, n, arrays[job.id][r], chunk) for r in range(n)]
            ends = [_endpoint(net, topo, host, transport) for host in job.workers]
            for r, rank in enumerate(ranks):
                right = ranks[(r + 1) % n]
                rank.sender = transport.connect(ends[r], ends[(r + 1) % n], job.id, right.delivered)
            rings += [
                (job.id, host, rank, rank.sender)
                for host, rank in zip(job.workers, ranks, strict=True)
            ]
        if watch:
            watch(net)
        running = time.perf_counter()
        with cycle_collection_paused():
            for _job, _host, rank, _sender in rings:
                rank.start(net.sim.now)
            net.run()
        finished = time.perf_counter()
        links = link_stats(net)
        arrivals, events = net.network.arrivals, net.sim.scheduled
    results = [
        rank.out.reshape(arrays[job][rank.rank].shape) for job, _host, rank, _sender in rings
    ]
    checks = [
        check(result, arrays[job])
        for result, (job, _host, _rank, _sender) in zip(results, rings, strict=True)
    ]
    elapsed = [
        rank.finished_at if rank.finished_at is not None else float("inf")
        for _j, _h, rank, _s in rings
    ]
    return AllReduceResult(
        config,
        [(job, rank.rank, host) for job, host, rank, _s in rings],
        results,
        all(ok for ok, _ in checks),
        max(err for _, err in checks),
        max(elapsed),
        elapsed,
        [s.frames_sent for _j, _h, _r, s in rings],
        [s.retransmissions for _j, _h, _r, s in rings],
        links,
        {},
        arrivals,
        events,
        running - started,
        finished - running,
    )


def check(result: np.ndarray, arrays: list[np.ndarray]) -> tuple[bool, float]:
    """int32: bit-exact against numpy's sum (which wraps as int32 does). float32, summed in the
    ring's order: within the bound of n-term float summation, (n - 1) x eps x the sum of |values|
    per element (the ring adds floats, not the quantized integers hosts/cli.py's verify bounds)."""
    if result.dtype == np.int32:
        return bool(np.array_equal(result, np.sum(arrays, axis=0, dtype=np.int32))), 0.0
    stacked = np.stack(arrays).astype(np.float64)
    error = np.abs(result.astype(np.float64) - stacked.sum(axis=0))
    allowed = (len(arrays) - 1) * float(np.finfo(np.float32).eps) * np.abs(stacked).sum(axis=0)
    return bool(np.all(error <= allowed)), float(error.max(initial=0.0))


def rank_wire_bits(
    config: AllReduceConfig, transport: TransportSpec, chunk: int, rank: int, n: int
) -> int:
    """The bits one rank's uplink carries in a lossless ring: its data frames for every chunk it
    sends, and its ACKs for every chunk it receives."""
    itemsize = np.dtype(config.dtype).itemsize
    bounds = segment_bounds(config.size, n)
    per_chunk = max(1, chunk // itemsize)
    bits = 0
    for step in schedule(rank, n):
        for segment, side in ((step.send, 0), (step.recv, 1)):
            for part in chunks(int(bounds[segment + 1] - bounds[segment]), per_chunk):
                bits += transport.wire_bits((part.stop - part.start) * itemsize)[side]
    return bits


def lossless_time(
    config: AllReduceConfig, transport: Transport = ROCE, chunk: int = CHUNK
) -> float | None:
    """docs/simulation.md's time of a lossless ring over RoCE on a star (None elsewhere, and over
    TCP, whose slow start and delayed ACKs the formula does not have): the busiest rank's
    uplink carries its data and ACK frames back to back at its NIC's rate, and the last data frame
    then crosses the switch: one frame's serialization, the propagation both hops, the pipeline.
    It holds when the pipeline never starves the link (`pipeline_full`)."""
    if not config.is_star or not isinstance(transport, TransportSpec):
        return None
    link = config.link
    n = config.workers
    busiest = max(rank_wire_bits(config, transport, chunk, r, n) for r in range(n))
    frame = wire_bits(
        DATA_OVERHEAD + min(transport.mtu, config.size * np.dtype(config.dtype).itemsize)
    )
    return (
        busiest / min(link.rate, config.host.nic_rate)
        + frame / link.rate
        + 2 * link.delay
        + config.pipeline
    )


def pipeline_full(
    config: AllReduceConfig, transport: TransportSpec = ROCE, chunk: int = CHUNK
) -> bool:
    """Whether a rank always has a chunk to send: the chunks of a step after its first take at least
    the first's way to the neighbour (its last frame across the switch), and the window covers the
    path of a frame and its ACK."""
    link = config.link
    rate = min(link.rate, config.host.nic_rate)
    segment_bytes = config.size // config.workers * np.dtype(config.dtype).itemsize
    frame = wire_bits(DATA_OVERHEAD + transport.mtu)
    path = frame / link.rate + 2 * link.delay + config.pipeline
    rest = max(segment_bytes - chunk, 0)
    return (
        rest * 8 / rate >= path
        and transport.window * frame / rate >= 2 * path + transport.ack_every * frame / rate
    )
