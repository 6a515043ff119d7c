"""A job's aggregation tree follows the topology's links: a single job is its aggregator alone, a
hierarchical one a breadth-first tree from its root through the switches holding its workers; each
child has its rank, port and weight; every worker knows its leaf and wire rank; a switch with more
children than its bitmap has bits, or a job of more workers than a tree holds, is refused."""

import dataclasses

import pytest

from ina.topologies.topo import HIERARCHICAL, MAX_TREE_WORKERS, TopologyError, load
from ina.topologies.tree import (
    Child,
    Uplink,
    breadth_first,
    first_hops,
    job_tree,
    switch_jobs,
    worker_endpoint,
)


def shape(tree) -> dict:
    """Per node: its parent and rank there, and its children as name@rank:port/weight."""
    return {
        s: (
            (n.uplink.parent, n.uplink.rank) if n.uplink else None,
            [f"{c.name}@{c.rank}:{c.port}/{c.workers}" for c in n.children],
        )
        for s, n in tree.nodes.items()
    }


def hierarchical(topo, job_index=0, **changes):
    job = dataclasses.replace(topo.jobs[job_index], aggregation=HIERARCHICAL, **changes)
    return job_tree(topo, job)


def test_a_star_job_is_one_node_of_its_workers_in_job_order():
    topo = load("star", workers=3)
    tree = job_tree(topo, topo.jobs[0])
    assert (tree.job, tree.root, tree.workers) == (0, "s1", 3)
    assert tree.nodes["s1"].uplink is None
    assert tree.nodes["s1"].children == (
        Child("h1", 0, 1, "00:00:00:00:00:01", "10.0.0.1", False, 1),
        Child("h2", 1, 2, "00:00:00:00:00:02", "10.0.0.2", False, 1),
        Child("h3", 2, 3, "00:00:00:00:00:03", "10.0.0.3", False, 1),
    )
    # Hierarchical on one switch is the same one node.
    assert hierarchical(topo) == tree
    assert dict(tree.endpoints) == {"h1": ("s1", 0), "h2": ("s1", 1), "h3": ("s1", 2)}


def test_a_single_job_on_a_leafspine_reaches_remote_workers_through_its_uplink():
    topo = load("leafspine")  # s1 (a leaf) aggregates h1, h2 and, through spine s3, h3 and h4
    tree = job_tree(topo, topo.jobs[0])
    assert shape(tree) == {"s1": (None, ["h1@0:1/1", "h2@1:2/1", "h3@2:3/1", "h4@3:3/1"])}
    assert [worker_endpoint(topo, topo.jobs[0], h) for h in ("h4", "h1")] == [("s1", 3), ("s1", 0)]


def test_a_hierarchical_leafspine_sums_racks_at_leaves_and_leaves_at_the_spine():
    topo = load("leafspine_hier")
    job = topo.jobs[0]
    assert job.aggregation == HIERARCHICAL and job.aggregator == "s3"
    tree = job_tree(topo, job)
    assert shape(tree) == {
        "s3": (None, ["s1@0:1/2", "s2@1:2/2"]),
        "s1": (("s3", 0), ["h1@0:1/1", "h2@1:2/1"]),
        "s2": (("s3", 1), ["h3@0:1/1", "h4@1:2/1"]),
    }
    s3 = topo.switches["s3"]
    assert tree.nodes["s2"].uplink == Uplink("s3", 3, s3.mac, s3.ip, 1)
    s1 = topo.switches["s1"]
    assert tree.nodes["s3"].children[0] == Child("s1", 0, 1, s1.mac, s1.ip, True, 2)
    assert tree.workers == 4
    assert [worker_endpoint(topo, job, h) for h in job.workers] == [
        ("s1", 0),
        ("s1", 1),
        ("s2", 0),
        ("s2", 1),
    ]


def test_a_leaf_rooted_hierarchical_job_climbs_through_a_spine_with_one_child():
    topo = load("leafspine")
    assert shape(hierarchical(topo)) == {
        "s1": (None, ["h1@0:1/1", "h2@1:2/1", "s3@2:3/2"]),
        "s3": (("s1", 2), ["s2@0:2/2"]),
        "s2": (("s3", 0), ["h3@0:1/1", "h4@1:2/1"]),
    }


def test_fattree4_yaml_is_the_generated_k4_fat_tree_with_two_disjoint_three_level_trees():
    shipped, generated = load("fattree4"), load("fattree:4")
    assert (len(shipped.hosts), len(shipped.switches)) == (16, 20)
    assert shipped.links == generated.links and shipped.hosts == generated.hosts
    zero, one = (job_tree(shipped, job) for job in shipped.jobs)
    assert shape(zero) == {
        "s1": (None, ["s5@0:1/4", "s7@1:2/4"]),
        "s5": (("s1", 0), ["s13@0:1/2", "s14@1:2/2"]),
        "s7": (("s1", 1), ["s15@0:1/2", "s16@1:2/2"]),
        "s13": (("s5", 0), ["h1@0:1/1", "h2@1:2/1"]),
        "s14": (("s5", 1), ["h3@0:1/1", "h4@1:2/1"]),
        "s15": (("s7", 0), ["h5@0:1/1", "h6@1:2/1"]),
        "s16": (("s7", 1), ["h7@0:1/1", "h8@1:2/1"]),
    }
    assert list(one.nodes) == ["s3", "s10", "s12", "s17", "s18", "s19", "s20"]
    assert one.nodes["s17"].uplink.port == 4  # s17's ports: h9, h10, s9, s10
    assert not set(zero.nodes) & set(one.nodes)
    held = switch_jobs(shipped)
    assert list(held) == [*zero.nodes, *one.nodes]
    assert held["s5"] == [shipped.jobs[0]] and held["s20"] == [shipped.jobs[1]]
    single = load("fattree:4", jobs=8)
    assert {s: [j.id for j in jobs] for s, jobs in switch_jobs(single).items()} == {
        "s1": [0, 4], "s2": [1, 5], "s3": [2, 6], "s4": [3, 7]
    }  # fmt: skip


