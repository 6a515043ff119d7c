"""`ina bench hier`: hierarchical aggregation in `ina sim` (issue 31), at 100 Gbit/s.

    .venv/bin/ina bench hier --out results         # quick (make bench); --full: up to 1,024 workers

- Upper links (hier_links.json): one job of 32 workers on leaf-spines of 2 and 4 leaves, aggregated
  by one switch (a spine, as the generated leaf-spine chooses) and by its tree: the frames per chunk
  on the switch-to-switch links, and for the
  tree the switch counters' partial sums sent up (job_partials_sent) and parent RESULTs taken
  (job_parent_results) per chunk, which equal the child switches the job spans; with each, the
  per-worker goodput (hierarchical at least single's is the target).
- Scale (hier_scale.json, hier_scale.png): one job of 32 to 1,024 workers (leaves of 32 hosts) in
  its tree against the ring (ina.sim.ring, RoCE) on the same leaf-spine: per-worker goodput and
  communication time, both at every point. The ring moves 2 (n - 1) messages per worker through
  the simulator, so its CPU time grows as workers^2 (docs/simulation.md has the figures).

Every figure is simulated time (the same on every run); wall seconds are the machine's. Timing never
decides pass or fail.
"""

import time
from pathlib import Path

import numpy as np

from ina.bench import plots
from ina.bench.results import Progress, write
from ina.sim.allreduce import AllReduceConfig, AllReduceResult, simulate
from ina.sim.ring import simulate_ring

HOSTS_PER_LEAF = 32
QUICK_WORKERS = (32, 64)
FULL_WORKERS = (32, 64, 128, 256, 512, 1024)
QUICK_SIZE, FULL_SIZE = 2048, 16384  # int32 elements per worker
LINK_TOPOLOGIES = ("leafspine:2x16,2", "leafspine:4x8,2")  # one job of 32 workers each


def upper_frames(result: AllReduceResult) -> tuple[int, int]:
    """Frames up and down the switch-to-switch links (toward the first-named switch is 'up')."""
    hosts = set(result.config.plain_topology().hosts)
    upper = [(up, down) for name, up, down in result.links if name.split("-")[0] not in hosts]
    return sum(u.frames for u, _d in upper), sum(d.frames for _u, d in upper)


def counter_total(result: AllReduceResult, name: str) -> int:
    return sum(s["jobs"].get(0, {}).get(name, 0) for s in result.switch.values())


def link_row(topo: str, aggregation: str, size: int) -> dict:
    suffix = ":hierarchical" if aggregation == "hierarchical" else ""
    result = simulate(AllReduceConfig(topo=topo + suffix, size=size))
    chunks = -(-size // result.config.elems)
    up, down = upper_frames(result)
    leaves = sum(1 for s in result.switch.values() if s["jobs"].get(0, {}).get("partials_sent"))
    return {
        "topo": topo,
        "aggregation": aggregation,
        "workers": len(result.workers),
        "size": size,
        "verified": result.verified,
        "child_switches": leaves,
        "upper_frames_per_chunk": (up + down) / chunks,
        "partials_sent_per_chunk": counter_total(result, "partials_sent") / chunks,
        "parent_results_per_chunk": counter_total(result, "parent_results") / chunks,
        "goodput_min_bps": min(result.goodput_bps),
        "goodput_median_bps": float(np.median(result.goodput_bps)),
        "communication_s": result.communication_s,
    }


def scale_config(workers: int, size: int) -> AllReduceConfig:
    leaves = workers // HOSTS_PER_LEAF
    return AllReduceConfig(
        topo=f"leafspine:{leaves}x{HOSTS_PER_LEAF},{min(leaves, 4)}:hierarchical", size=size
    )


def scale_row(method: str, workers: int, size: int) -> dict:
    config = scale_config(workers, size)
    cpu = time.process_time()
    result = simulate(config) if method == "hierarchical" else simulate_ring(config)
    cpu = time.process_time() - cpu
    return {
        "method": method,
        "workers": workers,
        "topo": config.topo,
        "size": size,
        "verified": result.verified,
        "communication_s": result.communication_s,
        "goodput_min_bps": min(result.goodput_bps),
        "goodput_median_bps": float(np.median(result.goodput_bps)),
        "wall_s": result.wall_setup_s + result.wall_run_s,
        "cpu_s": cpu,  # the machine is shared: its CPU time, not the wall's, is the run's cost
    }


def bench_hier(out: Path, full: bool = False) -> tuple[list[dict], list[dict]]:
    """Both tables' rows (upper links, scale), written to hier_links.json and hier_scale.json."""
    size = FULL_SIZE if full else QUICK_SIZE
    sweep = FULL_WORKERS if full else QUICK_WORKERS
    runs = [("hierarchical", n) for n in sweep] + [("ring", n) for n in sweep]
    progress = Progress(2 * len(LINK_TOPOLOGIES) + len(runs), "hier")
    links = []
    for topo in LINK_TOPOLOGIES:
        for aggregation in ("single", "hierarchical"):
            links.append(link_row(topo, aggregation, size))
            progress.step(f"{topo} {aggregation}")
    write(out, "hier_links", links)
    scale = []
    for method, n in runs:
        scale.append(scale_row(method, n, size))
        progress.step(f"{method} {n}")
    write(out, "hier_scale", scale)
    plots.lines(
        out / "hier_scale.png",
        f"ina sim: per-worker goodput, {size} int32 per worker, 100 Gbit/s leaf-spine",
        "workers (leaves of 32)",
        "Gbit/s per worker (median)",
        plots.curves(scale, "workers", "goodput_median_bps", unit=1e9),
        ymin=0,
    )
    for r in links:
        print(
            f"hier {r['topo']} {r['aggregation']}: {r['workers']} workers, upper-link frames per "
            f"chunk {r['upper_frames_per_chunk']:g}, partials sent {r['partials_sent_per_chunk']:g}"
            f" and parent RESULTs {r['parent_results_per_chunk']:g} per chunk "
            f"({r['child_switches']} child switches), goodput min "
            f"{r['goodput_min_bps'] / 1e9:.2f} Gbit/s, verified {r['verified']}"
        )
    for r in scale:
        print(
            f"hier scale {r['method']} {r['workers']} workers: {r['communication_s'] * 1e6:.1f} us "
            f"simulated, {r['goodput_median_bps'] / 1e9:.2f} Gbit/s per worker (median), "
            f"verified {r['verified']}, {r['cpu_s']:.0f} s CPU, {r['wall_s']:.0f} s wall"
        )
    return links, scale
