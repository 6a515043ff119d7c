"""`ina bench pool` on a small churn: every load x policy row written, the reading from the rows."""

import json

from ina.bench.cli import main as bench_main
from ina.bench.pool import LOADS, POLICIES, bench_pool, reading


def test_bench_pool_writes_a_row_per_load_and_policy_and_the_png(tmp_path, capsys):
    rows = bench_pool(tmp_path, jobs=80, pool_size=1024)
    assert [(r["load"], r["policy"]) for r in rows] == [
        (load, p.label) for load in LOADS for p in POLICIES
    ]
    written = json.loads((tmp_path / "pool.json").read_text())["results"]
    assert written == rows
    assert (tmp_path / "pool.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = capsys.readouterr().out
    assert out.count("offered load") == len(LOADS) and "mean JCT s" in out


def test_reading_names_the_best_policy_beside_first_fit():
    base = {
        "fragmentation": 0.6,
        "mean_wait_s": 900.0,
        "moves": 0,
        "compactions": 0,
        "refused_jobs": 0,
        "host_share": 0.0,
    }
    rows = [
        {**base, "policy": "first-fit", "mean_jct_s": 2000.0},
        {
            **base,
            "policy": "best-fit+compact",
            "mean_jct_s": 1500.0,
            "mean_wait_s": 400.0,
            "fragmentation": 0.2,
            "moves": 7,
            "compactions": 2,
        },
    ]
    assert reading(rows) == (
        "best-fit+compact: mean completion 1,500 s against first fit's 2,000 s (0.75x). The jobs "
        "and their run times are the same, so the difference is waiting: 400 s against 900 s on "
        "average. First fit kept the free slots in pieces (time-averaged fragmentation 0.60 "
        "against 0.20), so a queued job often waited while enough slots were free in total; its "
        "2 compactions moved jobs 7 times, each move costing the moved job one iteration (drain, "
        "move, resume)."
    )
    assert reading(rows[:1]) == "first fit has the lowest mean completion time (2,000 s)"
    refusing = {**rows[1], "policy": "partition", "mean_jct_s": 0.0, "refused_jobs": 3}
    assert reading([*rows, refusing]).startswith("best-fit+compact: mean completion 1,500 s")
    sharing = {**base, "policy": "first-fit+best-effort", "mean_jct_s": 1000.0}
    assert reading([rows[0], {**sharing, "mean_wait_s": 0.0, "host_share": 0.125}]) == (
        "first-fit+best-effort: mean completion 1,000 s against first fit's 2,000 s (0.50x). The "
        "jobs are the same and best effort runs some slower (on shared or fewer slots), so the "
        "difference is waiting: 0 s against 900 s on average. First fit kept the free slots in "
        "pieces (time-averaged fragmentation 0.60 against 0.60), so a queued job often waited "
        "while enough slots were free in total; best effort starts a job that finds no range at "
        "once on fewer or shared slots, and the hosts summed 12.5% of the chunks."
    )


def test_bench_pool_through_the_cli(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(
        "ina.bench.pool.bench_pool", lambda out, jobs, trace: calls.append((jobs, trace)) or []
    )
    assert bench_main(["pool", "--out", str(tmp_path)]) == 0
    assert bench_main(["pool", "--full", "--out", str(tmp_path), "--trace", "t.csv"]) == 0
    assert calls == [(2000, None), (5000, "t.csv")]


def test_bench_pool_runs_a_users_trace_and_refuses_a_bad_one(tmp_path, capsys):
    trace = tmp_path / "trace.csv"
    trace.write_text(
        "arrival_s,workers,duration_s\n"
        + "".join(f"{60 * i},{2 + i % 7},{300 + 50 * i}\n" for i in range(30))
    )
    rows = bench_pool(tmp_path, pool_size=512, trace=str(trace))
    assert {r["jobs"] for r in rows} == {30}
    assert all(r["finished_jobs"] + r["refused_jobs"] == 30 for r in rows)
    trace.write_text("arrival_s,workers,duration_s\n0,2,-5\n")
    capsys.readouterr()
    assert bench_main(["pool", "--out", str(tmp_path), "--trace", str(trace)]) == 1
    assert capsys.readouterr().err == (
        f"ina bench: {trace}: line 2: arrival_s >= 0, duration_s > 0, workers and slots >= 1\n"
    )
