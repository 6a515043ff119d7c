"""What a workload replay reports: time per iteration split into compute and communication
(averaged over the workers, and its median, which a slow first iteration does not move), the
buckets all-reduced, whether every worker got the same sums, what the links carried against
theory (traffic.py); JSON, PNG and a text summary."""

import statistics
from dataclasses import asdict
from pathlib import Path

from ina.train import traffic
from ina.train.runner import TrainOptions
from ina.train.workloads import BYTES_PER_ELEMENT, workload

# What set a run's time: the busiest link at least LINK_BOUND busy while communicating, else the
# machine at least CPU_BOUND busy (every process on its cores: workers, switches, the kernel)
LINK_BOUND, CPU_BOUND = 0.8, 0.85
# per iteration, mean over the workers: wall time computing and communicating, and the CPU a
# worker's process used while communicating (comm_cpu: absent from older histories)
PHASES = ("compute", "comm", "comm_cpu")


def summarise(opts: TrainOptions, finals: list[dict], measured: dict | None = None) -> dict:
    """`measured` is what runner.run gave its on_traffic."""
    histories = [f["history"] for f in finals]
    w = workload(opts.replay.workload)
    first = histories[0]["per_iteration"][0]
    phases = PHASES if first.get("comm_cpu_s") is not None else PHASES[:2]
    per_iteration = [
        {
            phase: 1000 * statistics.fmean(h["per_iteration"][i][f"{phase}_s"] for h in histories)
            for phase in phases
        }
        for i in range(histories[0]["iterations"])
    ]
    return {
        "replay": asdict(opts.replay),
        "workers": opts.workers,
        "aggregation": opts.aggregation,
        "link_mbit_s": opts.bw,
        "model_parameters": w.parameters,
        "model_compute_ms": 1000 * w.compute_s,
        "buckets": histories[0]["buckets"],
        "bytes_per_iteration": BYTES_PER_ELEMENT * sum(histories[0]["buckets"]),
        "iterations": histories[0]["iterations"],
        "iteration_ms": {
            phase: statistics.fmean(it[phase] for it in per_iteration) for phase in phases
        },
        "median_iteration_ms": {
            phase: statistics.median(it[phase] for it in per_iteration) for phase in phases
        },
        "per_iteration_ms": per_iteration,
        "sums_identical": len({f["weights_sha256"] for f in finals}) == 1,
        "traffic": measured
        and links(
            opts, finals, measured, statistics.median(it["comm"] for it in per_iteration) / 1000
        ),
        "ranks": histories,
    }


