"""`ina bench hier-emu`'s figures from switch counters (bench/hier_emu.py), on counters as
`Aggregation.stats` returns them after a run."""

import pytest

from ina.bench.hier_emu import depths, job_figures
from ina.topologies.model import HIERARCHICAL, SINGLE
from ina.topologies.topo import load
from ina.topologies.tree import job_tree


def test_depths_count_switch_hops_to_the_root():
    topo = load("fattree4")
    assert depths(job_tree(topo, topo.jobs[0])) == {
        "s1": 0,
        "s5": 1,
        "s7": 1,
        "s13": 2,
        "s14": 2,
        "s15": 2,
        "s16": 2,
    }


def test_job_figures_read_partials_in_a_tree_and_hops_for_a_single_switch():
    topo = load("leafspine_hier")
    chunks = 10
    hier_stats = {
        "s3": {"jobs": {0: {"accepted": 20, "completed": 10}}},
        "s1": {"jobs": {0: {"accepted": 20, "partials_sent": 12, "parent_results": 10}}},
        "s2": {"jobs": {0: {"accepted": 20, "partials_sent": 10, "parent_results": 10}}},
    }
    assert job_figures(topo, hier_stats, HIERARCHICAL, chunks) == {
        0: {
            "child_switches": 2,
            "workers": 4,
            "root_updates_per_chunk": 2.0,
            "partials_per_chunk": 2.2,
            "upper_link_updates_per_chunk": 2.2,
            "upper_link_source": "counters (job_partials_sent)",
        }
    }
    single_stats = {"s3": {"jobs": {0: {"accepted": 40, "completed": 10}}}}
    assert job_figures(topo, single_stats, SINGLE, chunks) == {
        0: {
            "child_switches": 2,
            "workers": 4,
            "root_updates_per_chunk": 4.0,
            "upper_link_updates_per_chunk": 4,
            "upper_link_source": "topology (each worker's hops to the root)",
        }
    }


def test_each_setting_runs_both_aggregations_alternately_unshaped_and_shaped(
    tmp_path, monkeypatch, capsys
):
    from ina.bench import hier_emu
    from ina.topologies.runner import RunResult

    ran = []

    def fake_run(opts):
        ran.append((opts.target, opts.bw, opts.aggregation))
        rep = ran.count(ran[-1]) - 1
        hier = opts.aggregation == HIERARCHICAL
        chunks = opts.size // opts.elems
        # single's goodput halves from rep to rep: the pairs' ratios are 2 and 4
        goodput = 2e6 if hier else 1e6 / 2**rep
        stats = {"s3": {"jobs": {0: {"accepted": (2 if hier else 4) * chunks}}}}
        if hier:  # each leaf's partial sums
            stats |= {leaf: {"jobs": {0: {"partials_sent": chunks}}} for leaf in ("s1", "s2")}
        # the hierarchical job's last worker began 60 ms after its first, the single's together
        starts = [100.0, 100.001, 100.002, 100.06] if hier else [7.0] * 4
        # CPU per chunk: a worker 10 us (hierarchical) or 8, the switches 15 or 16 in all
        workers = [
            {
                "job": 0,
                "verified": True,
                "goodput_elements_per_s": goodput,
                "started_monotonic_s": t,
                "allreduce_cpu_s": chunks * (10e-6 if hier else 8e-6),
            }
            for t in starts
        ]
        switch_us = {"s1": 5, "s2": 5, "s3": 5} if hier else {"s1": 2, "s2": 2, "s3": 12}
        cpu = {name: chunks * us * 1e-6 for name, us in switch_us.items()}
        return RunResult("run", workers, True, switch_stats=stats, switch_cpu_s=cpu)

    monkeypatch.setattr(hier_emu, "run", fake_run)
    rows = hier_emu.bench_hier_emu(tmp_path, 2, "leafspine_hier", ("builtin", "bmv2"))
    shaped = hier_emu.SHAPED_MBIT["builtin"]
    both = [HIERARCHICAL, SINGLE] * 2  # alternating within the reps
    assert ran == [
        *(("builtin", None, a) for a in both),
        *(("builtin", shaped, a) for a in both),
        *(("bmv2", None, a) for a in both),  # BMv2's CPU binds below any shaped rate
    ]
    assert [(r["target"], r["link_mbit"], r["aggregation"]) for r in rows] == [
        (t, bw, a)
        for t, bw in (("builtin", None), ("builtin", shaped), ("bmv2", None))
        for a in (HIERARCHICAL, SINGLE)
    ]
    # unshaped ina's switch sums 2^23 over the 4 workers; shaped and BMv2 a size per worker
    assert [r["size"] for r in rows] == [1 << 21] * 2 + [1 << 18] * 2 + [1 << 16] * 2
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("hier-emu ")]
    assert lines[1] == (
        f"hier-emu leafspine_hier job 0 builtin, loss 0, every link {shaped:g} Mbit/s: goodput per "
        "worker hierarchical 2.000 M elem/s, single 0.750 (x2.67; pairs x3.00 [2.00, 4.00]); CPU "
        "per chunk hierarchical 55.0 us (switches 15.0, a worker 10.0), single 48.0 us (switches "
        "16.0, a worker 8.0) (pairs x1.15 [1.15, 1.15]); upper-link UPDATEs per chunk 2 against 4; "
        "start skew 60.0 / 0.0 ms; verified True / True"
    )
    hier, single = rows[0], rows[1]
    assert rows[0]["start_skew_ms"]["values"] == [1e3 * (100.06 - 100.0)] * 2
    assert hier["goodput_ratio_pairs"]["values"] == [2.0, 4.0]
    assert hier["cpu_per_chunk_ratio_pairs"]["values"] == pytest.approx([55 / 48] * 2)
    assert "goodput_ratio_pairs" not in single
    for row, figures, switches in (
        (hier, (10, 15, 55), {"s1": 5, "s2": 5, "s3": 5}),
        (single, (8, 16, 48), {"s1": 2, "s2": 2, "s3": 12}),
    ):
        keys = ("worker_cpu_us_per_chunk", "switch_cpu_us_per_chunk", "cpu_us_per_chunk")
        assert [row[k]["values"] for k in keys] == [pytest.approx([f] * 2) for f in figures]
        assert {n: s["values"] for n, s in row["switch_cpu_s"].items()} == {
            n: pytest.approx([8192 * us * 1e-6] * 2) for n, us in switches.items()
        }
    # the summary table has the summaries; the per-switch mapping stays in the JSON
    from ina.bench.cli import markdown

    header = markdown(tmp_path, {"hier_emu": rows}).read_text().splitlines()[4]
    assert "| cpu_us_per_chunk (median [min, max]) |" in header
    assert "switch_cpu_s" not in header


