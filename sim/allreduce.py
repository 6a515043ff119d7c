"""One all-reduce per job in virtual time: the workers of a topology (a star of N, a leaf-spine, a
fat-tree: ina.topologies.topo), the real switch program on every switch, the model's links.

`simulate(config)` runs it on the in-process harness (hosts/inprocess.py) with every link of
`config.link` and every host of `config.host`, and returns what happened: the communication time in
simulated seconds, goodput per worker, what each link carried and dropped, the aggregating switches'
counters, whether every sum is right, and the wall time it took. `report` makes that JSON. `lossless_time`
is docs/simulation.md's formula for a lossless, link-bound run. `ina sim` (sim/cli.py) is the
command; scripts call these directly.
"""

import contextlib
import dataclasses
import gc
import hashlib
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np

from ina.controller.aggregation import BurstLoss
from ina.controller.allocators import FIRST_FIT, Allocator
from ina.hosts.chunks import Contributors, chunk_count
from ina.hosts.cli import make_array, verify
from ina.hosts.inprocess import FRAME_HEADERS, InProcessSwitch
from ina.hosts.members import Members, job_members
from ina.p4src.protocol import EPOCH_MAX, HEADER_LEN, SYNC, Policy, lane_values
from ina.sim.links import ChannelStats, LinkSpec, wire_bits
from ina.sim.nodes import IDEAL_HOST, HostSpec
from ina.sim.straggler import SlowHost
from ina.topologies.topo import Topology, is_star, load
from ina.topologies.tree import job_trees, switch_jobs

DEFAULT_LINK = LinkSpec(
    rate=100e9, delay=1e-6, queue=1 << 20
)  # a rack at 100 Gbit/s, 1 MiB per port


@dataclass(frozen=True)
class AllReduceConfig:
    """One simulated all-reduce per job: on topology `topo` (star: of `workers` hosts) its workers,
    dealt into `jobs` jobs, each reduce `size` elements of `dtype` (make_array's arrays for seed +
    job id, as `ina run`), E = `elems` per packet, `window` slots, under `policy`, over `link`s with
    `host`s and switches adding `pipeline` seconds per frame; `timeout` is the workers' first RTO and
    `min_rto` their RTO's floor beside 2 min_rtt (0: the path's alone; a host's is MIN_RTO);
    `slow_host` one host whose networking is slower (sim/straggler.py)."""

    topo: str = "star"
    workers: int = 8
    jobs: int | None = None
    size: int = 1 << 16
    dtype: str = "int32"
    elems: int = 64
    bits: int = 32  # the switch's lanes (-DLANE_BITS): elems words carry lane_values(elems, bits)
    window: int = 128
    policy: Policy = SYNC
    link: LinkSpec = DEFAULT_LINK
    host: HostSpec = IDEAL_HOST
    pipeline: float = 0.0
    seed: int = 1
    timeout: float = 1e-3
    min_rto: float = (
        0.0  # the workers' RTO floor beside 2 min_rtt: no host's scheduling noise in virtual time
    )
    slow_host: SlowHost | None = None
    allocator: Allocator = FIRST_FIT  # where each job's slots go (controller/allocators.py)

    def epoch(self, job: int) -> int:
        """A job's epoch, from the seed: the same seed sends the same bytes."""
        return 1 + (self.seed + job) % EPOCH_MAX

    def topology(self, extra_host: bool = False) -> Topology:
        """The topology with its jobs under this policy and window and with seeded epochs (raises
        TopologyError naming what is wrong); `extra_host` adds a host beside the workers on the
        first switch (a parameter server's)."""
        topo = self.plain_topology(extra_host).with_policy(self.policy)
        return dataclasses.replace(
            topo, jobs=tuple(dataclasses.replace(j, epoch=self.epoch(j.id)) for j in topo.jobs)
        )

    def plain_topology(self, extra_host: bool = False) -> Topology:
        """The topology as loaded, its jobs dealt and given the window (raises TopologyError)."""
        return load(
            self.topo,
            self.workers if self.is_star else None,
            self.jobs,
            slots=self.window,
            extra_host=extra_host,
        )

    @property
    def is_star(self) -> bool:
        return is_star(self.topo)


