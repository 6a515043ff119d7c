"""One all-reduce in virtual time: N workers on a star, the real switch program, the model's links.

`simulate(config)` runs it on the in-process harness (hosts/inprocess.py) with every link of
`config.link` and every host of `config.host`, and returns what happened: the communication time in
simulated seconds, goodput per worker, what each link carried and dropped, the switch's counters,
whether every sum is right, and the wall time it took. `report` makes that JSON. `lossless_time`
is docs/simulation.md's formula for a lossless, link-bound run. `ina sim` (sim/cli.py) is the
command; scripts call these directly.
"""

import cProfile
import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from ina.controller.aggregation import BurstLoss
from ina.hosts.cli import make_array, verify
from ina.hosts.inprocess import FRAME_HEADERS, InProcessSwitch
from ina.p4src.protocol import EPOCH_MAX, HEADER_LEN, SYNC, Policy
from ina.sim.links import ChannelStats, LinkSpec, wire_bits
from ina.sim.nodes import IDEAL_HOST, HostSpec

DEFAULT_LINK = LinkSpec(rate=100e9, delay=1e-6, queue=1 << 20)  # a rack at 100 Gbit/s, 1 MiB per port


@dataclass(frozen=True)
class AllReduceConfig:
    """One simulated all-reduce: `workers` ranks each reduce `size` elements of `dtype` (make_array's
    arrays for `seed`), E = `elems` per packet, `window` slots, under `policy`, on a star of `link`s
    with `host`s and a switch adding `pipeline` seconds per frame; `timeout` is the workers' first RTO."""

    workers: int = 8
    size: int = 1 << 16
    dtype: str = "int32"
    elems: int = 64
    window: int = 128
    policy: Policy = SYNC
    link: LinkSpec = DEFAULT_LINK
    host: HostSpec = IDEAL_HOST
    pipeline: float = 0.0
    seed: int = 1
    timeout: float = 1e-3

    @property
    def epoch(self) -> int:
        """The job's epoch, from the seed: the same seed sends the same bytes."""
        return 1 + self.seed % EPOCH_MAX


@dataclass
class AllReduceResult:
    config: AllReduceConfig
    results: list[np.ndarray]  # each rank's all-reduced array
    verified: bool  # int32: every rank's sum bit-exact; float32: within docs/accuracy.md's bound
    max_abs_error: float
    communication_s: float  # simulated: from the start until the last rank has its result
    elapsed_s: list[float]  # per rank, until it had its result
    packets_sent: list[int]  # per rank, resends included
    retransmissions: list[int]
    links: list[tuple[str, ChannelStats, ChannelStats]]  # (name, host -> switch, switch -> host) per worker
    switch: dict  # the switch's non-zero counters (Aggregation.stats)
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


def lossless_time(config: AllReduceConfig) -> float:
    """docs/simulation.md's time of a lossless all-reduce, whichever bounds it. Link-bound: each
    worker's link carries its packets back to back both ways, so the time is the last packet's
    serialization after all the others plus one packet's path (serialization twice, propagation
    both ways, the switch's pipeline, the hosts' costs); it holds when the window covers the path
    (`window_covers_path`). Host-bound: the CPU never idles, sending each packet and receiving its
    answer, so the time is its work."""
    link, host = config.link, config.host
    wire = wire_bits(frame_bytes(config.elems))
    serialize = wire / min(link.rate, host.nic_rate)  # the worker's side: its NIC may be slower
    path = wire / link.rate + 2 * link.delay + config.pipeline + host.send_cost + host.recv_cost
    packets = packets_per_worker(config)
    return max(packets * serialize + path, packets * (host.send_cost + host.recv_cost))


