"""What a training run reports: iteration time split into compute and communication, loss and
accuracy against wall time (JSON and PNG), time to a target accuracy, and the reference beside it."""

from dataclasses import asdict
from pathlib import Path

from ina.train.runner import TrainOptions
from ina.train.sgd import History, time_to_accuracy


def summarise(opts: TrainOptions, reference: History, finals: list[dict], target: float) -> dict:
    """The run's JSON: rank 0's curve (every rank has the same weights, which `weights_identical`
    checks), each phase's time per iteration averaged over the workers, and the reference's curve."""
    histories = [f["history"] for f in finals]
    iterations = histories[0]["iterations"]
    epochs = histories[0]["epochs"]
    ref = reference.as_dict()
    return {
        "config": asdict(opts.config),
        "dataset": opts.dataset,
        "workers": opts.workers,
        "aggregation": opts.aggregation,
        "bits": opts.bits,
        "error_feedback": opts.error_feedback,
        "target_accuracy": target,
        "test_accuracy": epochs[-1]["test_accuracy"],
        "reference_test_accuracy": ref["epochs"][-1]["test_accuracy"],
        "accuracy_gap_points": round(
            100 * (epochs[-1]["test_accuracy"] - ref["epochs"][-1]["test_accuracy"]), 3
        ),
        "time_to_target_s": time_to_accuracy(epochs, target),
        "reference_time_to_target_s": time_to_accuracy(ref["epochs"], target),
        "iterations": iterations,
        "iteration_ms": {
            phase: 1000 * sum(h[f"{phase}_s"] for h in histories) / len(histories) / iterations
            for phase in ("compute", "comm")
        },
        "weights_identical": len({f["weights_sha256"] for f in finals}) == 1,
        "epochs": epochs,
        "reference": ref,
        "ranks": histories,
        "contributions_entered": [f["contributions_entered"] for f in finals],  # per rank (Share)
    }


def plot(summary: dict, path: Path) -> None:
    """Loss and test accuracy against wall time, the run beside the reference, and the target."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(10, 4))
    label = f"{summary['workers']} workers via {summary['aggregation']}"
    for epochs, name, style in (
        (summary["epochs"], label, "o-"),
        (summary["reference"]["epochs"], "reference", "s--"),
    ):
        wall = [e["wall_s"] for e in epochs]
        loss_ax.plot(wall, [e["loss"] for e in epochs], style, label=name, markersize=3)
        acc_ax.plot(
            wall, [100 * e["test_accuracy"] for e in epochs], style, label=name, markersize=3
        )
    acc_ax.axhline(100 * summary["target_accuracy"], color="grey", linewidth=0.8, label="target")
    cfg = summary["config"]
    ms = summary["iteration_ms"]
    fig.suptitle(
        f"{cfg['model']} on {summary['dataset']}: {ms['compute']:.1f} ms compute + "
        f"{ms['comm']:.1f} ms communication per iteration"
    )
    loss_ax.set(xlabel="wall time (s)", ylabel="training loss", yscale="log")
    acc_ax.set(xlabel="wall time (s)", ylabel="test accuracy (%)")
    for ax in (loss_ax, acc_ax):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def text(summary: dict) -> str:
    def seconds(value: float | None) -> str:
        return "not reached" if value is None else f"{value:.2f} s"

    ms = summary["iteration_ms"]
    return "\n".join(
        [
            f"test accuracy      {summary['test_accuracy']:.2%} (reference {summary['reference_test_accuracy']:.2%}, "
            f"{summary['accuracy_gap_points']:+.2f} points)",
            f"{'time to ' + format(summary['target_accuracy'], '.1%'):<19}{seconds(summary['time_to_target_s'])} "
            f"(reference, one process: {seconds(summary['reference_time_to_target_s'])})",
            f"{'lanes':<19}{summary['bits']}-bit"
            + (", error feedback" if summary["error_feedback"] else ""),
            f"per iteration      {ms['compute']:.2f} ms compute + {ms['comm']:.2f} ms communication "
            f"({summary['iterations']} iterations)",
            f"weights            {'identical on every worker' if summary['weights_identical'] else 'DIFFER between workers'}"
            + "".join(
                f"; rank {rank} updated {h['missing_elements']} elements with no sum (a RESULT it could not fetch "
                "again)"
                for rank, h in enumerate(summary["ranks"])
                if h.get("missing_elements")
            ),
            f"{'gradients in sums':<19}"
            + ", ".join(
                f"rank {rank} {share:.1%}"
                for rank, share in enumerate(summary["contributions_entered"])
            ),
        ]
    )
