"""The arbitration bench on a tiny flood: one trial per flood, well-formed JSON (no timing is judged)."""

import json

from ina.bench.arbitration import bench_arbitration, plan


def test_a_mixed_flood_has_every_kind_in_turn():
    assert plan("mixed", 6) == ["silent", "none", "low", "high", "silent", "none"]
    assert plan("low", 2) == ["low", "low"]


def test_the_bench_writes_one_row_per_flood(tmp_path):
    rows = bench_arbitration(
        tmp_path,
        streams=4,
        processes=2,
        trials=1,
        warmup=0.2,
        bound=20.0,
        floods=("baseline", "mixed"),
    )
    data = json.loads((tmp_path / "arbitration.json").read_text())
    assert data["benchmark"] == "arbitration" and data["results"] == rows
    assert [(r["flood"], r["streams"], r["processes"], r["trials"]) for r in rows] == [
        ("baseline", 0, 0, 1),
        ("mixed", 4, 2, 1),
    ]
    for r in rows:
        assert r["seconds_to_primary"]["reps"] == 1 and r["controller_streams"]["min"] >= 1
