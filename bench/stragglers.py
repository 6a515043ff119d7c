"""`ina bench stragglers`: what one slow worker costs a job under each completion policy.

4 workers in Mininet run `--repeat` iterations of emulated compute (a sleep) then an all-reduce
through the switch; one host's compute is slowed by a factor (`ina run --straggler h4:3x`). Each
configuration runs once with the same seed. The job's iteration time is the median, over the
workers the policy lets run ahead (all of them without a straggler), of compute + all-reduce per
iteration. Under sync every iteration waits for the straggler; under quorum 3-of-4 the other three
complete every slot without it, and the straggler takes the RESULTs (and answers to its late
contributions) when it gets there. Timing never decides pass or fail: the bench prints the ratios
the issue asks for beside the numbers, writes JSON and a PNG.
"""

import statistics
from pathlib import Path

from ina.bench import plots
from ina.bench.results import Progress, write

STRAGGLER = "h4"  # rank 3 of the star's single job


def configurations(factor: float) -> list[tuple[str, str, dict[str, float]]]:
    """(label, policy, stragglers) in the order they run and plot."""
    slow = {STRAGGLER: factor}
    return [("sync", "sync", {}), (f"sync, {STRAGGLER} {factor:g}x", "sync", slow),
            ("quorum 3/4", "quorum:3", {}), (f"quorum 3/4, {STRAGGLER} {factor:g}x", "quorum:3", slow)]


def iteration_times(report: dict) -> list[tuple[float, float]]:
    """(compute, all-reduce) seconds per iteration of one worker's report."""
    return [(it["compute_s"], it["allreduce_s"]) for it in report["iterations"]]


def job_iteration(reports: list[dict], stragglers: dict[str, float]) -> tuple[float, float]:
    """Median compute and all-reduce seconds per iteration over the workers that are not slowed."""
    times = [t for r in reports if r["host"] not in stragglers for t in iteration_times(r)]
    return statistics.median(c for c, _a in times), statistics.median(a for _c, a in times)


def bench_stragglers(out: Path, iterations: int = 20, compute_ms: float = 40.0, factor: float = 3.0,
                     size: int = 1 << 14) -> list[dict]:
    from ina.topologies.runner import RunOptions, run

    rows = []
    plan = configurations(factor)
    progress = Progress(len(plan), "stragglers")
    for label, policy, stragglers in plan:
        tag = label.replace(" ", "").replace(",", "-").replace("/", "of")
        result = run(RunOptions(workers=4, size=size, policy=policy, repeat=iterations, compute_ms=compute_ms,
                                stragglers=stragglers, run_dir=str(out / "runs" / f"stragglers-{tag}")))
        compute, allreduce = job_iteration(result.workers, stragglers)
        slow = [r for r in result.workers if r["host"] in stragglers]
        rows.append({"configuration": label, "policy": policy, "straggler": " ".join(f"{h}:{f:g}x" for h, f in stragglers.items()) or "none", "iterations": iterations,
                     "compute_ms": compute_ms, "size": size, "verified": result.ok,
                     "iteration_s": compute + allreduce, "compute_s": compute, "allreduce_s": allreduce,
                     "straggler_iteration_s": statistics.median(sum(t) for r in slow for t in iteration_times(r))
                     if slow else None,
                     "late_contributions": sum(job.get("late", 0) for sw in result.switch_stats.values()
                                               for job in sw.get("jobs", {}).values())})
        progress.step(label)
    by_label = {r["configuration"]: r for r in rows}
    base = by_label["sync"]["iteration_s"]
    for r in rows:
        r["slowdown_vs_sync_without_straggler"] = r["iteration_s"] / base
    write(out, "stragglers", rows)
    plots.stacked(out / "stragglers.png", f"Iteration time, 4 workers, one {factor:g}x slower in compute",
                  [r["configuration"] for r in rows],
                  {"compute": [r["compute_s"] * 1e3 for r in rows], "all-reduce": [r["allreduce_s"] * 1e3 for r in rows]},
                  "ms per iteration (median over the workers not slowed)")
    quorum_slow = rows[3]["iteration_s"] / rows[0]["iteration_s"]
    sync_slow = rows[1]["iteration_s"] / rows[0]["iteration_s"]
    print(f"stragglers: quorum 3/4 with a {factor:g}x straggler takes {quorum_slow:.2f}x the iteration time of the "
          f"job without one (target <= 1.2x); sync takes {sync_slow:.2f}x")
    return rows
