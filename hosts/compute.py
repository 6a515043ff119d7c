"""Emulated compute between all-reduces, and the straggler injector that slows it.

A data-parallel iteration is compute, then an all-reduce. Studies of stragglers need that compute
uneven on purpose: one host slower by a factor (`--straggler h3:3x`), or every host's time drawn per
iteration from a distribution with a seed (`--straggler-dist exp:20ms`). Compute is emulated with a
sleep (the host's CPU stays free for the network, as a GPU's would); communication stays real.
"""

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass

import numpy as np

from ina.args import float_range, parsed_by

UNITS_S = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
DISTRIBUTIONS = ("exp", "uniform", "pareto")


def parse_duration(text: str) -> float:
    """'250us', '20ms', '1.5s' or a bare number of ms -> seconds. Raises ValueError naming the text."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms|s)?", text.strip())
    if not m:
        raise ValueError(f"{text!r} is not a duration (e.g. 20ms, 500us, 1.5s)")
    return float(m[1]) * UNITS_S[m[2] or "ms"]


@dataclass(frozen=True)
class DelayDistribution:
    """Extra compute time per iteration: exp:MEAN (exponential), uniform:MAX (0..MAX), or
    pareto:MIN,ALPHA (heavy-tailed: MIN times a Pareto(ALPHA) draw, the shape stragglers take in
    measured clusters)."""

    kind: str
    scale_s: float
    alpha: float = 0.0

    @classmethod
    def parse(cls, text: str) -> "DelayDistribution":
        kind, _, args = text.partition(":")
        parts = args.split(",")
        if kind not in DISTRIBUTIONS or not args:
            raise ValueError(
                f"bad distribution {text!r}: use exp:MEAN, uniform:MAX or pareto:MIN,ALPHA"
            )
        if kind == "pareto":
            if len(parts) != 2:
                raise ValueError(
                    f"bad distribution {text!r}: pareto needs MIN,ALPHA (e.g. pareto:5ms,1.5)"
                )
            alpha = float(parts[1]) if re.fullmatch(r"\d+(\.\d+)?", parts[1]) else 0.0
            if alpha <= 0:
                raise ValueError(f"bad distribution {text!r}: ALPHA must be a number above 0")
            return cls(kind, parse_duration(parts[0]), alpha)
        if len(parts) != 1:
            raise ValueError(f"bad distribution {text!r}: {kind} takes one duration")
        return cls(kind, parse_duration(parts[0]))

    def draw(self, rng: np.random.Generator) -> float:
        if self.kind == "exp":
            return float(rng.exponential(self.scale_s))
        if self.kind == "uniform":
            return float(rng.uniform(0.0, self.scale_s))
        return float(self.scale_s * (rng.pareto(self.alpha) + 1.0))

    def __str__(self) -> str:
        ms = f"{self.scale_s * 1e3:g}ms"
        return f"{self.kind}:{ms}" + (f",{self.alpha:g}" if self.kind == "pareto" else "")


@dataclass(frozen=True)
class ComputeModel:
    """One host's compute per iteration: base_s x slowdown, plus a draw from `extra` if given.
    The draws come from a generator seeded with (seed, rank), so a rerun sleeps the same."""

    base_s: float = 0.0
    slowdown: float = 1.0
    extra: DelayDistribution | None = None
    seed: int = 0
    rank: int = 0

    def durations(self, iterations: int) -> list[float]:
        rng = np.random.default_rng([self.seed, self.rank])
        base = self.base_s * self.slowdown
        return [base + (self.extra.draw(rng) if self.extra else 0.0) for _ in range(iterations)]


def add_compute_arguments(p: argparse.ArgumentParser) -> None:
    """What a worker process (ina worker, a training worker) takes to emulate its compute and to
    start with the others: the straggler injector's per-host part, which `ina run` and `ina train`
    fill in per host."""
    p.add_argument(
        "--compute-ms",
        type=float_range(0.0, 3.6e6),
        default=0.0,
        help="emulated compute (a sleep) before each all-reduce, in ms",
    )
    p.add_argument(
        "--slowdown",
        type=float_range(0.0, 1e6, lo_open=True),
        default=1.0,
        help="multiply --compute-ms (a straggler: e.g. 3)",
    )
    p.add_argument(
        "--delay-dist",
        type=parsed_by(DelayDistribution.parse),
        metavar="DIST",
        help="extra compute per iteration, drawn with --seed and the rank: exp:MEAN, uniform:MAX, "
        "pareto:MIN,ALPHA",
    )
    p.add_argument(
        "--start-barrier",
        action="store_true",
        help="once bound, print a ready line and wait for a line on stdin before the first all-reduce",
    )


# How far ahead a runner names its workers' start: time for it to write every worker's line and
# for each worker to read it on a loaded machine, before any of them starts.
START_MARGIN_S = 0.1


def release_line(margin: float = START_MARGIN_S) -> str:
    """The line a runner writes to each of its workers' stdin (the same line to all) to start them
    together: `go` and an instant `margin` ahead on the monotonic clock, which is the machine's
    (every Mininet host shares it). Released by their lines alone, the workers began as the runner
    reached each pipe and the scheduler ran them: on a loaded machine the last one's first UPDATE
    came 17-33 ms after the first one's, a wait every other worker counted in its time."""
    return f"go {time.monotonic() + margin:.6f}\n"


def start_together(rank: int) -> None:
    """Say this worker is bound (a JSON line on stdout), wait until its runner releases every
    worker (a line on stdin), then until the instant that line names (release_line; a bare `go`
    starts at once). Under a quorum the others may finish the first all-reduces without a worker
    that starts late, and RESULTs multicast before its socket was bound are gone."""
    print(json.dumps({"rank": rank, "ready": True}), flush=True)
    words = sys.stdin.readline().split()
    if len(words) == 2:
        time.sleep(max(0.0, float(words[1]) - time.monotonic()))


def check_stragglers(stragglers: dict[str, float], workers: list[str]) -> None:
    """Raise ValueError naming a --straggler host that is not one of the job's `workers`."""
    unknown = sorted(set(stragglers) - set(workers))
    if unknown:
        raise ValueError(
            f"--straggler {unknown[0]}: not a worker host (workers: {', '.join(workers)})"
        )


def straggler_refusal(stragglers: dict[str, float], compute_ms: float) -> str | None:
    """The usage error for --straggler without emulated compute to slow (it would do nothing)."""
    if stragglers and not compute_ms:
        host, factor = next(iter(stragglers.items()))
        return (
            f"argument --straggler: {host}:{factor:g}x slows the emulated compute, and there is none "
            "(--compute-ms is 0): add --compute-ms MS, e.g. --compute-ms 20"
        )
    return None


def parse_straggler(text: str) -> tuple[str, float]:
    """'h3:3x' -> ('h3', 3.0): that host's compute is slowed by the factor (above 0)."""
    host, _, factor = text.partition(":")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)x?", factor)
    if not host or not m or float(m[1]) <= 0:
        raise ValueError(f"bad straggler {text!r}: use HOST:FACTORx, e.g. h3:3x")
    return host, float(m[1])
