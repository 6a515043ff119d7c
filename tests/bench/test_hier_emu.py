"""`ina bench hier-emu`'s figures from switch counters (bench/hier_emu.py), on counters as
`Aggregation.stats` returns them after a run."""

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
        hier = opts.aggregation == HIERARCHICAL
        goodput = 2e6 if hier else 1e6
        stats = {"s3": {"jobs": {0: {"accepted": 2 * 1024 if hier else 4 * 1024}}}}
        if hier:  # 1,024 chunks of 256: each leaf's partial sums
            stats |= {leaf: {"jobs": {0: {"partials_sent": 1024}}} for leaf in ("s1", "s2")}
        # the hierarchical job's last worker began 60 ms after its first, the single's together
        starts = [100.0, 100.001, 100.002, 100.06] if hier else [7.0] * 4
        workers = [
            {
                "job": 0,
                "verified": True,
                "goodput_elements_per_s": goodput,
                "started_monotonic_s": t,
            }
            for t in starts
        ]
        return RunResult("run", workers, True, switch_stats=stats)

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
    assert [r["size"] for r in rows] == [1 << 18] * 4 + [1 << 16] * 2
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("hier-emu ")]
    assert lines[1] == (
        f"hier-emu leafspine_hier job 0 builtin, loss 0, every link {shaped:g} Mbit/s: goodput per "
        "worker hierarchical 2.000 M elem/s, single 1.000 (x2.00); upper-link UPDATEs per chunk 2 "
        "against 4; start skew 60.0 / 0.0 ms; verified True / True"
    )
    assert rows[0]["start_skew_ms"]["values"] == [1e3 * (100.06 - 100.0)] * 2