def test_generated_hierarchical_fattree_spans_every_pod_from_one_core():
    topo = load("fattree:4:hierarchical")
    assert topo.name == "fattree:4:hierarchical" and len(topo.jobs) == 1
    tree = job_tree(topo, topo.jobs[0])
    assert tree.workers == 16 and tree.root == "s1"
    assert shape(tree)["s1"] == (None, ["s5@0:1/4", "s7@1:2/4", "s9@2:3/4", "s11@3:4/4"])
    assert len(tree.nodes) == 1 + 4 + 8
    # Every worker sends to the edge switch it is linked to.
    for host in topo.hosts:
        leaf, rank = worker_endpoint(topo, topo.jobs[0], host)
        assert topo.attachment(host) == (topo.switches[leaf], rank + 1)


def test_a_1024_worker_leafspine_is_32_leaves_of_32_under_one_spine():
    topo = load("leafspine:32x32,4:hierarchical")
    [job] = topo.jobs
    assert len(job.workers) == MAX_TREE_WORKERS
    tree = job_tree(topo, job)
    assert tree.workers == 1024 and tree.root == "s33"
    assert [c.name for c in tree.nodes["s33"].children] == [f"s{i}" for i in range(1, 33)]
    assert {len(tree.nodes[f"s{i}"].children) for i in range(1, 33)} == {32}
    assert tree.endpoints["h1024"] == ("s32", 31) and tree.endpoints["h33"] == ("s2", 0)
    assert len(set(tree.endpoints.values())) == 1024


def test_jobs_spread_over_the_top_level_switches():
    topo = load("leafspine:4x8,4:hierarchical", jobs=8)
    roots = [job_tree(topo, job).root for job in topo.jobs]
    assert roots == ["s5", "s6", "s7", "s8", "s5", "s6", "s7", "s8"]
    fat = load("fattree:4:hierarchical", jobs=4)
    assert [job_tree(fat, job).root for job in fat.jobs] == ["s1", "s2", "s3", "s4"]
    # A job's round-robin share of a leaf-spine: one worker per leaf on each of its leaves.
    assert shape(job_tree(topo, topo.jobs[1]))["s1"] == (("s6", 0), ["h2@0:2/1"])


def test_a_switch_with_33_children_is_refused_naming_it():
    with pytest.raises(
        TopologyError,
        match=r"^job 0: switch s34 would aggregate 33 children \(workers and child switches\); a "
        r"switch aggregates at most 32 \(the protocol's MAX_WORKERS\)$",
    ):
        load("leafspine:33x2,1:hierarchical")
    with pytest.raises(TopologyError, match=r"^job 0: switch s1 would aggregate 33 children"):
        load("leafspine:1x33,1:hierarchical")
    load("leafspine:32x2,1:hierarchical")  # 32 children: the most


def test_a_hierarchical_job_of_more_than_1024_workers_is_refused():
    with pytest.raises(
        TopologyError,
        match=r"^job 0 has 1025 workers; a hierarchical job has 1\.\.1024 distinct ones$",
    ):
        load("leafspine:41x25,2:hierarchical", jobs=1)
    assert len(load("leafspine:32x33,4:hierarchical").jobs) == 2  # 1,056 hosts make two jobs


def test_worker_endpoint_refuses_a_host_outside_the_job():
    topo = load("star", workers=4, jobs=2)
    with pytest.raises(TopologyError, match=r"^host h2 is no worker of job 0$"):
        worker_endpoint(topo, topo.jobs[0], "h2")


def test_breadth_first_takes_peers_in_port_order_and_first_hops_follow_it():
    topo = load("leafspine")
    assert breadth_first(topo, "s2") == {"s2": None, "s3": "s2", "s4": "s2", "s1": "s3"}
    assert first_hops(topo, "s2") == {"s3": 3, "s4": 4, "s1": 3}


def test_a_job_naming_its_root_keeps_it(tmp_path):
    path = tmp_path / "t.yaml"
    spec = (
        "switches: {s1: {}, s2: {}, s3: {aggregator: true}, s4: {}}\nhosts: [h1, h2, h3, h4]\n"
        "links: [[h1, s1], [h2, s1], [h3, s2], [h4, s2], [s1, s3], [s1, s4], [s2, s3], [s2, s4]]\n"
        "jobs: [{workers: [h1, h2, h3, h4], aggregator: s4, aggregation: hierarchical}]\n"
    )
    path.write_text(spec)
    tree = job_tree(topo := load(path), topo.jobs[0])
    assert shape(tree) == {
        "s4": (None, ["s1@0:1/2", "s2@1:2/2"]),
        "s1": (("s4", 0), ["h1@0:1/1", "h2@1:2/1"]),
        "s2": (("s4", 1), ["h3@0:1/1", "h4@1:2/1"]),
    }
    assert tree.nodes["s1"].uplink.port == 4


def test_a_k16_fat_tree_holds_1024_workers_in_one_three_level_tree():
    topo = load("fattree:16:hierarchical")
    [job] = topo.jobs
    tree = job_tree(topo, job)
    assert (tree.workers, tree.root, len(tree.nodes)) == (1024, "s1", 1 + 16 + 128)
    assert [len(tree.nodes[s].children) for s in list(tree.nodes)[:2]] == [16, 8]
    assert {len(n.children) for n in list(tree.nodes.values())[17:]} == {8}
