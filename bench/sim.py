"""`ina bench sim`: how fast `ina sim` runs, in packet arrivals (a frame reaching a host or the switch)
per wall second, on a 32-worker all-reduce at 100 Gbit/s, and whether its wall time grows linearly
with the packets it moves.

    .venv/bin/ina bench sim --out results          # quick: 3 sizes x --reps; --full: 5 sizes

Each size runs `--reps` times (the simulated figures are the same every time; the wall clock is
not); the rows give arrivals, events and the wall time of the simulation itself (setting up the
switch and the controller apart), summarised as median and spread, and a least-squares line of
wall time against arrivals says how far from linear it is. One more run of the middle size under
cProfile writes sim_profile.txt (where the wall time goes; docs/simulation.md reads it). Timing never
decides pass or fail.

`bench_fabrics` (part of `ina bench sim`) runs the multi-switch scales: a k=8 fat-tree (128 hosts,
80 switches, 4 jobs of 32) and a 256-worker leaf-spine (8 leaves of 32 hosts, 4 spines, 8 jobs of
32), each a small all-reduce per job, every scenario in a fresh process so its peak RSS is its own:
set-up and simulation wall time, arrivals, peak memory (sim_fabrics.json, sim_fabrics.png,
sim_fabrics_memory.png).
"""

import cProfile
import io
import multiprocessing
import os
import pstats
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from ina.bench import plots
from ina.bench.results import Progress, summarise, write
from ina.sim.allreduce import AllReduceConfig, simulate

WORKERS = 32
TARGET = 200_000  # arrivals per wall second (issue 29)
QUICK_SIZES = [1 << 13, 1 << 14, 1 << 15]
FULL_SIZES = [1 << 13, 1 << 14, 1 << 15, 1 << 16, 1 << 17]


