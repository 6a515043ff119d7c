"""The iteration loop splits compute from all-reduce exactly, on a virtual clock, and keeps at most
staleness + 1 all-reduces in flight."""

from concurrent.futures import Future

import numpy as np
import pytest

from ina.hosts.compute import ComputeModel, DelayDistribution
from ina.hosts.iterations import run_iterations


class VirtualClock:
    def __init__(self):
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def __call__(self) -> float:
        return self.now


class Pipeline:
    """All-reduces that finish in call order, each taking `cost` virtual seconds of the waiter's
    time when it is waited for: records how many were in flight at each start."""

    def __init__(self, clock: VirtualClock, cost: float):
        self.clock, self.cost, self.in_flight, self.starts = clock, cost, 0, []

    def __call__(self, array: np.ndarray) -> Future:
        self.in_flight += 1
        self.starts.append((self.clock.now, self.in_flight))
        return _Waited(self, array * 2)


class _Waited(Future):
    def __init__(self, pipeline: Pipeline, value):
        super().__init__()
        self.pipeline, self.value = pipeline, value

    def result(self, timeout=None):
        if not self.done():
            self.pipeline.clock.now += self.pipeline.cost
            self.pipeline.in_flight -= 1
            self.set_result((self.value, "contributors"))
        return super().result(timeout)


def test_each_iteration_is_the_models_compute_then_the_allreduce():
    clock = VirtualClock()
    allreduce = Pipeline(clock, 0.004)
    model = ComputeModel(0.01, 3.0, DelayDistribution.parse("uniform:2ms"), seed=5, rank=1)
    results = []
    timings = run_iterations(
        allreduce,
        lambda i: np.arange(4) + i,
        6,
        model,
        lambda i, r: results.append((i, r)),
        sleep=clock.sleep,
        clock=clock,
    )
    expected = model.durations(6)
    assert [t.compute_s for t in timings] == pytest.approx(expected)
    assert [t.allreduce_s for t in timings] == pytest.approx([0.004] * 6)
    assert [start for start, _n in allreduce.starts] == pytest.approx(
        np.cumsum(expected) + 0.004 * np.arange(6)
    )
    assert {n for _start, n in allreduce.starts} == {1}
    assert [(i, total.tolist(), c) for i, (total, c) in results] == [
        (i, [2 * i, 2 * i + 2, 2 * i + 4, 2 * i + 6], "contributors") for i in range(6)
    ]  # each its own array


def test_staleness_keeps_s_plus_one_in_flight_and_waits_for_the_one_s_back():
    clock = VirtualClock()
    allreduce = Pipeline(clock, 0.004)
    seen = []
    timings = run_iterations(
        allreduce,
        lambda i: np.zeros(2),
        6,
        ComputeModel(0.01),
        lambda i, r: seen.append(i),
        staleness=2,
        sleep=clock.sleep,
        clock=clock,
    )
    assert [n for _start, n in allreduce.starts] == [1, 2, 3, 3, 3, 3]
    assert [t.allreduce_s for t in timings] == pytest.approx([0, 0, 0.004, 0.004, 0.004, 0.004])
    assert allreduce.in_flight == 0 and seen == list(range(6))  # the last ones drained, in order


def test_no_compute_means_no_sleep():
    clock = VirtualClock()
    slept = []
    timings = run_iterations(
        Pipeline(clock, 0.0),
        lambda i: np.zeros(2),
        3,
        ComputeModel(),
        lambda i, r: None,
        sleep=slept.append,
        clock=clock,
    )
    assert slept == [] and [t.compute_s for t in timings] == [0.0] * 3