@dataclass
class AllReduceResult:
    config: AllReduceConfig
    workers: list[
        tuple[int, int, str]
    ]  # (job, rank, host) of each worker, in job then rank order; the lists below follow it
    results: list[np.ndarray]  # each worker's all-reduced array
    verified: bool  # int32: every rank's sum bit-exact; float32: within docs/accuracy.md's bound
    max_abs_error: float
    communication_s: float  # simulated: from the start until the last rank has its result
    elapsed_s: list[float]  # per rank, until it had its result
    packets_sent: list[int]  # per rank, resends included
    retransmissions: list[int]
    links: list[
        tuple[str, ChannelStats, ChannelStats]
    ]  # (name, a -> b, b -> a) per link, in the topology's order
    switch: dict[str, dict]  # per aggregating switch, its non-zero counters (Aggregation.stats)
    arrivals: int  # frames that reached a host or the switch
    events: int  # the simulator's events
    wall_setup_s: float  # compiling, the switch, the controller and the job
    wall_run_s: float  # the simulation itself

    @property
    def goodput_bps(self) -> list[float]:
        """Per rank, payload bits (32 per element) reduced per simulated second."""
        return [self.config.size * 32 / s if s else 0.0 for s in self.elapsed_s]


def frame_bytes(elems: int) -> int:
    """An aggregation frame's length: Ethernet, IPv4, UDP, the header and E values (the switch's
    RESULT frames are as long as the workers' UPDATEs)."""
    return FRAME_HEADERS + HEADER_LEN + 4 * elems


ZERO_FRAME = FRAME_HEADERS + HEADER_LEN  # a ZERO packet's frame: the headers alone (all zeros)


def lossless_time(config: AllReduceConfig) -> float | None:
    """docs/simulation.md's time of a lossless all-reduce on a star (None on other topologies, whose
    shared links the formula does not model), whichever bounds it. Link-bound: each
    worker's link carries its packets back to back both ways, so the time is the last packet's
    serialization after all the others plus one packet's path (serialization twice, propagation
    both ways, the switch's pipeline, the hosts' costs); it holds when the window covers the path
    (`window_covers_path`). Host-bound: the CPU never idles, sending each packet and receiving its
    answer, so the time is its work. A slow host (`slow_host`) is the last to finish: its time."""
    if not config.is_star:
        return None
    link = config.link
    wire, zero = wire_bits(frame_bytes(config.elems)), wire_bits(ZERO_FRAME)
    packets, first = packets_per_worker(config), first_uses(config)
    times = []
    for host in (config.host, *host_specs(config).values()):
        rate = min(link.rate, host.nic_rate)  # the worker's side: its NIC may be slower
        costs = host.send_cost + host.recv_cost
        path = wire / link.rate + 2 * link.delay + config.pipeline + costs
        # float32: the first uses go as ZERO frames, and a slot's first chunk waits for its RESULT
        rtt = zero / rate + zero / link.rate + 2 * link.delay + config.pipeline + costs
        start = max(first * zero / rate, rtt) if first else 0.0
        times.append(max(start + (packets - first) * wire / rate + path, packets * costs))
    return max(times)


def packets_per_worker(config: AllReduceConfig) -> int:
    """UPDATEs each worker sends without loss: one per chunk of E, and for floats one more per slot
    (`first_uses`)."""
    return chunk_count(config.size, lane_values(config.elems, config.bits)) + first_uses(config)


def first_uses(config: AllReduceConfig) -> int:
    """The uses of a float all-reduce that carry no chunk, one per slot: each announces its slot's
    first exponent, all zeros, so a ZERO frame (0 for int32)."""
    chunks = chunk_count(config.size, lane_values(config.elems, config.bits))
    return min(config.window, chunks) if config.dtype != "int32" else 0


def window_covers_path(config: AllReduceConfig) -> bool:
    """Whether `window` packets in flight keep the link busy for a round trip, so the link, not the
    window, sets the pace: window x serialization >= serialization both ways + 2 x delay + pipeline."""
    link = config.link
    serialize = wire_bits(frame_bytes(config.elems)) / min(link.rate, config.host.nic_rate)
    return config.window * serialize >= 2 * serialize + 2 * link.delay + config.pipeline


def pool_size(topo: Topology) -> int:
    """Slots of the program every switch runs: the most any switch's jobs take (every switch of
    a job's tree holds its slots; at least 256)."""
    return max(256, *(sum(j.slots for j in jobs) for jobs in switch_jobs(topo).values()))


def job_arrays(config: AllReduceConfig, topo: Topology) -> dict[int, list[np.ndarray]]:
    """Each job's arrays by rank: make_array's for seed + job id, as `ina run` seeds its workers."""
    return {
        job.id: [
            make_array(config.seed + job.id, rank, config.size, config.dtype)
            for rank in range(len(job.workers))
        ]
        for job in topo.jobs
    }