def bench_sim(out: Path, reps: int = 3, full: bool = False) -> list[dict]:
    sizes = FULL_SIZES if full else QUICK_SIZES
    progress = Progress(len(sizes) * reps + 1, "sim")
    rows = []
    for size in sizes:
        config = AllReduceConfig(workers=WORKERS, size=size)
        walls, rates, cpus, cpu_rates, loads = [], [], [], [], []
        for _ in range(reps):
            clock = CpuClock()
            result = simulate(config, profiler=clock)
            walls.append(result.wall_run_s)
            rates.append(result.arrivals / result.wall_run_s)
            cpus.append(clock.seconds)
            cpu_rates.append(result.arrivals / clock.seconds)
            loads.append(os.getloadavg()[0])
            progress.step(f"{WORKERS} workers x {size}")
        rows.append(
            {
                "workers": WORKERS,
                "size": size,
                "rate_bps": config.link.rate,
                "arrivals": result.arrivals,
                "events": result.events,
                "simulated_s": result.communication_s,
                "verified": result.verified,
                "wall_s": summarise(walls),
                "arrivals_per_wall_s": summarise(rates),
                "cpu_s": summarise(cpus),
                "arrivals_per_cpu_s": summarise(cpu_rates),
                "load_average": summarise(loads),  # the 1-minute load: wall figures beside it
            }
        )
    profile = profile_run(
        out / "sim_profile.txt", AllReduceConfig(workers=WORKERS, size=sizes[len(sizes) // 2])
    )
    progress.step("cProfile")
    arrivals = np.array([r["arrivals"] for r in rows], dtype=float)
    walls = np.array([r["wall_s"]["median"] for r in rows])
    slope, intercept = np.polyfit(arrivals, walls, 1)
    fitted = slope * arrivals + intercept
    worst = float(np.max(np.abs(walls - fitted) / walls))
    for r in rows:
        r.update(
            fit_us_per_arrival=slope * 1e6, fit_intercept_s=intercept, fit_worst_deviation=worst
        )
    write(out, "sim", rows)
    plots.lines(
        out / "sim_wall_vs_arrivals.png",
        f"ina sim: wall time against packets ({WORKERS} workers, 100 Gbit/s)",
        "packet arrivals",
        "wall seconds (median)",
        {
            "measured": (arrivals.tolist(), walls.tolist()),
            f"least squares: {slope * 1e6:.2f} us per arrival": (
                arrivals.tolist(),
                fitted.tolist(),
            ),
        },
    )
    plots.lines(
        out / "sim_arrivals_per_s.png",
        f"ina sim: packet arrivals per wall second ({WORKERS} workers)",
        "packet arrivals",
        "arrivals per wall second (median)",
        {
            "measured": (arrivals.tolist(), [r["arrivals_per_wall_s"]["median"] for r in rows]),
            f"target {TARGET:,}": (arrivals.tolist(), [TARGET] * len(rows)),
        },
    )
    best = max(r["arrivals_per_wall_s"]["median"] for r in rows)
    best_cpu = max(r["arrivals_per_cpu_s"]["median"] for r in rows)
    print(
        f"sim: {WORKERS} workers, up to {best:,.0f} packet arrivals per wall second (target {TARGET:,}), "
        f"{best_cpu:,.0f} per CPU second, at a load average of up to "
        f"{max(r['load_average']['max'] for r in rows):.1f} (wall figures pessimistic on a shared machine); "
        f"wall time {slope * 1e6:.2f} us per arrival + {intercept:.3f} s, at most {worst:.1%} off that line; "
        f"profile of {profile:,} arrivals in {out / 'sim_profile.txt'}"
    )
    return rows


FABRICS = [
    ("fattree:8", 4, 1 << 12),
    ("leafspine:8x32,4", 8, 1 << 16),
]  # (topology, jobs, int32 per worker)


def bench_fabrics(out: Path) -> list[dict]:
    """The multi-switch scales, each in its own process (peak RSS is per process)."""
    rows = []
    progress = Progress(len(FABRICS), "sim fabrics")
    for topo, jobs, size in FABRICS:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            rows.append(pool.submit(fabric_run, topo, jobs, size).result())
        progress.step(topo)
    write(out, "sim_fabrics", rows)
    labels = [f"{r['topo']}\n{r['workers']} workers, {r['switches']} switches" for r in rows]
    plots.bars(
        out / "sim_fabrics.png",
        "ina sim: wall seconds (set-up + simulation) per fabric",
        labels,
        [r["wall_setup_s"] + r["wall_run_s"] for r in rows],
        "wall seconds",
    )
    plots.bars(
        out / "sim_fabrics_memory.png",
        "ina sim: peak RSS per fabric (issue 29's target: 4 GB)",
        labels,
        [r["peak_rss_mb"] for r in rows],
        "MB",
    )
    for r in rows:
        print(
            f"sim {r['topo']}: {r['workers']} workers in {r['jobs']} jobs, {r['switches']} switches, {r['size']} "
            f"int32 each: set-up {r['wall_setup_s']:.1f} s, simulation {r['wall_run_s']:.1f} s "
            f"({r['cpu_run_s']:.1f} s CPU, load {r['load_average']:.1f}) "
            f"({r['arrivals']:,} arrivals), peak RSS {r['peak_rss_mb']:,.0f} MB, verified {r['verified']}"
        )
    return rows


class CpuClock:
    """`simulate`'s profiler hook as a CPU clock: the process's CPU seconds of the simulation alone
    (set-up apart), the figure a machine shared with other work does not inflate as it does wall
    time."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def enable(self) -> None:
        self.seconds -= time.process_time()

    def disable(self) -> None:
        self.seconds += time.process_time()


def fabric_run(topo: str, jobs: int, size: int) -> dict:
    clock = CpuClock()
    result = simulate(AllReduceConfig(topo=topo, jobs=jobs, size=size), profiler=clock)
    return {
        "topo": topo,
        "jobs": jobs,
        "size": size,
        "workers": len(result.workers),
        "switches": len(result.config.plain_topology().switches),
        "verified": result.verified,
        "simulated_s": result.communication_s,
        "arrivals": result.arrivals,
        "events": result.events,
        "wall_setup_s": result.wall_setup_s,
        "wall_run_s": result.wall_run_s,
        "cpu_run_s": clock.seconds,
        "load_average": os.getloadavg()[0],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def profile_run(path: Path, config: AllReduceConfig) -> int:
    """One run's simulation under cProfile (not its set-up): the functions that take the wall time,
    by their own time. Returns the arrivals."""
    profiler = cProfile.Profile()
    result = simulate(config, profiler=profiler)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(30)
    path.write_text(
        f"{config}\n{result.arrivals} arrivals, {result.wall_run_s:.3f} s simulating "
        f"(under cProfile)\n{text.getvalue()}"
    )
    return result.arrivals
