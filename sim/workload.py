"""Iterations of compute then all-reduce in virtual time: a real model's DDP buckets and compute
time (train/replay.py's `ReplayConfig`, the same buckets and estimate `ina train --replay` uses),
each worker's compute slowed by the straggler models of emulation (hosts/compute.py), on any
topology, under any completion policy, several jobs at once.

Each worker runs a program: a generator of train/sgd.py's requests (`Compute`: let virtual
seconds pass; `Reduce`: start an all-reduce on the harness, then wait until at most `keep` of the
worker's calls are in flight and take the oldest sums). `Programs` runs every worker's program on
the harness's event loop: a compute is an event at its end, an all-reduce's end is the harness's
`on_finished`. The replay program is `replay_steps`; sim/training.py runs train/sgd.py's `steps`.

An iteration is, per worker, its compute then its buckets all-reduced as `ina train --replay`
does: as one grouped call (`ReplayConfig.bucket_calls`, ina.hosts.group: the arrays each padded to
whole chunks, the sums split back per bucket, as `Worker.allreduce_many` does) or one call after
another; under `stale:S` up to S + 1 of a worker's calls are in flight and an iteration waits only
for the calls S back (as hosts/iterations.py does). A worker's iteration
time is its compute plus the time it waited for all-reduces; a job's is the longest of its
workers', its compute the longest compute, its communication the rest. Every sum is checked: the first worker's of each call against numpy (bit-exact for
int32, hosts/cli.verify), every other worker's equal to it.
"""

import hashlib
import time
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass, field

import numpy as np

from ina.hosts.cli import make_array, verify
from ina.hosts.compute import ComputeModel, DelayDistribution
from ina.hosts.core import AllReduceCore, Contributors
from ina.hosts.group import Group
from ina.hosts.inprocess import InProcessSwitch, Member
from ina.p4src.protocol import lane_values
from ina.sim.allreduce import (
    AllReduceConfig,
    aggregator_stats,
    config_json,
    cycle_collection_paused,
    harness,
    link_stats,
    network_json,
    wall_json,
)
from ina.sim.links import ChannelStats
from ina.train.replay import IterationRecord, ReplayConfig
from ina.train.sgd import Compute, Reduce, Request

GRADIENTS = AllReduceConfig(dtype="float32")  # gradients travel as float32, block floating point
REPLAY = ReplayConfig(iterations=5)
Answer = Callable[[AllReduceCore], object]  # what a program gets back for each finished call


@dataclass(eq=False)
class _Worker:
    job: int
    rank: int
    program: Generator
    answer: Answer
    pending: deque = field(default_factory=deque)  # its calls' cores, oldest first
    keep: int = 0  # calls it lets stay in flight while it waits
    taken: list = field(default_factory=list)  # answers of calls popped while it waits
    waiting: bool = False
    outcome: object = None  # the program's return value


class Programs:
    """Every worker's program on the harness's virtual clock (the module's docstring)."""

    def __init__(self, net: InProcessSwitch):
        self.net = net
        self._workers: dict[Member, _Worker] = {}
        net.on_finished = self._finished

    def add(self, job: int, rank: int, program: Generator, answer: Answer) -> _Worker:
        """Worker `rank` of `job` will run `program`; each finished call is handed back as `answer(core)`."""
        worker = _Worker(job, rank, program, answer)
        self._workers[self.net.jobs[job][rank]] = worker
        return worker

    def run(self) -> None:
        """Start every program now, in the order added, and run until nothing is left to do."""
        for worker in self._workers.values():
            self._advance(worker, None)
        self.net.run()

    def _advance(self, worker: _Worker, answer: object) -> None:
        """Run the program until it waits: for virtual compute time, or for its calls."""
        while True:
            try:
                request: Request = worker.program.send(answer)
            except StopIteration as finished:
                worker.outcome = finished.value
                return
            if isinstance(request, Compute):
                if request.seconds > 0:
                    self.net.sim.at(self.net.now + request.seconds, self._resume, worker)
                    return
                answer = None
                continue
            if request.grad is not None:
                worker.pending.append(self.net.start(worker.job, worker.rank, request.sent))
            worker.keep = request.keep
            answer = self._take(worker)
            if answer is None:
                worker.waiting = True
                return

    def _take(self, worker: _Worker) -> list | None:
        """The oldest finished calls' answers once at most `keep` are in flight; None while waiting."""
        pending = worker.pending
        while len(pending) > worker.keep and pending[0].finished:
            worker.taken.append(worker.answer(pending.popleft()))
        if len(pending) > worker.keep:
            return None
        taken, worker.taken = worker.taken, []
        return taken

    def _resume(self, when: float, worker: _Worker) -> None:
        self.net.sim.now = when
        self._advance(worker, None)

    def _finished(self, member: Member, _core: AllReduceCore) -> None:
        worker = self._workers.get(member)
        if worker is None or not worker.waiting:
            return
        answer = self._take(worker)
        if answer is not None:
            worker.waiting = False
            self._advance(worker, answer)


