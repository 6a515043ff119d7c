"""`ina bench train`: communication time per iteration of a replayed model (ResNet-50, scaled)
through the switch, a ring all-reduce between the hosts and the host parameter server, on links
limited with TCLink (the network is the bottleneck, as in a cluster) and on unlimited veth links.

    sudo .venv/bin/ina bench train --out results     # about 3 minutes; --full: 20 iterations each

Each configuration is one `ina train --replay` run in Mininet; every iteration's communication time
(mean over the workers) is a sample, summarised as median and spread. The switch's rows carry
its ratio to the ring and to the parameter server on the same links (issue 15's targets: at most
0.8 and 0.5 on limited links), measured and in theory. Every row also has what the links carried against theory
(train/traffic.py): bytes per iteration on a worker's link and on the busiest one, the theory's
time at the link rate, how busy the busiest link was, drops in the shaped queues, retransmissions,
a worker's and the switch's CPU and the packets per second a worker sent.
"""

import json
from pathlib import Path

from ina.bench.results import Progress, summarise, write
from ina.train import replay_report
from ina.train.replay import ReplayConfig
from ina.train.runner import AGGREGATIONS, TrainOptions, run
from ina.train.sgd import Config

LIMITED_MBIT_S = 10.0
WHY_LIMITED = (
    f"{LIMITED_MBIT_S:g} Mbit/s: the rate at which the links, not the emulation's 2 cores, limit every "
    "method. With 64 elements per packet the switch path sent about 4,000 packets/s per worker at "
    f"{LIMITED_MBIT_S:g} Mbit/s (with 256, the default, a quarter as many), under half of the ~9,000 "
    "the 4 Python workers, the switch and the kernel "
    "manage together on 2 cores (docs/performance.md: at 100 Mbit/s its links were 22% busy, the CPU 100%); "
    "HTB's queues (1,000 packets) hold a 64-packet window, so they do not drop."
)


def link_label(bw: float | None) -> str:
    return f"{bw:g} Mbit/s links" if bw else "unlimited veth links"


def bench_train(
    out: Path,
    workers: int = 4,
    scale: float = 0.01,
    iterations: int = 10,
    links: tuple[float | None, ...] = (LIMITED_MBIT_S, None),
    workload: str = "resnet50",
    elems: int = TrainOptions.elems,
) -> list[dict]:
    if any(links):
        print(f"[bench train] links limited to {WHY_LIMITED}", flush=True)
    rows = []
    progress = Progress(len(links) * len(AGGREGATIONS), "train", own_lines=True)
    for bw in links:
        for aggregation in AGGREGATIONS:
            opts = TrainOptions(
                Config(),
                workers=workers,
                aggregation=aggregation,
                elems=elems,
                bw=bw,
                replay=ReplayConfig(workload, scale, iterations=iterations),
                run_dir=str(out / "runs" / f"{aggregation}-{bw or 'unlimited'}"),
            )
            measured: list[dict] = []
            summary = replay_report.summarise(
                opts, run(opts, lambda _record: None, measured.append), measured[0]
            )
            (Path(opts.run_dir) / "train.json").write_text(json.dumps(summary, indent=2))
            rows.append(table_row(summary, link_label(bw)) | {"elems": elems})
            progress.step(f"{aggregation} on {link_label(bw)}")
    for row in rows:
        if row["aggregation"] == "switch":
            for other, key in (("ring", "x_ring"), ("ps", "x_ps")):
                ref = next(
                    r for r in rows if r["links"] == row["links"] and r["aggregation"] == other
                )
                row[key] = round(row["comm_ms"]["median"] / ref["comm_ms"]["median"], 3)
                if "theory_comm_ms" in row:
                    row[f"{key}_theory"] = round(row["theory_comm_ms"] / ref["theory_comm_ms"], 3)
    write(out, "train", rows)
    for r in rows:
        print(
            f"[bench train] {r['aggregation']:>6} on {r['links']}: {r['comm_ms']['median']:,.0f} ms"
            f" ({r['comm_cpu_ms']['median']:,.1f} ms of a worker's CPU)"
            + (
                f" (theory {r['theory_comm_ms']:,.0f} ms, busiest link {r['link_busy']:.0%} busy)"
                if "theory_comm_ms" in r
                else ""
            )
            + f"; {r['worker_link_mb']:.3f} MB each way on a worker's link (theory {r['worker_link_theory_mb']:.3f}),"
            f" {r['busiest_link_mb']:.3f} on the busiest (theory {r['busiest_link_theory_mb']:.3f}),"
            f" {r['queue_drops']} queue drops",
            flush=True,
        )
    plot(out / "train.png", rows)
    return rows


