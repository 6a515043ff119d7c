"""The straggler injector's models: exact durations from the seed, and one-line errors."""

import numpy as np
import pytest

from ina.hosts.compute import ComputeModel, DelayDistribution, parse_duration, parse_straggler


@pytest.mark.parametrize(
    ("text", "seconds"), [("20ms", 0.02), ("500us", 5e-4), ("1.5s", 1.5), ("7", 0.007)]
)
def test_durations_with_units(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("h3", "use HOST:FACTORx"),
        ("h3:0x", "use HOST:FACTORx"),
        (":3x", "use HOST:FACTORx"),
        ("h3:fast", "HOST:FACTORx"),
    ],
)
def test_bad_stragglers_name_the_form(text, message):
    with pytest.raises(ValueError, match=message):
        parse_straggler(text)


def test_straggler_factor():
    assert parse_straggler("h3:3x") == ("h3", 3.0) and parse_straggler("h10:1.5") == ("h10", 1.5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gauss:5ms", "use exp:MEAN"),
        ("exp:", "use exp:MEAN"),
        ("exp:5ms,2", "takes one duration"),
        ("pareto:5ms", "needs MIN,ALPHA"),
        ("pareto:5ms,0", "ALPHA must be"),
        ("uniform:x", "not a duration"),
    ],
)
def test_bad_distributions_say_what_is_expected(text, message):
    with pytest.raises(ValueError, match=message):
        DelayDistribution.parse(text)


def test_a_model_repeats_with_its_seed_and_differs_per_rank():
    extra = DelayDistribution.parse("exp:10ms")
    a = ComputeModel(0.05, 3.0, extra, seed=7, rank=2).durations(50)
    assert a == ComputeModel(0.05, 3.0, extra, seed=7, rank=2).durations(50)
    assert a != ComputeModel(0.05, 3.0, extra, seed=7, rank=1).durations(50)
    assert min(a) >= 0.15
    assert np.mean(a) - 0.15 == pytest.approx(0.01, rel=0.35)  # exponential with mean 10 ms


def test_slowdown_multiplies_the_base_only_and_each_distribution_keeps_its_bounds():
    assert ComputeModel(0.02, 3.0).durations(3) == [pytest.approx(0.06)] * 3
    uniform = ComputeModel(0.0, 1.0, DelayDistribution.parse("uniform:4ms"), seed=1).durations(200)
    assert min(uniform) >= 0 and max(uniform) <= 0.004
    pareto = ComputeModel(0.0, 1.0, DelayDistribution.parse("pareto:2ms,1.5"), seed=1).durations(
        200
    )
    assert (
        min(pareto) >= 0.002 and max(pareto) > 0.006
    )  # heavy tail: some draws far above the minimum
    assert str(DelayDistribution.parse("pareto:2ms,1.5")) == "pareto:2ms,1.5"


def test_a_released_worker_waits_for_the_instant_its_runners_line_names(monkeypatch, capsys):
    """Every worker gets the same line and starts at the instant it names, on the machine's clock,
    however late it read the line; a bare `go` starts at once."""
    import io

    from ina.hosts import compute

    slept: list[float] = []
    monkeypatch.setattr(compute.time, "monotonic", lambda: 100.0)
    monkeypatch.setattr(compute.time, "sleep", slept.append)
    line = compute.release_line(0.25)
    assert line == "go 100.250000\n"
    monkeypatch.setattr(compute.time, "monotonic", lambda: 100.125)  # read 125 ms later
    monkeypatch.setattr(compute.sys, "stdin", io.StringIO(line))
    compute.start_together(3)
    assert slept == [0.125]
    assert capsys.readouterr().out == '{"rank": 3, "ready": true}\n'
    monkeypatch.setattr(compute.time, "monotonic", lambda: 101.0)  # read after the instant
    monkeypatch.setattr(compute.sys, "stdin", io.StringIO(line))
    compute.start_together(3)
    monkeypatch.setattr(compute.sys, "stdin", io.StringIO("go\n"))
    compute.start_together(3)
    assert slept == [0.125, 0.0]
