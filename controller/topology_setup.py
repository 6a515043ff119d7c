"""Program every switch of a topology: addresses, L2 forwarding, flood groups and jobs.

The topology is a plain dict (what ina.topologies loads from YAML):
    {"switches": {"s1": {"grpc": "127.0.0.1:9559", "mac": "..", "ip": "..", "aggregator": true,
                         "hosts": {"h1": 1, ...}, "links": {"s2": 3, ...}}},
     "hosts": {"h1": {"mac": "..", "ip": ".."}},
     "jobs": [{"id": 0, "workers": ["h1", "h2"], "slots": 256}]}
Hosts behind another switch are reached through the port of the link towards it (`route`).
"""

from ina.controller.aggregation import Aggregation, Job, Worker
from ina.controller.client import ControllerError, SwitchConnection
from ina.p4src.protocol import Policy


def program_switch(agg: Aggregation, name: str, topo: dict) -> list[Job]:
    sw = topo["switches"][name]
    agg.set_switch_address(sw["mac"], sw["ip"])
    ports = {host: port for host, port in sw.get("hosts", {}).items()}
    for host in topo["hosts"]:
        if host not in ports:
            ports[host] = route(topo, name, host)
    hosts = [(topo["hosts"][h]["mac"], p) for h, p in ports.items()]
    hosts += [(other["mac"], route_to_switch(topo, name, peer)) for peer, other in topo["switches"].items()
              if peer != name]
    tree = spanning_tree(topo)
    uplinks = {port for peer, port in sw.get("links", {}).items() if frozenset((name, peer)) in tree}
    flood = sorted(set(sw.get("hosts", {}).values()) | uplinks)
    agg.install_forwarding(hosts, flood)
    jobs = []
    if sw.get("aggregator"):
        for spec in topo.get("jobs", []):
            workers = [Worker(rank, ports[h], topo["hosts"][h]["mac"], topo["hosts"][h]["ip"])
                       for rank, h in enumerate(spec["workers"])]
            jobs.append(agg.add_job(spec["id"], workers, spec.get("slots", 256),
                                    policy=Policy.parse(spec.get("policy", "sync"))))
    return jobs


def spanning_tree(topo: dict) -> set[frozenset]:
    """Switch links of a breadth-first spanning tree: flooding along it cannot loop."""
    names = list(topo["switches"])
    seen, frontier, tree = {names[0]}, [names[0]], set()
    while frontier:
        nxt = []
        for s in frontier:
            for peer in topo["switches"][s].get("links", {}):
                if peer not in seen:
                    seen.add(peer)
                    tree.add(frozenset((s, peer)))
                    nxt.append(peer)
        frontier = nxt
    return tree


def route_to_switch(topo: dict, src: str, dst: str) -> int:
    """The port of `src` on the shortest path to switch `dst` (breadth-first over switch links)."""
    first_hop = {peer: port for peer, port in topo["switches"][src].get("links", {}).items()}
    frontier = list(first_hop)
    seen = {src, *frontier}
    while frontier:
        nxt = []
        for s in frontier:
            if s == dst:
                return first_hop[s]
            for peer in topo["switches"][s].get("links", {}):
                if peer not in seen:
                    seen.add(peer)
                    first_hop[peer] = first_hop[s]
                    nxt.append(peer)
        frontier = nxt
    raise ControllerError(f"switch {dst} is not reachable from {src}")


def route(topo: dict, src: str, host: str) -> int:
    for name, sw in topo["switches"].items():
        if host in sw.get("hosts", {}):
            return route_to_switch(topo, src, name)
    raise ControllerError(f"host {host} is attached to no switch")


def program_topology(topo: dict, bmv2_json: dict, p4info, election_id: int = 1) -> dict[str, list[Job]]:
    """Push the pipeline to every switch and program it; returns the jobs per switch."""
    out = {}
    for name, sw in topo["switches"].items():
        with SwitchConnection(sw["grpc"], sw.get("device_id", 0), election_id) as conn:
            conn.set_pipeline(bmv2_json, p4info)
            out[name] = program_switch(Aggregation(conn), name, topo)
    return out