def packets_per_worker(config: AllReduceConfig) -> int:
    """UPDATEs each worker sends without loss: one per chunk of E, and for floats one more per slot
    (each slot's first use announces its exponent)."""
    chunks = max(1, -(-config.size // config.elems))
    return chunks + (min(config.window, chunks) if config.dtype != "int32" else 0)


def window_covers_path(config: AllReduceConfig) -> bool:
    """Whether `window` packets in flight keep the link busy for a round trip, so the link, not the
    window, sets the pace: window x serialization >= serialization both ways + 2 x delay + pipeline."""
    link = config.link
    serialize = wire_bits(frame_bytes(config.elems)) / min(link.rate, config.host.nic_rate)
    return config.window * serialize >= 2 * serialize + 2 * link.delay + config.pipeline


def simulate(config: AllReduceConfig, engine: str = "native", profiler: cProfile.Profile | None = None) -> AllReduceResult:
    """Run the all-reduce (under `profiler`, if given, the simulation alone: not the set-up); a
    worker's WorkerError (a slot past its retries) propagates."""
    started = time.perf_counter()
    arrays = [make_array(config.seed, rank, config.size, config.dtype) for rank in range(config.workers)]
    with InProcessSwitch(elems=config.elems, pool_size=max(256, config.window), engine=engine, link=config.link,
                         host=config.host, pipeline=config.pipeline, seed=config.seed, record=False) as net:
        net.add_job(0, config.workers, config.window, epoch=config.epoch, timeout=config.timeout,
                    policy=config.policy)
        if profiler:
            profiler.enable()
        running = time.perf_counter()
        results = net.allreduce({0: arrays})[0]
        finished = time.perf_counter()
        if profiler:
            profiler.disable()
        members = net.jobs[0]
        switch = net.stats()
        events = net.sim.scheduled
    checks = [verify(got, config.seed, config.workers, config.size, config.dtype, config.elems,
                     m.core.contributors()) for got, m in zip(results, members, strict=True)]
    stats = [m.core.stats for m in members]
    return AllReduceResult(
        config, results, all(ok for ok, _ in checks), max(err for _, err in checks),
        max(s.elapsed for s in stats), [s.elapsed for s in stats], [s.packets_sent for s in stats],
        [s.retransmissions for s in stats],
        [(m.link.name, m.link.up.stats, m.link.down.stats) for m in members], switch,
        sum(m.link.up.stats.delivered + m.link.down.stats.delivered for m in members), events,
        running - started, finished - running)


def report(result: AllReduceResult, git: str) -> dict:
    """Every figure of a run as JSON-able data: the configuration, the seed and the git revision,
    the simulated results, and (apart, as they depend on the machine) the wall-clock ones."""
    config = result.config
    link = asdict(config.link)
    if isinstance(config.link.loss, BurstLoss):
        link["loss"] = {"burst": asdict(config.link.loss)}
    goodput = result.goodput_bps
    return {
        "config": {"workers": config.workers, "size": config.size, "dtype": config.dtype, "elems": config.elems,
                   "window": config.window, "policy": str(config.policy), "link": _finite(link),
                   "host": _finite(asdict(config.host)), "pipeline_s": config.pipeline, "timeout_s": config.timeout},
        "seed": config.seed,
        "git": git,
        "results": {
            "verified": result.verified, "max_abs_error": result.max_abs_error,
            "communication_s": result.communication_s, "lossless_bound_s": lossless_time(config),
            "elapsed_s": result.elapsed_s, "goodput_bps": goodput,
            "goodput_bps_min": min(goodput), "goodput_bps_max": max(goodput),
            "packets_sent": result.packets_sent, "retransmissions": result.retransmissions,
            "arrivals": result.arrivals, "events": result.events,
            "links": [{"link": name, "up": asdict(up), "down": asdict(down)} for name, up, down in result.links],
            "switch": {group: {str(k): v for k, v in counts.items()} for group, counts in result.switch.items()},
        },
        "wall": {"setup_s": result.wall_setup_s, "run_s": result.wall_run_s,
                 "arrivals_per_s": result.arrivals / result.wall_run_s if result.wall_run_s else None},
    }


def _finite(values: dict) -> dict:
    """JSON has no infinity: an unlimited rate or queue is null."""
    return {k: None if isinstance(v, float) and math.isinf(v) else v for k, v in values.items()}
