"""`ina bench stragglers`: what one slow worker costs a job under each completion policy.

4 workers in Mininet run `--repeat` iterations of emulated compute (a sleep) then an all-reduce
through the switch; one host's compute is slowed by a factor (`ina run --straggler h4:3x`). Each
configuration runs once with the same seed. The job's iteration time is the median, over the
workers the policy lets run ahead (all of them without a straggler), of compute + all-reduce per
iteration. Under sync every iteration waits for the straggler; under quorum 3-of-4 the other three
complete every slot without it, and the straggler takes the RESULTs (and answers to its late
contributions) when it gets there. Timing never decides pass or fail: the bench prints the ratios
the issue asks for beside the numbers, writes JSON and a PNG.

With `--full` it also trains (`ina train --model mlp --dataset digits`, 4 workers, 5 ms emulated
compute, h4 3x slower) under sync, quorum 3 of 4 and staleness 2: accuracy against wall time per
policy, the final accuracy against sync's (issue 16: within 2 points) and the time to accuracy.
"""

import statistics
from pathlib import Path

from ina.bench import plots
from ina.bench.results import Progress, write
from ina.p4src.protocol import Policy

STRAGGLER = "h4"  # rank 3 of the star's single job


def configurations(factor: float) -> list[tuple[str, str, dict[str, float]]]:
    """(label, policy, stragglers) in the order they run and plot."""
    slow = {STRAGGLER: factor}
    return [
        ("sync", "sync", {}),
        (f"sync, {STRAGGLER} {factor:g}x", "sync", slow),
        ("quorum 3/4", "quorum:3", {}),
        (f"quorum 3/4, {STRAGGLER} {factor:g}x", "quorum:3", slow),
    ]


def iteration_times(report: dict) -> list[tuple[float, float]]:
    """(compute, all-reduce) seconds per iteration of one worker's report."""
    return [(it["compute_s"], it["allreduce_s"]) for it in report["iterations"]]


def job_iteration(reports: list[dict], stragglers: dict[str, float]) -> tuple[float, float]:
    """Median compute and all-reduce seconds per iteration over the workers that are not slowed."""
    times = [t for r in reports if r["host"] not in stragglers for t in iteration_times(r)]
    return statistics.median(c for c, _a in times), statistics.median(a for _c, a in times)


def bench_stragglers(
    out: Path,
    iterations: int = 20,
    compute_ms: float = 40.0,
    factor: float = 3.0,
    size: int = 1 << 14,
) -> list[dict]:
    from ina.topologies.runner import RunOptions, run

    rows = []
    plan = configurations(factor)
    progress = Progress(len(plan), "stragglers", own_lines=True)
    for label, policy, stragglers in plan:
        tag = label.replace(" ", "").replace(",", "-").replace("/", "of")
        result = run(
            RunOptions(
                workers=4,
                size=size,
                policy=Policy.parse(policy),
                repeat=iterations,
                compute_ms=compute_ms,
                stragglers=stragglers,
                run_dir=str(out / "runs" / f"stragglers-{tag}"),
            )
        )
        compute, allreduce = job_iteration(result.workers, stragglers)
        slow = [r for r in result.workers if r["host"] in stragglers]
        rows.append(
            {
                "configuration": label,
                "policy": policy,
                "straggler": " ".join(f"{h}:{f:g}x" for h, f in stragglers.items()) or "none",
                "iterations": iterations,
                "compute_ms": compute_ms,
                "size": size,
                "verified": result.ok,
                "iteration_s": compute + allreduce,
                "compute_s": compute,
                "allreduce_s": allreduce,
                "straggler_iteration_s": statistics.median(
                    sum(t) for r in slow for t in iteration_times(r)
                )
                if slow
                else None,
                "late_contributions": sum(
                    job.get("late", 0)
                    for sw in result.switch_stats.values()
                    for job in sw.get("jobs", {}).values()
                ),
            }
        )
        progress.step(label)
    by_label = {r["configuration"]: r for r in rows}
    base = by_label["sync"]["iteration_s"]
    for r in rows:
        r["slowdown_vs_sync_without_straggler"] = r["iteration_s"] / base
    write(out, "stragglers", rows)
    plots.stacked(
        out / "stragglers.png",
        f"Iteration time, 4 workers, one {factor:g}x slower in compute",
        [r["configuration"] for r in rows],
        {
            "compute": [r["compute_s"] * 1e3 for r in rows],
            "all-reduce": [r["allreduce_s"] * 1e3 for r in rows],
        },
        "ms per iteration (median over the workers not slowed)",
    )
    quorum_slow = rows[3]["iteration_s"] / rows[0]["iteration_s"]
    sync_slow = rows[1]["iteration_s"] / rows[0]["iteration_s"]
    print(
        f"stragglers: quorum 3/4 with a {factor:g}x straggler takes {quorum_slow:.2f}x the iteration time of the "
        f"job without one (target <= 1.2x); sync takes {sync_slow:.2f}x"
    )
    return rows


TRAINING_POLICIES = ("sync", "quorum:3", "stale:2")


def bench_policy_training(
    out: Path, epochs: int = 20, compute_ms: float = 5.0, factor: float = 3.0
) -> list[dict]:
    """Train the digits MLP under each policy with one straggler; accuracy against wall time."""
    from ina.train.data import load
    from ina.train.report import summarise
    from ina.train.runner import TrainOptions, run
    from ina.train.sgd import Config, train

    config = Config(model="mlp", epochs=epochs)
    _, reference = train(config, load("digits", config.seed))
    target = reference.epochs[-1].test_accuracy - 0.01
    rows, curves = [], {}
    progress = Progress(len(TRAINING_POLICIES), "policies", own_lines=True)
    for policy in TRAINING_POLICIES:
        opts = TrainOptions(
            config,
            workers=4,
            policy=Policy.parse(policy),
            compute_ms=compute_ms,
            stragglers={STRAGGLER: factor},
            run_dir=str(out / "runs" / f"train-{policy.replace(':', '')}"),
        )
        summary = summarise(opts, reference, run(opts, lambda _record: None), target)
        epochs_ = summary["epochs"]
        rows.append(
            {
                "policy": policy,
                "straggler": f"{STRAGGLER}:{factor:g}x",
                "compute_ms": compute_ms,
                "test_accuracy": summary["test_accuracy"],
                "time_to_target_s": summary["time_to_target_s"],
                "wall_s": epochs_[-1]["wall_s"],
                "compute_ms_per_iteration": summary["iteration_ms"]["compute"],
                "comm_ms_per_iteration": summary["iteration_ms"]["comm"],
                "weights_identical": summary["weights_identical"],
            }
        )
        curves[policy] = (
            [e["wall_s"] for e in epochs_],
            [100 * e["test_accuracy"] for e in epochs_],
        )
        progress.step(policy)
    sync = rows[0]["test_accuracy"]
    for r in rows:
        r["points_vs_sync"] = round(100 * (r["test_accuracy"] - sync), 2)
        print(
            f"policies: {r['policy']:>8}: test accuracy {r['test_accuracy']:.2%} ({r['points_vs_sync']:+.2f} points "
            f"vs sync; target within 2), {r['wall_s']:.1f} s, time to {target:.1%}: {r['time_to_target_s']}"
        )
    print(
        f"policies: target accuracy {target:.2%} (the one-process reference's final accuracy less 1 point)"
    )
    write(out, "policies", rows)
    plots.lines(
        out / "policies.png",
        f"MLP on digits, 4 workers, {STRAGGLER} {factor:g}x slower",
        "wall time (s)",
        "test accuracy (%)",
        curves,
    )
    return rows
