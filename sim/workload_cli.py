"""`ina sim`'s workloads: `--model M` replays a real model's iterations (sim/workload.py), `--train
MODEL:DATASET` trains (sim/training.py), both in virtual time on the network the other options
describe. sim/cli.py adds this group (`add_arguments`) and hands the run here (`run`)."""

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from ina.args import float_range, int_range, parsed_by
from ina.bench.results import git_revision
from ina.hosts.compute import DelayDistribution, check_stragglers, parse_straggler
from ina.hosts.core import WorkerError
from ina.sim.allreduce import AllReduceConfig
from ina.sim.output import Outputs
from ina.sim.plots import Finish
from ina.sim.training import TrainingConfig, TrainingResult, simulate_training, training_report
from ina.sim.units import format_rate, format_seconds, parse_seconds
from ina.sim.workload import (
    REPLAY,
    Stragglers,
    WorkloadConfig,
    WorkloadResult,
    simulate_workload,
    workload_report,
)
from ina.train.data import LOADERS, load
from ina.train.models import MODELS
from ina.train.replay import BUCKET_CALLS
from ina.train.sgd import Config, check
from ina.train.workloads import WORKLOADS

MAX_ITERATIONS = 100_000
MAX_EPOCHS = 10_000
MAX_COMPUTE_S = 3600.0
_SGD = Config()
_REPLAY_ONLY = ("scale", "bucket_cap_mb", "iterations", "bucket_calls")
_TRAIN_ONLY = ("epochs", "batch", "lr")
_EITHER = ("compute", "straggler", "straggler_dist")


def training_spec(text: str) -> tuple[str, str]:
    """'mlp:digits' -> ('mlp', 'digits'): one of train/models.py's models on a bundled dataset."""
    model, _, dataset = text.partition(":")
    if model not in MODELS or dataset not in LOADERS:
        raise ValueError(
            f"expected MODEL:DATASET with MODEL one of {', '.join(MODELS)} and DATASET one of "
            f"{', '.join(LOADERS)}, e.g. mlp:digits, got {text[:40]!r}"
        )
    return model, dataset


def compute_seconds(text: str) -> float:
    """Virtual compute per iteration: a duration in [0, MAX_COMPUTE_S] with a unit."""
    seconds = parse_seconds(text)
    if seconds > MAX_COMPUTE_S:
        raise ValueError(
            f"expected a duration in [0, {MAX_COMPUTE_S:g}s] with a unit, e.g. 5ms, got {text[:40]!r}"
        )
    return seconds


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "workloads",
        "iterations of compute then all-reduce in virtual time: a replayed "
        "model's DDP buckets, or real training (docs/simulation.md)",
    )
    what = g.add_mutually_exclusive_group()
    what.add_argument(
        "--model",
        choices=WORKLOADS,
        help="replay this model's iterations: its DDP buckets all-reduced after its compute time",
    )
    what.add_argument(
        "--train",
        type=parsed_by(training_spec),
        metavar="MODEL:DATASET",
        help=f"train data-parallel SGD (models {', '.join(MODELS)}; datasets {', '.join(LOADERS)})",
    )
    g.add_argument(
        "--scale",
        type=float_range(0.0, 1.0, lo_open=True),
        help=f"--model: fraction of its gradient elements and compute time (default {REPLAY.scale:g})",
    )
    g.add_argument(
        "--bucket-cap-mb",
        type=float_range(0.0, 1e6, lo_open=True),
        help=f"--model: DDP's bucket_cap_mb on the full model (default {REPLAY.bucket_cap_mb:g})",
    )
    g.add_argument(
        "--iterations",
        type=int_range(1, MAX_ITERATIONS),
        help=f"--model: iterations (default {REPLAY.iterations})",
    )
    g.add_argument(
        "--bucket-calls",
        choices=BUCKET_CALLS,
        help=f"--model: an iteration's buckets as one grouped call or a call each, as `ina train "
        f"--bucket-calls` (default {REPLAY.bucket_calls})",
    )
    g.add_argument(
        "--epochs", type=int_range(1, MAX_EPOCHS), help=f"--train: epochs (default {_SGD.epochs})"
    )
    g.add_argument(
        "--batch",
        type=int_range(1),
        help=f"--train: the global batch, split equally between a job's "
        f"workers (default {_SGD.batch})",
    )
    g.add_argument(
        "--lr",
        type=float_range(0.0, 10.0, lo_open=True),
        help=f"--train: learning rate (default {_SGD.lr:g})",
    )
    g.add_argument(
        "--error-feedback",
        action="store_true",
        help="--train: each worker adds its last quantization residual to its next gradient "
        "(for --bits 16 or 8)",
    )
    g.add_argument(
        "--compute",
        type=parsed_by(compute_seconds),
        metavar="DURATION",
        help="virtual compute per iteration, e.g. 5ms (default: --model's estimate, scaled; 0 for --train)",
    )
    g.add_argument(
        "--straggler",
        type=parsed_by(parse_straggler),
        action="append",
        default=[],
        metavar="HOST:Fx",
        help="slow this host's compute by factor F (e.g. h4:3x); repeatable",
    )
    g.add_argument(
        "--straggler-dist",
        type=parsed_by(DelayDistribution.parse),
        metavar="DIST",
        help="extra compute per iteration on every host, seeded: exp:MEAN, uniform:MAX, pareto:MIN,ALPHA",
    )


