"""`ina bench sim-shape`: every method's curve against workers, the policies with the straggler,
a method plugged in beside in-network aggregation, and the ring's and the parameter server's rows."""

import json
import statistics

import pytest

from ina.bench import plots, sim_shape
from ina.p4src.protocol import HEADER_LEN
from ina.sim import ps, ring
from ina.sim.allreduce import AllReduceConfig
from ina.sim.straggler import SlowHost

S = (14 + 20 + 8 + HEADER_LEN + 4 * 64 + 24) * 8 / 100e9  # one frame at 100 Gbit/s


def small(monkeypatch) -> dict:
    """2 and 3 workers of 640 int32, two policies at 3 workers, in-network aggregation's points
    in this process (the same figures as in processes: tests/sim/test_sweep.py); what the plots
    would draw."""
    monkeypatch.setattr(sim_shape, "PARALLEL", 1)
    monkeypatch.setattr(sim_shape, "QUICK_WORKERS", [2, 3])
    monkeypatch.setattr(sim_shape, "QUICK_SIZE", 640)
    monkeypatch.setattr(sim_shape, "POLICY_WORKERS", 3)
    monkeypatch.setattr(sim_shape, "STRAGGLER", SlowHost("h3", 4.0))
    monkeypatch.setattr(sim_shape, "POLICIES", ["sync", "quorum:2"])
    drawn = {}
    monkeypatch.setattr(
        plots,
        "lines",
        lambda path, title, xlabel, ylabel, series, ymin: drawn.update({path.name: series}),
    )
    monkeypatch.setattr(
        plots,
        "bars",
        lambda path, title, labels, values, ylabel: drawn.update({path.name: (labels, values)}),
    )
    return drawn


def test_each_method_has_its_curve_and_each_policy_its_row(tmp_path, monkeypatch, capsys):
    drawn = small(monkeypatch)
    seen = []

    def halved(
        configs,
    ):  # a stand-in for another method: half the goodput of in-network aggregation
        seen.extend(c.workers for c in configs)
        reports = sim_shape.in_network(configs)
        for rep in reports:
            rep["results"]["goodput_bps"] = [g / 2 for g in rep["results"]["goodput_bps"]]
        return reports

    rows = sim_shape.bench_sim_shape(
        tmp_path, methods={"in-network aggregation": sim_shape.in_network, "halved": halved}
    )
    assert seen == [2, 3]
    assert [(r["sweep"], r["method"], r["point"]) for r in rows] == [
        ("workers", "in-network aggregation", "2"),
        ("workers", "in-network aggregation", "3"),
        ("workers", "halved", "2"),
        ("workers", "halved", "3"),
        ("policy", "in-network aggregation", "sync, no straggler"),
        ("policy", "in-network aggregation", "sync"),
        ("policy", "in-network aggregation", "quorum:2"),
    ]
    assert all(r["verified"] for r in rows)
    # 640 int32 = 10 packets: T = 10 s + s + 2 us; with h3's NIC 4x slower under sync, 40 s + s + 2 us.
    fast, slow = 10 * S + S + 2e-6, 40 * S + S + 2e-6
    assert [r["time_us_max"] for r in rows] == pytest.approx(
        [fast * 1e6] * 5 + [slow * 1e6, rows[6]["time_us_max"]], rel=1e-9
    )
    assert rows[6]["time_us_max"] < slow * 1e6  # quorum:2 goes without the slow host
    ina, half = rows[0]["goodput_gbps_median"], rows[2]["goodput_gbps_median"]
    assert ina == pytest.approx(640 * 32 / fast / 1e9, rel=1e-9) and half == pytest.approx(
        ina / 2, rel=1e-12
    )
    line_rate = 100 * 256 / (14 + 20 + 8 + HEADER_LEN + 256 + 24)  # payload over the wire frame
    assert drawn["sim_shape_goodput.png"] == {
        "in-network aggregation": ([2, 3], [ina, ina]),
        "halved": ([2, 3], [half, half]),
        "payload at line rate, switch frames": ([2, 3], [pytest.approx(line_rate)] * 2),
    }
    labels, values = drawn["sim_shape_policies.png"]
    assert labels == ["sync\nno straggler", "sync", "quorum:\n2"]
    assert values == [r["time_us_median"] for r in rows[4:]]
    assert json.loads((tmp_path / "sim_shape.json").read_text())["results"] == rows
    assert (
        "sim-shape policy               sync in-network aggregation: median worker"
        in capsys.readouterr().out
    )


def test_the_ring_and_the_parameter_server_have_their_curves(tmp_path, monkeypatch):
    drawn = small(monkeypatch)
    assert list(sim_shape.METHODS) == ["in-network aggregation", "ring (RoCE)", "parameter server"]
    rows = sim_shape.bench_sim_shape(tmp_path)
    assert [(r["method"], r["point"]) for r in rows if r["sweep"] == "workers"] == [
        (m, n) for m in sim_shape.METHODS for n in ("2", "3")
    ]
    assert all(r["verified"] for r in rows)
    by = {(r["method"], r["workers"]): r for r in rows if r["sweep"] == "workers"}
    for n in (2, 3):
        config = AllReduceConfig(workers=n, size=640)
        ringed, served = ring.simulate_ring(config), ps.simulate_ps(config)[0]
        for row, result in ((by["ring (RoCE)", n], ringed), (by["parameter server", n], served)):
            times = sorted(result.elapsed_s)
            assert row["time_us_max"] == times[-1] * 1e6
            assert row["goodput_gbps_min"] == 640 * 32 / times[-1] / 1e9
            assert (
                row["goodput_gbps_median"] == statistics.median(640 * 32 / t for t in times) / 1e9
            )
            assert row["resends"] == sum(result.retransmissions) == 0
        assert by["ring (RoCE)", n]["lossless_bound_us"] == ring.lossless_time(config) * 1e6
        assert by["parameter server", n]["lossless_bound_us"] is None
    # one host's link carries every worker's frames: 3 workers take longer each than 2
    assert (
        by["parameter server", 3]["goodput_gbps_median"]
        < by["parameter server", 2]["goodput_gbps_median"]
    )
    assert set(drawn["sim_shape_goodput.png"]) == {
        *sim_shape.METHODS,
        "payload at line rate, switch frames",
    }
    assert drawn["sim_shape_goodput.png"]["ring (RoCE)"] == (
        [2, 3],
        [by["ring (RoCE)", 2]["goodput_gbps_median"], by["ring (RoCE)", 3]["goodput_gbps_median"]],
    )


def test_the_rings_row_keeps_to_its_lossless_formula():
    """2 workers x 2^16 int32 (segments of 128 KiB, 4 chunks: the pipeline full): the ring's time
    within 0.1% under its bound (the last ACKs leave after the last data frame arrived)."""
    config = AllReduceConfig(workers=2, size=1 << 16)
    assert ring.pipeline_full(config)
    [rep] = sim_shape.ring_roce([config])
    r = rep["results"]
    assert r["verified"] and r["lossless_bound_s"] == ring.lossless_time(config)
    assert r["lossless_bound_s"] * 0.999 < max(r["elapsed_s"]) <= r["lossless_bound_s"]
    assert r["goodput_bps"] == [(1 << 16) * 32 / s for s in r["elapsed_s"]]