def links(opts: TrainOptions, finals: list[dict], measured: dict, comm_s: float) -> dict:
    """Bytes per iteration on a worker's link (mean of the directions and workers) and on the
    busiest link's busier direction, measured and in theory; the theory's time at the link rate;
    how busy the busiest link was while communicating (bytes over the median communication time);
    drops in any queue; the workers' retransmissions (switch and server); the switch's CPU per
    second of communication; the packets per second a worker sent."""
    its = opts.replay.iterations
    buckets = finals[0]["history"]["buckets"]
    worker_links = [measured["links"][h] for h in measured["workers"]]
    directions = [ways[way] for ways in measured["links"].values() for way in ("up", "down")]
    busiest = max(d["bytes"] for d in directions) / its
    theory = traffic.expected_bytes(
        opts.aggregation,
        buckets,
        opts.workers,
        opts.elems,
        opts.window,
        opts.replay.bucket_calls == "group",
    )
    rate = opts.bw * 1e6 / 8 if opts.bw else None
    return {
        "worker_link_bytes": statistics.fmean(
            w[way]["bytes"] for w in worker_links for way in ("up", "down")
        )
        / its,
        "busiest_link_bytes": busiest,
        "theory": theory,
        "theory_comm_ms": 1000 * theory["busiest_link"] / rate if rate else None,
        "busiest_link_utilisation": busiest / comm_s / rate if rate else None,
        "drops": sum(d["drops"] for d in directions),
        "retransmissions": sum(f["stats"]["retransmissions"] for f in finals)
        if finals[0]["stats"]
        else None,
        "worker_stats": [f["stats"] for f in finals],
        "switch_cpu_per_comm_s": measured["switch_cpu_s"] / its / comm_s,
        "worker_packets_per_s": statistics.fmean(w["up"]["packets"] for w in worker_links)
        / its
        / comm_s,
        "machine_busy": measured["machine_busy_s"] / measured["machine_s"],
        "measured": measured,
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
    ax.bar(
        xs, [it["comm"] for it in its], bottom=[it["compute"] for it in its], label="communication"
    )
    links = f", {summary['link_mbit_s']:g} Mbit/s links" if summary["link_mbit_s"] else ""
    ax.set(
        title=f"{summary['replay']['workload']} x {summary['replay']['scale']:g}: {summary['workers']} workers "
        f"via {summary['aggregation']}{links}",
        xlabel="iteration",
        ylabel="ms (mean over workers)",
    )
    ax.grid(alpha=0.3, axis="y")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def text(summary: dict) -> str:
    ms = summary["median_iteration_ms"]
    return "\n".join(
        [
            f"buckets            {len(summary['buckets'])} ({summary['bytes_per_iteration'] / 1e6:.2f} MB per iteration)",
            f"per iteration      {ms['compute']:.2f} ms compute + {ms['comm']:.2f} ms communication "
            f"(median of {summary['iterations']} iterations)"
            + (
                f"; {ms['comm_cpu']:.2f} ms CPU per worker communicating"
                if "comm_cpu" in ms
                else ""
            ),
            f"sums               {'identical on every worker' if summary['sums_identical'] else 'DIFFER between workers'}",
            *([traffic_text(summary["traffic"])] if summary["traffic"] else []),
        ]
    )


def traffic_text(t: dict) -> str:
    lines = [
        f"worker link        {t['worker_link_bytes'] / 1e6:.3f} MB each way per iteration "
        f"(theory {t['theory']['worker_link'] / 1e6:.3f}); busiest link {t['busiest_link_bytes'] / 1e6:.3f} MB "
        f"(theory {t['theory']['busiest_link'] / 1e6:.3f}), {t['drops']} drops in the queues"
        + (f", {t['retransmissions']} retransmissions" if t["retransmissions"] is not None else "")
    ]
    if t["theory_comm_ms"] is not None:
        lines.append(
            f"link rate          theory {t['theory_comm_ms']:.0f} ms communication per iteration; "
            f"busiest link {t['busiest_link_utilisation']:.0%} busy while communicating"
        )
    lines.append(
        f"CPU                switch {t['switch_cpu_per_comm_s']:.0%} of a core while communicating, "
        f"machine {t['machine_busy']:.0%} busy (run incl. start-up); "
        f"{t['worker_packets_per_s']:,.0f} packets/s sent per worker"
    )
    if (bound := bound_by(t)) is not None:
        lines.append(f"bound by           {bound}")
    return "\n".join(lines)


def bound_by(t: dict) -> str | None:
    """What set the time, when the figures say: the links, or this machine's CPU. CPU-bound, the
    times compare how fast this host's cores run each method (a worker's CPU per packet, the
    switch's, the kernel's), not the methods on a network: a reader must not take them for that."""
    utilisation = t["busiest_link_utilisation"]
    if utilisation is not None and utilisation >= LINK_BOUND:
        return f"the links (the busiest {utilisation:.0%} busy)"
    if t["machine_busy"] >= CPU_BOUND:
        return (
            f"this machine's CPU ({t['machine_busy']:.0%} busy, no link {LINK_BOUND:.0%} busy): "
            "the times measure its cores, not the method (shape the links: --bw; or ina sim)"
        )
    return None
