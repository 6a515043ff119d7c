"""The iteration loop splits compute from all-reduce exactly, on a virtual clock."""

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


def test_each_iteration_is_the_models_compute_then_the_allreduce():
    clock = VirtualClock()
    calls = []

    def allreduce(array):
        calls.append(clock.now)
        clock.now += 0.004  # the all-reduce takes 4 ms of virtual time
        return array * 2

    model = ComputeModel(0.01, 3.0, DelayDistribution.parse("uniform:2ms"), seed=5, rank=1)
    result, timings = run_iterations(allreduce, np.arange(4), 6, model, sleep=clock.sleep, clock=clock)
    expected = model.durations(6)
    assert [t.compute_s for t in timings] == pytest.approx(expected)
    assert [t.allreduce_s for t in timings] == pytest.approx([0.004] * 6)
    assert calls == pytest.approx(np.cumsum(expected) + 0.004 * np.arange(6))
    assert result.tolist() == [0, 2, 4, 6]


def test_no_compute_means_no_sleep():
    clock = VirtualClock()
    slept = []
    _result, timings = run_iterations(lambda a: a, np.zeros(2), 3, ComputeModel(), sleep=slept.append, clock=clock)
    assert slept == [] and [t.compute_s for t in timings] == [0.0] * 3
