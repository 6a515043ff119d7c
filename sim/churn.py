"""Job churn for the switch's slot pool: a seeded generator of jobs (arrival, workers, model,
duration) and a reader for a user's own trace (CSV), both giving the same `ChurnJob` list that
sim/pool.py runs.

Defaults and where each comes from (docs/simulation.md, "Job churn"):
- duration: the empirical distribution of the Microsoft Philly trace's job run times (Jeon et al.,
  "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads", USENIX ATC '19;
  the 83,154 run times alibaba/clusterdata redistributes as
  cluster-trace-gpu-v2020/analysis/philly_runtime.csv for the PAI paper's Figure 4), as the
  percentiles in `PHILLY_RUNTIME_S`, sampled by inverse CDF between them and capped at
  `max_duration_s` (the trace's tail reaches 53 days);
- arrivals: Poisson; the rate is a parameter, by default Philly's mean, 117,325 jobs submitted
  between 2017-08-07 and 2017-12-22 (msr-fiddle/philly-traces README), 35.4 per hour; `ina bench
  pool` sets it from the offered load instead;
- workers per job: `WORKER_SHARES`, uniform within the buckets Philly's analysis plots (2-4, 5-8,
  >8 GPUs; >8 split at 16, at most 32 = MAX_WORKERS); the shares are ina's assumption, not a trace
  figure (the trace's size tables were not read here): pass a trace for real ones;
- model: uniform over train/workloads.py's replayed models;
- slots a job asks for: `slots_per_worker` x workers (ina's assumption: the window grows with the
  fan-in; 32 per worker gives a 4-worker job ina run's default window of 128).
"""

import bisect
import csv
import math
import random
from dataclasses import dataclass
from pathlib import Path

from ina.train.workloads import WORKLOADS

PHILLY_RUNTIME_S = (  # (percentile, seconds) of philly_runtime.csv, 83,154 jobs (its 0 s: 1 s)
    (0, 1.0),
    (5, 48.0),
    (10, 61.0),
    (20, 76.0),
    (30, 229.0),
    (40, 630.0),
    (50, 1186.0),
    (60, 1871.0),
    (70, 2590.0),
    (80, 4700.0),
    (90, 12860.0),
    (95, 49969.0),
    (99, 287333.0),
    (100, 4628239.0),
)
PHILLY_JOBS_PER_HOUR = 117325 / ((137 + 1) * 24)  # 2017-08-07 .. 2017-12-22 inclusive
WORKER_SHARES = (((2, 4), 0.50), ((5, 8), 0.30), ((9, 16), 0.15), ((17, 32), 0.05))
SLOTS_PER_WORKER = 32
MAX_DURATION_S = 86400.0
CSV_COLUMNS = ("arrival_s", "workers", "duration_s")  # required; `model` and `slots` optional


class TraceError(ValueError):
    """A trace file that cannot be read: one line naming the file, line and field."""


@dataclass(frozen=True)
class ChurnJob:
    arrival_s: float
    workers: int
    model: str
    duration_s: float  # run time with every slot it asked for
    slots: int  # slots it asks for


@dataclass(frozen=True)
class ChurnSpec:
    jobs: int = 2000
    jobs_per_hour: float = PHILLY_JOBS_PER_HOUR
    worker_shares: tuple[tuple[tuple[int, int], float], ...] = WORKER_SHARES  # (lo, hi), share
    slots_per_worker: int = SLOTS_PER_WORKER
    max_duration_s: float = MAX_DURATION_S
    models: tuple[str, ...] = WORKLOADS


def philly_duration(u: float, cap: float) -> float:
    """The run time at quantile u in [0, 1): log-linear between the percentiles, at most `cap`."""
    qs = [q / 100 for q, _ in PHILLY_RUNTIME_S]
    i = min(bisect.bisect_right(qs, u), len(qs) - 1)
    (q0, t0), (q1, t1) = PHILLY_RUNTIME_S[i - 1], PHILLY_RUNTIME_S[i]
    f = (u - q0 / 100) / ((q1 - q0) / 100)
    return min(cap, math.exp(math.log(t0) + f * (math.log(t1) - math.log(t0))))


def generate(spec: ChurnSpec, seed: int) -> list[ChurnJob]:
    """`spec.jobs` jobs, Poisson arrivals at `spec.jobs_per_hour`, the same list for the same seed."""
    rng = random.Random(seed)
    sizes, weights = zip(*spec.worker_shares, strict=True)
    t, jobs = 0.0, []
    for _ in range(spec.jobs):
        t += rng.expovariate(spec.jobs_per_hour / 3600)
        workers = rng.randint(*rng.choices(sizes, weights)[0])
        jobs.append(
            ChurnJob(
                t,
                workers,
                rng.choice(spec.models),
                philly_duration(rng.random(), spec.max_duration_s),
                workers * spec.slots_per_worker,
            )
        )
    return jobs


def at_load(jobs: list[ChurnJob], load: float, pool_size: int) -> list[ChurnJob]:
    """The same jobs with arrivals rescaled so the offered load, slots asked x duration per second
    over the pool, is `load` (1.0: the pool exactly busy on average)."""
    span = jobs[-1].arrival_s - jobs[0].arrival_s if len(jobs) > 1 else 0.0
    demand = sum(j.slots * j.duration_s for j in jobs)
    if span <= 0 or demand <= 0:
        return jobs
    scale = demand / (load * pool_size * span)
    return [ChurnJob(j.arrival_s * scale, j.workers, j.model, j.duration_s, j.slots) for j in jobs]


def read_trace(path: Path, slots_per_worker: int = SLOTS_PER_WORKER) -> list[ChurnJob]:
    """A user's trace: CSV with a header naming at least arrival_s, workers, duration_s (seconds
    from the trace's start, workers per job, run time), optionally model and slots."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
            header = list(rows[0]) if rows else []
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise TraceError(f"{path}: {err}") from None
    missing = [c for c in CSV_COLUMNS if c not in header]
    if not rows or missing:
        raise TraceError(f"{path}: needs a header and rows with columns {', '.join(CSV_COLUMNS)}")
    jobs = []
    for line, row in enumerate(rows, 2):
        try:
            arrival, duration = float(row["arrival_s"]), float(row["duration_s"])
            workers = int(row["workers"])
            slots = int(row["slots"]) if row.get("slots") else workers * slots_per_worker
            model = row.get("model") or WORKLOADS[0]
            if not (arrival >= 0 and duration > 0 and workers >= 1 and slots >= 1):
                raise ValueError("arrival_s >= 0, duration_s > 0, workers and slots >= 1")
            if model not in WORKLOADS:
                raise ValueError(f"model {model!r} is not one of {', '.join(WORKLOADS)}")
        except (TypeError, ValueError) as err:
            raise TraceError(f"{path}: line {line}: {err}") from None
        jobs.append(ChurnJob(arrival, workers, model, duration, slots))
    return sorted(jobs, key=lambda j: j.arrival_s)
