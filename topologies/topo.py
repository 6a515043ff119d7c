"""Topologies as typed data, read once: a YAML/JSON file or a generator into a frozen `Topology`.

`ina run` (net.py builds it in Mininet, topology_setup.py programs it) and `ina sim`
(sim/allreduce.py) share the one object. Sources (`load`): a file, a built-in name (star, leafspine,
leafspine_hier, fattree4: the YAMLs beside this module, with or without .yaml), `fattree:K` (a
k-ary fat-tree, K even: K^3/4 hosts; K^2/4 core, K^2/2 aggregation and K^2/2 edge switches) or
`leafspine:LxH,S` (L leaves of H hosts, S spines), either with `:hierarchical` after it (its jobs
aggregate hierarchically). Nothing runs here: addresses and port numbers are assigned, every
reference and limit checked (errors name the problem in one line), each job's completion policy
and aggregation parsed once, and each job's aggregation tree (topologies/tree.py) checked.

Addresses: host i (from 1, in file order) is 00:00:00:00:ii:ii and 10.0.0.0 + i; switch i is
02:aa:00:00:ii:ii and 10.0.255.255 - i, all in 10.0.0.0/16 (`PREFIX_LEN`). A switch's ports count
from 1 in link order. Job j aggregates on the switch its `aggregator` names, else on the
(j mod A)-th of the A switches marked `aggregator: true`; a job with `aggregation: hierarchical`
aggregates over a tree of switches rooted there (topologies/tree.py), `single` (the default) on
that switch alone.
"""

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path

import yaml

from ina.p4src.protocol import MAX_JOBS, MAX_PORT, MAX_TREE_WORKERS, MAX_WORKERS, Policy
from ina.topologies.model import (
    AGGREGATIONS,
    HIERARCHICAL,
    SINGLE,
    Host,
    Job,
    Link,
    Switch,
    Topology,
    TopologyError,
    check_policy,
)
from ina.topologies.tree import job_trees

TOPOLOGY_DIR = Path(__file__).resolve().parent
GRPC_BASE = 9559
PREFIX_LEN = 16  # every host and switch address is in 10.0.0.0/16
MAX_NODES = (1 << 16) - 2  # hosts and switches together: their addresses stay apart within the /16
DEFAULT_SLOTS = 256
_FATTREE = re.compile(rf"fattree:(\d+)(:{HIERARCHICAL})?")
_LEAFSPINE = re.compile(rf"leafspine:(\d+)x(\d+),(\d+)(:{HIERARCHICAL})?")


def is_star(source: str | Path) -> bool:
    """Whether `source` names the built-in star, the one topology sized by a worker count."""
    return str(source).removesuffix(".yaml") == "star"


def builtin(name: str) -> Path:
    return TOPOLOGY_DIR / f"{name.removesuffix('.yaml')}.yaml"


def load(
    source: str | Path,
    workers: int | None = None,
    jobs: int | None = None,
    loss: float | None = None,
    slots: int | None = None,
    extra_host: bool = False,
) -> Topology:
    """Read a topology from `source` (a file, a built-in name, fattree:K or leafspine:LxH,S, the
    generated ones with an optional `:hierarchical`).
    `workers` sizes a star (other topologies have their hosts); `jobs` splits the workers into that
    many jobs, ranks dealt round-robin (as a star's); `extra_host` adds one more host on the first
    switch (the baseline's server)."""
    spec = generated(str(source), jobs) or read_file(Path(source))
    if spec.get("generate") == "star":
        spec = star(workers or spec.get("workers", 4), spec.get("link", {}), jobs or 1)
    elif workers is not None and workers != len(spec.get("hosts", [])):
        raise TopologyError(
            f"{source} has a fixed set of {len(spec.get('hosts', []))} hosts; --workers applies to star"
        )
    elif jobs is not None and jobs != len(spec.get("jobs") or []):
        spec = {**spec, "jobs": split_jobs(spec, jobs)}
    extra = None
    if extra_host:
        extra = f"h{len(spec.get('hosts', [])) + 1}"
        spec = {
            **spec,
            "hosts": [*spec.get("hosts", []), extra],
            "links": [*spec.get("links", []), [extra, next(iter(spec["switches"]))]],
        }
    topo = dataclasses.replace(build(spec, loss, slots), extra_host=extra)
    job_trees(topo)  # refuses a switch with more children than its bitmap has bits
    return topo


def read_file(path: Path) -> dict:
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
    if spec.get("generate") != "star":
        check_shape(spec)
    return spec


