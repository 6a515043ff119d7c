"""Plots from the run's own data: the series equal what the run recorded (goodput and completion from
the result, queues from the channels' traces, utilisation adding up to each wire's exact busy time),
and the drawing is given exactly those series."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from ina.sim import plots
from ina.sim.allreduce import AllReduceConfig, simulate
from ina.sim.links import ETHERNET_OVERHEAD, Channel, LinkSpec
from ina.sim.output import Outputs
from ina.sim.workload import JobIteration
from ina.train.replay import IterationRecord


def test_busy_time_before_each_instant_follows_the_frames_on_the_wire():
    log = plots.WireLog(8e9)  # a byte per nanosecond
    for start, size in (
        (0.0, 76),
        (200e-9, 176),
        (400e-9, 976),
    ):  # 100, 200 and 1,000 ns on the wire
        log(start, bytes(size))
    times = np.array([-1e-9, 0.0, 50e-9, 100e-9, 150e-9, 300e-9, 500e-9, 2e-6])
    assert log.busy_before(times) == pytest.approx(
        [0, 0, 50e-9, 100e-9, 100e-9, 200e-9, 400e-9, 1300e-9], abs=1e-21
    )
    assert (log.busy, log.end) == (
        pytest.approx(1300e-9, abs=1e-21),
        pytest.approx(1400e-9, abs=1e-21),
    )
    assert plots.WireLog(1e9).busy_before(times).tolist() == [0.0] * len(times)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Two jobs on a star of 6 at 10 Gbit/s, queues short enough to drop: the data, what was drawn."""
    config = AllReduceConfig(workers=6, jobs=2, size=3000, link=LinkSpec(10e9, 1e-6, 6000), seed=3)
    outputs = Outputs(config, plot=tmp_path_factory.mktemp("plots"))
    result = simulate(config, watch=outputs.watch)
    outputs.close()
    drawn: dict[str, tuple] = {}
    with pytest.MonkeyPatch.context() as patch:
        for name in ("lines", "bars"):
            real = getattr(plots, name)
            patch.setattr(
                plots,
                name,
                lambda path, *args, real=real, **kw: (
                    drawn.setdefault(path.name, args) and real(path, *args, **kw)
                ),
            )
        written = outputs.draw(plots.Finish.of_allreduce(result))
    return result, outputs, json.loads((outputs.plot / "plots.json").read_text()), drawn, written


def test_every_plot_is_written(run):
    _result, outputs, _data, _drawn, written = run
    assert [path.name for path in written] == list(plots.FILES)
    for path in written[:-1]:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in outputs.plot.iterdir()) == sorted(plots.FILES)


def test_goodput_and_completion_are_the_results(run):
    result, _outputs, data, drawn, _written = run
    assert result.verified and sum(up.dropped for _n, up, _d in result.links) > 0
    assert data["goodput"] == {
        "host": [h for _j, _r, h in result.workers],
        "job": [j for j, _r, _h in result.workers],
        "bps": result.goodput_bps,
    }
    jobs = sorted({j for j, _r, _h in result.workers})
    assert jobs == [0, 1]
    assert data["jobs"] == {
        "job": jobs,
        "completion_s": [
            max(
                e
                for (j, _r, _h), e in zip(result.workers, result.elapsed_s, strict=True)
                if j == job
            )
            for job in jobs
        ],
    }
    # Drawn: per job, the workers' positions and goodput in Gbit/s; each job's completion in us.
    series = drawn["goodput.png"][3]
    assert series == {
        f"job {job}": (
            [i for i, (j, _r, _h) in enumerate(result.workers) if j == job],
            [
                g / 1e9
                for (j, _r, _h), g in zip(result.workers, result.goodput_bps, strict=True)
                if j == job
            ],
        )
        for job in jobs
    }
    _title, labels, values, ylabel = drawn["jobs.png"]
    assert (labels, values, ylabel) == (
        ["job 0", "job 1"],
        [t * 1e6 for t in data["jobs"]["completion_s"]],
        "virtual time (us)",
    )


def test_queues_are_the_busiest_ports_traces(run):
    _result, outputs, data, drawn, _written = run
    peaks = sorted(
        (c.stats.peak_queue for c in outputs.channels if c.stats.peak_queue), reverse=True
    )
    assert [max(q["bytes"]) for q in data["queues"].values()] == peaks[: plots.TOP] and len(
        peaks
    ) > 0
    by_name = {c.name: c for c in outputs.channels}
    for name, queue in data["queues"].items():
        assert list(zip(queue["time_s"], queue["bytes"], strict=True)) == by_name[name].trace
        assert queue["bytes"][-1] == 0  # settled: every frame left
    assert drawn["queues.png"][3] == {
        name: ([t * 1e6 for t in q["time_s"]], q["bytes"]) for name, q in data["queues"].items()
    }


