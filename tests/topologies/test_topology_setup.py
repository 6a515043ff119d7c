"""How a topology's job trees become controller calls: each switch a tree names gets one add_job
with its children (child switches with their weight), its parent and the job's worker count; a
single-switch job the plain add_job of today; every switch of a tree the same epoch.

The controller's hierarchical API (Parent, Worker.aggregates, add_job(parent=, job_workers=)) is
recorded here, not run: only the tree-to-calls translation is under test."""

import dataclasses

import pytest

from ina.controller import aggregation
from ina.p4src.protocol import SYNC, UDP_PORT, Policy
from ina.topologies import topology_setup
from ina.topologies.topo import load
from ina.topologies.topology_setup import program_switch, program_topology, with_epochs


@dataclasses.dataclass(frozen=True)
class Entry:
    """Stands in for controller.aggregation.Worker with hier.md's `aggregates`."""

    rank: int
    port: int
    mac: str
    ip: str
    udp_port: int = UDP_PORT
    aggregates: int = 0


@dataclasses.dataclass(frozen=True)
class Parent:
    port: int
    mac: str
    ip: str
    rank: int


class Recorder:
    """Stands in for the controller's Aggregation: the add_job calls a switch gets."""

    def __init__(self):
        self.jobs = []

    def set_switch_address(self, mac, ip):
        pass

    def install_forwarding(self, hosts, flood):
        pass

    def add_job(self, job_id, workers, num_slots, epoch, policy, **options):
        self.jobs.append((job_id, workers, num_slots, epoch, policy, options))
        return job_id


@pytest.fixture(autouse=True)
def hierarchical_api(monkeypatch):
    """The contract's Parent and Worker(aggregates=) until the controller has them."""
    monkeypatch.setattr(aggregation, "Parent", Parent, raising=False)
    monkeypatch.setattr(topology_setup, "Worker", Entry)


def calls(topo):
    out = {}
    for name in topo.switches:
        agg = Recorder()
        program_switch(agg, name, topo)
        if agg.jobs:
            out[name] = agg.jobs
    return out


def test_a_hierarchical_leafspine_installs_the_leaves_with_their_parent_and_the_spine_with_them():
    topo = with_epochs(load("leafspine_hier"))
    epoch = topo.jobs[0].epoch
    sw = topo.switches
    host = topo.hosts
    assert calls(topo) == {
        "s1": [
            (
                0,
                [
                    Entry(0, 1, host["h1"].mac, host["h1"].ip),
                    Entry(1, 2, host["h2"].mac, host["h2"].ip),
                ],
                256,
                epoch,
                SYNC,
                {"parent": Parent(3, sw["s3"].mac, sw["s3"].ip, 0), "job_workers": 4},
            )
        ],
        "s2": [
            (
                0,
                [
                    Entry(0, 1, host["h3"].mac, host["h3"].ip),
                    Entry(1, 2, host["h4"].mac, host["h4"].ip),
                ],
                256,
                epoch,
                SYNC,
                {"parent": Parent(3, sw["s3"].mac, sw["s3"].ip, 1), "job_workers": 4},
            )
        ],
        "s3": [
            (
                0,
                [
                    Entry(0, 1, sw["s1"].mac, sw["s1"].ip, aggregates=2),
                    Entry(1, 2, sw["s2"].mac, sw["s2"].ip, aggregates=2),
                ],
                256,
                epoch,
                SYNC,
                {"job_workers": 4},
            )
        ],
    }


def test_a_single_job_is_one_plain_add_job_on_its_aggregator():
    topo = load("leafspine")
    [(name, [(job_id, workers, slots, epoch, policy, options)])] = calls(topo).items()
    assert (name, job_id, slots, epoch, policy, options) == ("s1", 0, 256, None, SYNC, {})
    assert [(w.rank, w.port, w.aggregates) for w in workers] == [
        (0, 1, 0),
        (1, 2, 0),
        (2, 3, 0),
        (3, 3, 0),
    ]


def test_every_node_of_a_fattree_gets_the_jobs_policy_worker_count_and_its_parent():
    topo = load("fattree4").with_policy(Policy(quorum=6))
    installed = calls(topo)
    assert sorted(installed, key=lambda s: int(s[1:])) == [
        "s1", "s3", "s5", "s7", "s10", "s12", *(f"s{i}" for i in range(13, 21))
    ]  # fmt: skip
    for name, jobs in installed.items():
        [(_job, workers, _slots, _epoch, policy, options)] = jobs
        assert policy == Policy(quorum=6) and options["job_workers"] == 8
        assert ("parent" in options) == (name not in ("s1", "s3"))
        assert sum(w.aggregates or 1 for w in workers) == {"s1": 8, "s3": 8}.get(
            name, 4 if name in ("s5", "s7", "s10", "s12") else 2
        )
    [(_, _, _, _, _, s13)] = installed["s13"]
    assert s13["parent"] == Parent(3, topo.switches["s5"].mac, topo.switches["s5"].ip, 0)


class Connection:
    """Stands in for SwitchConnection: program_topology opens one per switch."""

    def __init__(self, address, device_id, election_id):
        self.address = address

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def set_pipeline(self, bmv2_json, p4info):
        pass


def test_program_topology_gives_every_switch_of_a_tree_one_epoch(monkeypatch):
    topo = load("fattree4")
    recorders = {}
    monkeypatch.setattr(topology_setup, "SwitchConnection", Connection)
    monkeypatch.setattr(
        topology_setup,
        "Aggregation",
        lambda conn, allocator=None: recorders.setdefault(conn.address, Recorder()),
    )
    installed = program_topology(topo, {}, None)
    assert installed["s1"] == [0] and installed["s3"] == [1] and installed["s2"] == []
    epochs = {}
    for sw in topo.switches.values():
        for job_id, _workers, _slots, epoch, _policy, _options in recorders[sw.grpc].jobs:
            epochs.setdefault(job_id, set()).add(epoch)
    assert [len(epochs[0]), len(epochs[1])] == [1, 1] and None not in epochs[0] | epochs[1]
    assert epochs[0] != epochs[1]
    kept = dataclasses.replace(topo, jobs=(dataclasses.replace(topo.jobs[0], epoch=7),))
    assert with_epochs(kept).jobs[0].epoch == 7