def harness(
    config: AllReduceConfig, topo: Topology, engine: str = "native", server: str | None = None
) -> InProcessSwitch:
    """The in-process harness for `topo` with the configuration's links, hosts, pipeline and seed
    (`server`: the host the workers send to instead of their aggregator)."""
    return InProcessSwitch(
        elems=config.elems,
        bits=config.bits,
        pool_size=pool_size(topo),
        engine=engine,
        link=config.link,
        host=config.host,
        pipeline=config.pipeline,
        seed=config.seed,
        record=False,
        topology=topo,
        timeout=config.timeout,
        server=server,
        min_rto=config.min_rto,
        hosts=host_specs(config),
        allocator=config.allocator,
    )


class Profiler(Protocol):
    """What `simulate` turns on and off around the simulation alone: cProfile.Profile, or a clock
    (bench/sim.py's CPU clock)."""

    def enable(self) -> None: ...

    def disable(self) -> None: ...


@contextlib.contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a run, back on after (if it was). The simulation
    makes no reference cycles (a collection after a run finds none, lossy or not), so the
    collector's passes over every live object (the switches' tables, the cores, the events) during
    a run are pure cost: 4-9% of a 32-worker all-reduce's CPU time. Reference counting still frees
    everything the run drops."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def simulate(
    config: AllReduceConfig,
    engine: str = "native",
    profiler: Profiler | None = None,
    server: Callable[[InProcessSwitch, Topology], object] | None = None,
    watch: Callable[[InProcessSwitch], None] | None = None,
) -> AllReduceResult:
    """Run every job's all-reduce at once (under `profiler`, if given, the simulation alone: not the
    set-up); `watch` sees the harness once it is built, before anything runs (to set channels'
    taps and traces: sim/output.py); a worker's WorkerError (a slot past its retries) propagates; a topology that cannot be
    built raises TopologyError. With `server` the topology has one more host on its first switch
    (`Topology.extra_host`), the workers send to it instead of their aggregator, and
    `server(net, topo)` attaches what answers them there (a parameter server: ina.sim.ps)."""
    started = time.perf_counter()
    topo = config.topology(extra_host=server is not None)
    arrays = job_arrays(config, topo)
    with harness(config, topo, engine, topo.extra_host) as net:
        if server:
            server(net, topo)
        if watch:
            watch(net)
        if profiler:
            profiler.enable()
        running = time.perf_counter()
        with cycle_collection_paused():
            results = net.allreduce(arrays)
        finished = time.perf_counter()
        if profiler:
            profiler.disable()
        switch, links = aggregator_stats(net, topo), link_stats(net)
        arrivals, events = net.network.arrivals, net.sim.scheduled
        members = [
            (job.id, m, host)
            for job in topo.jobs
            for m, host in zip(net.jobs[job.id], job.workers, strict=True)
        ]
    # whose contributions each sum holds, job-wide, from every worker's RESULTs (hierarchical
    # jobs' bitmaps name ranks at a leaf: hosts/members.py)
    sums_of = {
        job.id: job_members(
            [m.core.contributors() for m in net.jobs[job.id]],
            [tree.endpoints[host] for host in job.workers],
        )
        for job, tree in zip(topo.jobs, job_trees(topo), strict=True)
    }
    checks = verify_sums(
        config,
        {job: len(job_arrays) for job, job_arrays in arrays.items()},
        [(job, results[job][m.rank], m.core.contributors()) for job, m, _host in members],
        sums_of,
    )
    stats = [m.core.stats for _job, m, _host in members]
    return AllReduceResult(
        config,
        [(job, m.rank, host) for job, m, host in members],
        [results[job][m.rank] for job, m, _h in members],
        all(ok for ok, _ in checks),
        max(err for _, err in checks),
        max(s.elapsed for s in stats),
        [s.elapsed for s in stats],
        [s.packets_sent for s in stats],
        [s.retransmissions for s in stats],
        links,
        switch,
        arrivals,
        events,
        running - started,
        finished - running,
    )


def verify_sums(
    config: AllReduceConfig,
    workers: Mapping[int, int],
    sums: Sequence[tuple[int, np.ndarray, Contributors]],
    members: Mapping[int, Members] | None = None,
) -> list[tuple[bool, float]]:
    """hosts/cli.py's `verify` of each (job, sum, contributors) in `sums` (`workers`: each job's
    count), each distinct one checked once: a job's ranks get the same multicast RESULTs, so one
    expected sum per job (and per set of contributors) instead of every rank's arrays made again
    for every worker (O(workers) where it was O(workers^2): 188 of 217 s of a 1,024-worker run).
    A rank whose sum or contributors differ is checked on its own; `members`: each job's ranks in
    each chunk's sum (hosts/members.py)."""
    checked: dict[tuple[int, bytes], tuple[bool, float]] = {}
    checks = []
    for job, total, counted in sums:
        key = (
            job,
            hashlib.sha256(
                total.tobytes() + counted.counts.tobytes() + counted.bitmaps.tobytes()
            ).digest(),
        )
        if key not in checked:
            checked[key] = verify(
                total,
                config.seed + job,
                workers[job],
                config.size,
                config.dtype,
                lane_values(config.elems, config.bits),
                counted,
                bits=config.bits,
                members=members[job] if members else None,
            )
        checks.append(checked[key])
    return checks


