"""Sweeps for `ina sim`: a grid of runs, one per combination of the swept options' values, run in
parallel local processes or on a Dask cluster.

`--sweep workers=8,16,32` names an `ina sim` option (without its dashes) and its values; several
`--sweep`s make a grid, the first the x axis of the plot. Each value is parsed by the option's own
parser, and every point's configuration checked as a single run's is (the topology, the policy,
the memory budget), all before anything runs. A point is `simulate` then `report` (sim/allreduce.py)
of its `AllReduceConfig`: a pure function of it, so the same seed gives the same figures whichever
executor runs it (the wall clock's apart). Executors: this process (`parallel` 1), a pool of
`parallel` spawned processes, or a Dask cluster's workers (dask.distributed, the optional extra
`dask`; each worker needs ina installed).
"""

import argparse
import importlib.util
import itertools
import json
import multiprocessing
import os
import re
import statistics
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ina.args import int_range, parsed_by
from ina.bench import plots
from ina.bench.results import git_revision
from ina.hosts.core import WorkerError
from ina.sim import budget
from ina.sim.allreduce import AllReduceConfig, report, simulate
from ina.sim.units import format_rate, format_seconds

UNSWEPT = (
    "sweep",
    "parallel",
    "dask",
    "sweep_plot",
    "json",
    "loss_burst",
    "host_cost",
    "plot",
    "pcap",
    "compare",
    "mtu",
    "ring_chunk",
    "ring_transport",
    "model",
    "train",
    "scale",
    "bucket_cap_mb",
    "bucket_calls",
    "iterations",
    "epochs",
    "batch",
    "lr",
    "compute",
    "straggler",
    "straggler_dist",
    "allocator",
)  # not axes: comma values, outputs, baselines and workloads (a sweep runs
# the switch path's all-reduce), and where slots go (a run's timing does not depend on it)
DASK_TIMEOUT_S = 10  # connecting to a scheduler
MAX_PARALLEL = 256  # local processes at once


@dataclass(frozen=True)
class Axis:
    """One swept option: its name as written (workers), its argparse dest, the values as written
    and as parsed."""

    name: str
    dest: str
    texts: tuple[str, ...]
    values: tuple


@dataclass(frozen=True)
class Point:
    """One run of the grid: each axis's value (as written) and the configuration."""

    labels: dict[str, str]
    config: AllReduceConfig


def axes(p: argparse.ArgumentParser, specs: Sequence[str]) -> list[Axis]:
    """`--sweep NAME=V1,V2,...` texts -> axes, each value parsed by option --NAME's own type;
    refused through `p.error` naming the sweep, the option and its range."""
    options = {
        a.option_strings[0].removeprefix("--"): a
        for a in p._actions
        if a.option_strings and a.nargs != 0 and a.dest not in UNSWEPT
    }
    found: list[Axis] = []
    for spec in specs:
        name, sep, values = spec.partition("=")
        if not sep or name not in options or not values:
            p.error(
                f"argument --sweep: expected NAME=V1,V2,... with NAME one of {', '.join(options)}, got {spec[:40]!r}"
            )
        if name in (a.name for a in found):
            p.error(f"argument --sweep: {name} is swept twice")
        action, texts = options[name], tuple(values.split(","))
        parsed = []
        for text in texts:
            try:
                parsed.append(action.type(text) if action.type else text)
            except (argparse.ArgumentTypeError, ValueError) as err:
                p.error(f"argument --sweep: {name}={text}: {err}")
        found.append(Axis(name, action.dest, texts, tuple(parsed)))
    return found


def points(
    p: argparse.ArgumentParser,
    args: argparse.Namespace,
    grid: list[Axis],
    configure: Callable[[argparse.ArgumentParser, argparse.Namespace], AllReduceConfig],
) -> list[Point]:
    """Every combination of the axes' values (the last axis varying fastest), each configured by
    `configure` (sim/cli.py's `config_from`) from `args` with the point's values: a point it refuses
    exits through `p.error`, the point named."""
    found = []
    for combination in itertools.product(*(zip(a.texts, a.values, strict=True) for a in grid)):
        labels = {a.name: text for a, (text, _v) in zip(grid, combination, strict=True)}
        values = {a.dest: value for a, (_t, value) in zip(grid, combination, strict=True)}
        found.append(
            Point(
                labels,
                configure(AtPoint(p, labels), argparse.Namespace(**{**vars(args), **values})),
            )
        )
    return found


