"""Program every switch of a topology (ina.topologies.topo's `Topology`): addresses, L2 forwarding,
flood groups, and each job's part on it: the node of the job's aggregation tree
(topologies/tree.py) the switch is, if any.

Forwarding is by destination MAC along one shortest path: hosts behind another switch, and other
switches, are reached through the port of the first hop of a breadth-first search over switch
links (tree.first_hops: of equal paths, the one through the lowest port), so a multipath fabric
(leaf-spine, fat-tree) uses one path per (switch, destination) and no ECMP. Floods follow a
breadth-first spanning tree, so they cannot loop.
"""

import dataclasses
from collections.abc import Mapping, Sequence

from ina.controller import aggregation
from ina.controller.aggregation import Aggregation, Fallback, Job, Worker
from ina.controller.allocators import Allocator
from ina.controller.client import SwitchConnection
from ina.p4src.protocol import new_epoch
from ina.topologies import topo as topology
from ina.topologies.topo import Topology
from ina.topologies.tree import (
    Child,
    Tree,
    breadth_first,
    first_hops,
    job_trees,
    port_toward,
)


def program_switch(
    agg: Aggregation,
    name: str,
    topo: Topology,
    trees: Sequence[Tree] | None = None,
    fallbacks: Mapping[int, Fallback] | None = None,
) -> list[Job]:
    """Program switch `name`: its address, forwarding, floods, and its node of every job's tree
    (`trees`: the topology's, `job_trees`, computed once for all switches by `program_topology`;
    a hierarchical job's nodes need the job's epoch set: `program_topology` draws it once). A job
    in `fallbacks` is best effort with that host fallback server (a single-switch job)."""
    sw = topo.switches[name]
    agg.set_switch_address(sw.mac, sw.ip)
    hops = first_hops(topo, name)
    hosts = [(topo.hosts[h].mac, port_toward(topo, name, h, hops)) for h in topo.hosts]
    hosts += [(other.mac, hops[peer]) for peer, other in topo.switches.items() if peer != name]
    tree = spanning_tree(topo)
    uplinks = {port for peer, port in sw.peers.items() if frozenset((name, peer)) in tree}
    agg.install_forwarding(hosts, sorted(set(sw.hosts.values()) | uplinks))
    trees = job_trees(topo) if trees is None else trees
    fallbacks = fallbacks or {}
    return [
        add_tree_node(agg, job, tree, name, fallbacks.get(job.id))
        for job, tree in zip(topo.jobs, trees, strict=True)
        if name in tree.nodes
    ]


def add_tree_node(
    agg: Aggregation, job: topology.Job, tree: Tree, name: str, fallback: Fallback | None = None
) -> Job:
    """Install switch `name`'s node of `job`'s tree: its children (worker hosts, and child
    switches weighing the workers below them), its parent and the job's worker count when the
    tree has more than one node (DEVELOPERS.md, "Aggregation trees": `Worker.aggregates`, `Parent`,
    `add_job(parent=, job_workers=)`); a single-switch tree is the plain add_job of one switch."""
    node = tree.nodes[name]
    options = {}
    if node.uplink is not None:
        up = node.uplink
        options["parent"] = aggregation.Parent(up.port, up.mac, up.ip, up.rank)
    if len(tree.nodes) > 1:
        options["job_workers"] = tree.workers
    if fallback is not None:
        options["fallback"] = fallback
    workers = [child_entry(c) for c in node.children]
    return agg.add_job(job.id, workers, job.slots, job.epoch, job.policy, **options)


def child_entry(child: Child) -> Worker:
    """A child's admission entry: a worker host as ever; a child switch with its weight."""
    if not child.is_switch:
        return Worker(child.rank, child.port, child.mac, child.ip)
    return Worker(child.rank, child.port, child.mac, child.ip, aggregates=child.workers)


def spanning_tree(topo: Topology) -> set[frozenset]:
    """Switch links of a breadth-first spanning tree: flooding along it cannot loop."""
    parents = breadth_first(topo, next(iter(topo.switches)))
    return {frozenset((s, p)) for s, p in parents.items() if p is not None}


def route(topo: Topology, src: str, host: str) -> int:
    """The port of `src` toward `host`."""
    return port_toward(topo, src, host, first_hops(topo, src))


def program_topology(
    topo: Topology,
    bmv2_json: dict,
    p4info,
    election_id: int = 1,
    allocator: Allocator | None = None,
    fallbacks: Mapping[int, Fallback] | None = None,
) -> dict[str, list[Job]]:
    """Push the pipeline to every switch and program it, each job's slots placed by `allocator`
    (default first fit), the jobs in `fallbacks` best effort with their host fallback servers;
    returns the jobs per switch. A job without an epoch gets one drawn here, the same on every
    switch of its tree."""
    topo = with_epochs(topo)
    trees = job_trees(topo)
    out = {}
    for name, sw in topo.switches.items():
        with SwitchConnection(sw.grpc, sw.device_id, election_id) as conn:
            conn.set_pipeline(bmv2_json, p4info)
            out[name] = program_switch(Aggregation(conn, allocator), name, topo, trees, fallbacks)
    return out


def with_epochs(topo: Topology) -> Topology:
    """`topo` with a fresh epoch for each job that has none."""
    jobs = tuple(
        job if job.epoch is not None else dataclasses.replace(job, epoch=new_epoch())
        for job in topo.jobs
    )
    return dataclasses.replace(topo, jobs=jobs)
