"""`ina bench pool-emu`'s summary rows from a scenario's record (the Mininet run stubbed: the run
itself is tests/e2e/test_pool_emu.py)."""

import json

from ina.bench import pool_emu
from ina.topologies.runner import RunResult


def test_the_summary_says_where_each_job_ran_after_each_step(tmp_path, monkeypatch):
    jobs = {
        0: {"base": 0, "slots": 4, "on_host": True},
        1: {"base": 4, "slots": 4, "on_host": False},
    }
    row = {
        "step": 3,
        "what": "job 2 arrives",
        "ctl_s": 1.5,
        "jobs": jobs,
        "read_back_equal": True,
        "verified": True,
        "elapsed_s": {0: 0.25, 1: 0.5},
    }
    monkeypatch.setattr(
        pool_emu, "pool_emu_run", lambda run_dir: (RunResult(run_dir, ok=True), [row])
    )
    assert pool_emu.placements(row) == {0: (0, 4, True), 1: (4, 4, False)}
    assert pool_emu.bench_pool_emu(tmp_path) == [
        {
            "step": 3,
            "what": "job 2 arrives",
            "slots": "job 0 on its server, job 1 4..7",
            "read back equal": True,
            "sums exact": True,
            "ina ctl s": 1.5,
            "all-reduce s": "job 0 0.25, job 1 0.50",
        }
    ]
    written = json.loads((tmp_path / "pool_emu.json").read_text())["results"]
    assert written == [
        {
            **row,
            "jobs": {"0": jobs[0], "1": jobs[1]},
            "elapsed_s": {"0": 0.25, "1": 0.5},
            "ok": True,
        }
    ]
