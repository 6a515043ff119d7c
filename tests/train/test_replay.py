"""Workload replay: the architectures add up to the public parameter counts, DDP's bucketing rule on
a hand-made list, scaling keeps the bucket count, a replay's records on a fake all-reduce, and the
report's CPU per iteration."""

import dataclasses

import numpy as np
import pytest

from ina.train import replay_report
from ina.train.options import config_from, replay_argv, replay_from, training_argv
from ina.train.replay import IterationRecord, ReplayConfig, ReplayHistory, replay
from ina.train.runner import TrainOptions
from ina.train.sgd import Config
from ina.train.worker_main import build_parser
from ina.train.workloads import MIB, WORKLOADS, ddp_buckets, scaled_buckets, workload

PUBLIC = {"resnet50": 25.6e6, "vgg16": 138e6, "bert_base": 110e6, "gpt2_small": 124e6}


@pytest.mark.parametrize("name", WORKLOADS)
def test_parameter_counts_are_the_public_totals(name):
    assert abs(workload(name).parameters - PUBLIC[name]) <= 0.01 * PUBLIC[name]


def test_exact_counts_of_the_reference_implementations():
    """torchvision's resnet50 and vgg16, Hugging Face's bert-base-uncased and gpt2."""
    assert [workload(n).parameters for n in WORKLOADS] == [
        25_557_032,
        138_357_544,
        109_482_240,
        124_439_808,
    ]


def test_buckets_follow_ddps_rule():
    """Reverse order; a bucket closes once it reaches its limit (1 MiB first, then the cap), even if
    its last tensor overshoots; the remainder is the last bucket."""
    quarter = MIB // 4 // 4  # elements in a quarter MiB of float32
    sizes = [quarter, 8 * quarter, quarter, 2 * quarter, 3 * quarter, quarter]
    assert ddp_buckets(sizes, cap_mb=2.0, first_mb=1.0) == [[5, 4], [3, 2, 1], [0]]
    assert ddp_buckets(sizes, cap_mb=1.0, first_mb=1.0) == [[5, 4], [3, 2, 1], [0]]
    assert ddp_buckets(sizes, cap_mb=0.5, first_mb=0.25) == [[5], [4], [3], [2, 1], [0]]
    assert ddp_buckets(sizes, cap_mb=100.0, first_mb=100.0) == [[5, 4, 3, 2, 1, 0]]


def test_default_cap_is_25_mib_and_settable():
    w = workload("resnet50")
    sizes = [n for _, n in w.layers]
    default = ddp_buckets(sizes)
    assert sorted(i for b in default for i in b) == list(range(len(sizes)))
    full = [4 * sum(sizes[i] for i in b) for b in default]
    assert all(size >= 25 * MIB for size in full[1:-1]) and full[0] >= MIB
    assert all(4 * sum(sizes[i] for i in b[:-1]) < 25 * MIB for b in default[1:])
    assert len(ddp_buckets(sizes, cap_mb=5.0)) > len(default)


def test_scaling_shrinks_each_bucket_and_keeps_their_number():
    w = workload("resnet50")
    full = scaled_buckets(w, 1.0)
    small = scaled_buckets(w, 0.01)
    assert sum(full) == w.parameters and len(small) == len(full)
    assert small == [int(np.ceil(0.01 * n)) for n in full]
    assert min(scaled_buckets(w, 1e-9)) == 1


def test_replay_all_reduces_every_bucket_each_iteration():
    """Grouped (the default): one call per iteration holding every bucket, in order; separate: a
    call per bucket. The same sums either way, so the same digest."""
    calls = []

    def fake(array: np.ndarray) -> np.ndarray:
        calls.append(array.size)
        return array * 2

    def fake_many(arrays: list[np.ndarray]) -> list[np.ndarray]:
        calls.append([a.size for a in arrays])
        return [a * 2 for a in arrays]

    config = ReplayConfig("bert_base", scale=0.001, iterations=3)
    history, digest = replay(config, 1, fake, allreduce_many=fake_many)
    buckets = scaled_buckets(workload("bert_base"), 0.001)
    assert history.buckets == buckets and calls == [buckets] * 3
    assert [r.iteration for r in history.iterations] == [1, 2, 3]
    calls.clear()
    separate = dataclasses.replace(config, bucket_calls="separate")
    assert replay(separate, 1, fake, allreduce_many=fake_many)[1] == digest
    assert calls == buckets * 3
    assert replay(separate, 1, fake)[1] == digest != replay(separate, 2, fake)[1]
    with pytest.raises(ValueError, match="bucket_calls='group' needs allreduce_many"):
        replay(config, 1, fake)


def _final(comm_cpu: list[float | None]) -> dict:
    """A worker's last report with one iteration per CPU figure (1 ms compute, 10 ms comm)."""
    records = [IterationRecord(i + 1, 0.0, 0.001, 0.010, cpu) for i, cpu in enumerate(comm_cpu)]
    history = ReplayHistory([8], records)
    return {"history": history.as_dict(), "weights_sha256": "same"}


def test_the_report_has_the_workers_mean_cpu_per_iteration_when_measured():
    opts = TrainOptions(Config(), replay=ReplayConfig("resnet50", scale=0.01, iterations=2))
    summary = replay_report.summarise(opts, [_final([0.002, 0.004]), _final([0.004, 0.008])])
    assert [it["comm_cpu"] for it in summary["per_iteration_ms"]] == [3.0, 6.0]
    assert summary["median_iteration_ms"]["comm_cpu"] == 4.5
    assert "4.50 ms CPU per worker communicating" in replay_report.text(summary)
    unmeasured = replay_report.summarise(opts, [_final([None, None])])  # as ina sim records them
    assert "comm_cpu" not in unmeasured["median_iteration_ms"]
    assert "CPU per worker" not in replay_report.text(unmeasured)


def test_the_report_says_what_bound_the_time_links_first_then_the_machines_cpu():
    def bound(utilisation: float | None, busy: float) -> str | None:
        return replay_report.bound_by(
            {"busiest_link_utilisation": utilisation, "machine_busy": busy}
        )

    assert (
        bound(0.8, 0.95) == "the links (the busiest 80% busy)"
    )  # link-bound though the CPU is busy
    cpu = (
        "this machine's CPU (85% busy, no link 80% busy): the times measure its cores, not the "
        "method (shape the links: --bw; or ina sim)"
    )
    assert bound(None, 0.85) == cpu  # unshaped: no link rate to be bound by
    assert bound(0.79, 0.85) == cpu
    assert bound(0.79, 0.84) is None  # neither: say nothing
    assert bound(None, 0.5) is None


def test_a_worker_process_parses_back_the_replay_and_training_it_is_handed():
    """What `ina train` hands each worker process (train/options.py) is what the worker reads."""
    parser = build_parser()
    base = ["--job", "0", "--rank", "0", "--workers", "2", "--epoch", "1", "--switch", "10.0.0.1"]
    replayed = ReplayConfig("vgg16", 0.02, 5.0, 3, 7, "separate")
    assert replay_from(parser.parse_args(base + replay_argv(replayed))) == replayed
    trained = Config("softmax", 3, 32, 0.5, 8, 9)
    assert config_from(parser.parse_args(base + training_argv(trained, "iris"))) == trained
