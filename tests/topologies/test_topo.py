"""Topologies load once into typed, addressed, numbered objects (YAML -> Topology -> what the
controller programs); generated fat-trees and leaf-spines have their counts; bad topologies get
one-line errors that name the problem."""

import dataclasses

import pytest

from ina.controller.aggregation import Worker
from ina.p4src.protocol import SYNC, Policy
from ina.topologies.topo import HIERARCHICAL, SINGLE, Host, Job, Link, TopologyError, load
from ina.topologies.topology_setup import program_switch, route, spanning_tree


class Recorder:
    """Stands in for the controller's Aggregation: what program_switch asks a switch to install."""

    def __init__(self):
        self.calls = []

    def set_switch_address(self, mac, ip):
        self.calls.append(("address", mac, ip))

    def install_forwarding(self, hosts, flood):
        self.calls.append(("forwarding", dict(hosts), flood))

    def add_job(self, job_id, workers, num_slots, epoch, policy):
        self.calls.append(("job", job_id, workers, num_slots, epoch, policy))
        return job_id


def programmed(topo, name):
    agg = Recorder()
    program_switch(agg, name, topo)
    return agg.calls


def test_star_assigns_addresses_ports_and_jobs():
    topo = load("star", workers=3, jobs=1)
    assert topo.switches["s1"].hosts == {"h1": 1, "h2": 2, "h3": 3}
    assert (topo.switches["s1"].mac, topo.switches["s1"].ip) == (
        "02:aa:00:00:00:01",
        "10.0.255.254",
    )
    assert topo.hosts["h3"] == Host("h3", "00:00:00:00:00:03", "10.0.0.3")
    assert topo.jobs == (Job(0, ("h1", "h2", "h3"), 256, SYNC, "s1"),)


def test_star_splits_workers_into_jobs():
    topo = load("star", workers=4, jobs=2)
    assert [j.workers for j in topo.jobs] == [("h1", "h3"), ("h2", "h4")]


def test_leafspine_yaml_round_trip_to_what_the_controller_programs():
    topo = load("leafspine.yaml")
    assert topo.links[0] == Link("h1", "s1", {"s1": 1}, {})
    assert topo.links[4] == Link("s1", "s3", {"s1": 3, "s3": 1}, {})
    ip = {h: topo.hosts[h].ip for h in topo.hosts}
    mac = {n: node.mac for n, node in [*topo.hosts.items(), *topo.switches.items()]}
    workers = [
        Worker(r, p, mac[h], ip[h])
        for r, (h, p) in enumerate([("h1", 1), ("h2", 2), ("h3", 3), ("h4", 3)])
    ]
    assert programmed(topo, "s1") == [
        ("address", "02:aa:00:00:00:01", "10.0.255.254"),
        (
            "forwarding",
            {
                mac["h1"]: 1,
                mac["h2"]: 2,
                mac["h3"]: 3,
                mac["h4"]: 3,
                mac["s2"]: 3,
                mac["s3"]: 3,
                mac["s4"]: 4,
            },
            [1, 2, 3, 4],
        ),
        ("job", 0, workers, 256, None, SYNC),
    ]
    # The other leaf reaches everything through its first spine, and floods only toward it.
    assert programmed(topo, "s2") == [
        ("address", "02:aa:00:00:00:02", "10.0.255.253"),
        (
            "forwarding",
            {
                mac["h1"]: 3,
                mac["h2"]: 3,
                mac["h3"]: 1,
                mac["h4"]: 2,
                mac["s1"]: 3,
                mac["s3"]: 3,
                mac["s4"]: 4,
            },
            [1, 2, 3],
        ),
    ]
    assert programmed(topo, "s4")[1] == (
        "forwarding",
        {
            mac["h1"]: 1,
            mac["h2"]: 1,
            mac["h3"]: 2,
            mac["h4"]: 2,
            mac["s1"]: 1,
            mac["s2"]: 2,
            mac["s3"]: 1,
        },
        [1],
    )
    assert route(topo, "s1", "h4") == 3 and route(topo, "s2", "h4") == 2
    assert len(spanning_tree(topo)) == len(topo.switches) - 1


