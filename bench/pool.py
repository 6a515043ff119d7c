"""`ina bench pool`: the switch's slot pool shared by a churn of jobs, per allocation policy.

One seeded churn (sim/churn.py: the Philly trace's run times, Poisson arrivals) runs through an
8192-slot pool (sim/pool.py) at 60%, 80% and 95% offered load under each policy; the table gives
utilisation (slots held, and slots the jobs asked for), time-averaged external fragmentation,
queued and refused jobs, mean wait, mean and p99 job completion time, compactions and moves, and
the share of chunks host fallback servers summed (best effort: sim/pool.py's model). For
each load it names the policy with the lowest mean completion time beside first fit's, with the
figures that explain the difference. Virtual time: the figures are the same on every machine.
"""

import dataclasses
from pathlib import Path

from ina.bench.plots import pyplot
from ina.bench.results import Progress, write
from ina.sim.churn import ChurnSpec, at_load, generate, read_trace
from ina.sim.pool import PoolOptions, PoolRun, simulate_pool

LOADS = (0.6, 0.8, 0.95)
POLICIES = (
    PoolOptions(allocator="first-fit"),
    PoolOptions(allocator="best-fit"),
    PoolOptions(allocator="buddy"),
    PoolOptions(allocator="partition:16"),
    PoolOptions(allocator="first-fit", compact=True),
    PoolOptions(allocator="best-fit", compact=True),
    PoolOptions(allocator="first-fit", best_effort=True),
)
COLUMNS = (
    ("policy", "policy", "{}"),
    ("utilisation", "held", "{:.0%}"),
    ("useful_utilisation", "asked", "{:.0%}"),
    ("fragmentation", "frag", "{:.2f}"),
    ("queued_jobs", "queued", "{}"),
    ("refused_jobs", "refused", "{}"),
    ("mean_wait_s", "wait s", "{:,.0f}"),
    ("mean_jct_s", "mean JCT s", "{:,.0f}"),
    ("p99_jct_s", "p99 JCT s", "{:,.0f}"),
    ("moves", "moves", "{}"),
    ("host_share", "host", "{:.1%}"),
)


def table(rows: list[dict]) -> str:
    cells = [[h for _k, h, _f in COLUMNS]] + [
        [f.format(r[k]) for k, _h, f in COLUMNS] for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in cells
    )


def best(rows: list[dict]) -> dict:
    """The policy with the lowest mean completion time among those that refused no more jobs than
    the fewest any refused (a refused job completes in no time, it does not complete)."""
    fewest = min(r["refused_jobs"] for r in rows)
    return min((r for r in rows if r["refused_jobs"] == fewest), key=lambda r: r["mean_jct_s"])


def reading(rows: list[dict]) -> str:
    """The best policy's mean completion time beside first fit's, and why, from the figures."""
    first = next(r for r in rows if r["policy"] == "first-fit")
    best_row = best(rows)
    if best_row is first:
        return f"first fit has the lowest mean completion time ({first['mean_jct_s']:,.0f} s)"
    return (
        f"{best_row['policy']}: mean completion {best_row['mean_jct_s']:,.0f} s against first fit's "
        f"{first['mean_jct_s']:,.0f} s ({best_row['mean_jct_s'] / first['mean_jct_s']:.2f}x). The "
        + (
            "jobs are the same and best effort runs some slower (on shared or fewer slots), so "
            "the difference is waiting: "
            if best_row["host_share"]
            else "jobs and their run times are the same, so the difference is waiting: "
        )
        + f"{best_row['mean_wait_s']:,.0f} s against {first['mean_wait_s']:,.0f} s on average. First fit "
        f"kept the free slots in pieces (time-averaged fragmentation {first['fragmentation']:.2f} "
        f"against {best_row['fragmentation']:.2f}), so a queued job often waited while enough slots "
        f"were free in total"
        + (
            f"; its {best_row['compactions']} compactions moved jobs {best_row['moves']} times, each "
            "move costing the moved job one iteration (drain, move, resume)"
            if best_row["moves"]
            else ""
        )
        + (
            f"; best effort starts a job that finds no range at once on fewer or shared slots, "
            f"and the hosts summed {best_row['host_share']:.1%} of the chunks"
            if best_row["host_share"]
            else ""
        )
        + "."
    )


