"""`ina bench lanes`: what narrow lanes buy and cost (#34). In `ina sim` at 100 Gbit/s: elements
per second, packets per second and bytes on the wire per element of one float32 all-reduce at 32,
16 and 8 bits per value (the same packets: ELEMS 32-bit words, so the packet rate is the link's),
with the chunks redone after an OVERFLOW; and the digits MLP's test accuracy after the same epochs
with `ina sim --train` at each width, with and without error feedback (train/feedback.py).
"""

import dataclasses
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
from ina.sim.workload import GRADIENTS
from ina.train.sgd import Config

ELEMS = 64  # the switch's 32-bit words per packet: 256 B of values, as SwitchML
TRAININGS = [(32, False), (16, False), (16, True), (8, False), (8, True)]


def throughput(workers: int, size: int) -> list[dict]:
    """One all-reduce of `size` float32 per worker at each lane width."""
    rows = []
    for bits in LANE_BITS_CHOICES:
        config = AllReduceConfig(
            workers=workers, size=size, dtype="float32", elems=ELEMS, bits=bits
        )
        result = simulate(config)
        sent = result.packets_sent[0]
        wire_bytes = wire_bits(frame_bytes(ELEMS)) / 8
        rows.append(
            {
                "bits": bits,
                "values_per_packet": lane_values(ELEMS, bits),
                "communication_s": result.communication_s,
                "elements_per_s": size / result.communication_s,
                "packets_per_s": sent / result.communication_s,
                "wire_bytes_per_element": sent * wire_bytes / size,
                "packets_per_worker": sent,
                "redone_per_worker": sent - packets_per_worker(config),
                "verified": result.verified,
                "max_abs_error": result.max_abs_error,
            }
        )
    return rows


def accuracy(workers: int, epochs: int, progress: Progress) -> list[dict]:
    """The digits MLP after `epochs` at each width, with and without error feedback."""
    rows = []
    network = dataclasses.replace(GRADIENTS, workers=workers, elems=ELEMS)
    for bits, feedback in TRAININGS:
        result = simulate_training(
            TrainingConfig(
                dataclasses.replace(network, bits=bits),
                Config(epochs=epochs),
                "digits",
                error_feedback=feedback,
            )
        )
        final = result.histories[0].epochs[-1]
        rows.append(
            {
                "bits": bits,
                "error_feedback": feedback,
                "epochs": epochs,
                "test_accuracy": final.test_accuracy,
                "loss": final.loss,
                "numpy_allreduce_test_accuracy": result.numpy_accuracy,
                "weights_identical": result.weights_identical,
            }
        )
        progress.step(f"{bits}-bit{' + error feedback' if feedback else ''}")
    return rows


def bench_lanes(out: Path, workers: int = 8, size: int = 1 << 18, epochs: int = 10) -> list[dict]:
    progress = Progress(1 + len(TRAININGS), "lanes")
    speed = throughput(workers, size)
    progress.step("throughput")
    trained = accuracy(workers, epochs, progress)
    write(out, "lanes", [{"throughput": speed, "accuracy": trained}])
    labels = [f"{r['bits']}-bit" for r in speed]
    plots.grouped(
        out / "lanes.png",
        f"{workers} workers x {size:,} float32 in ina sim at 100 Gbit/s (E = {ELEMS} words)",
        {
            "elements per second": (labels, {"ina sim": [r["elements_per_s"] for r in speed]}),
            "wire bytes per element x 1000": (
                labels,
                {"ina sim": [1000 * r["wire_bytes_per_element"] for r in speed]},
            ),
        },
        "",
    )
    plots.bars(
        out / "lanes_accuracy.png",
        f"digits MLP test accuracy after {epochs} epochs, {workers} workers (ina sim --train)",
        [f"{r['bits']}{' EF' if r['error_feedback'] else ''}" for r in trained],
        [100 * r["test_accuracy"] for r in trained],
        "test accuracy %",
    )
    return speed + trained  # summary.md's rows: one per width, then one per training
