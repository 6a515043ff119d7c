"""A worker's iterations: emulated compute, then an all-reduce, timed apart.

`ina worker --repeat N --compute-ms C --slowdown F --delay-dist D` runs this loop; `ina run` passes
the flags per host (the straggler injector, hosts/compute.py) and the stragglers bench reads the
per-iteration split.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ina.hosts.compute import ComputeModel


@dataclass(frozen=True)
class Iteration:
    compute_s: float
    allreduce_s: float


def run_iterations(allreduce: Callable[[np.ndarray], np.ndarray], array: np.ndarray, iterations: int,
                   compute: ComputeModel, sleep: Callable[[float], None] = time.sleep,
                   clock: Callable[[], float] = time.perf_counter) -> tuple[np.ndarray, list[Iteration]]:
    """Run `iterations` rounds of compute (a sleep of the model's duration) then `allreduce(array)`;
    return the last result and the measured split of each round."""
    timings = []
    result = array
    for duration in compute.durations(iterations):
        t0 = clock()
        if duration > 0:
            sleep(duration)
        t1 = clock()
        result = allreduce(array)
        timings.append(Iteration(t1 - t0, clock() - t1))
    return result, timings
