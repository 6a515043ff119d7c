"""`ina bench train` on a tiny configuration in Mininet (2 workers, ResNet-50 x 0.001, 2 iterations,
10 Mbit/s links): one row per aggregation with every worker's sums identical, the switch's ratios
to the ring and the parameter server (measured and in theory), what the links carried against
theory, train.json and train.png."""

import json

import pytest

from ina.bench.train import bench_train


@pytest.mark.netns
def test_bench_train_compares_switch_ring_and_parameter_server(tmp_path):
    rows = bench_train(tmp_path, workers=2, scale=0.001, iterations=2, links=(10.0,))
    data = json.loads((tmp_path / "train.json").read_text())
    assert data["benchmark"] == "train" and data["results"] == rows
    assert [(r["links"], r["aggregation"]) for r in rows] == [
        ("10 Mbit/s links", a) for a in ("switch", "ps", "ring")
    ]
    for r in rows:
        assert r["sums_identical"] and r["workers"] == 2 and r["workload"] == "resnet50"
        assert r["comm_ms"]["reps"] == 2 and r["compute_ms"]["reps"] == 2
        assert r["comm_cpu_ms"]["reps"] == 2 and r["comm_cpu_ms"]["min"] > 0
        assert r["bytes_per_iteration"] == rows[0]["bytes_per_iteration"] > 0
        assert (
            r["worker_link_mb"] >= r["worker_link_theory_mb"] > 0
        )  # every frame theory counts, and more
        assert r["busiest_link_mb"] >= r["busiest_link_theory_mb"] >= r["worker_link_theory_mb"]
        assert r["theory_comm_ms"] > 0 and r["link_busy"] > 0 and r["queue_drops"] >= 0
        assert (tmp_path / "runs" / f"{r['aggregation']}-10.0" / "train.json").is_file()
    switch = rows[0]
    assert switch["x_ring"] == round(switch["comm_ms"]["median"] / rows[2]["comm_ms"]["median"], 3)
    assert switch["x_ps"] == round(switch["comm_ms"]["median"] / rows[1]["comm_ms"]["median"], 3)
    assert switch["x_ps_theory"] == round(switch["theory_comm_ms"] / rows[1]["theory_comm_ms"], 3)
    assert (tmp_path / "train.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
