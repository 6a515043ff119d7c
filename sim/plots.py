"""PNG plots of one simulated run, from what the run recorded (bench/plots.py draws them).

- links.png: the busy fraction of the busiest link directions over virtual time, in `BINS` equal
  bins: each frame occupies its channel's wire from its first bit for its serialization (the
  channels' taps log both), so a bin's busy time is exact and the bins add up to the channel's
  wire time.
- queues.png: the egress queue occupancy (bytes waiting) of the ports whose queue peaked highest,
  the channels' `trace` itself, held between changes.
- goodput.png: each worker's goodput (payload bits reduced per simulated second), one line per job.
- jobs.png: each job's completion, when its last worker had its result.
- iterations.png (a workload, `--model`): each job's iteration time, iteration by iteration.
- methods.png (`--compare`, beside a directory of the above per method): each method's iteration
  time, one all-reduce (`draw_methods`, its data in methods.json).

`plot_data` gathers the series (written beside the PNGs as plots.json: the same seed gives the same
file), `draw` draws exactly them. Recording costs each channel's trace and a float per frame.
"""

import json
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ina.bench.plots import bars, lines
from ina.sim.allreduce import AllReduceResult
from ina.sim.links import Channel, wire_bits
from ina.sim.units import time_unit
from ina.sim.workload import WorkloadResult

BINS = 100  # equal bins of virtual time for the utilisation plot
TOP = 8  # link directions in the utilisation and queue plots
FILES = ("links.png", "queues.png", "goodput.png", "jobs.png", "plots.json")
WORKLOAD_FILES = ("iterations.png",)  # beside FILES for a workload
METHODS_FILES = (
    "methods.png",
    "methods.json",
)  # `--compare`: beside a directory of FILES per method


@dataclass(frozen=True)
class Finish:
    """What the plots show of a run's workers, in its order: (job, rank, host) each, when each had
    its last result (simulated seconds from the start), its goodput (payload bits reduced per second
    of its communication), and a workload's iteration times per job."""

    workers: list[tuple[int, int, str]]
    done_s: list[float]
    goodput_bps: list[float]
    iterations: dict[int, list[float]] | None = None

    @classmethod
    def of_allreduce(cls, result: AllReduceResult) -> "Finish":
        return cls(result.workers, result.elapsed_s, result.goodput_bps)

    @classmethod
    def of_workload(cls, result: WorkloadResult) -> "Finish":
        """A worker's goodput: every bucket of every iteration, 32 bits an element, over the time
        its all-reduces did not overlap compute."""
        bits = sum(result.buckets) * 32
        iterations: dict[int, list[float]] = {}
        for it in result.iterations:
            iterations.setdefault(it.job, []).append(it.iteration_s)
        return cls(
            result.workers,
            [records[-1].wall_s for records in result.records],
            [
                bits * len(records) / comm if (comm := sum(r.comm_s for r in records)) else 0.0
                for records in result.records
            ],
            iterations,
        )


class WireLog:
    """A channel's tap for the utilisation plot: each frame's start on the wire and its
    serialization (seconds)."""

    __slots__ = ("_rate", "durations", "starts")

    def __init__(self, rate: float):
        self._rate = rate
        self.starts, self.durations = array("d"), array("d")

    def __call__(self, start: float, frame: bytes | bytearray) -> None:
        self.starts.append(start)
        self.durations.append(wire_bits(len(frame)) / self._rate)

    def busy_before(self, times: np.ndarray) -> np.ndarray:
        """The wire's busy time before each of `times` (frames on one wire do not overlap)."""
        starts, durations = np.frombuffer(self.starts), np.frombuffer(self.durations)
        if not len(starts):
            return np.zeros(len(times))
        done = np.concatenate(([0.0], np.cumsum(durations)))
        last = (
            np.searchsorted(starts, times, side="right") - 1
        )  # the last frame started by each time
        clipped = np.maximum(last, 0)
        partial = np.clip(times - starts[clipped], 0.0, durations[clipped])
        return np.where(last >= 0, done[clipped] + partial, 0.0)

    @property
    def busy(self) -> float:
        """The wire's busy time over the run."""
        return float(np.sum(np.frombuffer(self.durations)))

    @property
    def end(self) -> float:
        """When the last frame's last bit left (0 when none did)."""
        return self.starts[-1] + self.durations[-1] if self.starts else 0.0


def record(channels: list[Channel]) -> list[WireLog]:
    """Turn on each channel's trace and make its tap's log (the caller sets the taps)."""
    for channel in channels:
        channel.trace = []
    return [WireLog(channel.rate) for channel in channels]


