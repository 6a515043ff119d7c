"""The in-process harness on a hierarchical topology: each worker's core sends to the switch it is
linked to (its tree's leaf) with its rank there, while its member keeps its rank in the job (its
data, its loss rules); with a parameter server the workers send to it with their ranks in the job.

Until the controller has the hierarchical API (Parent, Worker.aggregates, add_job(parent=,
job_workers=): hierdp's half of #31) it is stood in for, and each switch gets its node's children
alone: this checks the harness's wiring, not a hierarchical all-reduce."""

from dataclasses import dataclass

import pytest

from ina.controller import aggregation
from ina.hosts.inprocess import InProcessSwitch
from ina.topologies import topology_setup
from ina.topologies.topo import load


@dataclass(frozen=True)
class Parent:
    port: int
    mac: str
    ip: str
    rank: int


@dataclass(frozen=True)
class Entry(aggregation.Worker):
    aggregates: int = 0


@pytest.fixture
def hierarchical_api(monkeypatch):
    if hasattr(aggregation, "Parent"):
        return
    add_job = aggregation.Aggregation.add_job

    def add_node(self, *args, parent=None, job_workers=None):
        return add_job(self, *args)

    monkeypatch.setattr(aggregation, "Parent", Parent, raising=False)
    monkeypatch.setattr(topology_setup, "Worker", Entry)
    monkeypatch.setattr(aggregation.Aggregation, "add_job", add_node)


def wiring(net):
    return [
        (m.rank, m.core.rank, m.core.n_workers, m.core.job_workers, m.core.switch[0], m.switch.name)
        for m in net.jobs[0]
    ]


def test_each_worker_sends_to_its_leaf_with_its_rank_there(hierarchical_api):
    topo = load("leafspine_hier")
    s1, s2 = topo.switches["s1"].ip, topo.switches["s2"].ip
    with InProcessSwitch(engine="python", topology=topo) as net:
        assert wiring(net) == [
            (0, 0, 2, 4, s1, "s1"),  # the workers its leaf sums; the job's, for the scale
            (1, 1, 2, 4, s1, "s1"),
            (2, 0, 2, 4, s2, "s2"),
            (3, 1, 2, 4, s2, "s2"),
        ]


def test_with_a_parameter_server_workers_send_to_it_with_their_ranks_in_the_job(hierarchical_api):
    topo = load("leafspine_hier", extra_host=True)
    server = topo.hosts[topo.extra_host].ip
    with InProcessSwitch(engine="python", topology=topo, server=topo.extra_host) as net:
        assert [w[:5] for w in wiring(net)] == [(r, r, 4, 4, server) for r in range(4)]
