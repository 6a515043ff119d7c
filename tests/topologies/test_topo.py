"""Topology files load into addressed, numbered data; bad files get errors that name the problem."""

import pytest

from ina.controller.topology_setup import route, spanning_tree
from ina.topologies.topo import TopologyError, load


def test_star_assigns_addresses_ports_and_jobs():
    topo = load("star", workers=3, jobs=1)
    assert topo["switches"]["s1"]["hosts"] == {"h1": 1, "h2": 2, "h3": 3}
    assert topo["hosts"]["h3"] == {"mac": "00:00:00:00:00:03", "ip": "10.0.0.3"}
    assert topo["jobs"] == [{"id": 0, "workers": ["h1", "h2", "h3"], "slots": 256, "policy": "sync"}]


def test_star_splits_workers_into_jobs():
    topo = load("star", workers=4, jobs=2)
    assert [j["workers"] for j in topo["jobs"]] == [["h1", "h3"], ["h2", "h4"]]


def test_leafspine_routes_and_loop_free_flooding():
    topo = load("leafspine")
    assert route(topo, "s1", "h4") in (3, 4)  # via a spine
    tree = spanning_tree(topo)
    assert len(tree) == len(topo["switches"]) - 1


def test_bad_topologies_are_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("switches: {s1: {aggregator: true}}\nhosts: [h1]\nlinks: [[h1, s9]]\n")
    with pytest.raises(TopologyError, match="unknown node 's9'"):
        load(bad)
    with pytest.raises(TopologyError, match="cannot read topology"):
        load(tmp_path / "missing.yaml")
    with pytest.raises(TopologyError, match=r"1\.\.32 workers"):
        load("star", workers=40)
    bad.write_text("switches: {s1: {aggregator: true}}\nhosts: [h1]\nlinks: [[h1, s1]]\n"
                   "jobs: [{id: 0, workers: [h1], policy: 'quorum:two'}]\n")
    with pytest.raises(TopologyError, match="job 0: bad policy part 'quorum:two'"):
        load(bad)