def test_a_policy_is_parsed_once_into_the_job_and_replaced_whole(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(
        "switches: {s1: {aggregator: true}}\nhosts: [h1, h2]\nlinks: [[h1, s1], [h2, s1]]\n"
        "jobs: [{id: 3, workers: [h2, h1], slots: 64, policy: 'quorum:1,timeout:2ms'}]\n"
    )
    topo = load(path)
    assert topo.jobs == (Job(3, ("h2", "h1"), 64, Policy(quorum=1, timeout_us=2000), "s1"),)
    assert topo.with_policy(Policy(staleness=1)).jobs[0].policy == Policy(staleness=1)
    assert topo.jobs[0].policy == Policy(
        quorum=1, timeout_us=2000
    )  # frozen: a new topology, this one unchanged
    with pytest.raises(dataclasses.FrozenInstanceError):
        topo.jobs[0].slots = 8
    with pytest.raises(
        TopologyError, match=r"^job 3: quorum 3 is out of range 1\.\.2 \(its workers\)$"
    ):
        topo.with_policy(Policy(quorum=3))


@pytest.mark.parametrize(
    ("k", "hosts", "core", "switches", "links"), [(4, 16, 4, 20, 48), (8, 128, 16, 80, 384)]
)
def test_fattree_counts(k, hosts, core, switches, links):
    topo = load(f"fattree:{k}")
    assert (len(topo.hosts), len(topo.switches), len(topo.links)) == (hosts, switches, links)
    assert hosts == k**3 // 4 and switches == 5 * k * k // 4 and links == 3 * hosts
    ports = [len(sw.hosts) + len(sw.peers) for sw in topo.switches.values()]
    assert ports == [k] * switches  # every switch has k ports
    cores = [s for s, sw in topo.switches.items() if sw.aggregator]
    assert cores == [f"s{i}" for i in range(1, core + 1)]
    assert all(
        not sw.hosts and len(sw.peers) == k for sw in map(topo.switches.get, cores)
    )  # one link per pod
    edges = [sw for sw in topo.switches.values() if sw.hosts]
    assert len(edges) == k * k // 2 and all(len(sw.hosts) == k // 2 for sw in edges)
    assert [len(j.workers) for j in topo.jobs] == [hosts // len(topo.jobs)] * len(topo.jobs)
    assert (
        len(topo.jobs) == -(-hosts // 32)
        and [j.aggregator for j in topo.jobs] == cores[: len(topo.jobs)]
    )


def test_generated_leafspine_and_jobs_on_the_spines():
    topo = load("leafspine:8x32,4", jobs=8)
    assert (len(topo.hosts), len(topo.switches), len(topo.links)) == (256, 12, 256 + 32)
    assert topo.hosts["h256"] == Host("h256", "00:00:00:00:01:00", "10.0.1.0")
    assert topo.switches["s12"].ip == "10.0.255.243" and topo.switches["s12"].peers == {
        f"s{i}": i for i in range(1, 9)
    }
    assert [j.aggregator for j in topo.jobs] == ["s9", "s10", "s11", "s12"] * 2
    assert topo.jobs[1].workers == tuple(f"h{i}" for i in range(2, 257, 8))
    assert load("leafspine.yaml", jobs=2).jobs[1] == Job(1, ("h2", "h4"), 256, SYNC, "s1")


BAD = [
    (
        "switches: {s1: {aggregator: true}}\nhosts: [h1]\nlinks: [[h1, s9]]\n",
        "link h1-s9: unknown node 's9'",
    ),
    (
        "switches: {s1: {aggregator: true}}\nhosts: [h1, h2]\nlinks: [[h1, s1]]\n",
        "host h2 is linked to no switch",
    ),
    (
        "switches: {s1: {aggregator: true}, s2: {}}\nhosts: [h1]\nlinks: [[h1, s1], [h1, s2]]\n",
        "host h1 has 2 links; a host has one, to its switch",
    ),
    (
        "switches: {s1: {aggregator: true}}\nhosts: [h1, h2]\nlinks: [[h1, s1], [h2, s1], [h1, h2]]\n",
        "link h1-h2 joins two hosts; a host links to a switch",
    ),
    (
        "switches: {s1: {aggregator: true}, s2: {}}\nhosts: [h1]\nlinks: [[h1, s1]]\n",
        "switch s2 is not reachable from s1 over switch links",
    ),
    (
        "switches: {s1: {}}\nhosts: [h1]\nlinks: [[h1, s1]]\njobs: [{id: 0, workers: [h1]}]\n",
        "job 0: no aggregator (mark a switch aggregator: true or name one in the job)",
    ),
    (
        "switches: {s1: {aggregator: true}}\nhosts: [h1]\nlinks: [[h1, s1]]\n"
        "jobs: [{id: 0, workers: [h1], policy: 'quorum:two'}]\n",
        "job 0: bad policy part 'quorum:two': use sync, quorum:K, timeout:T[us|ms|s] or stale:S",
    ),
    (
        "switches: {s1: {aggregator: true}}\nhosts: [h1]\nlinks: [[h1, s1]]\n"
        "jobs: [{id: 0, workers: [h1], aggregator: s7}]\n",
        "job 0: aggregator 's7' is no switch",
    ),
    (
        "switches: {s1: {aggregator: true}}\nhosts: [h1]\nlinks: [[h1, s1]]\n"
        "jobs: [{id: 0, workers: [h1], aggregation: tree}]\n",
        "job 0: aggregation 'tree' is none of single, hierarchical",
    ),
    (
        "switches: [s1]\n",
        "switches: a mapping of switch names to their options, e.g. {s1: {aggregator: true}}",
    ),
    (
        "switches: {s1: {}}\nhosts: [h1]\nlinks: [[h1]]\n",
        "links: each link is [A, B] or [A, B, {parameters}], got ['h1']",
    ),
    (
        "switches: {s1: {}}\nhosts: [h1]\nlinks: [[h1, s1]]\njobs: [3]\n",
        "jobs: each job is a mapping with a list of workers, got 3",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[m.split(":")[0] for _t, m in BAD])
def test_bad_topologies_are_refused_in_one_line(tmp_path, text, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(TopologyError) as err:
        load(bad)
    assert str(err.value) == message


def test_bad_sources_and_sizes_are_refused_in_one_line(tmp_path):
    with pytest.raises(
        TopologyError, match=r"^cannot read topology .*missing\.yaml: No such file or directory$"
    ):
        load(tmp_path / "missing.yaml")
    with pytest.raises(
        TopologyError,
        match=r"^job 0 has 40 workers; a job has 1\.\.32 distinct ones \(the "
        r"protocol's MAX_WORKERS\)$",
    ):
        load("star", workers=40)
    with pytest.raises(TopologyError, match=r"^job 0 has 128 workers; a job has 1\.\.32"):
        load("fattree:8", jobs=1)
    with pytest.raises(TopologyError, match=r"^fattree:5: K must be even and at least 2$"):
        load("fattree:5")
    with pytest.raises(TopologyError, match=r"^bad topology 'leafspine:8x32': use fattree:K"):
        load("leafspine:8x32")
    with pytest.raises(TopologyError, match=r"^16 workers make 1\.\.16 jobs, got 17$"):
        load("fattree:4", jobs=17)
    with pytest.raises(
        TopologyError, match=r"has a fixed set of 4 hosts; --workers applies to star$"
    ):
        load("leafspine", workers=8)


def test_a_files_own_jobs_stay_unless_jobs_are_dealt(tmp_path):
    path = tmp_path / "two.yaml"
    path.write_text(
        "switches: {s1: {aggregator: true}, s2: {aggregator: true}}\nhosts: [h1, h2, h3]\n"
        "links: [[h1, s1], [h2, s1], [h3, s2], [s1, s2]]\n"
        "jobs: [{id: 4, workers: [h1, h3], slots: 16, policy: 'quorum:1'}, {id: 7, workers: [h2]}]\n"
    )
    assert [(j.id, j.workers, j.aggregator) for j in load(path).jobs] == [
        (4, ("h1", "h3"), "s1"),
        (7, ("h2",), "s2"),
    ]
    assert load(path, jobs=1).jobs == (Job(0, ("h1", "h3", "h2"), 16, Policy(quorum=1), "s1"),)


def test_a_jobs_aggregation_is_parsed_once_single_by_default_and_dealt_with_its_jobs():
    assert load("leafspine").jobs[0].aggregation == SINGLE
    hier = load("leafspine_hier")
    assert hier.jobs == (Job(0, ("h1", "h2", "h3", "h4"), 256, SYNC, "s3", None, HIERARCHICAL),)
    assert [j.aggregation for j in load("leafspine_hier", jobs=2).jobs] == [HIERARCHICAL] * 2
    generated = load("fattree:4:hierarchical", jobs=2)
    assert [(j.aggregation, j.aggregator) for j in generated.jobs] == [
        (HIERARCHICAL, "s1"),
        (HIERARCHICAL, "s2"),
    ]
    assert {j.aggregation for j in load("fattree:4").jobs} == {SINGLE}
    # A hierarchical generated topology holds every host in one job up to a tree's 1,024.
    assert [len(j.workers) for j in load("leafspine:8x32,4:hierarchical").jobs] == [256]
    assert len(load("leafspine:8x32,4").jobs) == 8
    with pytest.raises(TopologyError, match=r"^bad topology 'fattree:4:hier': use fattree:K"):
        load("fattree:4:hier")
    with pytest.raises(TopologyError, match=r"^bad topology 'fattree': use fattree:K"):
        load("fattree")


def test_with_aggregation_switches_every_job_and_keeps_its_root():
    topo = load("leafspine_hier")
    single = topo.with_aggregation(SINGLE)
    assert [(j.aggregation, j.aggregator, j.workers) for j in single.jobs] == [
        (SINGLE, "s3", ("h1", "h2", "h3", "h4"))
    ]
    assert single.with_aggregation(HIERARCHICAL).jobs == topo.jobs
    wide = load("leafspine:2x20,1:hierarchical")
    with pytest.raises(
        TopologyError, match=r"^job 0 has 40 workers; a single switch aggregates at most 32$"
    ):
        wide.with_aggregation(SINGLE)
