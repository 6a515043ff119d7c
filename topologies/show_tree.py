"""`ina ctl show-tree JOB`: a job's aggregation tree as the topology defines it (topologies/tree.py),
beside what each of its switches holds for the job, read back over P4Runtime where it answers.

Every switch of the tree is read at once (one thread each), so switches that do not answer cost one
--timeout in all. A switch's read-back matches when the job is installed there with exactly the
tree's children (rank, port, MAC, IPv4 address, and a child switch's weight) and, where the
controller reads one back, the tree's parent.
"""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict

from ina.controller.aggregation import Aggregation
from ina.controller.aggregation import Job as InstalledJob
from ina.controller.client import ControllerError, SwitchConnection
from ina.topologies.topo import Job, Switch, Topology
from ina.topologies.tree import Node, Tree, job_tree

MAX_READERS = 16  # switches read at once


def tree_report(topo: Topology, job: Job, read: Callable[[Switch], dict] | None = None) -> dict:
    """The job's tree, per switch its parent and children, and with `read` (a switch -> its job
    read back: {"job": ...}, {"missing": True} or {"error": ...}) what each switch holds."""
    tree = job_tree(topo, job)
    nodes = [tree.nodes[s] for s in tree.nodes]
    reads = [None] * len(nodes)
    if read is not None:
        with ThreadPoolExecutor(min(MAX_READERS, len(nodes))) as pool:
            reads = list(pool.map(read, (topo.switches[n.switch] for n in nodes)))
    return {
        "job": job.id,
        "topology": topo.name,
        "aggregation": job.aggregation,
        "root": tree.root,
        "workers": tree.workers,
        "switches": [_node(topo, tree, n, r) for n, r in zip(nodes, reads, strict=True)],
    }


def _node(topo: Topology, tree: Tree, node: Node, read: dict | None) -> dict:
    out = {
        "switch": node.switch,
        "grpc": topo.switches[node.switch].grpc,
        "parent": asdict(node.uplink) if node.uplink else None,
        "children": [asdict(c) for c in node.children],
        "workers": node.workers,
    }
    if read is not None:
        out["read_back"] = read
        if "job" in read:
            out["differences"] = differences(node, read["job"])
    return out


def differences(node: Node, installed: dict) -> list[str]:
    """How the job installed on a switch (show-jobs' dict) differs from the tree's node."""
    found = {w["rank"]: w for w in installed["workers"]}
    out = []
    for c in node.children:
        want = (c.port, c.mac, c.ip, c.workers if c.is_switch else 0)
        w = found.pop(c.rank, None)
        got = w and (w["port"], w["mac"], w["ip"], w.get("aggregates", 0))
        if got != want:
            out.append(
                f"rank {c.rank}: the tree has {c.name} (port {c.port}, {c.ip}, weight {want[3]}), "
                + (
                    "the switch has none"
                    if w is None
                    else f"the switch port {w['port']}, {w['ip']}, weight {got[3]}"
                )
            )
    out += [
        f"rank {r}: the switch has {w['ip']} (port {w['port']}), the tree none"
        for r, w in found.items()
    ]
    if "parent" in installed:
        want_parent = (
            None
            if node.uplink is None
            else {k: getattr(node.uplink, k) for k in ("port", "mac", "ip", "rank")}
        )
        if installed["parent"] != want_parent:
            out.append(f"parent: the tree has {want_parent}, the switch {installed['parent']}")
    return out


def reader(job_id: int, timeout: float, **tls) -> Callable[[Switch], dict]:
    """Reads one switch's entry of job `job_id` without a stream (no election id)."""

    def read(sw: Switch) -> dict:
        try:
            with SwitchConnection(
                sw.grpc, sw.device_id, None, timeout, deadline=timeout, **tls
            ) as conn:
                conn.adopt_pipeline()
                jobs = [j for j in Aggregation(conn).jobs() if j.job_id == job_id]
        except ControllerError as err:
            return {"error": str(err)}
        if not jobs:
            return {"missing": True}
        return {"job": job_dict(jobs[0])}

    return read


def job_dict(job: InstalledJob) -> dict:
    """A job as a switch holds it, in JSON's terms (show-jobs' and show-tree's form)."""
    return {**asdict(job), "policy": str(job.policy)}


def render(report: dict) -> str:
    """The tree top-down, one line per switch and worker, indented by depth."""
    by_name = {n["switch"]: n for n in report["switches"]}
    lines = [
        f"job {report['job']}: {report['aggregation']}, {report['workers']} workers, root "
        f"{report['root']} (topology {report['topology']})"
    ]

    def visit(name: str, depth: int) -> None:
        node = by_name[name]
        up = node["parent"]
        where = (
            "root"
            if up is None
            else f"rank {up['rank']} at {up['parent']}, uplink port {up['port']}"
        )
        line = f"{'  ' * depth}{name} ({where}; {node['workers']} workers below)"
        if "read_back" in node:
            line += f"  read back: {_read_text(node)}"
        lines.append(line)
        for c in node["children"]:
            if c["is_switch"]:
                visit(c["name"], depth + 1)
            else:
                lines.append(
                    f"{'  ' * (depth + 1)}{c['name']} (rank {c['rank']}, port {c['port']})"
                )

    visit(report["root"], 0)
    return "\n".join(lines)


def _read_text(node: dict) -> str:
    read = node["read_back"]
    if "error" in read:
        return f"unreachable ({read['error']})"
    if "missing" in read:
        return "the job is not installed"
    if node["differences"]:
        return "differs: " + "; ".join(node["differences"])
    return f"as the tree says (epoch {read['job']['epoch']:#010x})"