@dataclass(frozen=True)
class Stragglers:
    """The straggler models of emulation (hosts/compute.py) in virtual time: a host's compute slowed
    by its factor (`--straggler h3:3x`), every host's plus a seeded draw per iteration from `dist`."""

    factors: tuple[tuple[str, float], ...] = ()  # (host, factor)
    dist: DelayDistribution | None = None

    def compute(self, base_s: float, seed: int, job: int, rank: int, host: str) -> ComputeModel:
        """A worker's compute per iteration, its draws seeded like its arrays (the seed plus the job, its rank)."""
        return ComputeModel(base_s, dict(self.factors).get(host, 1.0), self.dist, seed + job, rank)

    def as_dict(self) -> dict:
        return {
            "stragglers": dict(self.factors),
            "straggler_dist": str(self.dist) if self.dist else None,
        }


@dataclass(frozen=True)
class WorkloadConfig:
    """A replayed model's iterations on `network` (its topology, jobs, dtype, packets, window,
    policy, links, hosts, seed; its `size` is unused): `replay`'s buckets and iterations, each
    worker's compute per iteration `compute_s` (None: the model's estimate, scaled) under `stragglers`."""

    network: AllReduceConfig = GRADIENTS
    replay: ReplayConfig = REPLAY
    compute_s: float | None = None
    stragglers: Stragglers = Stragglers()

    @property
    def base_compute_s(self) -> float:
        return self.replay.compute_s if self.compute_s is None else self.compute_s


@dataclass
class JobIteration:
    """One iteration of one job in simulated seconds: its longest compute, its time (the longest
    compute plus wait for all-reduces of a worker), the communication the compute did not hide (the
    difference), and whether every worker's every sum was right."""

    job: int
    iteration: int
    compute_s: float
    communication_s: float
    iteration_s: float
    verified: bool


@dataclass
class WorkloadResult:
    config: WorkloadConfig
    buckets: list[int]  # elements per bucket, in the order all-reduced
    workers: list[tuple[int, int, str]]  # (job, rank, host)
    records: list[list[IterationRecord]]  # per worker (the order above), per iteration
    iterations: list[JobIteration]  # per iteration, per job
    max_abs_error: float
    links: list[tuple[str, ChannelStats, ChannelStats]]
    switch: dict[str, dict]
    arrivals: int
    events: int
    wall_setup_s: float
    wall_run_s: float

    @property
    def verified(self) -> bool:
        return all(it.verified for it in self.iterations)


class SumChecks:
    """Every worker's sum of every call: the first of each (job, iteration, bucket) against numpy,
    the others equal to it (sums and contributors, as the switch multicast them)."""

    def __init__(self, config: AllReduceConfig, workers: dict[int, int], buckets: list[int]):
        self.config, self.workers, self.buckets = config, workers, buckets
        self.first: dict[tuple[int, int, int], tuple[bytes, bool]] = {}
        self.seen: dict[tuple[int, int, int], int] = {}
        self.failed: set[tuple[int, int]] = set()  # (job, iteration) with a wrong sum
        self.max_abs_error = 0.0

    def check(
        self, job: int, iteration: int, bucket: int, total: np.ndarray, counted: Contributors
    ) -> None:
        key = (job, iteration, bucket)
        digest = hashlib.sha256(total.tobytes() + counted.bitmaps.tobytes()).digest()
        if key not in self.first:
            c = self.config
            ok, error = verify(
                total,
                c.seed + job,
                self.workers[job],
                self.buckets[bucket],
                c.dtype,
                lane_values(c.elems, c.bits),
                counted,
                bits=c.bits,
            )
            self.max_abs_error = max(self.max_abs_error, error)
            self.first[key] = (digest, ok)
        first, ok = self.first[key]
        if not ok or digest != first:
            self.failed.add((job, iteration))
        self.seen[key] = self.seen.get(key, 0) + 1
        if self.seen[key] == self.workers[job]:
            del self.first[key], self.seen[key]


