"""`ina bench lanes`: what narrow lanes buy and cost (#34), at 32, 16 and 8 bits per value (the same
packets: ELEMS 32-bit words, so the packet rate is the link's or the switch's):
- elements per second, packets per second and bytes on the wire per element of one float32
  all-reduce in `ina sim` at 100 Gbit/s, with the chunks redone after an OVERFLOW; beside them, as
  root, a short `ina run` of the same widths in Mininet (ina's switch, its packet rate the limit);
- test accuracy and loss after the same epochs with `ina sim --train` at each width, with and
  without error feedback (train/feedback.py), on two of scikit-learn's bundled sets (digits and
  breast_cancer: no download), and the simulated time to the target accuracy (the numpy
  all-reduce's less 1 point, as `ina train`) at 100 Gbit/s;
- the replayed models' sums (`ina sim --replay`: their DDP buckets' sizes, standard normal
  gradients) against float64 sums: the largest error per element at each width.
"""

import dataclasses
import os
from pathlib import Path

from ina.bench import plots
from ina.bench.results import Progress, write
from ina.p4src.protocol import LANE_BITS_CHOICES, lane_values
from ina.sim.allreduce import (
    AllReduceConfig,
    frame_bytes,
    packets_per_worker,
    simulate,
)
from ina.sim.links import wire_bits
from ina.sim.training import TrainingConfig, simulate_training
from ina.sim.workload import GRADIENTS, WorkloadConfig, simulate_workload
from ina.train.replay import ReplayConfig
from ina.train.sgd import Config

ELEMS = 64  # the switch's 32-bit words per packet: 256 B of values, as SwitchML
TRAININGS = [(32, False), (16, False), (16, True), (8, False), (8, True)]
DATASETS = ("digits", "breast_cancer")
REPLAYS = ("resnet50", "bert_base")
REPLAY_SCALE = 0.001  # of each model's buckets: resnet50 25,557 elements, bert_base 109,482
EMULATED_WORKERS = 4
EMULATED_SIZE = 1 << 18  # float32 per worker: a short run (4,096 chunks of 64 words at 32 bits)


def wire_bytes() -> float:
    """Bytes one aggregation frame of ELEMS words takes on the wire (preamble and gap included)."""
    return wire_bits(frame_bytes(ELEMS)) / 8


def throughput(workers: int, size: int) -> list[dict]:
    """One all-reduce of `size` float32 per worker at each lane width, in `ina sim`."""
    rows = []
    for bits in LANE_BITS_CHOICES:
        config = AllReduceConfig(
            workers=workers, size=size, dtype="float32", elems=ELEMS, bits=bits
        )
        result = simulate(config)
        sent = result.packets_sent[0]
        rows.append(
            {
                "measure": "ina sim",
                "bits": bits,
                "values_per_packet": lane_values(ELEMS, bits),
                "communication_s": result.communication_s,
                "elements_per_s": size / result.communication_s,
                "packets_per_s": sent / result.communication_s,
                "wire_bytes_per_element": sent * wire_bytes() / size,
                "packets_per_worker": sent,
                "redone_per_worker": sent - packets_per_worker(config),
                "verified": result.verified,
                "max_abs_error": result.max_abs_error,
            }
        )
    return rows


def emulation_row(bits: int, reports: list[dict], verified: bool) -> dict:
    """A width's `ina run` from its workers' JSON reports (`ina worker --json`): elements per second
    per worker (their mean), wire bytes per element and packets per worker (UPDATEs, the RESULTs
    are as many), chunks redone per worker."""
    elements = sum(w["elements"] for w in reports)
    sent = sum(w["packets_sent"] for w in reports)
    return {
        "measure": "emulation",
        "bits": bits,
        "values_per_packet": lane_values(ELEMS, bits),
        "elements_per_s": sum(w["goodput_elements_per_s"] for w in reports) / len(reports),
        "wire_bytes_per_element": sent * wire_bytes() / elements,
        "packets_per_worker": sent / len(reports),
        "redone_per_worker": sum(w["redone"] for w in reports) / len(reports),
        "verified": verified,
    }


def emulated(out: Path, progress: Progress) -> list[dict]:
    """A short `ina run` per width (root: Mininet), ina's switch built with that width."""
    from ina.topologies.runner import RunOptions, run

    rows = []
    for bits in LANE_BITS_CHOICES:
        result = run(
            RunOptions(
                workers=EMULATED_WORKERS,
                size=EMULATED_SIZE,
                dtype="float32",
                elems=ELEMS,
                bits=bits,
                run_dir=str(out / f"lanes-run-{bits}"),
            )
        )
        rows.append(emulation_row(bits, result.workers, result.ok))
        progress.step(f"ina run --bits {bits}")
    return rows


