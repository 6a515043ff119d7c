"""What a workload replay reports: time per iteration split into compute and communication
(averaged over the workers, and its median, which a slow first iteration does not move), the
buckets all-reduced, whether every worker got the same sums; JSON, PNG and a text summary."""

import statistics
from dataclasses import asdict
from pathlib import Path

from ina.train.runner import TrainOptions
from ina.train.workloads import BYTES_PER_ELEMENT, workload


def summarise(opts: TrainOptions, finals: list[dict]) -> dict:
    histories = [f["history"] for f in finals]
    w = workload(opts.replay.workload)
    per_iteration = [{phase: 1000 * statistics.fmean(h["per_iteration"][i][f"{phase}_s"] for h in histories)
                      for phase in ("compute", "comm")} for i in range(histories[0]["iterations"])]
    return {
        "replay": asdict(opts.replay), "workers": opts.workers, "aggregation": opts.aggregation,
        "link_mbit_s": opts.bw, "model_parameters": w.parameters,
        "model_compute_ms": 1000 * w.compute_s, "buckets": histories[0]["buckets"],
        "bytes_per_iteration": BYTES_PER_ELEMENT * sum(histories[0]["buckets"]),
        "iterations": histories[0]["iterations"],
        "iteration_ms": {phase: statistics.fmean(it[phase] for it in per_iteration) for phase in ("compute", "comm")},
        "median_iteration_ms": {phase: statistics.median(it[phase] for it in per_iteration)
                                for phase in ("compute", "comm")},
        "per_iteration_ms": per_iteration,
        "sums_identical": len({f["weights_sha256"] for f in finals}) == 1,
        "ranks": histories,
    }


def plot(summary: dict, path: Path) -> None:
    """Each iteration's compute and communication time, stacked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    its = summary["per_iteration_ms"]
    xs = range(1, len(its) + 1)
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar(xs, [it["compute"] for it in its], label="compute (emulated)")
    ax.bar(xs, [it["comm"] for it in its], bottom=[it["compute"] for it in its], label="communication")
    links = f", {summary['link_mbit_s']:g} Mbit/s links" if summary["link_mbit_s"] else ""
    ax.set(title=f"{summary['replay']['workload']} x {summary['replay']['scale']:g}: {summary['workers']} workers "
                 f"via {summary['aggregation']}{links}", xlabel="iteration", ylabel="ms (mean over workers)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def text(summary: dict) -> str:
    ms = summary["median_iteration_ms"]
    return "\n".join([
        f"buckets            {len(summary['buckets'])} ({summary['bytes_per_iteration'] / 1e6:.2f} MB per iteration)",
        f"per iteration      {ms['compute']:.2f} ms compute + {ms['comm']:.2f} ms communication "
        f"(median of {summary['iterations']} iterations)",
        f"sums               {'identical on every worker' if summary['sums_identical'] else 'DIFFER between workers'}",
    ])
