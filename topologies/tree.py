"""A job's aggregation tree over a topology's switches: which switch sums which children, and where
each partial sum goes (DEVELOPERS.md, "Aggregation trees"; the data plane: docs/protocol.md).

A `single` job's tree is one node, its aggregator, whose children are the job's workers in job
order (rank = index in the job), reached through the aggregator's port toward each one. A
`hierarchical` job's tree follows the physical links: a breadth-first tree from the job's root
(`Job.aggregator`: the one named, else the (j mod A)-th of the A switches marked `aggregator: true`,
so jobs spread over the top-level switches, e.g. a fat-tree's cores, a leaf-spine's spines),
peers taken in port order, keeping the switches that have workers of the job below them. A
switch's children are the job's workers linked to it (in job order), then its child switches (in
port order); a child's rank at its switch is its index there. A parent is therefore always a
neighbour, and a worker always sends to the switch it is linked to (its leaf).

Every switch sums at most MAX_WORKERS children (its bitmap's width); a job whose tree would give a
switch more is refused, naming the switch.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from ina.p4src.protocol import MAX_WORKERS
from ina.topologies.model import HIERARCHICAL, Job, Topology, TopologyError


@dataclass(frozen=True)
class Child:
    """One child of a tree node: a worker host or a child switch, with its rank at the node, the
    node's port toward it, its addresses, and how many workers its contributions hold."""

    name: str
    rank: int
    port: int
    mac: str
    ip: str
    is_switch: bool
    workers: int  # 1 for a worker host; a child switch's workers below it


@dataclass(frozen=True)
class Uplink:
    """Where a non-root node sends its partial sums: its parent switch, its own port toward it, the
    parent's addresses, and its rank at the parent."""

    parent: str
    port: int
    mac: str
    ip: str
    rank: int


@dataclass(frozen=True)
class Node:
    switch: str
    children: tuple[Child, ...]
    uplink: Uplink | None  # None: the root

    @property
    def workers(self) -> int:
        """The workers this node's sums hold (its children's weights)."""
        return sum(c.workers for c in self.children)


@dataclass(frozen=True)
class Tree:
    """A job's tree: its nodes by switch, root first then breadth-first; `endpoints` has each
    worker's leaf switch and its rank there."""

    job: int
    root: str
    nodes: Mapping[str, Node]
    endpoints: Mapping[str, tuple[str, int]]

    @property
    def workers(self) -> int:
        return self.nodes[self.root].workers


def job_tree(topo: Topology, job: Job) -> Tree:
    """`job`'s aggregation tree on `topo` (see the module's docstring); raises TopologyError
    naming the switch that would have more than MAX_WORKERS children."""
    if job.aggregation != HIERARCHICAL:
        hops = first_hops(topo, job.aggregator)
        children = [
            _host_child(topo, h, rank, port_toward(topo, job.aggregator, h, hops))
            for rank, h in enumerate(job.workers)
        ]
        return _tree(job, job.aggregator, {job.aggregator: (children, None)})
    parents = breadth_first(topo, job.aggregator)
    hosts = {s: [h for h in job.workers if h in topo.switches[s].hosts] for s in parents}
    below = {s: len(hosts[s]) for s in parents}
    for s in reversed(parents):  # leaves first: each switch's workers added to its parent's
        if parents[s] is not None:
            below[parents[s]] += below[s]
    nodes: dict[str, tuple[list[Child], Uplink | None]] = {}
    for s, parent in parents.items():
        if not below[s]:
            continue
        sw = topo.switches[s]
        children = [_host_child(topo, h, rank, sw.hosts[h]) for rank, h in enumerate(hosts[s])]
        for peer, port in sw.peers.items():
            if parents.get(peer) == s and below[peer]:
                other = topo.switches[peer]
                children.append(
                    Child(peer, len(children), port, other.mac, other.ip, True, below[peer])
                )
        uplink = None
        if parent is not None:
            up = topo.switches[parent]
            rank = next(c.rank for c in nodes[parent][0] if c.name == s)
            uplink = Uplink(parent, sw.peers[parent], up.mac, up.ip, rank)
        nodes[s] = (children, uplink)
    return _tree(job, job.aggregator, nodes)


def worker_endpoint(topo: Topology, job: Job, host: str) -> tuple[str, int]:
    """The switch `host` sends its UPDATEs for `job` to, and its rank there (on the wire)."""
    if host not in job.workers:
        raise TopologyError(f"host {host} is no worker of job {job.id}")
    return job_tree(topo, job).endpoints[host]


def switch_jobs(topo: Topology) -> dict[str, list[Job]]:
    """The jobs each switch holds a node of (it aggregates for them), for every switch some job's
    tree names: switches in job order then tree order, jobs in job order."""
    held: dict[str, list[Job]] = {}
    for job, tree in zip(topo.jobs, job_trees(topo), strict=True):
        for s in tree.nodes:
            held.setdefault(s, []).append(job)
    return held


def job_trees(topo: Topology) -> list[Tree]:
    """Every job's tree, in job order."""
    return [job_tree(topo, job) for job in topo.jobs]


def breadth_first(topo: Topology, root: str) -> dict[str, str | None]:
    """Every switch's parent in the breadth-first tree from `root` over switch links (peers in port
    order: of equal paths, the first found), in the order visited; the root's parent is None."""
    parents: dict[str, str | None] = {root: None}
    frontier = [root]
    while frontier:
        nxt = []
        for s in frontier:
            for peer in topo.switches[s].peers:
                if peer not in parents:
                    parents[peer] = s
                    nxt.append(peer)
        frontier = nxt
    return parents


def first_hops(topo: Topology, src: str) -> dict[str, int]:
    """For every other switch, the port of `src` on the shortest path to it (`breadth_first`)."""
    peers, hops = topo.switches[src].peers, {}
    for s, parent in breadth_first(topo, src).items():
        if parent is not None:
            hops[s] = peers[s] if parent == src else hops[parent]
    return hops


def port_toward(topo: Topology, src: str, host: str, hops: Mapping[str, int]) -> int:
    """The port of switch `src` toward `host`: its own port to it, else the first hop (`hops`,
    `first_hops(topo, src)`) toward the switch the host is linked to."""
    ports = topo.switches[src].hosts
    return ports[host] if host in ports else hops[topo.attachment(host)[0].name]


def _host_child(topo: Topology, host: str, rank: int, port: int) -> Child:
    h = topo.hosts[host]
    return Child(host, rank, port, h.mac, h.ip, False, 1)


def _tree(job: Job, root: str, nodes: Mapping[str, tuple[list[Child], Uplink | None]]) -> Tree:
    for s, (children, _) in nodes.items():
        if len(children) > MAX_WORKERS:
            raise TopologyError(
                f"job {job.id}: switch {s} would aggregate {len(children)} children (workers and "
                f"child switches); a switch aggregates at most {MAX_WORKERS} (the protocol's "
                "MAX_WORKERS)"
            )
    endpoints = {
        c.name: (s, c.rank)
        for s, (children, _) in nodes.items()
        for c in children
        if not c.is_switch
    }
    return Tree(
        job.id,
        root,
        {s: Node(s, tuple(children), uplink) for s, (children, uplink) in nodes.items()},
        endpoints,
    )
