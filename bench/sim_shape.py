"""`ina bench sim-shape`: issue 29's "Shape" target in `ina sim` at 100 Gbit/s.

    .venv/bin/ina bench sim-shape --out results          # --full: more worker counts, 4x the data

1. Per-worker goodput against workers (2 to 32 in one job, a star of 100 Gbit/s links, 1 us each):
   SwitchML's "flat in workers". Each method is a function from configurations to `report`s
   (sim/allreduce.py's JSON: `results.goodput_bps` per worker) in `METHODS`; in-network
   aggregation's is `ina sim`'s sweep machinery (sim/sweep.py, the points in parallel processes);
   the ring over RoCE (sim/ring.py, as NCCL runs it) and the host parameter server (sim/ps.py) run
   on the same simulated links, in this process.
2. The completion policies at 32 workers with a communication straggler (sim/straggler.py: one
   host's NIC and per-packet costs 4 times slower): sync, quorum:31, quorum:24, timeout:5us,
   timeout:50us, stale:1, beside sync without the straggler. Per policy: the median worker's
   goodput and time, the slowest worker's, and the switch's counters (late, timeouts).

Writes sim_shape.json, sim_shape_goodput.png, sim_shape_policies.png. Every figure is simulated
time, the same for the same seed on any machine; only `wall_s` is the machine's.
"""

import os
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from ina.bench import plots
from ina.bench.results import Progress, git_revision, write
from ina.p4src.protocol import Policy
from ina.sim import ps, ring, sweep
from ina.sim.allreduce import AllReduceConfig, AllReduceResult, frame_bytes, report
from ina.sim.links import wire_bits
from ina.sim.straggler import SlowHost

QUICK_WORKERS = [2, 4, 8, 16, 32]
FULL_WORKERS = [2, 3, 4, 6, 8, 12, 16, 24, 32]
QUICK_SIZE, FULL_SIZE = 1 << 16, 1 << 18  # int32 per worker
POLICY_WORKERS = 32
STRAGGLER = SlowHost(f"h{POLICY_WORKERS}", 4.0)
POLICIES = ["sync", "quorum:31", "quorum:24", "timeout:5us", "timeout:50us", "stale:1"]
NO_STRAGGLER = "sync, no straggler"
PARALLEL = os.cpu_count() or 1  # in-network aggregation's points at once, a process each

# A method: configurations -> their `report`s, in order (sim/allreduce.py's JSON).
Method = Callable[[Sequence[AllReduceConfig]], list[dict]]


def in_network(configs: Sequence[AllReduceConfig]) -> list[dict]:
    """In-network aggregation: `ina sim`'s points, `PARALLEL` at once."""
    grid = [sweep.Point({}, config) for config in configs]
    return sweep.run(grid, git_revision(), PARALLEL)


def baseline(
    configs: Sequence[AllReduceConfig],
    simulate: Callable[[AllReduceConfig], AllReduceResult],
    bound: Callable[[AllReduceConfig], float | None],
) -> list[dict]:
    """A baseline's reports, run in this process, each with the baseline's own lossless bound in
    place of the switch path's."""
    git, reports = git_revision(), []
    for config in configs:
        rep = report(simulate(config), git)
        rep["results"]["lossless_bound_s"] = bound(config)
        reports.append(rep)
    return reports


def ring_roce(configs: Sequence[AllReduceConfig]) -> list[dict]:
    """The ring as NCCL runs it over RoCE (sim/ring.py's default transport and chunk)."""
    return baseline(configs, ring.simulate_ring, ring.lossless_time)


def parameter_server(configs: Sequence[AllReduceConfig]) -> list[dict]:
    """The host parameter server: one host's link carries every worker's traffic, so its goodput per
    worker falls as 1/N (sim/ps.py has no bound formula)."""
    return baseline(configs, lambda config: ps.simulate_ps(config)[0], lambda config: None)


METHODS: dict[str, Method] = {
    "in-network aggregation": in_network,
    "ring (RoCE)": ring_roce,
    "parameter server": parameter_server,
}


def payload_line_rate(config: AllReduceConfig) -> float:
    """The most payload a worker's link carries in the switch path's frames: its rate x values per wire
    byte (the ring's 4,096-byte frames carry more)."""
    return config.link.rate * 4 * config.elems * 8 / wire_bits(frame_bytes(config.elems))