def host_specs(config: AllReduceConfig) -> dict[str, HostSpec]:
    """The hosts whose spec is not `config.host`, by name: the slow host's."""
    slow = config.slow_host
    return {slow.host: slow.spec(config.host, config.link.rate)} if slow else {}


def report(result: AllReduceResult, git: str) -> dict:
    """Every figure of a run as JSON-able data: the configuration, the seed and the git revision,
    the simulated results, and (apart, as they depend on the machine) the wall-clock ones."""
    config = result.config
    goodput = result.goodput_bps
    return {
        "config": config_json(config, len(result.workers)),
        "seed": config.seed,
        "git": git,
        "results": {
            "verified": result.verified,
            "max_abs_error": result.max_abs_error,
            "communication_s": result.communication_s,
            "lossless_bound_s": lossless_time(config),
            "workers": [
                {"job": job, "rank": rank, "host": host} for job, rank, host in result.workers
            ],
            "elapsed_s": result.elapsed_s,
            "goodput_bps": goodput,
            "goodput_bps_min": min(goodput),
            "goodput_bps_max": max(goodput),
            "packets_sent": result.packets_sent,
            "retransmissions": result.retransmissions,
            "arrivals": result.arrivals,
            "events": result.events,
            **network_json(result),
        },
        "wall": wall_json(result),
    }


def link_stats(net: InProcessSwitch) -> list[tuple[str, ChannelStats, ChannelStats]]:
    """Every link's counters after a run: (name, a -> b, b -> a), in the topology's order."""
    return [(link.name, link.up.stats, link.down.stats) for link in net.network.links]


def aggregator_stats(net: InProcessSwitch, topo: Topology) -> dict[str, dict]:
    """Each aggregating switch's (every switch of a job's tree) non-zero counters after a run
    (Aggregation.stats)."""
    return {name: net.stats(name) for name in switch_jobs(topo)}


class RunFigures(Protocol):
    """What every simulated run (all-reduce, workload, training) reports of its network and wall time."""

    links: list[tuple[str, ChannelStats, ChannelStats]]
    switch: dict[str, dict]
    arrivals: int
    wall_setup_s: float
    wall_run_s: float


def network_json(result: RunFigures) -> dict:
    """A run's links and aggregating switches as JSON: any result with `links` and `switch` as
    link_stats and aggregator_stats give them."""
    return {
        "links": [
            {"link": name, "up": asdict(up), "down": asdict(down)}
            for name, up, down in result.links
        ],
        "switch": {
            name: {group: {str(k): v for k, v in counts.items()} for group, counts in stats.items()}
            for name, stats in result.switch.items()
        },
    }


def wall_json(result: RunFigures) -> dict:
    """A run's wall-clock figures (apart from the rest: they depend on the machine)."""
    return {
        "setup_s": result.wall_setup_s,
        "run_s": result.wall_run_s,
        "arrivals_per_s": result.arrivals / result.wall_run_s if result.wall_run_s else None,
    }


def config_json(config: AllReduceConfig, workers: int) -> dict:
    """The configuration as JSON-able data (`workers`: how many the topology gave)."""
    link = asdict(config.link)
    if isinstance(config.link.loss, BurstLoss):
        link["loss"] = {"burst": asdict(config.link.loss)}
    return {
        "topo": config.topo,
        "jobs": config.jobs,
        "workers": workers,
        "size": config.size,
        "dtype": config.dtype,
        "elems": config.elems,
        "bits": config.bits,
        "window": config.window,
        "policy": str(config.policy),
        "link": _finite(link),
        "host": _finite(asdict(config.host)),
        "pipeline_s": config.pipeline,
        "timeout_s": config.timeout,
        "min_rto_s": config.min_rto,
        "slow_host": str(config.slow_host) if config.slow_host else None,
        "allocator": config.allocator.name,
    }


def _finite(values: dict) -> dict:
    """JSON has no infinity: an unlimited rate or queue is null."""
    return {k: None if isinstance(v, float) and math.isinf(v) else v for k, v in values.items()}