def test_utilisation_adds_up_to_each_wires_busy_time(run):
    _result, outputs, data, drawn, _written = run
    links = data["links"]
    assert len(links["time_s"]) == plots.BINS and links["bin_s"] == pytest.approx(
        data["end_s"] / plots.BINS
    )
    by_name = {c.name: c for c in outputs.channels}
    busy = {
        c.name: (c.stats.bytes + ETHERNET_OVERHEAD * c.stats.frames) * 8 / c.rate
        for c in outputs.channels
    }
    assert sorted(links["busy"]) == sorted(sorted(busy, key=lambda n: -busy[n])[: plots.TOP])
    for name, fractions in links["busy"].items():
        assert by_name[name].stats.frames > 0 and all(0 <= f <= 1 + 1e-9 for f in fractions)
        assert sum(fractions) * links["bin_s"] == pytest.approx(busy[name], rel=1e-9)
    assert drawn["links.png"][3] == {
        name: ([t * 1e6 for t in links["time_s"]], f) for name, f in links["busy"].items()
    }


def test_the_highest_queues_and_each_jobs_last_worker_are_chosen(monkeypatch):
    monkeypatch.setattr(plots, "TOP", 2)
    channels = [Channel(f"h{n}:0->s1:{n}", 1e9, 0.0) for n in range(4)]
    logs = plots.record(channels)
    for channel, log in zip(channels, logs, strict=True):
        channel.tap = log
    for channel, burst in zip(
        channels, (2, 4, 0, 3), strict=True
    ):  # queues of 1, 3, 0 and 2 frames
        for _ in range(burst):
            channel.send(0.0, bytes(100))
        channel.settle()
    finish = plots.Finish(
        workers=[(0, 0, "h1"), (0, 1, "h2"), (1, 0, "h3")],
        done_s=[5e-7, 3e-7, 2e-7],
        goodput_bps=[1.0, 2.0, 3.0],
    )
    data = plots.plot_data(finish, channels, logs)
    assert list(data["queues"]) == ["h1:0->s1:1", "h3:0->s1:3"]
    assert [max(q["bytes"]) for q in data["queues"].values()] == [300, 200]
    assert list(data["links"]["busy"]) == ["h1:0->s1:1", "h3:0->s1:3"]  # 4 and 3 frames on the wire
    assert data["jobs"] == {"job": [0, 1], "completion_s": [5e-7, 2e-7]}
    assert data["end_s"] == pytest.approx(
        4 * 124 * 8e-9, rel=1e-12
    )  # the last frame's last bit, after 1 us
    assert "iterations" not in data  # an all-reduce's plots have no iterations.png


def test_a_workloads_finish_is_its_workers_last_iteration_and_goodput_over_its_communication():
    records = [
        [IterationRecord(1, 3e-6, 1e-6, 2e-6), IterationRecord(2, 7e-6, 1e-6, 3e-6)],
        [IterationRecord(1, 2e-6, 1e-6, 1e-6), IterationRecord(2, 4e-6, 1e-6, 1e-6)],
    ]
    result = SimpleNamespace(
        buckets=[100, 28],
        workers=[(0, 0, "h1"), (1, 0, "h2")],
        records=records,
        iterations=[
            JobIteration(0, 1, 1e-6, 2e-6, 3e-6, True),
            JobIteration(1, 1, 1e-6, 1e-6, 2e-6, True),
            JobIteration(0, 2, 1e-6, 3e-6, 4e-6, True),
            JobIteration(1, 2, 1e-6, 1e-6, 2e-6, True),
        ],
    )
    finish = plots.Finish.of_workload(result)
    assert finish.workers == [(0, 0, "h1"), (1, 0, "h2")]
    assert finish.done_s == [7e-6, 4e-6]
    assert finish.goodput_bps == [128 * 32 * 2 / (2e-6 + 3e-6), 128 * 32 * 2 / (1e-6 + 1e-6)]
    assert finish.iterations == {0: [3e-6, 4e-6], 1: [2e-6, 2e-6]}


def test_iterations_and_methods_are_drawn_from_exactly_their_data(tmp_path, monkeypatch):
    drawn: dict[str, tuple] = {}
    for name in ("lines", "bars"):
        real = getattr(plots, name)
        monkeypatch.setattr(
            plots,
            name,
            lambda path, *args, real=real, **kw: (
                drawn.setdefault(path.name, args) and real(path, *args, **kw)
            ),
        )
    channels = [Channel("h1:0->s1:1", 1e9, 0.0)]
    logs = plots.record(channels)
    finish = plots.Finish(
        [(0, 0, "h1"), (1, 0, "h2")], [5e-3, 4e-3], [1.0, 2.0], {0: [3e-3, 2e-3], 1: [1e-3, 4e-3]}
    )
    data = plots.plot_data(finish, channels, logs)
    assert data["iterations"] == {"0": [3e-3, 2e-3], "1": [1e-3, 4e-3]}
    written = plots.draw(tmp_path / "run", data)
    assert [p.name for p in written] == [*plots.FILES[:-1], *plots.WORKLOAD_FILES, "plots.json"]
    assert drawn["iterations.png"][1:] == (
        "iteration",
        "iteration time (ms)",
        {"job 0": ([1, 2], [3.0, 2.0]), "job 1": ([1, 2], [1.0, 4.0])},
    )
    times = {"switch": 114e-6, "ring": 153e-6, "ps": 902e-6}
    written = plots.draw_methods(tmp_path, times)
    assert [p.name for p in written] == list(plots.METHODS_FILES)
    assert written[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(written[1].read_text()) == {"iteration_s": times}
    _title, labels, values, ylabel = drawn["methods.png"]
    assert (labels, values, ylabel) == (
        ["switch", "ring", "ps"],
        [114.0, 153.0, 902.0],
        "iteration time (us, simulated)",
    )
