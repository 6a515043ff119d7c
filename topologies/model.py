"""A topology's typed records (`Topology`, its switches, hosts, links and jobs), below both the
reader that builds them (topo.py) and the trees computed from them (tree.py)."""

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ina.p4src.protocol import MAX_WORKERS, Policy

SINGLE, HIERARCHICAL = "single", "hierarchical"  # a job's `aggregation`
AGGREGATIONS = (SINGLE, HIERARCHICAL)


class TopologyError(Exception):
    """A topology that does not describe a usable network; the message names the problem."""


@dataclass(frozen=True)
class Host:
    name: str
    mac: str
    ip: str


@dataclass(frozen=True)
class Switch:
    """A switch: its addresses, its P4Runtime address, and which port leads to each host (`hosts`)
    and to each neighbouring switch (`peers`)."""

    name: str
    mac: str
    ip: str
    grpc: str
    aggregator: bool
    hosts: Mapping[str, int]
    peers: Mapping[str, int]
    device_id: int = 0


@dataclass(frozen=True)
class Link:
    """A link between nodes `a` and `b`; `ports` has each switch end's port; `params` are Mininet's
    TCLink parameters (bw in Mbit/s, delay, loss in percent, max_queue_size)."""

    a: str
    b: str
    ports: Mapping[str, int]
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Job:
    """An aggregation job: its workers (hosts, in job order), slots, parsed policy, the switch
    that aggregates it (a hierarchical job's tree's root) and how (SINGLE or HIERARCHICAL)."""

    id: int
    workers: tuple[str, ...]
    slots: int
    policy: Policy
    aggregator: str
    epoch: int | None = (
        None  # None: the controller draws a fresh one (ina sim sets it from its seed)
    )
    aggregation: str = SINGLE


@dataclass(frozen=True)
class Topology:
    name: str
    switches: Mapping[str, Switch]
    hosts: Mapping[str, Host]
    links: tuple[Link, ...]
    jobs: tuple[Job, ...]
    extra_host: str | None = None  # the host `load(extra_host=True)` added (the baseline's server)

    def attachment(self, host: str) -> tuple[Switch, int]:
        """The switch `host` is linked to, and the port of that switch."""
        for sw in self.switches.values():
            if host in sw.hosts:
                return sw, sw.hosts[host]
        raise TopologyError(f"host {host} is linked to no switch")

    def with_policy(self, policy: Policy) -> "Topology":
        """Every job under `policy` (checked against each job's workers)."""
        for job in self.jobs:
            check_policy(job.id, policy, len(job.workers))
        return dataclasses.replace(
            self, jobs=tuple(dataclasses.replace(j, policy=policy) for j in self.jobs)
        )

    def with_aggregation(self, aggregation: str) -> "Topology":
        """Every job aggregated `aggregation` (SINGLE: at its aggregator, a tree's root), so one
        network and job compare both ways; refuses a single job of more than MAX_WORKERS."""
        for job in self.jobs:
            if aggregation == SINGLE and len(job.workers) > MAX_WORKERS:
                raise TopologyError(
                    f"job {job.id} has {len(job.workers)} workers; a single switch aggregates "
                    f"at most {MAX_WORKERS}"
                )
        return dataclasses.replace(
            self,
            jobs=tuple(dataclasses.replace(j, aggregation=aggregation) for j in self.jobs),
        )

    def with_grpc(self, addresses: Mapping[str, str]) -> "Topology":
        """The named switches' P4Runtime servers at these addresses (in-process servers on chosen ports)."""
        switches = {
            n: dataclasses.replace(sw, grpc=addresses[n]) if n in addresses else sw
            for n, sw in self.switches.items()
        }
        return dataclasses.replace(self, switches=switches)

    def with_link_params(self, params: Mapping[str, Any], host: str | None = None) -> "Topology":
        """`params` on the link of `host` (every link when None); refuses an unknown host."""
        if host is not None and host not in self.hosts:
            raise TopologyError(f"no such host {host} (hosts: {', '.join(self.hosts)})")
        links = tuple(
            dataclasses.replace(link, params={**link.params, **params})
            if host in (None, link.a, link.b)
            else link
            for link in self.links
        )
        return dataclasses.replace(self, links=links)


def check_policy(job_id: int, policy: Policy, workers: int) -> None:
    try:
        policy.check(workers)
    except ValueError as err:
        raise TopologyError(f"job {job_id}: {err} (its workers)") from None
