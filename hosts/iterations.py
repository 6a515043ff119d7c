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


def run_iterations(
    allreduce_async: Callable[[np.ndarray], Future],
    array_of: Callable[[int], np.ndarray],
    iterations: int,
    compute: ComputeModel,
    on_result: Callable[[int, Reduced], None],
    staleness: int = 0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.perf_counter,
) -> list[Iteration]:
    """Run `iterations` rounds of compute (a sleep of the model's duration) then an all-reduce of
    iteration i's `array_of(i)`, with at most `staleness` + 1 all-reduces in flight; each outcome
    goes to `on_result(i, reduced)` in order, as it is waited for. Returns the measured split of
    each round: making the arrays and `on_result` (a verification) count in neither part."""
    timings = []
    pending: deque[tuple[int, Future]] = deque()

    def wait_oldest() -> float:
        index, future = pending.popleft()
        t0 = clock()
        reduced = future.result()
        waited = clock() - t0
        on_result(index, reduced)
        return waited

    for index, duration in enumerate(compute.durations(iterations)):
        array = array_of(index)
        t0 = clock()
        if duration > 0:
            sleep(duration)
        computed = clock() - t0
        t1 = clock()
        pending.append((index, allreduce_async(array)))
        waited = clock() - t1
        while len(pending) > staleness:
            waited += wait_oldest()
        timings.append(Iteration(computed, waited))
    while pending:
        wait_oldest()
    return timings
