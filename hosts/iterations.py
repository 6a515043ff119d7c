"""A worker's iterations: emulated compute, then an all-reduce, timed apart.

`ina worker --repeat N --compute-ms C --slowdown F --delay-dist D [--staleness S]` runs this loop;
`ina run` passes the flags per host (the straggler injector, hosts/compute.py) and the stragglers
bench reads the per-iteration split. Under bounded staleness S an iteration waits only for the
all-reduce S iterations back, so up to S + 1 are in flight (docs/protocol.md).
"""

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from ina.hosts.compute import ComputeModel
from ina.hosts.worker import Reduced


@dataclass(frozen=True)
class Iteration:
    compute_s: float
    allreduce_s: float  # the time this iteration waited for all-reduces (its own, or S back)


def run_iterations(allreduce_async: Callable[[np.ndarray], Future], array: np.ndarray, iterations: int,
                   compute: ComputeModel, staleness: int = 0, sleep: Callable[[float], None] = time.sleep,
                   clock: Callable[[], float] = time.perf_counter) -> tuple[Reduced, list[Iteration]]:
    """Run `iterations` rounds of compute (a sleep of the model's duration) then an all-reduce of
    `array`, with at most `staleness` + 1 all-reduces in flight; return the last all-reduce's
    outcome and the measured split of each round."""
    timings = []
    pending: deque[Future] = deque()
    last = None
    for duration in compute.durations(iterations):
        t0 = clock()
        if duration > 0:
            sleep(duration)
        t1 = clock()
        pending.append(allreduce_async(array))
        while len(pending) > staleness:
            last = pending.popleft().result()
        timings.append(Iteration(t1 - t0, clock() - t1))
    while pending:
        last = pending.popleft().result()
    return last, timings