def test_unshaped_runs_share_a_fixed_sum_among_the_workers():
    from ina.bench.hier_emu import run_size

    assert [run_size("builtin", None, n) for n in (4, 16)] == [1 << 21, 1 << 19]
    assert run_size("builtin", 10.0, 16) == 1 << 18  # shaped: per worker
    assert run_size("bmv2", None, 4) == 1 << 16


def test_cpu_figures_share_the_switches_among_the_runs_jobs():
    from ina.bench.hier_emu import cpu_figures
    from ina.topologies.runner import RunResult

    workers = [{"job": 0, "allreduce_cpu_s": c} for c in (0.4, 0.2)]
    result = RunResult(
        "run", [*workers, {"job": 1, "allreduce_cpu_s": 0.6}], switch_cpu_s={"s1": 0.5, "s2": 0.3}
    )
    # a job-0 worker 0.3 s over 1,000 chunks; the switches' 0.8 s and the whole run's 2.0 s are
    # both jobs' 2,000 chunks
    assert cpu_figures(result, 0, 1000, 2) == pytest.approx(
        {"worker_cpu_us_per_chunk": 300, "switch_cpu_us_per_chunk": 400, "cpu_us_per_chunk": 1000}
    )


def test_with_several_jobs_the_pairs_are_also_over_every_jobs_workers(
    tmp_path, monkeypatch, capsys
):
    from ina.bench import hier_emu
    from ina.topologies.runner import RunResult

    # goodput per worker: job 0 / job 1, 8 workers each
    rates = {HIERARCHICAL: (1e6, 3e6), SINGLE: (2e6, 1e6)}

    def fake_run(opts):
        workers = [
            {"job": j, "verified": True, "goodput_elements_per_s": rates[opts.aggregation][j]}
            for j in (0, 1)
            for _ in range(8)
        ]
        return RunResult("run", workers, True)

    monkeypatch.setattr(hier_emu, "run", fake_run)
    monkeypatch.setattr(hier_emu, "SHAPED_MBIT", {})
    rows = hier_emu.bench_hier_emu(tmp_path, 1, "fattree4", ("builtin",))
    assert [r["goodput_ratio_pairs"]["values"] for r in rows[:2]] == [[0.5], [3.0]]
    assert [r["run_goodput_ratio_pairs"]["values"] for r in rows[:2]] == [[2e6 / 1.5e6]] * 2
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("hier-emu ")]
    assert (
        "(x0.50; pairs x0.50 [0.50, 0.50]; all 2 jobs' workers, pairs x1.33 [1.33, 1.33])"
        in (lines[0])
    )
