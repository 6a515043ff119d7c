"""The aggregation API: jobs, forwarding, loss emulation and statistics, in docs/protocol.md's terms.

All state lives in the switch: `jobs()` rebuilds the job list from the jobs/admission/rewrite
tables, so any process (an `ina ctl` call, the runner) sees the same jobs. No job operation writes
a register: a job's epoch (in its table entry) makes slots another run left behind empty for it,
so the same code runs on targets without P4Runtime register writes (simple_switch_grpc).
"""

import argparse
from dataclasses import astuple, dataclass, field, fields, replace

from ina.args import probability
from ina.controller.allocators import FIRST_FIT, Allocator, PoolFull, Range, best_effort
from ina.controller.client import ControllerError, SwitchConnection, TableEntry
from ina.p4rt import codec
from ina.p4src.protocol import (
    EPOCH_MAX,
    FLOOD_GROUP,
    MAX_JOB_WORKERS,
    MAX_JOBS,
    MAX_WORKERS,
    SYNC,
    UDP_PORT,
    Policy,
    job_group,
    new_epoch,
    register_index,
    worker_rid,
)

JOB_COUNTERS = (
    "InaIngress.job_accepted",
    "InaIngress.job_completed",
    "InaEgress.job_results_sent",
    "InaIngress.job_retrans_answered",
    "InaIngress.job_duplicates",
    "InaIngress.job_out_of_range",
    "InaIngress.job_wrong_epoch",
    "InaIngress.job_late",
    "InaIngress.job_stale",
    "InaIngress.job_timeouts",
    "InaIngress.job_partials_sent",
    "InaIngress.job_parent_results",
    "InaIngress.job_parent_refused",
    "InaIngress.job_fallback_notices",
    "InaIngress.job_fallback_forwarded",
    "InaIngress.job_status_relayed",
)
PORT_COUNTERS = (
    "InaIngress.port_refused",
    "InaIngress.port_malformed",
    "InaIngress.port_drop_sim_in",
    "InaEgress.port_drop_sim_out",
)
DROP_TABLES = {
    "ingress": ("InaIngress.drop_sim_in", "sm.ingress_port"),
    "egress": ("InaEgress.drop_sim_out", "sm.egress_port"),
}
THRESHOLD_SCALE = (
    0xFFFFFFFF  # the drop simulator draws in [0, 0xFFFFFFFE]: this threshold drops all
)


@dataclass(frozen=True)
class Worker:
    """A child of the switch in a job: a worker host, or (aggregates > 0) a child switch whose
    partial sums hold up to that many workers (docs/protocol.md, "Hierarchical aggregation")."""

    rank: int
    port: int
    mac: str
    ip: str
    udp_port: int = UDP_PORT
    aggregates: int = 0

    @property
    def weight(self) -> int:
        """The workers this child's contributions hold at most."""
        return self.aggregates or 1


@dataclass(frozen=True)
class Parent:
    """The switch a job's partial sums go up to: its port on this switch, its addresses, and this
    switch's rank among its children."""

    port: int
    mac: str
    ip: str
    rank: int


@dataclass(frozen=True)
class Fallback:
    """A job's host fallback server (best effort, docs/protocol.md "Best effort and the host
    fallback"): its port on this switch, its addresses and UDP port. It sums the chunks whose
    slot/set another job holds, so the job may share slots with others."""

    port: int
    mac: str
    ip: str
    udp_port: int


@dataclass
class Job:
    job_id: int
    base: int
    num_slots: int
    epoch: int  # the per-run token workers put in every UPDATE; the switch checks and echoes it
    workers: list[Worker] = field(default_factory=list)
    policy: Policy = SYNC
    parent: Parent | None = None
    job_workers: int = 0  # the whole job's workers (0: the children's weights, one switch)
    fallback: Fallback | None = None

    @property
    def mgid(self) -> int:
        return job_group(self.job_id)

    @property
    def below(self) -> int:
        """The workers this switch's children hold."""
        return sum(w.weight for w in self.workers)

    @property
    def size(self) -> int:
        """The whole job's workers: the scale of its quorum."""
        return self.job_workers or self.below


