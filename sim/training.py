"""Real training in virtual time: train/sgd.py's data-parallel SGD (its `steps`, the same program
`ina train` runs on real all-reduces) on every worker of every job, each gradient all-reduced
through the simulated network (the real switch program, the real worker cores) and the compute
in virtual time, so accuracy against time, and the time to an accuracy, come out in simulated
seconds.

Compute per iteration is `compute_s` of virtual time (a GPU's forward and backward pass: the
numpy gradient itself takes no virtual time), slowed by the straggler models. The target accuracy
is that of the same SGD with numpy's sum as the all-reduce (`numpy_training`: every worker in
lockstep, float32 gradients summed exactly as floats) less one point, as `ina train` takes its
reference's; the switch sums in block floating point (docs/accuracy.md), so the weights are not
bit-identical to numpy's, and the accuracy stays within a point of it (tests/sim/test_training.py).
"""

import hashlib
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from ina.hosts.core import AllReduceCore
from ina.sim.allreduce import (
    AllReduceConfig,
    aggregator_stats,
    config_json,
    harness,
    link_stats,
    network_json,
    wall_json,
)
from ina.sim.links import ChannelStats
from ina.sim.workload import GRADIENTS, Programs, Stragglers
from ina.train.data import Dataset, load
from ina.train.feedback import ErrorFeedback
from ina.train.models import Model
from ina.train.sgd import Config, History, Reduce, Sums, check, steps, time_to_accuracy

TARGET_BELOW = (
    0.01  # the target accuracy: the numpy all-reduce's final one less this (as `ina train`)
)


@dataclass(frozen=True)
class TrainingConfig:
    """`sgd` (model, epochs, global batch, learning rate, hidden units, seed) on `dataset` by every
    job of `network` (its topology, jobs, packets, window, policy, links, hosts; its size and dtype
    unused), `compute_s` of virtual compute per iteration under `stragglers`."""

    network: AllReduceConfig = GRADIENTS
    sgd: Config = field(default_factory=Config)
    dataset: str = "digits"
    compute_s: float = 0.0
    stragglers: Stragglers = field(default_factory=Stragglers)
    error_feedback: bool = (
        False  # each worker carries its quantization residual (train/feedback.py)
    )


@dataclass
class TrainingResult:
    config: TrainingConfig
    workers: list[tuple[int, int, str]]  # (job, rank, host)
    histories: list[History]  # per worker: simulated seconds
    weights_identical: bool  # every worker of each job ended with the same weights
    numpy_accuracy: (
        float  # the same SGD with numpy all-reduces, per job's worker count (the first job's)
    )
    target_accuracy: float
    links: list[tuple[str, ChannelStats, ChannelStats]]
    switch: dict[str, dict]
    arrivals: int
    events: int
    wall_setup_s: float
    wall_run_s: float

    def time_to_target_s(self, index: int = 0) -> float | None:
        """Simulated seconds until worker `index`'s test accuracy reached the target."""
        return time_to_accuracy(
            [asdict(e) for e in self.histories[index].epochs], self.target_accuracy
        )


def numpy_training(config: Config, data: Dataset, n_workers: int) -> tuple[Model, History]:
    """The same SGD with numpy's sum of the float32 gradients as the all-reduce: every worker's
    program in lockstep (no time passes); returns worker 0's model and history."""
    programs = [
        steps(config, data, rank, n_workers, clock=lambda: 0.0) for rank in range(n_workers)
    ]
    requests = [next(p) for p in programs]
    while True:
        grads = [r.sent for r in requests if isinstance(r, Reduce) and r.grad is not None]
        sums: Sums = [(np.sum(grads, axis=0), n_workers)] if grads else []
        try:
            requests = [p.send(sums) for p in programs]
        except StopIteration as finished:
            return finished.value


def simulate_training(config: TrainingConfig, engine: str = "native") -> TrainingResult:
    """Train on every job at once; a batch that does not split into a job's workers raises
    ValueError, a worker's WorkerError propagates."""
    started = time.perf_counter()
    c, sgd = config.network, config.sgd
    topo = c.topology()
    data = load(config.dataset, sgd.seed)
    for job in topo.jobs:
        check(sgd, data, len(job.workers))
    with harness(c, topo, engine) as net:
        programs = Programs(net)
        workers = []
        for job in topo.jobs:
            for rank, host in enumerate(job.workers):
                compute = config.stragglers.compute(config.compute_s, sgd.seed, job.id, rank, host)
                program = steps(
                    sgd,
                    data,
                    rank,
                    len(job.workers),
                    lambda: net.now,
                    compute=compute,
                    staleness=job.policy.staleness,
                    feedback=ErrorFeedback(c.elems, len(job.workers), c.bits)
                    if config.error_feedback
                    else None,
                )
                workers.append(
                    (job.id, rank, host, programs.add(job.id, rank, program, sum_and_counts))
                )
        running = time.perf_counter()
        programs.run()
        finished = time.perf_counter()
        switch, links = aggregator_stats(net, topo), link_stats(net)
        arrivals, events = net.network.arrivals, net.sim.scheduled
    outcomes = [w.outcome for *_, w in workers]
    digests = {}
    for (job, *_), (model, _history) in zip(workers, outcomes, strict=True):
        digests.setdefault(job, set()).add(hashlib.sha256(model.params.tobytes()).digest())
    _, reference = numpy_training(sgd, data, len(topo.jobs[0].workers))
    accuracy = reference.epochs[-1].test_accuracy
    return TrainingResult(
        config,
        [(j, r, h) for j, r, h, _ in workers],
        [h for _m, h in outcomes],
        all(len(d) == 1 for d in digests.values()),
        accuracy,
        accuracy - TARGET_BELOW,
        links,
        switch,
        arrivals,
        events,
        running - started,
        finished - running,
    )


def sum_and_counts(core: AllReduceCore) -> tuple[np.ndarray, np.ndarray]:
    """A finished call as train/sgd.py applies it: the sum and how many gradients each element holds."""
    total = core.result()
    return total, core.contributors().element_counts(total.shape)


def training_report(result: TrainingResult, git: str) -> dict:
    """Every figure as JSON-able data: the configuration, seed and git revision, each worker's
    epochs in simulated seconds, the numpy all-reduce's accuracy, the time to the target, and
    (apart) the wall clock."""
    config = result.config
    network = config_json(config.network, len(result.workers))
    del network["size"], network["dtype"]
    first = result.histories[0]
    return {
        "config": {
            **network,
            "train": f"{config.sgd.model}:{config.dataset}",
            "sgd": asdict(config.sgd),
            "compute_s": config.compute_s,
            "error_feedback": config.error_feedback,
            **config.stragglers.as_dict(),
        },
        "seed": config.network.seed,
        "git": git,
        "results": {
            "test_accuracy": first.epochs[-1].test_accuracy,
            "numpy_allreduce_test_accuracy": result.numpy_accuracy,
            "target_accuracy": result.target_accuracy,
            "time_to_target_s": result.time_to_target_s(),
            "weights_identical": result.weights_identical,
            "iterations": first.iterations,
            "epochs": [asdict(e) for e in first.epochs],
            "workers": [
                {"job": job, "rank": rank, "host": host, **history.as_dict()}
                for (job, rank, host), history in zip(result.workers, result.histories, strict=True)
            ],
            "arrivals": result.arrivals,
            "events": result.events,
            **network_json(result),
        },
        "wall": wall_json(result),
    }