def generated(source: str, jobs: int | None) -> dict | None:
    """The spec of a generated source (fattree:K, leafspine:LxH,S, either with :hierarchical), or
    None for a file."""
    if m := _FATTREE.fullmatch(source):
        return fattree(int(m[1]), jobs, HIERARCHICAL if m[2] else SINGLE)
    if m := _LEAFSPINE.fullmatch(source):
        return leafspine(int(m[1]), int(m[2]), int(m[3]), jobs, HIERARCHICAL if m[4] else SINGLE)
    if source.startswith(("fattree:", "leafspine:")) or source == "fattree":
        raise TopologyError(
            f"bad topology {source!r}: use fattree:K (K even, e.g. fattree:4) or leafspine:LxH,S "
            "(L leaves of H hosts, S spines, e.g. leafspine:8x32,4), either with :hierarchical "
            "after it for hierarchical jobs"
        )
    return None


def star(n: int, link: dict, jobs: int = 1) -> dict:
    if n < 1:
        raise TopologyError(f"a star needs at least 1 worker, got {n}")
    hosts = [f"h{i}" for i in range(1, n + 1)]
    return {
        "name": f"star{n}",
        "switches": {"s1": {"aggregator": True}},
        "hosts": hosts,
        "links": [[h, "s1"] for h in hosts],
        "link": link,
        "jobs": deal(hosts, jobs),
    }