def table_row(summary: dict, links: str) -> dict:
    """One flat row of the bench's table (the summary's traffic section, in MB and fractions)."""
    its, t = summary["per_iteration_ms"], summary["traffic"]
    out = {
        "links": links,
        "aggregation": summary["aggregation"],
        "workload": summary["replay"]["workload"],
        "scale": summary["replay"]["scale"],
        "workers": summary["workers"],
        "bytes_per_iteration": summary["bytes_per_iteration"],
        "sums_identical": summary["sums_identical"],
        "comm_ms": summarise([it["comm"] for it in its]),
        # a worker's CPU while communicating: the method's own cost, which a loaded machine's
        # wall time hides
        "comm_cpu_ms": summarise([it["comm_cpu"] for it in its]),
        "compute_ms": summarise([it["compute"] for it in its]),
        "worker_link_mb": round(t["worker_link_bytes"] / 1e6, 4),
        "worker_link_theory_mb": round(t["theory"]["worker_link"] / 1e6, 4),
        "busiest_link_mb": round(t["busiest_link_bytes"] / 1e6, 4),
        "busiest_link_theory_mb": round(t["theory"]["busiest_link"] / 1e6, 4),
        "queue_drops": t["drops"],
        "switch_cpu": round(t["switch_cpu_per_comm_s"], 3),
        "packets_per_s_per_worker": round(t["worker_packets_per_s"]),
    }
    if t["retransmissions"] is not None:
        out["retransmissions"] = t["retransmissions"]
    if t["theory_comm_ms"] is not None:
        out["theory_comm_ms"] = round(t["theory_comm_ms"], 1)
        out["link_busy"] = round(t["busiest_link_utilisation"], 3)
    return out


def plot(path: Path, rows: list[dict]) -> None:
    """One panel per kind of link (its own scale), one bar per aggregation: median communication
    time per iteration, the min-max spread as error bars, the theory at the link rate as a black line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = list(dict.fromkeys(r["links"] for r in rows))
    fig, axes = plt.subplots(1, len(kinds), figsize=(5 * len(kinds), 4), squeeze=False)
    for ax, kind in zip(axes[0], kinds, strict=True):
        mine = [r for r in rows if r["links"] == kind]
        medians = [r["comm_ms"]["median"] for r in mine]
        spread = [
            [m - r["comm_ms"]["min"] for m, r in zip(medians, mine, strict=True)],
            [r["comm_ms"]["max"] - m for m, r in zip(medians, mine, strict=True)],
        ]
        ax.bar(
            [r["aggregation"] for r in mine],
            medians,
            yerr=spread,
            capsize=4,
            color=["#3b7dd8", "#d8843b", "#6a9f58"],
        )
        for i, (m, r) in enumerate(zip(medians, mine, strict=True)):
            ax.text(i, m, f"{m:,.0f}", ha="center", va="bottom", fontsize=8)
            if "theory_comm_ms" in r:
                ax.hlines(
                    r["theory_comm_ms"],
                    i - 0.4,
                    i + 0.4,
                    colors="black",
                    label="theory at the link rate" if i == 0 else None,
                )
        if any("theory_comm_ms" in r for r in mine):
            ax.legend(fontsize=8)
        ax.set(title=kind, ylabel="communication per iteration (ms, median)")
        ax.grid(alpha=0.3, axis="y")
    r0 = rows[0]
    fig.suptitle(
        f"{r0['workload']} x {r0['scale']:g} ({r0['bytes_per_iteration'] / 1e6:.2f} MB per iteration), "
        f"{r0['workers']} workers"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