@dataclass(frozen=True)
class SlotState:
    """One slot/set's registers. `current` is False when the cell holds another run's epoch: the
    switch then treats it as empty for this job, whatever the other registers hold."""

    bitmap: int
    count: int
    exponent: int
    values: list[int]
    epoch: int
    current: bool


@dataclass(frozen=True)
class BurstLoss:
    """Bursty loss on one port and direction, the drop simulator's Gilbert-Elliott mode: a packet is
    lost with its state's probability (loss_good, loss_bad), then the state moves good->bad with
    probability p_gb or bad->good with p_bg (netem's gemodel p, r, 1-h, 1-k)."""

    loss_good: float
    loss_bad: float
    p_gb: float
    p_bg: float

    @classmethod
    def parse(cls, text: str) -> "BurstLoss":
        """GOOD,BAD,P_GB,P_BG: the argparse type of every CLI option that takes a burst model."""
        parts = text.split(",")
        try:
            if len(parts) != len(fields(cls)):
                raise argparse.ArgumentTypeError
            return cls(*map(probability, parts))
        except argparse.ArgumentTypeError:
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise argparse.ArgumentTypeError(
                f"expected GOOD,BAD,P_GB,P_BG: four numbers in [0.0, 1.0], got {shown!r}"
            ) from None

    def __str__(self) -> str:
        return ",".join(f"{x:g}" for x in astuple(self))


def drop_threshold(probability: float) -> int:
    """The one formula from a probability to a drop-simulator threshold (loss or transition)."""
    if not 0.0 <= probability <= 1.0:
        raise ControllerError(f"drop probability {probability} is not between 0 and 1")
    return round(probability * THRESHOLD_SCALE)


def drop_probability(threshold: int) -> float:
    """drop_threshold's inverse, to 9 digits: the threshold's step is 2.3e-10, so a probability set
    with fewer digits reads back as written."""
    return round(threshold / THRESHOLD_SCALE, 9)