def accuracy(workers: int, epochs: int, progress: Progress) -> list[dict]:
    """Each dataset's MLP after `epochs` at each width, with and without error feedback."""
    rows = []
    network = dataclasses.replace(GRADIENTS, workers=workers, elems=ELEMS)
    for dataset in DATASETS:
        for bits, feedback in TRAININGS:
            result = simulate_training(
                TrainingConfig(
                    dataclasses.replace(network, bits=bits),
                    Config(epochs=epochs),
                    dataset,
                    error_feedback=feedback,
                )
            )
            final = result.histories[0].epochs[-1]
            rows.append(
                {
                    "measure": "accuracy",
                    "dataset": dataset,
                    "bits": bits,
                    "error_feedback": feedback,
                    "epochs": epochs,
                    "test_accuracy": final.test_accuracy,
                    "loss": final.loss,
                    "numpy_allreduce_test_accuracy": result.numpy_accuracy,
                    "target_accuracy": result.target_accuracy,
                    "time_to_target_s": result.time_to_target_s(),
                    "weights_identical": result.weights_identical,
                }
            )
            progress.step(f"{dataset} {bits}-bit{' + error feedback' if feedback else ''}")
    return rows


def replay_error(workers: int, progress: Progress) -> list[dict]:
    """Each replayed model's buckets (one iteration) summed at each width against float64."""
    rows = []
    for name in REPLAYS:
        replay = ReplayConfig(name, REPLAY_SCALE, iterations=1)
        for bits in LANE_BITS_CHOICES:
            network = dataclasses.replace(GRADIENTS, workers=workers, elems=ELEMS, bits=bits)
            result = simulate_workload(WorkloadConfig(network, replay))
            rows.append(
                {
                    "measure": "replay",
                    "workload": name,
                    "bits": bits,
                    "elements": sum(result.buckets),
                    "max_abs_error": result.max_abs_error,
                    "communication_s": result.iterations[0].communication_s,
                    "verified": result.verified,
                }
            )
            progress.step(f"{name} {bits}-bit")
    return rows


def bench_lanes(
    out: Path,
    workers: int = 8,
    size: int = 1 << 18,
    epochs: int = 10,
    emulation: bool | None = None,
) -> list[dict]:
    """Every measure above; `emulation` (default: when root) adds the `ina run`s."""
    if emulation is None:
        emulation = os.geteuid() == 0
    steps = 1 + len(DATASETS) * len(TRAININGS) + len(REPLAYS) * len(LANE_BITS_CHOICES)
    progress = Progress(steps + len(LANE_BITS_CHOICES) * emulation, "lanes")
    speed = throughput(workers, size)
    progress.step("throughput")
    runs = emulated(out, progress) if emulation else []
    trained = accuracy(workers, epochs, progress)
    errors = replay_error(workers, progress)
    write(
        out,
        "lanes",
        [{"throughput": speed, "emulation": runs, "accuracy": trained, "replay": errors}],
    )
    plot(out, workers, size, epochs, speed, runs, trained, errors)
    return speed + runs + trained + errors  # summary.md's rows


def plot(
    out: Path,
    workers: int,
    size: int,
    epochs: int,
    speed: list[dict],
    runs: list[dict],
    trained: list[dict],
    errors: list[dict],
) -> None:
    labels = [f"{r['bits']}-bit" for r in speed]
    measured = {"ina sim": speed, **({"ina run (Mininet)": runs} if runs else {})}
    plots.grouped(
        out / "lanes.png",
        f"float32 all-reduce, E = {ELEMS} words: ina sim ({workers} workers x {size:,}, 100 Gbit/s)"
        + (f", ina run ({EMULATED_WORKERS} x {EMULATED_SIZE:,})" if runs else ""),
        {
            "elements per second": (
                labels,
                {name: [r["elements_per_s"] for r in rows] for name, rows in measured.items()},
            ),
            "wire bytes per element x 1000": (
                labels,
                {
                    name: [1000 * r["wire_bytes_per_element"] for r in rows]
                    for name, rows in measured.items()
                },
            ),
        },
        "",
    )
    names = [  # breast_cancer as "cancer", each on two lines so ten labels fit
        f"{r['dataset'].split('_')[-1]}\n{r['bits']}{' EF' if r['error_feedback'] else ''}"
        for r in trained
    ]
    plots.bars(
        out / "lanes_accuracy.png",
        f"MLP test accuracy after {epochs} epochs, {workers} workers (ina sim --train)",
        names,
        [100 * r["test_accuracy"] for r in trained],
        "test accuracy %",
    )
    plots.bars(
        out / "lanes_time_to_accuracy.png",
        f"simulated time to the target accuracy at 100 Gbit/s, {workers} workers",
        names,
        [1e6 * (r["time_to_target_s"] or 0.0) for r in trained],
        "us (0: not reached)",
    )
    plots.bars(
        out / "lanes_replay_error.png",
        f"largest error per element against float64, {workers} workers' replayed gradients",
        [f"{r['workload']}\n{r['bits']}-bit" for r in errors],
        [r["max_abs_error"] for r in errors],
        "max |sum - float64 sum|",
    )