class AtPoint(argparse.ArgumentParser):
    """`parent`'s refusals, naming the sweep point they are about."""

    def __init__(self, parent: argparse.ArgumentParser, labels: dict[str, str]):
        super().__init__(prog=parent.prog, add_help=False)
        self.parent, self.labels = parent, labels

    def error(self, message: str):
        self.parent.error(f"{message} (at --sweep point {point_name(self.labels)})")


def point_name(labels: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in labels.items())


def run_point(config: AllReduceConfig, git: str) -> dict:
    """One point's JSON report, or {"error": ...} when its all-reduce failed (a slot past its retries)."""
    try:
        return report(simulate(config), git)
    except WorkerError as err:
        return {"error": f"the all-reduce failed: {err}"}


class ClusterError(Exception):
    """The Dask cluster could not run a point (not a failed all-reduce: that is the point's report)."""


def run(grid: Sequence[Point], git: str, parallel: int = 1, dask: str | None = None) -> list[dict]:
    """Each point's report, in the grid's order: on the Dask scheduler at `dask`, else on `parallel`
    local processes (1: in this one). Raises OSError when the scheduler cannot be reached,
    ClusterError when its workers fail."""
    configs = [point.config for point in grid]
    if dask:
        from distributed import Client

        try:
            with Client(dask, timeout=DASK_TIMEOUT_S) as client:
                return client.gather(client.map(run_point, configs, git=git, pure=False))
        except OSError:
            raise
        except Exception as err:  # a worker's failure comes back as whatever it raised there (ina not installed...)
            raise ClusterError(f"{type(err).__name__}: {err}") from err
    if parallel == 1 or len(configs) == 1:
        return [run_point(config, git) for config in configs]
    with ProcessPoolExecutor(
        min(parallel, len(configs)), mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        return list(pool.map(run_point, configs, [git] * len(configs)))


def table(grid: Sequence[Point], reports: Sequence[dict]) -> str:
    """One line per point: its values, the simulated time and bound, goodput per worker, resends."""
    names = list(grid[0].labels) if grid else []
    width = {n: max(len(n), *(len(p.labels[n]) for p in grid)) for n in names}
    head = " ".join(f"{n:<{width[n]}}" for n in names)
    lines = [
        f"{head}  {'workers':>7} {'time':>12} {'lossless bound':>14} {'goodput min':>14} {'median':>14} "
        f"{'resends':>8} {'result':>8} {'wall s':>7}"
    ]
    for point, rep in zip(grid, reports, strict=True):
        values = " ".join(f"{point.labels[n]:<{width[n]}}" for n in names)
        if "error" in rep:
            lines.append(f"{values}  {rep['error']}")
            continue
        r = rep["results"]
        bound = format_seconds(r["lossless_bound_s"]) if r["lossless_bound_s"] is not None else "-"
        lines.append(
            f"{values}  {len(r['workers']):>7} {format_seconds(r['communication_s']):>12} {bound:>14} "
            f"{format_rate(r['goodput_bps_min']):>14} {format_rate(median_goodput(rep)):>14} "
            f"{sum(r['retransmissions']):>8} {'verified' if r['verified'] else 'WRONG':>8} "
            f"{rep['wall']['setup_s'] + rep['wall']['run_s']:>7.2f}"
        )
    return "\n".join(lines)


def median_goodput(rep: dict) -> float:
    """The median worker's goodput (a straggler's own does not move it)."""
    return statistics.median(rep["results"]["goodput_bps"])


def sweep_json(grid: Sequence[Point], reports: Sequence[dict], grid_axes: Sequence[Axis]) -> dict:
    return {
        "sweep": {a.name: list(a.texts) for a in grid_axes},
        "points": [
            {"point": point.labels, **rep} for point, rep in zip(grid, reports, strict=True)
        ],
    }


def plot(
    path: Path, grid: Sequence[Point], reports: Sequence[dict], grid_axes: Sequence[Axis]
) -> Path:
    """Median goodput per worker against the first axis, one line per combination of the others
    (numeric values on a numeric x axis, others as categories); failed points are left out."""
    x_axis, others = grid_axes[0], grid_axes[1:]
    numeric = all(isinstance(v, int | float) for v in x_axis.values)
    x_of = dict(zip(x_axis.texts, x_axis.values if numeric else x_axis.texts, strict=True))
    series: dict[str, tuple[list, list]] = {}
    for point, rep in zip(grid, reports, strict=True):
        if "error" in rep:
            continue
        name = point_name({a.name: point.labels[a.name] for a in others}) or "ina sim"
        xs, ys = series.setdefault(name, ([], []))
        xs.append(x_of[point.labels[x_axis.name]])
        ys.append(median_goodput(rep) / 1e9)
    return plots.lines(
        path,
        f"ina sim: goodput per worker against {x_axis.name}",
        x_axis.name,
        "goodput per worker, median (Gbit/s)",
        series,
        ymin=0,
    )


def dask_address(text: str) -> str:
    """A Dask scheduler's address: SCHEME://HOST:PORT (e.g. tcp://10.0.0.5:8786)."""
    if not re.fullmatch(r"[a-z][a-z0-9+]*://[^\s/]+:\d{1,5}", text):
        raise ValueError(
            f"expected a Dask scheduler's address SCHEME://HOST:PORT, e.g. tcp://10.0.0.5:8786, "
            f"got {text[:40]!r}"
        )
    return text


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`ina sim`'s sweep options."""
    group = p.add_argument_group("sweeps (several --sweep make a grid; sim/sweep.py)")
    group.add_argument(
        "--sweep",
        action="append",
        metavar="NAME=V1,V2,...",
        help="run once per value of option --NAME (e.g. workers=8,16,32 or policy=sync,quorum:7)",
    )
    group.add_argument(
        "--parallel",
        type=int_range(1, MAX_PARALLEL),
        help="points run at once, each in a local process (default: the machine's cores, fewer if "
        "their memory estimates do not fit together)",
    )
    group.add_argument(
        "--dask",
        type=parsed_by(dask_address),
        metavar="SCHEME://HOST:PORT",
        help="run the points on this Dask scheduler's workers instead (needs the extra dask)",
    )
    group.add_argument(
        "--sweep-plot", metavar="FILE.png", help="plot goodput per worker against the first --sweep"
    )


def command(
    p: argparse.ArgumentParser,
    args: argparse.Namespace,
    configure: Callable[[argparse.ArgumentParser, argparse.Namespace], AllReduceConfig],
) -> int:
    """`ina sim --sweep ...`: every point checked, then run; the table, and the JSON and PNG asked for.
    Exit 1 when a point failed or a sum was wrong."""
    if not args.sweep:
        used = next(
            o
            for o, v in (
                ("--parallel", args.parallel),
                ("--dask", args.dask),
                ("--sweep-plot", args.sweep_plot),
            )
            if v
        )
        p.error(f"argument {used}: applies to --sweep")
    single = next(
        (
            o
            for o, v in (
                ("--compare", args.compare),
                ("--plot", args.plot),
                ("--pcap", args.pcap),
                ("--model", args.model),
                ("--train", args.train),
            )
            if v
        ),
        None,
    )
    if single:
        p.error(
            f"argument {single}: applies to a single run, not to --sweep (a sweep runs the switch path; "
            "its figures are in --json and --sweep-plot)"
        )
    if args.dask and args.parallel:
        p.error(
            "argument --parallel: not allowed with argument --dask (the cluster's workers run the points)"
        )
    if args.dask and importlib.util.find_spec("distributed") is None:
        p.error("argument --dask: needs dask.distributed (pip install 'ina[dask]')")
    if args.sweep_plot and not os.access(Path(args.sweep_plot).resolve().parent, os.W_OK):
        p.error(
            f"argument --sweep-plot: cannot write {args.sweep_plot} (its directory is missing or not writable)"
        )
    grid_axes = axes(p, args.sweep)
    grid = points(p, args, grid_axes, configure)
    runs = [(point.config, point.config.plain_topology()) for point in grid]
    parallel = args.parallel or min(os.cpu_count() or 1, budget.most_at_once(runs))
    if not args.dask and (refusal := budget.parallel_refusal(runs, parallel)):
        p.error(refusal)
    try:
        reports = run(grid, git_revision(), parallel, args.dask)
    except OSError as err:
        print(f"ina sim: cannot reach the Dask scheduler at {args.dask}: {err}", file=sys.stderr)
        return 1
    except ClusterError as err:
        print(
            f"ina sim: the Dask cluster at {args.dask} could not run the points: {err}",
            file=sys.stderr,
        )
        return 1
    print(table(grid, reports))
    written = []
    try:
        if args.json:
            Path(args.json).write_text(
                json.dumps(sweep_json(grid, reports, grid_axes), indent=2) + "\n"
            )
            written.append(args.json)
        if args.sweep_plot:
            written.append(str(plot(Path(args.sweep_plot), grid, reports, grid_axes)))
    except OSError as err:
        print(f"ina sim: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    return 0 if all("error" not in r and r["results"]["verified"] for r in reports) else 1
