"""The training options `ina train` takes and hands on to every worker process, in one place."""

import argparse

from ina.args import float_range, int_range
from ina.train.data import LOADERS
from ina.train.models import MODELS
from ina.train.sgd import Config


def add_training_arguments(p: argparse.ArgumentParser) -> None:
    defaults = Config()
    p.add_argument("--model", choices=MODELS, default=defaults.model)
    p.add_argument("--dataset", choices=list(LOADERS), default="digits",
                   help="one of scikit-learn's bundled classification sets (no download)")
    p.add_argument("--epochs", type=int_range(1), default=defaults.epochs)
    p.add_argument("--batch", type=int_range(1), default=defaults.batch,
                   help="the global batch, split equally between the workers")
    p.add_argument("--lr", type=float_range(0.0, 10.0, lo_open=True), default=defaults.lr, help="learning rate")
    p.add_argument("--hidden", type=int_range(1), default=defaults.hidden, help="hidden units of the MLP")
    p.add_argument("--seed", type=int_range(0), default=defaults.seed,
                   help="initial weights, test split and batch order")


def config_from(args: argparse.Namespace) -> Config:
    return Config(args.model, args.epochs, args.batch, args.lr, args.hidden, args.seed)


def training_argv(config: Config, dataset: str) -> list[str]:
    """The arguments that make a worker process train exactly `config` on `dataset`."""
    return ["--model", config.model, "--dataset", dataset, "--epochs", str(config.epochs),
            "--batch", str(config.batch), "--lr", repr(config.lr), "--hidden", str(config.hidden),
            "--seed", str(config.seed)]