class Aggregation:
    def __init__(self, conn: SwitchConnection, allocator: Allocator | None = None):
        """`allocator` places each new job's slots (controller/allocators.py; default first fit)."""
        self.conn = conn
        self.allocator = allocator or FIRST_FIT
        schema = conn.schema or conn.adopt_pipeline()
        try:
            self.pool_size = schema.register("InaIngress.slot_bitmap").size // 2
            self.elems = len(
                [r for r in schema.all("register") if r.name.startswith("InaIngress.slot_acc_")]
            )
        except KeyError:
            raise ControllerError(
                "the switch does not run ina's aggregation program (p4src/aggregate.p4)"
            ) from None

    # --- switch as a network citizen -----------------------------------------------------
    def set_switch_address(self, mac: str, ip: str) -> None:
        self.conn.set_default(
            "InaIngress.switch_config", "InaIngress.set_switch_addr", {"mac": mac, "ip": ip}
        )

    def install_forwarding(
        self, hosts: list[tuple[str, int]], flood_ports: list[int] | None = None
    ) -> None:
        """L2 entries for (mac, port) pairs and the flood group over `flood_ports` (default: host ports)."""
        ports = sorted(set(flood_ports if flood_ports is not None else [p for _m, p in hosts]))
        existing = self.conn.read_multicast_groups()
        self.conn.set_multicast_group(
            FLOOD_GROUP, [(p, 0) for p in ports], 2 if FLOOD_GROUP in existing else 1
        )
        entries = [
            TableEntry(
                "InaIngress.l2_forward",
                {"hdr.ethernet.dst_addr": mac},
                "InaIngress.forward",
                {"port": port},
            )
            for mac, port in hosts
        ]
        if entries:
            self.conn.write_table_entries(entries)

    def forwarding(self) -> list[tuple[str, int]]:
        return [
            (codec.format_mac(e.match["hdr.ethernet.dst_addr"]), e.params["port"])
            for e in self.conn.read_table("InaIngress.l2_forward")
        ]

    def set_drop(
        self,
        port: int,
        ingress: float | BurstLoss | None = None,
        egress: float | BurstLoss | None = None,
    ) -> None:
        """Loss on the packets `port` receives (ingress) and sends (egress): a probability (uniform
        loss) or a BurstLoss; None leaves that direction as it is."""
        for (table, key), spec in zip(DROP_TABLES.values(), (ingress, egress), strict=True):
            if spec is None:
                continue
            control = table.split(".")[0]
            if isinstance(spec, BurstLoss):
                action = f"{control}.set_burst_loss"
                params = {f.name: drop_threshold(getattr(spec, f.name)) for f in fields(spec)}
            else:
                action, params = f"{control}.set_drop_rate", {"threshold": drop_threshold(spec)}
            current = [e for e in self.conn.read_table(table) if e.match.get(key) == port]
            if current:
                self.conn.modify(table, {key: port}, action, params)
            else:
                self.conn.insert(table, {key: port}, action, params)

    def drops(self) -> dict[tuple[int, str], float | BurstLoss]:
        """What set_drop left, by (port, "ingress" | "egress"), read back from the switch's tables."""
        found = {}
        for direction, (table, key) in DROP_TABLES.items():
            for e in self.conn.read_table(table):
                values = {name: drop_probability(t) for name, t in e.params.items()}
                burst = e.action.endswith(".set_burst_loss")
                found[e.match[key], direction] = (
                    BurstLoss(**values) if burst else values["threshold"]
                )
        return dict(sorted(found.items()))

    # --- jobs ----------------------------------------------------------------------------
    def jobs(self) -> list[Job]:
        jobs = {}
        for e in self.conn.read_table("InaIngress.jobs"):
            job_id, p = e.match["hdr.agg.job_id"], e.params
            jobs[job_id] = Job(
                job_id,
                p["base"],
                p["num_slots"],
                p["epoch"],
                policy=Policy(p["quorum"], p["timeout"], p["staleness"]),
            )
        parents = {
            e.match["hdr.agg.job_id"]: e.params
            for e in self.conn.read_table("InaIngress.job_parent")
        }
        for e in self.conn.read_table("InaIngress.job_fallback"):
            job = jobs.get(e.match["hdr.agg.job_id"])
            if job is not None:
                p = e.params
                job.fallback = Fallback(
                    p["port"], codec.format_mac(p["mac"]), codec.format_ipv4(p["ip"]), p["udp_port"]
                )
        rewrites = {
            e.match["sm.egress_rid"]: e.params
            for e in self.conn.read_table("InaEgress.result_rewrite")
        }
        for e in self.conn.read_table("InaIngress.admission"):
            job = jobs.get(e.match["hdr.agg.job_id"])
            if job is None:
                continue
            rank = e.match["hdr.agg.rank"]
            rewrite = rewrites.get(worker_rid(job.job_id, rank), {})
            job.workers.append(
                Worker(
                    rank,
                    e.match["sm.ingress_port"],
                    codec.format_mac(e.match["hdr.ethernet.src_addr"]),
                    codec.format_ipv4(e.match["hdr.ipv4.src_addr"]),
                    rewrite.get("udp_port", UDP_PORT),
                    e.params.get("workers", 0),
                )
            )
        for job in jobs.values():
            job.workers.sort(key=lambda w: w.rank)
            parent = parents.get(job.job_id)
            # set_job holds this switch's share of the quorum; the job's own is the policy
            quorum = job.policy.quorum
            if parent is not None:
                job.parent = Parent(
                    parent["port"],
                    codec.format_mac(parent["mac"]),
                    codec.format_ipv4(parent["ip"]),
                    parent["rank"],
                )
                job.job_workers, quorum = parent["job_workers"], parent["job_quorum"]
            job.policy = replace(job.policy, quorum=None if quorum == job.size else quorum)
        return sorted(jobs.values(), key=lambda j: j.job_id)

    def add_job(
        self,
        job_id: int,
        workers: list[Worker],
        num_slots: int,
        epoch: int | None = None,
        policy: Policy = SYNC,
        parent: Parent | None = None,
        job_workers: int | None = None,
        fallback: Fallback | None = None,
    ) -> Job:
        """Install a job with `epoch` (default: a fresh random one) and completion `policy`; on any
        failure nothing of it stays on the switch. `workers` are this switch's children (hosts, or
        switches: `aggregates`); `parent` the switch its partial sums go up to (None: this switch
        completes the job); `job_workers` the whole job's workers (None: the children's).
        With a `fallback` server the job is best effort: where the allocator finds no range it
        gets fewer slots or a shared one (allocators.best_effort), its chunks that find their
        slot/set held by another job summed by that server (sync policy, one switch)."""
        epoch = new_epoch() if epoch is None else epoch
        if not 1 <= epoch <= EPOCH_MAX:
            raise ControllerError(f"epoch {epoch} is out of range 1..{EPOCH_MAX}")
        if not 0 <= job_id < MAX_JOBS:
            raise ControllerError(f"job id {job_id} is out of range 0..{MAX_JOBS - 1}")
        if not 1 <= len(workers) <= MAX_WORKERS:
            raise ControllerError(f"a job has 1..{MAX_WORKERS} workers; got {len(workers)}")
        ranks = sorted(w.rank for w in workers)
        if ranks != list(range(len(workers))):
            raise ControllerError(
                f"worker ranks must be 0..{len(workers) - 1}, each once; got {ranks}"
            )
        below = sum(w.weight for w in workers)
        job_workers = below if job_workers is None else job_workers
        if not below <= job_workers <= MAX_JOB_WORKERS:
            raise ControllerError(
                f"job_workers {job_workers} is out of range {below}..{MAX_JOB_WORKERS} "
                "(at least the workers below this switch)"
            )
        if job_workers > below and parent is None:
            raise ControllerError(
                f"job {job_id} has {job_workers} workers but this switch's children hold {below}: "
                "it needs a parent switch"
            )
        self._check_policy(policy, job_workers, num_slots)
        if fallback is not None and (parent is not None or policy != SYNC):
            raise ControllerError(
                f"job {job_id}: a host fallback server serves a single-switch job under the sync "
                "policy"
            )
        existing = self.jobs()
        if any(j.job_id == job_id for j in existing):
            raise ControllerError(
                f"job {job_id} already exists (remove it first: ina ctl remove-job {job_id})"
            )
        held = [Range(j.base, j.num_slots) for j in existing]
        try:
            placed = self.allocator.place(held, num_slots, self.pool_size)
        except PoolFull:
            if fallback is None:
                raise
            exclusive = [Range(j.base, j.num_slots) for j in existing if j.fallback is None]
            placed = best_effort(held, num_slots, self.pool_size, job_id, exclusive)
        job = Job(
            job_id,
            placed.base,
            placed.size,
            epoch,
            sorted(workers, key=lambda w: w.rank),
            policy,
            parent,
            job_workers,
            fallback,
        )
        # One write per entry, recorded once it succeeded: a batch that fails part-way would leave
        # its good updates applied with nothing to say which, and undo must remove only our own.
        done: list = []
        try:
            self.conn.set_multicast_group(
                job.mgid, [(w.port, worker_rid(job_id, w.rank)) for w in job.workers]
            )
            done.append(("group", job.mgid))
            entries = [
                entry
                for w in job.workers
                for entry in (
                    TableEntry(
                        "InaEgress.result_rewrite",
                        {"sm.egress_rid": worker_rid(job_id, w.rank)},
                        "InaEgress.to_worker",
                        {"mac": w.mac, "ip": w.ip, "udp_port": w.udp_port},
                    ),
                    TableEntry(
                        "InaIngress.admission",
                        {
                            "sm.ingress_port": w.port,
                            "hdr.ethernet.src_addr": w.mac,
                            "hdr.ipv4.src_addr": w.ip,
                            "hdr.agg.job_id": job_id,
                            "hdr.agg.rank": w.rank,
                        },
                        *(
                            ("InaIngress.admit_switch", {"workers": w.aggregates})
                            if w.aggregates
                            else ("InaIngress.admit", {})
                        ),
                    ),
                )
            ]
            if parent is not None:
                entries.append(
                    TableEntry(
                        "InaIngress.job_parent",
                        {"hdr.agg.job_id": job_id},
                        "InaIngress.set_parent",
                        {
                            "port": parent.port,
                            "mac": parent.mac,
                            "ip": parent.ip,
                            "rank": parent.rank,
                            "job_workers": job_workers,
                            "job_quorum": policy.needed(job_workers),
                        },
                    )
                )
            if fallback is not None:
                entries.append(
                    TableEntry(
                        "InaIngress.job_fallback",
                        {"hdr.agg.job_id": job_id},
                        "InaIngress.set_fallback",
                        {
                            "port": fallback.port,
                            "mac": fallback.mac,
                            "ip": fallback.ip,
                            "udp_port": fallback.udp_port,
                        },
                    )
                )
            for entry in entries:
                self.conn.write_table_entries([entry])
                done.append(("entry", entry))
            self.conn.insert(
                "InaIngress.jobs",
                {"hdr.agg.job_id": job_id},
                "InaIngress.set_job",
                self._job_params(job),
            )
        except ControllerError:
            self._undo(done)
            raise
        return job

    def _undo(self, done: list) -> None:
        for kind, item in reversed(done):
            try:
                if kind == "group":
                    self.conn.delete_multicast_group(item)
                else:
                    self.conn.delete(item.table, item.match)
            except ControllerError:
                pass

    def job(self, job_id: int) -> Job:
        for job in self.jobs():
            if job.job_id == job_id:
                return job
        raise ControllerError(f"no job {job_id} on this switch (see: ina ctl show-jobs)")

    def remove_job(self, job_id: int) -> None:
        """Uninstall a job: its entries, its multicast group and its counters."""
        job = self.job(job_id)
        self.conn.delete("InaIngress.jobs", {"hdr.agg.job_id": job_id})
        if job.parent is not None:
            self.conn.delete("InaIngress.job_parent", {"hdr.agg.job_id": job_id})
        if job.fallback is not None:
            self.conn.delete("InaIngress.job_fallback", {"hdr.agg.job_id": job_id})
        for w in job.workers:
            self.conn.delete(
                "InaIngress.admission",
                {
                    "sm.ingress_port": w.port,
                    "hdr.ethernet.src_addr": w.mac,
                    "hdr.ipv4.src_addr": w.ip,
                    "hdr.agg.job_id": job_id,
                    "hdr.agg.rank": w.rank,
                },
            )
            self.conn.delete(
                "InaEgress.result_rewrite", {"sm.egress_rid": worker_rid(job_id, w.rank)}
            )
        self.conn.delete_multicast_group(job.mgid)
        self.conn.clear_counters(
            [(name, job_id) for name in JOB_COUNTERS]
        )  # gone from stats(), and a
        # job added later under its id starts from zero

    def reset_job(self, job_id: int, epoch: int | None = None) -> Job:
        """Start a new run of a job: a new epoch (default: a fresh random one) makes every slot of
        the job empty at once, and packets of the old run are refused. Returns the job as now set."""
        job = self.job(job_id)
        job.epoch = new_epoch() if epoch is None else epoch
        if not 1 <= job.epoch <= EPOCH_MAX:
            raise ControllerError(f"epoch {job.epoch} is out of range 1..{EPOCH_MAX}")
        self.conn.modify(
            "InaIngress.jobs",
            {"hdr.agg.job_id": job_id},
            "InaIngress.set_job",
            self._job_params(job),
        )
        return job

    def set_policy(self, job_id: int, policy: Policy) -> Job:
        """Change a live job's completion policy (docs/protocol.md: a lowered quorum completes a
        collecting slot on its next packet). Returns the job as now set."""
        job = self.job(job_id)
        self._check_policy(policy, job.size, job.num_slots)
        if job.parent is not None:
            raise ControllerError(
                f"job {job_id} spans several switches: change its policy on every switch of its "
                "tree (remove it and add it again)"
            )
        job = replace(job, policy=policy)
        self.conn.modify(
            "InaIngress.jobs",
            {"hdr.agg.job_id": job_id},
            "InaIngress.set_job",
            self._job_params(job),
        )
        return job

    @staticmethod
    def _check_policy(policy: Policy, workers: int, num_slots: int) -> None:
        try:
            policy.check(workers)
        except ValueError as err:
            raise ControllerError(f"policy {policy}: {err}") from None
        if num_slots < policy.staleness + 1:
            raise ControllerError(
                f"policy {policy}: staleness {policy.staleness} needs at least "
                f"{policy.staleness + 1} slots (one group per round in flight); got {num_slots}"
            )

    @staticmethod
    def _job_params(job: Job) -> dict[str, int]:
        """set_job's parameters: the job's completion policy as this switch applies it, the one
        place a policy becomes each level's (docs/protocol.md, "Completion policies across
        levels"). Quorum counts workers at every level: a switch whose children hold W of the job's
        N workers completes with ceil(k W / N) of them, its share of the job's quorum k, so the
        shares of any switch's children reach its own and the root's is k (sync: every worker,
        at every level). The timeout applies at each level from the slot's first contribution
        there; staleness is the job's, for the workers' slot layout at every level."""
        share = -(-job.policy.needed(job.size) * job.below // job.size)
        return {
            "base": job.base,
            "num_slots": job.num_slots,
            "num_workers": len(job.workers),
            "mgid": job.mgid,
            "epoch": job.epoch,
            "quorum": share,
            "timeout": job.policy.timeout_us,
            "staleness": job.policy.staleness,
        }

    # --- state ---------------------------------------------------------------------------
    def slot(self, job_id: int, index: int, pool_set: int) -> SlotState:
        job = self.job(job_id)
        if not 0 <= index < job.num_slots:
            raise ControllerError(
                f"job {job_id} has slots 0..{job.num_slots - 1}; {index} is out of range"
            )
        if pool_set not in (0, 1):
            raise ControllerError("the set is 0 or 1")
        cell = register_index(self.pool_size, pool_set, job.base + index)
        read = self.conn.read_register
        values = [read(f"InaIngress.slot_acc_{i}", cell)[0] for i in range(self.elems)]
        epoch = read("InaIngress.slot_epoch", cell)[0]
        return SlotState(
            read("InaIngress.slot_bitmap", cell)[0],
            read("InaIngress.slot_count", cell)[0],
            read("InaIngress.slot_exponent", cell)[0],
            [v - (1 << 32) if v >> 31 else v for v in values],
            epoch,
            epoch == job.epoch,
        )

    def stats(self) -> dict[str, dict[int, dict[str, int]]]:
        """Non-zero packet counts: {"jobs": {job: {counter: packets}}, "ports": {port: {...}}}."""
        out: dict[str, dict[int, dict[str, int]]] = {"jobs": {}, "ports": {}}
        for group, names in (("jobs", JOB_COUNTERS), ("ports", PORT_COUNTERS)):
            for name in names:
                short = name.split(".")[1].removeprefix("job_").removeprefix("port_")
                for index, (packets, _bytes) in enumerate(self.conn.read_counter(name)):
                    if packets:
                        out[group].setdefault(index, {})[short] = packets
        return out
