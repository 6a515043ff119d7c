"""The training (and workload replay) options `ina train` takes and hands on to every worker
process, in one place."""

import argparse

from ina.args import float_range, int_range, memory_refusal
from ina.hosts.cli import BYTES_PER_ELEMENT, add_bits_argument
from ina.train.data import LOADERS, Dataset
from ina.train.models import MODELS
from ina.train.replay import BUCKET_CALLS, ReplayConfig
from ina.train.sgd import Config
from ina.train.workloads import WORKLOADS


def add_training_arguments(p: argparse.ArgumentParser) -> None:
    defaults = Config()
    p.add_argument("--model", choices=MODELS, default=defaults.model)
    p.add_argument(
        "--dataset",
        choices=list(LOADERS),
        default="digits",
        help="one of scikit-learn's bundled classification sets (no download)",
    )
    p.add_argument("--epochs", type=int_range(1), default=defaults.epochs)
    p.add_argument(
        "--batch",
        type=int_range(1),
        default=defaults.batch,
        help="the global batch, split equally between the workers",
    )
    p.add_argument(
        "--lr", type=float_range(0.0, 10.0, lo_open=True), default=defaults.lr, help="learning rate"
    )
    p.add_argument(
        "--hidden", type=int_range(1), default=defaults.hidden, help="hidden units of the MLP"
    )
    p.add_argument(
        "--seed",
        type=int_range(0),
        default=defaults.seed,
        help="initial weights, test split and batch order",
    )


def add_lanes_arguments(p: argparse.ArgumentParser) -> None:
    """--bits (the switch's lanes) and --error-feedback, as `ina train` and its workers take them."""
    add_bits_argument(p)
    p.add_argument(
        "--error-feedback",
        action="store_true",
        help="each worker adds its last quantization residual to its next gradient "
        "(train/feedback.py; for --bits 16 or 8)",
    )


def lanes_argv(bits: int, error_feedback: bool) -> list[str]:
    """The arguments that make a worker process send `bits`-bit lanes, with error feedback or not."""
    return ["--bits", str(bits), *(["--error-feedback"] if error_feedback else [])]


# Peak bytes per hidden unit of the MLP in one training process: a forward pass over the whole
# training set keeps ROW_COPIES float64 per row (measured: 26 KB per unit on digits' 1437 rows,
# below the 42 KB this gives), and each of the unit's parameters is held as weight, gradient and
# update copies (float64) and all-reduced by the worker (BYTES_PER_ELEMENT).
ROW_COPIES = 3
PARAMETER_BYTES = 4 * 8 + BYTES_PER_ELEMENT


def hidden_refusal(config: Config, data: Dataset, processes: int) -> str | None:
    """The error for an MLP --hidden whose arrays, in `processes` training processes on `data`, do
    not fit ina.args.MEMORY_BUDGET; None when they do (or the model has no hidden layer)."""
    if config.model != "mlp":
        return None
    per_unit = 8 * ROW_COPIES * len(data.y_train) + PARAMETER_BYTES * (
        data.n_features + 1 + data.n_classes
    )
    unit = f"hidden unit on {data.name}" + (f" over {processes} workers" if processes > 1 else "")
    return memory_refusal("--hidden", config.hidden, per_unit * processes, unit)


def config_from(args: argparse.Namespace) -> Config:
    return Config(args.model, args.epochs, args.batch, args.lr, args.hidden, args.seed)


def training_argv(config: Config, dataset: str) -> list[str]:
    """The arguments that make a worker process train exactly `config` on `dataset`."""
    return [
        "--model",
        config.model,
        "--dataset",
        dataset,
        "--epochs",
        str(config.epochs),
        "--batch",
        str(config.batch),
        "--lr",
        repr(config.lr),
        "--hidden",
        str(config.hidden),
        "--seed",
        str(config.seed),
    ]


def add_replay_arguments(p: argparse.ArgumentParser) -> None:
    defaults = ReplayConfig()
    p.add_argument(
        "--replay",
        choices=WORKLOADS,
        help="replay a real model's iterations instead of training: its DDP buckets all-reduced "
        "for real, its compute time emulated",
    )
    p.add_argument(
        "--scale",
        type=float_range(0.0, 1.0, lo_open=True),
        default=defaults.scale,
        help="fraction of the replayed model's gradient elements and compute time",
    )
    p.add_argument(
        "--bucket-cap-mb",
        type=float_range(0.0, lo_open=True),
        default=defaults.bucket_cap_mb,
        help="DDP's bucket_cap_mb, applied to the full-size model before scaling",
    )
    p.add_argument(
        "--iterations", type=int_range(1), default=defaults.iterations, help="replayed iterations"
    )
    p.add_argument(
        "--bucket-calls",
        choices=BUCKET_CALLS,
        default=defaults.bucket_calls,
        help="an iteration's buckets all-reduced as one grouped call (every bucket is ready once "
        "the emulated compute ends; through the switch or server each bucket's sums are its own "
        "call's) or one call after another (the replay before grouping)",
    )


def replay_from(args: argparse.Namespace) -> ReplayConfig:
    return ReplayConfig(
        args.replay,
        args.scale,
        args.bucket_cap_mb,
        args.iterations,
        args.seed,
        args.bucket_calls,
    )


def replay_argv(config: ReplayConfig) -> list[str]:
    """The arguments that make a worker process replay exactly `config`."""
    return [
        "--replay",
        config.workload,
        "--scale",
        repr(config.scale),
        "--bucket-cap-mb",
        repr(config.bucket_cap_mb),
        "--iterations",
        str(config.iterations),
        "--seed",
        str(config.seed),
        "--bucket-calls",
        config.bucket_calls,
    ]
