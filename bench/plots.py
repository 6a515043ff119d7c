"""PNG plots of benchmark results (matplotlib, no display needed). matplotlib is imported at the
first plot, not with this module: `ina sim` and the benches import it for runs that draw nothing."""

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType


@functools.cache
def pyplot() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def saved(fig, path: Path) -> Path:
    """Write a finished figure to `path` (100 dpi, laid out tight) and free it."""
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot().close(fig)
    return path


def curves(
    rows: Sequence[Mapping], x: str, y: str, by: str = "method", unit: float = 1.0
) -> dict[str, tuple[list, list]]:
    """A sweep's rows as `lines`' series: one line per value of `by` (in the rows' order) through
    its rows' `x` and `y` (in `unit`s: bit/s rows drawn in Gbit/s have unit 1e9), e.g. each
    method's goodput against workers."""
    series: dict[str, tuple[list, list]] = {}
    for row in rows:
        xs, ys = series.setdefault(row[by], ([], []))
        xs.append(row[x])
        ys.append(row[y] / unit)
    return series


def bars(path: Path, title: str, labels: list[str], values: list[float], ylabel: str) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(labels, values, color="#3b7dd8")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:,.0f}", ha="center", va="bottom", fontsize=8)
    return saved(fig, path)


def lines(
    path: Path,
    title: str,
    xlabel: str,
    ylabel: str,
    series: dict[str, tuple[list, list]],
    *,
    marker: str | None = "o",
    step: bool = False,
    ymin: float | None = None,
) -> Path:
    """One line per series; `marker=None` for dense series, `step` holds each value until the next x
    (a queue's occupancy between changes), `ymin` fixes the y axis's bottom (0: no zoom on a spread)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, (xs, ys) in series.items():
        ax.plot(xs, ys, marker=marker, label=name, drawstyle="steps-post" if step else "default")
    if ymin is not None:
        ax.set_ylim(bottom=ymin)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    return saved(fig, path)


def stacked(
    path: Path, title: str, labels: list[str], parts: dict[str, list[float]], ylabel: str
) -> Path:
    """One bar per label, split into the named parts (e.g. time per stage)."""
    plt = pyplot()
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
    return saved(fig, path)


def grouped(
    path: Path,
    title: str,
    panels: dict[str, tuple[list[str], dict[str, list[float]]]],
    ylabel: str,
    lines: dict[str, dict[str, float]] | None = None,
) -> Path:
    """One panel per key (its own y scale), categories on x, one bar per series in each group;
    `lines` draws labelled horizontal references in a panel (e.g. the I/O ceiling)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, (name, (categories, series)) in zip(axes[0], panels.items(), strict=True):
        width = 0.8 / max(len(series), 1)
        for k, (label, values) in enumerate(series.items()):
            xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(categories))]
            ax.bar(xs, values, width, label=label)
            for x, v in zip(xs, values, strict=True):
                ax.text(x, v, f"{v / 1000:,.0f}k", ha="center", va="bottom", fontsize=7)
        for label, y in (lines or {}).get(name, {}).items():
            ax.axhline(y, color="gray", linestyle="--", linewidth=1)
            ax.text(
                len(categories) - 0.5, y, label, ha="right", va="bottom", fontsize=8, color="gray"
            )
        ax.set_xticks(range(len(categories)), categories, fontsize=8)
        ax.set_title(name)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    return saved(fig, path)
