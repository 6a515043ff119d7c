"""PNG plots of benchmark results (matplotlib, no display needed)."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def bars(path: Path, title: str, labels: list[str], values: list[float], ylabel: str) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(labels, values, color="#3b7dd8")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:,.0f}", ha="center", va="bottom", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def lines(path: Path, title: str, xlabel: str, ylabel: str, series: dict[str, tuple[list, list]]) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, (xs, ys) in series.items():
        ax.plot(xs, ys, marker="o", label=name)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def stacked(path: Path, title: str, labels: list[str], parts: dict[str, list[float]], ylabel: str) -> Path:
    """One bar per label, split into the named parts (e.g. time per stage)."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bottom = [0.0] * len(labels)
    for name, values in parts.items():
        ax.bar(labels, values, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    for i, total in enumerate(bottom):
        ax.text(i, total, f"{total:,.0f}", ha="center", va="bottom", fontsize=8)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
