"""The churn generator and the trace reader: seeded, the Philly percentiles, the offered load."""

import itertools

import pytest

from ina.sim.churn import (
    PHILLY_RUNTIME_S,
    ChurnJob,
    ChurnSpec,
    TraceError,
    at_load,
    generate,
    philly_duration,
    read_trace,
)


def test_the_same_seed_gives_the_same_jobs():
    spec = ChurnSpec(jobs=200)
    assert generate(spec, 7) == generate(spec, 7)
    assert generate(spec, 7) != generate(spec, 8)
    jobs = generate(spec, 7)
    assert all(a.arrival_s < b.arrival_s for a, b in itertools.pairwise(jobs))
    assert {j.workers for j in jobs} <= set(range(2, 33))
    assert all(j.slots == 32 * j.workers for j in jobs)
    assert all(1.0 <= j.duration_s <= spec.max_duration_s for j in jobs)


def test_durations_follow_the_philly_percentiles():
    for q, seconds in PHILLY_RUNTIME_S[1:-1]:
        assert philly_duration(q / 100, 1e9) == pytest.approx(seconds, rel=1e-12)
    assert philly_duration(0.0, 1e9) == 1.0
    assert philly_duration(0.5, 600.0) == 600.0  # the cap
    # log-linear between percentiles: halfway from p40 (630 s) to p50 (1186 s)
    assert philly_duration(0.45, 1e9) == pytest.approx((630 * 1186) ** 0.5, rel=1e-12)


def test_at_load_scales_arrivals_to_the_offered_load():
    jobs = generate(ChurnSpec(jobs=300), 1)
    for load in (0.6, 0.95):
        scaled = at_load(jobs, load, 8192)
        span = scaled[-1].arrival_s - scaled[0].arrival_s
        offered = sum(j.slots * j.duration_s for j in scaled) / (8192 * span)
        assert offered == pytest.approx(load, rel=1e-12)
        assert [(j.workers, j.duration_s) for j in scaled] == [
            (j.workers, j.duration_s) for j in jobs
        ]


def test_a_trace_is_read_sorted_and_bad_lines_are_named(tmp_path):
    good = tmp_path / "trace.csv"
    good.write_text("arrival_s,workers,duration_s,model,slots\n30,4,100,vgg16,\n0,2,50.5,,64\n")
    assert read_trace(good) == [
        ChurnJob(0.0, 2, "resnet50", 50.5, 64),
        ChurnJob(30.0, 4, "vgg16", 100.0, 128),
    ]
    for text, message in (
        ("arrival_s,workers\n1,2\n", "columns arrival_s, workers, duration_s"),
        ("arrival_s,workers,duration_s\n", "columns arrival_s"),
        ("arrival_s,workers,duration_s\n0,2,10\n5,x,10\n", "line 3: invalid literal"),
        ("arrival_s,workers,duration_s\n0,0,10\n", "line 2: arrival_s >= 0, duration_s > 0"),
        ("arrival_s,workers,duration_s,model\n0,2,10,alexnet\n", "model 'alexnet' is not one of"),
    ):
        bad = tmp_path / "bad.csv"
        bad.write_text(text)
        with pytest.raises(TraceError, match=message):
            read_trace(bad)
    with pytest.raises(TraceError, match="No such file"):
        read_trace(tmp_path / "missing.csv")
