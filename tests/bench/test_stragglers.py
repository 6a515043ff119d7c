"""The stragglers bench's arithmetic: which workers a job's iteration time counts."""

import pytest

from ina.bench.stragglers import configurations, job_iteration


def report(host: str, times: list[tuple[float, float]]) -> dict:
    return {"host": host, "iterations": [{"compute_s": c, "allreduce_s": a} for c, a in times]}


def test_the_job_iteration_leaves_out_the_slowed_hosts():
    reports = [
        report("h1", [(0.04, 0.01), (0.04, 0.03)]),
        report("h2", [(0.04, 0.02), (0.04, 0.02)]),
        report("h4", [(0.12, 0.001), (0.12, 0.001)]),
    ]
    assert job_iteration(reports, {"h4": 3.0}) == (pytest.approx(0.04), pytest.approx(0.02))
    compute, allreduce = job_iteration(reports, {})
    assert compute == pytest.approx(0.04) and allreduce == pytest.approx(0.015)


def test_the_plan_pairs_each_policy_with_and_without_the_straggler():
    plan = configurations(3.0)
    assert [(policy, slow) for _label, policy, slow in plan] == [
        ("sync", {}),
        ("sync", {"h4": 3.0}),
        ("quorum:3", {}),
        ("quorum:3", {"h4": 3.0}),
    ]
