"""`ina bench sim-shape`: every method's curve against workers, the policies with the straggler,
and a method plugged in beside in-network aggregation (the ring's will be)."""

import json

import pytest

from ina.bench import plots, sim_shape
from ina.sim.straggler import SlowHost

S = (14 + 20 + 8 + 20 + 4 * 64 + 24) * 8 / 100e9  # one frame at 100 Gbit/s


def test_each_method_has_its_curve_and_each_policy_its_row(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sim_shape, "QUICK_WORKERS", [2, 3])
    monkeypatch.setattr(sim_shape, "QUICK_SIZE", 640)
    monkeypatch.setattr(sim_shape, "POLICY_WORKERS", 3)
    monkeypatch.setattr(sim_shape, "STRAGGLER", SlowHost("h3", 4.0))
    monkeypatch.setattr(sim_shape, "POLICIES", ["sync", "quorum:2"])
    drawn = {}
    monkeypatch.setattr(plots, "lines", lambda path, title, xlabel, ylabel, series, ymin: drawn.update(
        {path.name: series}))
    monkeypatch.setattr(plots, "bars", lambda path, title, labels, values, ylabel: drawn.update(
        {path.name: (labels, values)}))
    seen = []

    def halved(configs):  # a stand-in for another method: half the goodput of in-network aggregation
        seen.extend(c.workers for c in configs)
        reports = sim_shape.in_network(configs)
        for rep in reports:
            rep["results"]["goodput_bps"] = [g / 2 for g in rep["results"]["goodput_bps"]]
        return reports

    rows = sim_shape.bench_sim_shape(tmp_path, methods={**sim_shape.METHODS, "halved": halved})
    assert seen == [2, 3]
    assert [(r["sweep"], r["method"], r["point"]) for r in rows] == [
        ("workers", "in-network aggregation", "2"), ("workers", "in-network aggregation", "3"),
        ("workers", "halved", "2"), ("workers", "halved", "3"),
        ("policy", "in-network aggregation", "sync, no straggler"), ("policy", "in-network aggregation", "sync"),
        ("policy", "in-network aggregation", "quorum:2")]
    assert all(r["verified"] for r in rows)
    # 640 int32 = 10 packets: T = 10 s + s + 2 us; with h3's NIC 4x slower under sync, 40 s + s + 2 us.
    fast, slow = 10 * S + S + 2e-6, 40 * S + S + 2e-6
    assert [r["time_us_max"] for r in rows] == pytest.approx([fast * 1e6] * 5 + [slow * 1e6, rows[6]["time_us_max"]],
                                                             rel=1e-9)
    assert rows[6]["time_us_max"] < slow * 1e6  # quorum:2 goes without the slow host
    ina, half = rows[0]["goodput_gbps_median"], rows[2]["goodput_gbps_median"]
    assert ina == pytest.approx(640 * 32 / fast / 1e9, rel=1e-9) and half == pytest.approx(ina / 2, rel=1e-12)
    line_rate = 100 * 256 / 342
    assert drawn["sim_shape_goodput.png"] == {"in-network aggregation": ([2, 3], [ina, ina]),
                                              "halved": ([2, 3], [half, half]),
                                              "payload at line rate": ([2, 3], [pytest.approx(line_rate)] * 2)}
    labels, values = drawn["sim_shape_policies.png"]
    assert labels == ["sync\nno straggler", "sync", "quorum:\n2"]
    assert values == [r["time_us_median"] for r in rows[4:]]
    assert json.loads((tmp_path / "sim_shape.json").read_text())["results"] == rows
    assert "sim-shape policy               sync in-network aggregation: median worker" in capsys.readouterr().out
