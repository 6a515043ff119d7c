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
