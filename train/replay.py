"""Workload replay on one worker: a real model's iteration with the compute emulated and the
communication real (every DDP bucket of its gradients all-reduced through the chosen aggregation).

Compute is emulated by sleeping, not spinning: a GPU's forward and backward pass leaves the host's
CPU free, and on a machine whose few cores also run the switch and the other workers a spinning
worker would steal the CPU their communication needs. The buckets are all-reduced after the
compute (DDP overlaps them with the backward pass), so an iteration's time here is compute +
communication, an upper bound of DDP's. DDP launches each bucket's all-reduce asynchronously once
its gradients are ready; here compute precedes communication, so every bucket is ready at once and
the iteration's buckets go as one group (`bucket_calls="group"`, the default: one call on the wire;
through the switch or server each bucket's sums are bit for bit its own call's, ina.hosts.group),
or one call after another (`"separate"`, as before: one window ramp-up and one tail per bucket).
"""

import hashlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from ina.train.sgd import AllReduce
from ina.train.workloads import BUCKET_CAP_MB, scaled_buckets, workload

AllReduceMany = Callable[[list[np.ndarray]], list[np.ndarray]]  # the sums of a group, in order
BUCKET_CALLS = ("group", "separate")  # an iteration's buckets as one call, or a call each


@dataclass(frozen=True)
class ReplayConfig:
    workload: str = "resnet50"
    scale: float = 0.01  # of every bucket's elements and of the compute time
    bucket_cap_mb: float = BUCKET_CAP_MB
    iterations: int = 20
    seed: int = 0
    bucket_calls: str = "group"  # one of BUCKET_CALLS

    def buckets(self) -> list[int]:
        """Elements all-reduced per bucket, in order: the model's DDP buckets, scaled."""
        return scaled_buckets(workload(self.workload), self.scale, self.bucket_cap_mb)

    @property
    def compute_s(self) -> float:
        """One iteration's compute: the model's estimate (train/workloads.py), scaled."""
        return workload(self.workload).compute_s * self.scale


@dataclass
class IterationRecord:
    iteration: int
    wall_s: float  # since the replay began
    compute_s: float
    comm_s: float
    # this worker process's CPU while it communicated (its I/O thread's included); in emulation only:
    # on a shared machine wall time is the load's, CPU time the method's own cost
    comm_cpu_s: float | None = None


@dataclass
class ReplayHistory:
    buckets: list[int]  # elements all-reduced per bucket, in order
    iterations: list[IterationRecord] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "buckets": self.buckets,
            "iterations": len(self.iterations),
            "compute_s": sum(r.compute_s for r in self.iterations),
            "comm_s": sum(r.comm_s for r in self.iterations),
            "per_iteration": [asdict(r) for r in self.iterations],
        }


def replay(
    config: ReplayConfig,
    rank: int,
    allreduce: AllReduce,
    on_iteration: Callable[[IterationRecord], None] | None = None,
    allreduce_many: AllReduceMany | None = None,
) -> tuple[ReplayHistory, str]:
    """Run the iterations, the buckets through `allreduce_many` (grouped: needed then) or
    `allreduce` (separate); returns the history and a SHA-256 of the last iteration's sums, which
    every worker must share."""
    history = ReplayHistory(config.buckets())
    rng = np.random.default_rng([config.seed, rank])
    grads = [rng.standard_normal(n, dtype=np.float32) for n in history.buckets]
    compute_s = config.compute_s
    grouped = allreduce_many if config.bucket_calls == "group" else None
    if config.bucket_calls == "group" and grouped is None:
        raise ValueError("bucket_calls='group' needs allreduce_many")
    digest = hashlib.sha256()
    start = time.perf_counter()
    for i in range(config.iterations):
        t0 = time.perf_counter()
        time.sleep(compute_s)
        t1, cpu = time.perf_counter(), time.process_time()
        sums = grouped(grads) if grouped else [allreduce(g) for g in grads]
        t2 = time.perf_counter()
        record = IterationRecord(i + 1, t2 - start, t1 - t0, t2 - t1, time.process_time() - cpu)
        history.iterations.append(record)
        if on_iteration is not None:
            on_iteration(record)
    for s in sums:
        digest.update(s.tobytes())
    return history, digest.hexdigest()