def replay_steps(
    arrays: list[np.ndarray],
    durations: list[float],
    keep: int,
    clock: Callable[[], float],
    check: Callable[[int, int, np.ndarray, Contributors], None],
    group: Group | None = None,
) -> Generator[Request, list | None, list[IterationRecord]]:
    """One worker's iterations: compute for each duration, then every bucket's array all-reduced
    (as one call: `group`, the arrays' layout; else a call each), at most `keep` calls left in
    flight; each bucket's sum goes to check(iteration, bucket, sum, contributors)."""
    records: list[IterationRecord] = []
    calls: deque[tuple[int, int]] = deque()  # (iteration, bucket; -1: the group) of each call

    def take(answers: list) -> None:
        for total, counted in answers:
            iteration, bucket = calls.popleft()
            if bucket >= 0:
                check(iteration, bucket, total, counted)
                continue
            for bucket, reduced in enumerate(group.split(total, counted)):
                check(iteration, bucket, *reduced)

    start = clock()
    for iteration, duration in enumerate(durations, 1):
        t0 = clock()
        yield Compute(duration)
        t1 = clock()
        if group is not None:
            calls.append((iteration, -1))
            take((yield Reduce(group.flat, keep)))
        else:
            for bucket, array in enumerate(arrays):
                calls.append((iteration, bucket))
                take((yield Reduce(array, keep)))
        t2 = clock()
        records.append(IterationRecord(iteration, t2 - start, t1 - t0, t2 - t1))
    take((yield Reduce(None)))
    return records


def simulate_workload(
    config: WorkloadConfig,
    engine: str = "native",
    watch: Callable[[InProcessSwitch], None] | None = None,
) -> WorkloadResult:
    """Run every job's replayed iterations at once (`watch` sees the harness before anything runs,
    as `simulate`'s); a worker's WorkerError propagates, a topology that cannot be built raises
    TopologyError."""
    started = time.perf_counter()
    c = config.network
    topo = c.topology()
    buckets = config.replay.buckets()
    sizes = {job.id: len(job.workers) for job in topo.jobs}
    checks = SumChecks(c, sizes, buckets)
    iterations = config.replay.iterations
    with harness(c, topo, engine) as net:
        programs = Programs(net)
        workers = []
        for job in topo.jobs:
            for rank, host in enumerate(job.workers):
                arrays = [make_array(c.seed + job.id, rank, n, c.dtype) for n in buckets]
                durations = config.stragglers.compute(
                    config.base_compute_s, c.seed, job.id, rank, host
                ).durations(iterations)
                program = replay_steps(
                    arrays,
                    durations,
                    job.policy.staleness,
                    lambda: net.now,
                    lambda i, b, total, counted, job=job.id: checks.check(
                        job, i, b, total, counted
                    ),
                    Group(arrays, lane_values(c.elems, c.bits))
                    if config.replay.bucket_calls == "group"
                    else None,
                )
                workers.append(
                    (job.id, rank, host, programs.add(job.id, rank, program, _sum_and_contributors))
                )
        if watch:
            watch(net)
        running = time.perf_counter()
        with cycle_collection_paused():
            programs.run()
        finished = time.perf_counter()
        switch, links = aggregator_stats(net, topo), link_stats(net)
        arrivals, events = net.network.arrivals, net.sim.scheduled
    records = [w.outcome for *_, w in workers]
    per_job: list[JobIteration] = []
    for i in range(iterations):
        for job in topo.jobs:
            mine = [r[i] for (j, *_), r in zip(workers, records, strict=True) if j == job.id]
            compute, total = (
                max(r.compute_s for r in mine),
                max(r.compute_s + r.comm_s for r in mine),
            )
            per_job.append(
                JobIteration(
                    job.id,
                    i + 1,
                    compute,
                    total - compute,
                    total,
                    (job.id, i + 1) not in checks.failed,
                )
            )
    return WorkloadResult(
        config,
        buckets,
        [(j, r, h) for j, r, h, _ in workers],
        records,
        per_job,
        checks.max_abs_error,
        links,
        switch,
        arrivals,
        events,
        running - started,
        finished - running,
    )


def _sum_and_contributors(core: AllReduceCore) -> tuple[np.ndarray, Contributors]:
    return core.result(), core.contributors()


def workload_report(result: WorkloadResult, git: str) -> dict:
    """Every figure as JSON-able data: the configuration, seed and git revision, per iteration and
    job the compute, communication and iteration time, per worker its records, and (apart) the wall
    clock."""
    config = result.config
    network = config_json(config.network, len(result.workers))
    del network["size"]
    return {
        "config": {
            **network,
            "model": config.replay.workload,
            "scale": config.replay.scale,
            "bucket_cap_mb": config.replay.bucket_cap_mb,
            "iterations": config.replay.iterations,
            "compute_s": config.base_compute_s,
            **config.stragglers.as_dict(),
        },
        "seed": config.network.seed,
        "git": git,
        "results": {
            "verified": result.verified,
            "max_abs_error": result.max_abs_error,
            "buckets": result.buckets,
            "iterations": [asdict(it) for it in result.iterations],
            "workers": [
                {"job": job, "rank": rank, "host": host, "iterations": [asdict(r) for r in records]}
                for (job, rank, host), records in zip(result.workers, result.records, strict=True)
            ],
            "arrivals": result.arrivals,
            "events": result.events,
            **network_json(result),
        },
        "wall": wall_json(result),
    }