def leafspine(
    leaves: int, per_leaf: int, spines: int, jobs: int | None = None, aggregation: str = SINGLE
) -> dict:
    """Leaves s1..sL, spines after them (each aggregates: job j on spine j mod S, a hierarchical
    job's root), every leaf linked to every spine, per_leaf hosts on each leaf."""
    if min(leaves, per_leaf, spines) < 1:
        raise TopologyError(
            f"leafspine:{leaves}x{per_leaf},{spines}: every count must be at least 1"
        )
    leaf = [f"s{i}" for i in range(1, leaves + 1)]
    spine = [f"s{i}" for i in range(leaves + 1, leaves + spines + 1)]
    hosts = [f"h{i}" for i in range(1, leaves * per_leaf + 1)]
    links = [[h, leaf[i // per_leaf]] for i, h in enumerate(hosts)] + [
        [lf, sp] for lf in leaf for sp in spine
    ]
    switches = {s: {"aggregator": s in spine} for s in leaf + spine}
    return {
        "name": f"leafspine:{leaves}x{per_leaf},{spines}{_suffix(aggregation)}",
        "switches": switches,
        "hosts": hosts,
        "links": links,
        "jobs": deal(hosts, jobs or fewest_jobs(len(hosts), aggregation), aggregation),
    }


def fattree(k: int, jobs: int | None = None, aggregation: str = SINGLE) -> dict:
    """A k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2
    core switches, k/2 hosts per edge switch. Switches are numbered core, then aggregation, then
    edge; the core switches aggregate (job j on core j mod (k/2)^2, a hierarchical job's root)."""
    if k < 2 or k % 2:
        raise TopologyError(f"fattree:{k}: K must be even and at least 2")
    half = k // 2
    core = [f"s{i}" for i in range(1, half * half + 1)]
    agg = [[f"s{len(core) + p * half + i + 1}" for i in range(half)] for p in range(k)]
    first_edge = len(core) + k * half
    edge = [[f"s{first_edge + p * half + i + 1}" for i in range(half)] for p in range(k)]
    hosts = [f"h{i}" for i in range(1, k * half * half + 1)]
    links = [
        [hosts[(p * half + e) * half + h], edge[p][e]]
        for p in range(k)
        for e in range(half)
        for h in range(half)
    ]
    links += [[edge[p][e], agg[p][a]] for p in range(k) for e in range(half) for a in range(half)]
    links += [
        [agg[p][a], core[a * half + c]] for p in range(k) for a in range(half) for c in range(half)
    ]
    switches = {
        s: {"aggregator": s in core}
        for s in [*core, *(s for pod in agg for s in pod), *(s for pod in edge for s in pod)]
    }
    return {
        "name": f"fattree:{k}{_suffix(aggregation)}",
        "switches": switches,
        "hosts": hosts,
        "links": links,
        "jobs": deal(hosts, jobs or fewest_jobs(len(hosts), aggregation), aggregation),
    }


def _suffix(aggregation: str) -> str:
    return "" if aggregation == SINGLE else f":{aggregation}"


def max_job_workers(aggregation: str) -> int:
    """A job's most workers: one switch's bitmap, or a tree's."""
    return MAX_TREE_WORKERS if aggregation == HIERARCHICAL else MAX_WORKERS


def fewest_jobs(hosts: int, aggregation: str = SINGLE) -> int:
    """The fewest jobs that hold every host (a job has at most `max_job_workers`)."""
    return -(-hosts // max_job_workers(aggregation))


def deal(hosts: list[str], jobs: int, aggregation: str = SINGLE) -> list[dict]:
    """`hosts` dealt round-robin into `jobs` jobs (host i to job i mod jobs), ids from 0."""
    if not 1 <= jobs <= len(hosts):
        raise TopologyError(f"{len(hosts)} workers make 1..{len(hosts)} jobs, got {jobs}")
    return [
        {
            "id": j,
            "workers": hosts[j::jobs],
            **({} if aggregation == SINGLE else {"aggregation": aggregation}),
        }
        for j in range(jobs)
    ]


def split_jobs(spec: dict, jobs: int) -> list[dict]:
    """A file's workers (its jobs' hosts, else every host) dealt into `jobs` jobs, each with the
    first job's slots, policy and aggregation."""
    declared = spec.get("jobs") or []
    workers = [h for job in declared for h in job["workers"]] or list(spec.get("hosts") or [])
    first = {
        k: v
        for k, v in (declared[0] if declared else {}).items()
        if k in ("slots", "policy", "aggregation")
    }
    return [{**first, **job} for job in deal(workers, jobs)]


def check_shape(spec: dict) -> None:
    """The spec's parts have the types a topology needs (a file may hold anything)."""

    def names(value) -> bool:
        return isinstance(value, list) and all(isinstance(n, str) for n in value)

    switches, links, jobs = spec.get("switches"), spec.get("links") or [], spec.get("jobs") or []
    if not isinstance(switches, dict) or not all(
        isinstance(o, dict | None) for o in switches.values()
    ):
        raise TopologyError(
            "switches: a mapping of switch names to their options, e.g. {s1: {aggregator: true}}"
        )
    if not names(spec.get("hosts") or []):
        raise TopologyError("hosts: a list of host names, e.g. [h1, h2]")
    if not isinstance(spec.get("link") or {}, dict):
        raise TopologyError("link: a mapping of link parameters, e.g. {bw: 1000}")
    for link in links if isinstance(links, list) else [links]:
        if not (
            isinstance(link, list)
            and 2 <= len(link) <= 3
            and names(link[:2])
            and (len(link) == 2 or isinstance(link[2], dict))
        ):
            raise TopologyError(
                f"links: each link is [A, B] or [A, B, {{parameters}}], got {link!r:.60}"
            )
    for job in jobs if isinstance(jobs, list) else [jobs]:
        if not (isinstance(job, dict) and names(job.get("workers"))):
            raise TopologyError(
                f"jobs: each job is a mapping with a list of workers, got {job!r:.60}"
            )


def build(spec: dict, loss: float | None = None, slots: int | None = None) -> Topology:
    """Assign MACs, IPs, port numbers and gRPC addresses; check every reference and limit."""
    switch_specs = spec.get("switches") or {}
    host_names = list(spec.get("hosts") or [])
    if not switch_specs:
        raise TopologyError("the topology has no switches")
    if len(switch_specs) + len(host_names) > MAX_NODES:
        raise TopologyError(f"a topology has at most {MAX_NODES} hosts and switches together")
    default_link = dict(spec.get("link") or {})
    if loss is not None:
        default_link["loss"] = loss * 100  # Mininet takes percent
    hosts = {h: Host(h, _mac(0, i), _ip(i)) for i, h in enumerate(host_names, 1)}
    ports: dict[str, dict[str, int]] = {s: {} for s in switch_specs}  # switch -> {neighbour: port}
    links, host_links = [], {h: 0 for h in hosts}
    for link in spec.get("links") or []:
        a, b, *rest = link
        for end in (a, b):
            if end not in hosts and end not in ports:
                raise TopologyError(f"link {a}-{b}: unknown node '{end}'")
        if a in hosts and b in hosts:
            raise TopologyError(f"link {a}-{b} joins two hosts; a host links to a switch")
        if a == b or b in ports.get(a, {}):
            raise TopologyError(
                f"link {a}-{b}: {'a node cannot link to itself' if a == b else 'a second link'}"
            )
        ends = {}
        for end, other in ((a, b), (b, a)):
            if end in ports:
                ports[end][other] = ends[end] = len(ports[end]) + 1
                if ends[end] > MAX_PORT:
                    raise TopologyError(
                        f"switch {end} has more than {MAX_PORT} links (its ports are 1..{MAX_PORT})"
                    )
            else:
                host_links[end] += 1
        links.append(Link(a, b, ends, {**default_link, **(rest[0] if rest else {})}))
    for h, count in host_links.items():
        if count != 1:
            raise TopologyError(
                f"host {h} is linked to no switch"
                if not count
                else f"host {h} has {count} links; a host has one, to its switch"
            )
    switches = {}
    for i, (s, opts) in enumerate(switch_specs.items(), 1):
        switches[s] = Switch(
            s,
            _mac(0x02AA, i),
            _ip((1 << 16) - 1 - i),
            f"127.0.0.1:{GRPC_BASE + i - 1}",
            bool((opts or {}).get("aggregator")),
            {n: p for n, p in ports[s].items() if n in hosts},
            {n: p for n, p in ports[s].items() if n in ports},
        )
    _check_connected(switches)
    jobs = read_jobs(spec.get("jobs") or [], hosts, switches, slots)
    return Topology(str(spec.get("name", "topology")), switches, hosts, tuple(links), jobs)


def read_jobs(
    specs: list[dict], hosts: Mapping[str, Host], switches: Mapping[str, Switch], slots: int | None
) -> tuple[Job, ...]:
    aggregators = [s for s, sw in switches.items() if sw.aggregator]
    jobs, seen = [], set()
    for index, job in enumerate(specs):
        job_id, workers = job.get("id", index), list(job.get("workers") or [])
        if not isinstance(job_id, int) or not 0 <= job_id < MAX_JOBS or job_id in seen:
            raise TopologyError(
                f"job {job_id}: a job id is an integer in 0..{MAX_JOBS - 1}, once per topology"
            )
        seen.add(job_id)
        unknown = [w for w in workers if w not in hosts]
        if unknown:
            raise TopologyError(f"job {job_id}: unknown workers {unknown}")
        aggregation = job.get("aggregation", SINGLE)
        if aggregation not in AGGREGATIONS:
            raise TopologyError(
                f"job {job_id}: aggregation {aggregation!r} is none of {', '.join(AGGREGATIONS)}"
            )
        most = max_job_workers(aggregation)
        if not 1 <= len(workers) <= most or len(set(workers)) != len(workers):
            raise TopologyError(
                f"job {job_id} has {len(workers)} workers; a job has 1..{MAX_WORKERS} distinct "
                "ones (the protocol's MAX_WORKERS)"
                if aggregation == SINGLE
                else f"job {job_id} has {len(workers)} workers; a hierarchical job has "
                f"1..{MAX_TREE_WORKERS} distinct ones"
            )
        try:
            policy = Policy.parse(str(job.get("policy", "sync")))
        except ValueError as err:
            raise TopologyError(f"job {job_id}: {err}") from None
        check_policy(job_id, policy, len(workers))
        aggregator = job.get("aggregator") or (
            aggregators[len(jobs) % len(aggregators)] if aggregators else None
        )
        if aggregator not in switches:
            raise TopologyError(
                f"job {job_id}: no aggregator (mark a switch aggregator: true or name one in the job)"
                if aggregator is None
                else f"job {job_id}: aggregator '{aggregator}' is no switch"
            )
        jobs.append(
            Job(
                job_id,
                tuple(workers),
                slots or job.get("slots", DEFAULT_SLOTS),
                policy,
                aggregator,
                aggregation=aggregation,
            )
        )
    return tuple(jobs)


def _check_connected(switches: Mapping[str, Switch]) -> None:
    """Every switch reachable from the first over switch links (forwarding needs a path)."""
    first = next(iter(switches))
    seen, frontier = {first}, [first]
    while frontier:
        peer = frontier.pop()
        for s in switches[peer].peers:
            if s not in seen:
                seen.add(s)
                frontier.append(s)
    for s in switches:
        if s not in seen:
            raise TopologyError(f"switch {s} is not reachable from {first} over switch links")


def _mac(prefix: int, i: int) -> str:
    return ":".join(f"{b:02x}" for b in ((prefix << 32) | i).to_bytes(6, "big"))


def _ip(i: int) -> str:
    """10.0.0.0 + i."""
    return ".".join(str(b) for b in ((10 << 24) | i).to_bytes(4, "big"))
