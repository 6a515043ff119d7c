"""Program every switch of a topology (ina.topologies.topo's `Topology`): addresses, L2 forwarding,
flood groups, and the jobs it aggregates.

Forwarding is by destination MAC along one shortest path: hosts behind another switch, and other
switches, are reached through the port of the first hop of a breadth-first search over switch
links (`route_to_switch`: of equal paths, the one through the lowest port), so a multipath fabric
(leaf-spine, fat-tree) uses one path per (switch, destination) and no ECMP. Floods follow a
breadth-first spanning tree, so they cannot loop.
"""

from ina.controller.aggregation import Aggregation, Job, Worker
from ina.controller.allocators import Allocator
from ina.controller.client import ControllerError, SwitchConnection
from ina.topologies.topo import Topology


def program_switch(agg: Aggregation, name: str, topo: Topology) -> list[Job]:
    sw = topo.switches[name]
    agg.set_switch_address(sw.mac, sw.ip)
    hops = next_hops(topo, name)
    ports = {
        h: sw.hosts[h] if h in sw.hosts else hops[topo.attachment(h)[0].name] for h in topo.hosts
    }
    hosts = [(topo.hosts[h].mac, p) for h, p in ports.items()]
    hosts += [(other.mac, hops[peer]) for peer, other in topo.switches.items() if peer != name]
    tree = spanning_tree(topo)
    uplinks = {port for peer, port in sw.peers.items() if frozenset((name, peer)) in tree}
    agg.install_forwarding(hosts, sorted(set(sw.hosts.values()) | uplinks))
    return [
        agg.add_job(
            job.id,
            [
                Worker(rank, ports[h], topo.hosts[h].mac, topo.hosts[h].ip)
                for rank, h in enumerate(job.workers)
            ],
            job.slots,
            job.epoch,
            job.policy,
        )
        for job in topo.jobs
        if job.aggregator == name
    ]


def spanning_tree(topo: Topology) -> set[frozenset]:
    """Switch links of a breadth-first spanning tree: flooding along it cannot loop."""
    names = list(topo.switches)
    seen, frontier, tree = {names[0]}, [names[0]], set()
    while frontier:
        nxt = []
        for s in frontier:
            for peer in topo.switches[s].peers:
                if peer not in seen:
                    seen.add(peer)
                    tree.add(frozenset((s, peer)))
                    nxt.append(peer)
        frontier = nxt
    return tree


def next_hops(topo: Topology, src: str) -> dict[str, int]:
    """For every other switch, the port of `src` on the shortest path to it (breadth-first over
    switch links, peers in port order: of equal paths, the first found)."""
    first_hop = dict(topo.switches[src].peers)
    frontier = list(first_hop)
    seen = {src, *frontier}
    while frontier:
        nxt = []
        for s in frontier:
            for peer in topo.switches[s].peers:
                if peer not in seen:
                    seen.add(peer)
                    first_hop[peer] = first_hop[s]
                    nxt.append(peer)
        frontier = nxt
    return first_hop


def route_to_switch(topo: Topology, src: str, dst: str) -> int:
    """The port of `src` on the shortest path to switch `dst`."""
    try:
        return next_hops(topo, src)[dst]
    except KeyError:
        raise ControllerError(f"switch {dst} is not reachable from {src}") from None


def route(topo: Topology, src: str, host: str) -> int:
    """The port of `src` toward `host`."""
    sw, port = topo.attachment(host)
    return port if sw.name == src else route_to_switch(topo, src, sw.name)


def program_topology(
    topo: Topology,
    bmv2_json: dict,
    p4info,
    election_id: int = 1,
    allocator: Allocator | None = None,
) -> dict[str, list[Job]]:
    """Push the pipeline to every switch and program it, each job's slots placed by `allocator`
    (default first fit); returns the jobs per switch."""
    out = {}
    for name, sw in topo.switches.items():
        with SwitchConnection(sw.grpc, sw.device_id, election_id) as conn:
            conn.set_pipeline(bmv2_json, p4info)
            out[name] = program_switch(Aggregation(conn, allocator), name, topo)
    return out
