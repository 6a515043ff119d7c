"""`ina bench train`: communication time per iteration of a replayed model (ResNet-50, scaled)
through the switch, a ring all-reduce between the hosts and the host parameter server, on links
limited with TCLink (the network is the bottleneck, as in a cluster) and on unlimited veth links.

Each configuration is one `ina train --replay` run in Mininet; every iteration's communication time
(mean over the workers) is a sample, summarised as median and spread. The switch's rows carry
its ratio to the ring and to the parameter server on the same links (issue 15's targets: at most
0.8 and 0.5 on limited links).
"""

from pathlib import Path

from ina.bench.results import Progress, summarise, write
from ina.train import replay_report
from ina.train.replay import ReplayConfig
from ina.train.runner import AGGREGATIONS, TrainOptions, run
from ina.train.sgd import Config


def link_label(bw: float | None) -> str:
    return f"{bw:g} Mbit/s links" if bw else "unlimited veth links"


def bench_train(out: Path, workers: int = 4, scale: float = 0.01, iterations: int = 10,
                links: tuple[float | None, ...] = (100.0, None), workload: str = "resnet50") -> list[dict]:
    rows = []
    progress = Progress(len(links) * len(AGGREGATIONS), "train")
    for bw in links:
        for aggregation in AGGREGATIONS:
            opts = TrainOptions(Config(), workers=workers, aggregation=aggregation, bw=bw,
                                replay=ReplayConfig(workload, scale, iterations=iterations),
                                run_dir=str(out / "runs" / f"{aggregation}-{bw or 'unlimited'}"))
            summary = replay_report.summarise(opts, run(opts, lambda _record: None))
            its = summary["per_iteration_ms"]
            rows.append({"links": link_label(bw), "aggregation": aggregation, "workload": workload, "scale": scale,
                         "workers": workers, "bytes_per_iteration": summary["bytes_per_iteration"],
                         "sums_identical": summary["sums_identical"],
                         "comm_ms": summarise([it["comm"] for it in its]),
                         "compute_ms": summarise([it["compute"] for it in its])})
            progress.step(f"{aggregation} on {link_label(bw)}")
    for row in rows:
        if row["aggregation"] == "switch":
            for other, key in (("ring", "x_ring"), ("ps", "x_ps")):
                ref = next(r for r in rows if r["links"] == row["links"] and r["aggregation"] == other)
                row[key] = round(row["comm_ms"]["median"] / ref["comm_ms"]["median"], 3)
    write(out, "train", rows)
    plot(out / "train.png", rows)
    return rows


def plot(path: Path, rows: list[dict]) -> None:
    """One panel per kind of link (its own scale), one bar per aggregation: median communication
    time per iteration, the min-max spread as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = list(dict.fromkeys(r["links"] for r in rows))
    fig, axes = plt.subplots(1, len(kinds), figsize=(5 * len(kinds), 4), squeeze=False)
    for ax, kind in zip(axes[0], kinds, strict=True):
        mine = [r for r in rows if r["links"] == kind]
        medians = [r["comm_ms"]["median"] for r in mine]
        spread = [[m - r["comm_ms"]["min"] for m, r in zip(medians, mine, strict=True)],
                  [r["comm_ms"]["max"] - m for m, r in zip(medians, mine, strict=True)]]
        ax.bar([r["aggregation"] for r in mine], medians, yerr=spread, capsize=4, color=["#3b7dd8", "#d8843b", "#6a9f58"])
        for i, m in enumerate(medians):
            ax.text(i, m, f"{m:,.0f}", ha="center", va="bottom", fontsize=8)
        ax.set(title=kind, ylabel="communication per iteration (ms, median)")
        ax.grid(alpha=0.3, axis="y")
    r0 = rows[0]
    fig.suptitle(f"{r0['workload']} x {r0['scale']:g} ({r0['bytes_per_iteration'] / 1e6:.2f} MB per iteration), "
                 f"{r0['workers']} workers")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