def bench_pool(
    out: Path, jobs: int = 2000, seed: int = 1, pool_size: int = 8192, trace: str | None = None
) -> list[dict]:
    """`trace`: a CSV of the user's jobs (sim/churn.py `read_trace`) instead of `jobs` generated
    ones; either way its arrivals are rescaled to each offered load."""
    churn = read_trace(Path(trace)) if trace else generate(ChurnSpec(jobs=jobs), seed)
    jobs = len(churn)
    progress = Progress(len(LOADS) * len(POLICIES), "pool")
    rows, runs = [], {}
    for load in LOADS:
        loaded = at_load(churn, load, pool_size)
        for options in POLICIES:
            options = dataclasses.replace(options, pool_size=pool_size)
            run = simulate_pool(loaded, options, snapshots=load == LOADS[-1])
            runs[load, options.label] = run
            rows.append({"load": load, "jobs": jobs, "seed": seed, **run.summary()})
            progress.step(f"{load:.0%} {options.label}")
    write(out, "pool", rows)
    for load in LOADS:
        at = [r for r in rows if r["load"] == load]
        print(f"\noffered load {load:.0%} ({jobs} jobs, seed {seed}, {pool_size} slots)")
        print(table(at))
        print(reading(at))
    top = LOADS[-1]
    winner = best([r for r in rows if r["load"] == top])["policy"]
    plot_over_time(
        out / "pool.png", {p: runs[top, p] for p in dict.fromkeys(("first-fit", winner))}, top
    )
    return rows


def plot_over_time(path: Path, runs: dict[str, PoolRun], load: float) -> Path:
    """Per policy: the pool's occupancy map (slot x time, a colour per job) above its slots held,
    fragmentation and queue over time."""
    import numpy as np

    plt = pyplot()
    fig, axes = plt.subplots(2, len(runs), figsize=(7 * len(runs), 8), squeeze=False)
    for col, (label, run) in enumerate(runs.items()):
        pool = run.options.pool_size
        end = run.samples[-1][0]
        times = np.linspace(0, end, 600)
        grid = np.full((min(pool, 512), len(times)), np.nan)
        scale = pool / grid.shape[0]
        k = 0
        for x, t in enumerate(times):
            while k + 1 < len(run.snapshots) and run.snapshots[k + 1][0] <= t:
                k += 1
            for job, r in run.snapshots[k][1]:
                grid[int(r.base / scale) : max(int(r.base / scale) + 1, int(r.end / scale)), x] = (
                    job % 20
                )
        ax = axes[0][col]
        ax.imshow(
            grid,
            aspect="auto",
            origin="lower",
            cmap="tab20",
            extent=(0, end / 3600, 0, pool),
            interpolation="nearest",
        )
        ax.set_title(f"{label}: who holds which slot ({load:.0%} offered load)")
        ax.set_xlabel("hours")
        ax.set_ylabel("slot")
        ax = axes[1][col]
        hours = [s[0] / 3600 for s in run.samples]
        ax.plot(
            hours,
            [s[1] / pool for s in run.samples],
            label="slots held / pool",
            drawstyle="steps-post",
        )
        ax.plot(
            hours,
            [s[2] for s in run.samples],
            label="external fragmentation",
            drawstyle="steps-post",
            alpha=0.7,
        )
        ax.set_ylim(0, 1)
        ax.set_xlabel("hours")
        queue = ax.twinx()
        queue.plot(
            hours,
            [s[3] for s in run.samples],
            color="gray",
            linewidth=0.8,
            label="jobs queued",
            drawstyle="steps-post",
        )
        queue.set_ylabel("jobs queued")
        ax.legend(loc="upper left", fontsize=8)
        queue.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