def bench_sim_shape(
    out: Path, full: bool = False, methods: dict[str, Method] | None = None
) -> list[dict]:
    methods = METHODS if methods is None else methods
    workers, size = (FULL_WORKERS, FULL_SIZE) if full else (QUICK_WORKERS, QUICK_SIZE)
    progress = Progress(len(methods) + 1, "sim-shape")
    rows = []
    for name, method in methods.items():
        configs = [AllReduceConfig(workers=n, size=size) for n in workers]
        for config, rep in zip(configs, method(configs), strict=True):
            rows.append(shape_row("workers", name, str(config.workers), config, rep))
        progress.step(name)
    policies = {NO_STRAGGLER: AllReduceConfig(workers=POLICY_WORKERS, size=size)}
    policies.update(
        (
            p,
            AllReduceConfig(
                workers=POLICY_WORKERS, size=size, policy=Policy.parse(p), slow_host=STRAGGLER
            ),
        )
        for p in POLICIES
    )
    for (label, config), rep in zip(
        policies.items(), in_network(list(policies.values())), strict=True
    ):
        rows.append(shape_row("policy", "in-network aggregation", label, config, rep))
    progress.step("policies")
    write(out, "sim_shape", rows)
    plot(out, rows, payload_line_rate(AllReduceConfig(size=size)))
    for r in rows:
        print(
            f"sim-shape {r['sweep']} {r['point']:>18} {r['method']}: median worker {r['goodput_gbps_median']:.2f} "
            f"Gbit/s in {r['time_us_median']:.2f} us, slowest {r['goodput_gbps_min']:.2f} Gbit/s in "
            f"{r['time_us_max']:.2f} us, {r['resends']} resends, verified {r['verified']}"
        )
    return rows


def shape_row(swept: str, method: str, point: str, config: AllReduceConfig, rep: dict) -> dict:
    """One point's figures: goodput and time of the median and the slowest worker, the switch's
    counters."""
    if "error" in rep:
        return {"sweep": swept, "method": method, "point": point, "error": rep["error"]}
    r = rep["results"]
    goodput, elapsed = r["goodput_bps"], r["elapsed_s"]
    counters = {
        k: v
        for sw in r["switch"].values()
        for job in sw.get("jobs", {}).values()
        for k, v in job.items()
    }
    return {
        "sweep": swept,
        "method": method,
        "point": point,
        "workers": len(goodput),
        "size": config.size,
        "policy": str(config.policy),
        "slow_host": str(config.slow_host) if config.slow_host else None,
        "goodput_gbps_median": statistics.median(goodput) / 1e9,
        "goodput_gbps_min": min(goodput) / 1e9,
        "time_us_median": statistics.median(elapsed) * 1e6,
        "time_us_max": max(elapsed) * 1e6,
        "lossless_bound_us": r["lossless_bound_s"] * 1e6
        if r["lossless_bound_s"] is not None
        else None,
        "resends": sum(r["retransmissions"]),
        "verified": r["verified"],
        **{f"switch_{k}": v for k, v in counters.items()},
        "wall_s": rep["wall"]["setup_s"] + rep["wall"]["run_s"],
    }


def plot(out: Path, rows: list[dict], line_rate: float) -> None:
    shape = [r for r in rows if r["sweep"] == "workers" and "error" not in r]
    series = plots.curves(shape, "workers", "goodput_gbps_median")
    xs = sorted({r["workers"] for r in shape})
    series["payload at line rate, switch frames"] = (xs, [line_rate / 1e9] * len(xs))
    plots.lines(
        out / "sim_shape_goodput.png",
        "ina sim: goodput per worker against workers (100 Gbit/s, one job)",
        "workers",
        "goodput per worker, median (Gbit/s)",
        series,
        ymin=0,
    )
    policy = [r for r in rows if r["sweep"] == "policy" and "error" not in r]
    plots.bars(
        out / "sim_shape_policies.png",
        f"ina sim: {POLICY_WORKERS} workers, {STRAGGLER.host}'s NIC {STRAGGLER.factor:g}x slower: "
        "median worker's all-reduce",
        [r["point"].replace(", ", "\n").replace(":", ":\n") for r in policy],
        [r["time_us_median"] for r in policy],
        "microseconds (simulated)",
    )
