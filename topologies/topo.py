"""Topologies as data: load a YAML/JSON file (or generate a star) into one plain dict.

The dict is what the network (net.py) builds and what the controller's topology setup programs:
    {"name", "switches": {s: {"aggregator", "mac", "ip", "grpc", "hosts": {h: port}, "links": {s2: port}}},
     "hosts": {h: {"mac", "ip"}}, "links": [(a, b, params)], "jobs": [{"id", "workers", "slots", "policy"}]}
Nothing runs here: addresses and port numbers are assigned, nothing is started.
"""

from pathlib import Path

import yaml

from ina.p4src.protocol import Policy

TOPOLOGY_DIR = Path(__file__).resolve().parent
GRPC_BASE = 9559


class TopologyError(Exception):
    """A topology file that does not describe a usable network; the message names the problem."""


def builtin(name: str) -> Path:
    return TOPOLOGY_DIR / f"{name}.yaml"


def load(path: str | Path, workers: int | None = None, jobs: int | None = None,
         loss: float | None = None, slots: int | None = None, extra_host: bool = False) -> dict:
    """Load a topology; `extra_host` adds one more host on the first switch (the baseline's server)."""
    path = Path(path)
    if not path.exists() and builtin(str(path)).exists():
        path = builtin(str(path))
    try:
        spec = yaml.safe_load(path.read_text())
    except OSError as err:
        raise TopologyError(f"cannot read topology {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise TopologyError(f"{path}: not valid YAML/JSON: {err}") from None
    if not isinstance(spec, dict):
        raise TopologyError(f"{path}: a topology is a mapping with switches, hosts and links")
    if spec.get("generate") == "star":
        spec = star(workers or spec.get("workers", 4), spec.get("link", {}), jobs or 1)
    elif workers is not None and workers != len(spec.get("hosts", [])):
        raise TopologyError(f"{path} has a fixed set of {len(spec.get('hosts', []))} hosts; --workers applies to star")
    extra = None
    if extra_host:
        extra = f"h{len(spec.get('hosts', [])) + 1}"
        spec = {**spec, "hosts": [*spec.get("hosts", []), extra],
                "links": [*spec.get("links", []), [extra, next(iter(spec["switches"]))]]}
    topo = build(spec, loss, slots)
    topo["extra_host"] = extra
    return topo


def star(n: int, link: dict, jobs: int = 1) -> dict:
    if not 1 <= n <= 32 * jobs:
        raise TopologyError(f"a star needs 1..{32 * jobs} workers, got {n}")
    hosts = [f"h{i}" for i in range(1, n + 1)]
    groups = [hosts[j::jobs] for j in range(jobs)]
    if any(len(g) == 0 for g in groups):
        raise TopologyError(f"{jobs} jobs need at least {jobs} workers")
    return {"name": f"star{n}", "switches": {"s1": {"aggregator": True}}, "hosts": hosts,
            "links": [[h, "s1"] for h in hosts], "link": link,
            "jobs": [{"id": j, "workers": g, "slots": 256} for j, g in enumerate(groups)]}


def build(spec: dict, loss: float | None = None, slots: int | None = None) -> dict:
    """Assign MACs, IPs, port numbers and gRPC addresses; check every reference."""
    switch_names = list(spec.get("switches") or {})
    host_names = list(spec.get("hosts") or [])
    if not switch_names:
        raise TopologyError("the topology has no switches")
    default_link = dict(spec.get("link") or {})
    if loss is not None:
        default_link["loss"] = loss * 100  # Mininet takes percent
    topo = {"name": spec.get("name", "topology"), "switches": {}, "hosts": {}, "links": [], "jobs": []}
    for i, h in enumerate(host_names, 1):
        topo["hosts"][h] = {"mac": f"00:00:00:00:00:{i:02x}", "ip": f"10.0.0.{i}"}
    for i, s in enumerate(switch_names, 1):
        opts = (spec["switches"][s] or {})
        topo["switches"][s] = {"aggregator": bool(opts.get("aggregator")), "mac": f"02:aa:00:00:00:{i:02x}",
                               "ip": f"10.0.0.{255 - i}", "grpc": f"127.0.0.1:{GRPC_BASE + i - 1}",
                               "device_id": 0, "hosts": {}, "links": {}}
    next_port = dict.fromkeys(switch_names, 1)
    for link in spec.get("links", []):
        a, b, *rest = link
        params = {**default_link, **(rest[0] if rest else {})}
        for end in (a, b):
            if end not in topo["hosts"] and end not in topo["switches"]:
                raise TopologyError(f"link {a}-{b}: unknown node '{end}'")
        ports = {}
        for end, other in ((a, b), (b, a)):
            if end in topo["switches"]:
                ports[end] = next_port[end]
                next_port[end] += 1
                kind = "hosts" if other in topo["hosts"] else "links"
                topo["switches"][end][kind][other] = ports[end]
        topo["links"].append({"a": a, "b": b, "ports": ports, "params": params})
    for job in spec.get("jobs", []):
        unknown = [w for w in job["workers"] if w not in topo["hosts"]]
        if unknown:
            raise TopologyError(f"job {job['id']}: unknown workers {unknown}")
        policy = str(job.get("policy", "sync"))
        try:
            Policy.parse(policy)
        except ValueError as err:
            raise TopologyError(f"job {job['id']}: {err}") from None
        topo["jobs"].append({"id": job["id"], "workers": list(job["workers"]),
                             "slots": slots or job.get("slots", 256), "policy": policy})
    aggregators = [s for s, v in topo["switches"].items() if v["aggregator"]]
    if topo["jobs"] and len(aggregators) != 1:
        raise TopologyError(f"exactly one switch must aggregate (aggregator: true); found {len(aggregators)}")
    return topo