def plot_data(finish: Finish, channels: list[Channel], logs: list[WireLog]) -> dict:
    """The plotted series, JSON-able, from the run's workers, its channels (settled: their traces
    end with empty queues) and their logs."""
    end = max([*finish.done_s, *(log.end for log in logs)])
    edges = np.linspace(0.0, end, BINS + 1)
    width = end / BINS
    busiest = sorted(range(len(channels)), key=lambda i: -logs[i].busy)[:TOP]
    utilisation = {
        channels[i].name: (
            np.diff(logs[i].busy_before(edges)) / width if width else np.zeros(BINS)
        ).tolist()
        for i in busiest
        if logs[i].busy > 0
    }
    queued = sorted((c for c in channels if c.stats.peak_queue), key=lambda c: -c.stats.peak_queue)[
        :TOP
    ]
    completion: dict[int, float] = {}
    for (job, _rank, _host), done in zip(finish.workers, finish.done_s, strict=True):
        completion[job] = max(completion.get(job, 0.0), done)
    iterations = (
        {}
        if finish.iterations is None
        else {"iterations": {str(job): times for job, times in finish.iterations.items()}}
    )
    return {
        "end_s": end,
        "links": {"bin_s": width, "time_s": edges[:-1].tolist(), "busy": utilisation},
        "queues": {
            c.name: {"time_s": [t for t, _b in c.trace], "bytes": [b for _t, b in c.trace]}
            for c in queued
        },
        "goodput": {
            "host": [host for _j, _r, host in finish.workers],
            "job": [job for job, _r, _h in finish.workers],
            "bps": finish.goodput_bps,
        },
        "jobs": {"job": list(completion), "completion_s": list(completion.values())},
        **iterations,
    }


def draw(directory: Path, data: dict) -> list[Path]:
    """The four PNGs (and a workload's iterations.png) and plots.json in `directory` (made if
    missing; raises OSError)."""
    directory.mkdir(parents=True, exist_ok=True)
    unit, per_second = time_unit(data["end_s"])
    axis = f"virtual time ({unit})"
    links = data["links"]
    busy = {
        name: ([t * per_second for t in links["time_s"]], fractions)
        for name, fractions in links["busy"].items()
    }
    queues = {
        name: ([t * per_second for t in q["time_s"]], q["bytes"])
        for name, q in data["queues"].items()
    }
    goodput = data["goodput"]
    per_job: dict[int, tuple[list, list]] = {}
    for index, (job, bps) in enumerate(zip(goodput["job"], goodput["bps"], strict=True)):
        xs, ys = per_job.setdefault(job, ([], []))
        xs.append(index)
        ys.append(bps / 1e9)
    jobs = data["jobs"]
    paths = [
        lines(
            directory / "links.png",
            f"Link utilisation, the {len(busy)} busiest directions",
            axis,
            "busy fraction of the bin",
            busy or {"no frame on any wire": ([0.0], [0.0])},
            marker=None,
            ymin=0,
        ),
        lines(
            directory / "queues.png",
            f"Egress queues, the {len(queues)} highest peaks",
            axis,
            "bytes queued",
            queues or {"no queue built": ([0.0, data["end_s"] * per_second], [0, 0])},
            marker=None,
            step=True,
            ymin=0,
        ),
        lines(
            directory / "goodput.png",
            "Goodput per worker",
            "worker (job, then rank)",
            "Gbit/s",
            {f"job {job}": series for job, series in per_job.items()},
            ymin=0,
        ),
        bars(
            directory / "jobs.png",
            "Completion per job",
            [f"job {job}" for job in jobs["job"]],
            [t * per_second for t in jobs["completion_s"]],
            axis,
        ),
    ]
    if "iterations" in data:
        iteration_unit, iteration_scale = time_unit(
            max(t for times in data["iterations"].values() for t in times)
        )
        paths.append(
            lines(
                directory / "iterations.png",
                "Iteration time per job (in-network aggregation)",
                "iteration",
                f"iteration time ({iteration_unit})",
                {
                    f"job {job}": (
                        list(range(1, len(times) + 1)),
                        [t * iteration_scale for t in times],
                    )
                    for job, times in data["iterations"].items()
                },
                ymin=0,
            )
        )
    path = directory / "plots.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    return [*paths, path]


def draw_methods(directory: Path, times: dict[str, float]) -> list[Path]:
    """methods.png, each method's iteration time (one all-reduce: its slowest worker's), and its data
    methods.json, in `directory` (raises OSError)."""
    directory.mkdir(parents=True, exist_ok=True)
    unit, per_second = time_unit(max(times.values()))
    png = bars(
        directory / "methods.png",
        "Iteration time per method (one all-reduce)",
        list(times),
        [t * per_second for t in times.values()],
        f"iteration time ({unit}, simulated)",
    )
    path = directory / "methods.json"
    path.write_text(json.dumps({"iteration_s": times}, indent=1) + "\n")
    return [png, path]