def _refuse_misplaced(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """An option of one workload given with the other, or with neither."""
    for names, needs, given in (
        (_REPLAY_ONLY, "--model", args.model),
        (_TRAIN_ONLY, "--train", args.train),
        (_EITHER, "--model or --train", args.model or args.train),
    ):
        for name in names:
            if getattr(args, name) not in (None, []) and not given:
                p.error(f"argument --{name.replace('_', '-')}: applies to {needs}")


def run(
    p: argparse.ArgumentParser, args: argparse.Namespace, network: AllReduceConfig
) -> int | None:
    """Run the workload the arguments ask for on `network` and print it (exit 0, or 1 when a sum or
    the weights are wrong); None when they ask for none (the plain all-reduce)."""
    _refuse_misplaced(p, args)
    if not (args.model or args.train):
        return None
    if args.compare:
        p.error("argument --compare: applies to the plain all-reduce, not to --model or --train")
    single = next((o for o, v in (("--plot", args.plot), ("--pcap", args.pcap)) if v), None)
    if single and args.train:
        p.error(f"argument {single}: applies to the plain all-reduce and --model, not to --train")
    if args.train and args.dtype == "int32":
        p.error("argument --dtype: --train all-reduces its gradients as float32")
    network = dataclasses.replace(network, dtype=args.dtype or "float32")
    workers = [h for job in network.plain_topology().jobs for h in job.workers]
    try:
        check_stragglers(dict(args.straggler), workers)
    except ValueError as err:
        p.error(f"argument {err}")
    stragglers = Stragglers(tuple(args.straggler), args.straggler_dist)
    try:
        if args.model:
            replay = dataclasses.replace(
                REPLAY,
                workload=args.model,
                scale=args.scale or REPLAY.scale,
                bucket_cap_mb=args.bucket_cap_mb or REPLAY.bucket_cap_mb,
                iterations=args.iterations or REPLAY.iterations,
                bucket_calls=args.bucket_calls or REPLAY.bucket_calls,
            )
            outputs = Outputs(network, args.plot, args.pcap)
            try:
                result = simulate_workload(
                    WorkloadConfig(network, replay, args.compute, stragglers), watch=outputs.watch
                )
            finally:
                outputs.close()
            text, data, ok = describe_workload(result), workload_report, result.verified
        else:
            model, dataset = args.train
            sgd = Config(
                model,
                args.epochs or _SGD.epochs,
                args.batch or _SGD.batch,
                args.lr or _SGD.lr,
                _SGD.hidden,
                network.seed,
            )
            config = TrainingConfig(
                network, sgd, dataset, args.compute or 0.0, stragglers, args.error_feedback
            )
            _refuse_batch(p, config)
            result = simulate_training(config)
            text, data, ok = describe_training(result), training_report, result.weights_identical
    except OSError as err:
        print(f"ina sim: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
        return 1
    except WorkerError as err:
        print(f"ina sim: the all-reduce failed: {err}", file=sys.stderr)
        return 1
    print(text)
    if args.model:
        try:
            outputs.report(outputs.draw(Finish.of_workload(result)) if args.plot else [])
        except OSError as err:
            print(f"ina sim: cannot write {err.filename}: {err.strerror}", file=sys.stderr)
            return 1
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(data(result, git_revision()), indent=2) + "\n")
        except OSError as err:
            print(f"ina sim: cannot write {args.json}: {err.strerror}", file=sys.stderr)
            return 1
        print(f"wrote {args.json}")
    return 0 if ok else 1


def _refuse_batch(p: argparse.ArgumentParser, config: TrainingConfig) -> None:
    """A global batch that some job's workers cannot share equally, or that is larger than the data."""
    data = load(config.dataset, config.sgd.seed)
    for job in config.network.plain_topology().jobs:
        try:
            check(config.sgd, data, len(job.workers))
        except ValueError as err:
            p.error(f"argument --batch: job {job.id} has {len(job.workers)} workers: {err}")


def _network_line(network: AllReduceConfig, workers: int, jobs: int) -> str:
    link = network.link
    return (
        f"{workers} workers in {jobs} job(s), {network.topo} at {format_rate(link.rate)}, "
        f"{format_seconds(link.delay)} per link, {network.dtype}, {network.policy}, seed {network.seed}"
    )


def _stragglers_line(stragglers: Stragglers) -> str:
    parts = [f"{host} {factor:g}x" for host, factor in stragglers.factors]
    if stragglers.dist:
        parts.append(f"every host + {stragglers.dist}")
    return f"stragglers          {', '.join(parts) or 'none'}"


def _wall_line(setup_s: float, run_s: float, arrivals: int) -> str:
    rate = arrivals / run_s if run_s else 0.0
    return (
        f"wall                {run_s:.3f} s simulating (+{setup_s:.3f} s setting up), {arrivals} packet "
        f"arrivals, {rate:,.0f} arrivals per wall second"
    )


def describe_workload(result: WorkloadResult) -> str:
    """Per iteration and job: the longest compute, the communication beyond it, the iteration time."""
    c = result.config
    jobs = len({job for job, _r, _h in result.workers})
    lines = [
        f"ina sim: {c.replay.workload} at scale {c.replay.scale:g}, {len(result.buckets)} buckets of "
        f"{sum(result.buckets):,} elements per iteration, {format_seconds(c.base_compute_s)} compute; "
        + _network_line(c.network, len(result.workers), jobs),
        _stragglers_line(c.stragglers),
        "result              "
        + (
            "every sum verified"
            + (
                " (bit-exact)"
                if c.network.dtype == "int32"
                else f" (max abs error {result.max_abs_error:.3g})"
            )
            if result.verified
            else "WRONG sums"
        ),
        "",
        f"{'iteration':>9} {'job':>4} {'compute':>12} {'communication':>14} {'iteration':>12}  sums",
    ]
    for it in result.iterations:
        lines.append(
            f"{it.iteration:>9} {it.job:>4} {format_seconds(it.compute_s):>12} "
            f"{format_seconds(it.communication_s):>14} {format_seconds(it.iteration_s):>12}  "
            + ("verified" if it.verified else "WRONG")
        )
    lines += [
        "",
        _links_line(result.links),
        _wall_line(result.wall_setup_s, result.wall_run_s, result.arrivals),
    ]
    return "\n".join(lines)


def describe_training(result: TrainingResult) -> str:
    """Per epoch of the first worker: simulated time, loss, accuracy; the time to the target."""
    c = result.config
    jobs = len({job for job, _r, _h in result.workers})
    first = result.histories[0]
    to_target = result.time_to_target_s()
    lines = [
        f"ina sim: training {c.sgd.model} on {c.dataset}, {c.sgd.epochs} epochs of {first.iterations // c.sgd.epochs} "
        f"iterations (batch {c.sgd.batch}, lr {c.sgd.lr:g}), {format_seconds(c.compute_s)} compute per iteration; "
        + _network_line(c.network, len(result.workers), jobs),
        _stragglers_line(c.stragglers),
        "",
        f"{'epoch':>5} {'simulated':>12} {'loss':>8} {'test acc':>9} {'compute':>12} {'communication':>14}",
    ]
    for e in first.epochs:
        lines.append(
            f"{e.epoch:>5} {format_seconds(e.wall_s):>12} {e.loss:>8.4f} {e.test_accuracy:>9.2%} "
            f"{format_seconds(e.compute_s):>12} {format_seconds(e.comm_s):>14}"
        )
    lines += [
        "",
        f"test accuracy       {first.epochs[-1].test_accuracy:.2%} (the same SGD with numpy all-reduces: "
        f"{result.numpy_accuracy:.2%})",
        f"{'time to ' + format(result.target_accuracy, '.2%'):<20}"
        + (f"{format_seconds(to_target)} simulated" if to_target is not None else "not reached"),
        "weights             "
        + (
            "identical on every worker of each job"
            if result.weights_identical
            else "DIFFERENT between workers"
        ),
        _links_line(result.links),
        _wall_line(result.wall_setup_s, result.wall_run_s, result.arrivals),
    ]
    return "\n".join(lines)


def _links_line(links: list) -> str:
    stats = [s for _name, up, down in links for s in (up, down)]
    return (
        f"links               {sum(s.frames for s in stats)} frames, {sum(s.dropped for s in stats)} dropped, "
        f"{sum(s.lost for s in stats)} lost, {sum(s.marked for s in stats)} ECN marks, "
        f"peak queue {max((s.peak_queue for s in stats), default=0)} B"
    )
