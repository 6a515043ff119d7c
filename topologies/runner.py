"""`ina run`: compile, build the network, start and program the switches, run the workers, verify,
summarise, and always tear down.
"""

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ina.controller.aggregation import BurstLoss, Fallback
from ina.controller.allocators import FIRST_FIT, Allocator
from ina.hosts.compute import check_stragglers, release_line
from ina.p4src.protocol import DEFAULT_ELEMS, SYNC, UDP_PORT, Policy
from ina.topologies import clean, lock
from ina.topologies.job_sums import check_job_sums
from ina.topologies.model import HIERARCHICAL, Job
from ina.topologies.net import Network
from ina.topologies.switches import bmv2_toolchain
from ina.topologies.topo import Topology, is_star, load
from ina.topologies.topology_setup import route
from ina.topologies.tree import job_tree, switch_jobs


class RunError(Exception):
    """A run that cannot go on; the message says what failed and where its logs are."""


@dataclass
class RunOptions:
    topo: str = "star"
    workers: int | None = 4
    target: str = "builtin"
    size: int = 1 << 16
    dtype: str = "int32"
    loss: float | BurstLoss | None = (
        None  # uniform loss probability, or bursty (Gilbert-Elliott) loss
    )
    loss_mode: str = (
        "auto"  # where --loss is applied: "netem" (links), "switch" (drop simulator), "auto"
    )
    loss_link: str | None = None  # only this host's link (None: every link, loss_ends)
    loss_direction: str = "both"  # "up" (host -> switch), "down" (switch -> host) or "both"
    jobs: int | None = (
        None  # deal the workers into this many jobs (None: 1 on a star, a file's own jobs)
    )
    elems: int = DEFAULT_ELEMS
    bits: int = 32  # the switch's lanes (-DLANE_BITS) and its workers': below 32, floats only
    pool_size: int = 8192
    slots: int = 128
    timeout: float = 0.05
    run_dir: str | None = None
    cli: bool = False
    baseline: bool = False
    seed: int = 1
    p4runtime_compat: str | None = (
        None  # builtin switches answer P4Runtime as this target (COMPAT_MODES)
    )
    policy: Policy | None = None  # every job's completion policy; None: the topology's
    aggregation: str | None = (
        None  # every job's aggregation (single, hierarchical); None: the topology's
    )
    allocator: Allocator = FIRST_FIT  # where each job's slots go (controller/allocators.py)
    repeat: int = 1  # all-reduces per worker, each after its emulated compute
    compute_ms: float = 0.0  # emulated compute before each all-reduce
    stragglers: dict[str, float] = field(default_factory=dict)  # host -> compute slowdown factor
    straggler_dist: str | None = (
        None  # extra compute per iteration on every host (DelayDistribution)
    )
    link_delays: dict[str, str] = field(
        default_factory=dict
    )  # host -> its link's one-way delay (netem)
    best_effort: bool = False  # every job best effort, its host fallback server on an extra host
    pcap: bool = False  # every switch port's frames into the run directory (costs the switch CPU)
    bw: float | None = None  # every link's rate in Mbit/s (TCLink's htb; None: unshaped)
    # A scripted run (bench/pool_emu.py: jobs arriving, preempted and leaving): the switches get
    # forwarding but no job, the extra host is there, and scenario(network, topo, run_dir) runs
    # instead of the workers, returning their reports.
    scenario: Callable[[Network, Topology, Path], list[dict]] | None = None


@dataclass
class RunResult:
    run_dir: str
    workers: list[dict] = field(default_factory=list)
    ok: bool = False
    loss_mode: str | None = None  # where the loss was applied: "netem" or "switch" (None: no loss)
    switch_stats: dict = field(default_factory=dict)
    switch_cpu_s: dict = field(
        default_factory=dict
    )  # CPU seconds each switch process used while workers ran
    toolchain: dict = field(default_factory=dict)  # --target bmv2: {binary: {"path", "version"}}


def say(message: str) -> None:
    print(f"[ina run] {message}", flush=True)


def pick_target(target: str) -> str:
    if target == "auto":
        chosen = (
            "bmv2"
            if shutil.which("simple_switch_grpc") and shutil.which("p4c-bm2-ss")
            else "builtin"
        )
        say(
            f"target auto: using {chosen} ({'BMv2 is installed' if chosen == 'bmv2' else 'BMv2 not found'})"
        )
        return chosen
    if target == "bmv2" and not shutil.which("simple_switch_grpc"):
        raise RunError(
            "target bmv2: simple_switch_grpc is not installed (use the Vagrant VM, or --target builtin)"
        )
    return target


def compile_program(target: str, elems: int, pool_size: int, out_dir: Path, bits: int = 32):
    """BMv2 JSON (dict) and P4Info of p4src/aggregate.p4, from ina's compiler or p4c-bm2-ss, for
    `bits`-bit lanes (the workers' --bits)."""
    from ina.compiler import compile_file
    from ina.p4src import AGGREGATE_P4, aggregate_defines

    defines = aggregate_defines(elems, pool_size, bits)
    if target == "bmv2":
        from google.protobuf import text_format

        from ina.p4rt.proto import p4info_pb2

        p4info_path = out_dir / "aggregate.p4info.txtpb"
        cmd = [
            "p4c-bm2-ss",
            "--p4v",
            "16",
            "-o",
            str(out_dir / "aggregate.json"),
            "--p4runtime-files",
            str(p4info_path),
            *[f"-D{k}={v}" for k, v in defines.items()],
            str(AGGREGATE_P4),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise RunError(f"p4c-bm2-ss failed:\n{done.stderr}")
        return (
            json.loads((out_dir / "aggregate.json").read_text()),
            text_format.Parse(p4info_path.read_text(), p4info_pb2.P4Info()),
        )
    result = compile_file(AGGREGATE_P4, defines=defines)
    (out_dir / "aggregate.json").write_text(json.dumps(result.bmv2))
    return result.bmv2, result.p4info


def require_root() -> None:
    if os.geteuid() != 0:
        raise RunError(
            "ina run needs root: Mininet creates network namespaces, veth pairs and raw "
            "sockets, which Linux allows only to root (try: sudo ina run ...)"
        )


def run(opts: RunOptions) -> RunResult:
    """The run, holding the machine (lock.py): MachineBusy, before anything is touched, while
    another run holds it."""
    require_root()
    with lock.machine():
        return _run_on_machine(opts)


def _run_on_machine(opts: RunOptions) -> RunResult:
    target = pick_target(opts.target)
    loss_mode = pick_loss_mode(opts.loss_mode) if opts.loss else None
    run_id = time.strftime("%Y%m%d-%H%M%S")
    run_dir = Path(opts.run_dir or Path("runs") / run_id).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    leftovers = clean.cleanup()
    if leftovers:
        say(
            f"removed leftovers of an earlier run: {', '.join(leftovers[:6])}{' ...' if len(leftovers) > 6 else ''}"
        )
    topo = load(
        opts.topo,
        opts.workers if is_star(opts.topo) else None,
        opts.jobs,
        slots=opts.slots,
        extra_host=opts.baseline or opts.best_effort or opts.scenario is not None,
    )
    try:
        check_stragglers(opts.stragglers, [h for job in topo.jobs for h in job.workers])
    except ValueError as err:
        raise RunError(str(err)) from None
    if opts.policy:
        topo = topo.with_policy(opts.policy)
    if opts.aggregation:
        topo = topo.with_aggregation(opts.aggregation)
    topo = delay_links(topo, opts.link_delays)
    if opts.bw:
        topo = topo.with_link_params({"bw": opts.bw})
    lossy = loss_ends(topo, opts.loss_link, opts.loss_direction) if loss_mode else []
    if loss_mode:
        model = (
            f"bursty loss {opts.loss} (GOOD,BAD,P_GB,P_BG)"
            if isinstance(opts.loss, BurstLoss)
            else f"{opts.loss:.1%} loss"
        )
        where = (
            f"{opts.loss_link}'s link"
            if opts.loss_link
            else "every link"
            if opts.loss_direction == "both"
            else "every host link"
        )
        how = (
            "netem on the links"
            if loss_mode == "netem"
            else "the switch's drop simulator on the switch ports"
            + ("" if opts.loss_mode == "switch" else " (this kernel has no netem qdisc)")
        )
        say(f"emulating {model} on {where}, direction {opts.loss_direction}, with {how}")
    if opts.baseline and len(topo.jobs) != 1:
        raise RunError("the host-only baseline serves one job; drop --jobs")
    if opts.baseline and opts.best_effort:
        raise RunError(
            "--baseline aggregates on a host alone; --best-effort shares the switch: pick one"
        )
    fallbacks = fallback_servers(topo) if opts.best_effort else {}
    say(
        f"topology {topo.name}: {len(topo.switches)} switch(es), {len(topo.hosts)} hosts, "
        f"{len(topo.jobs)} job(s); target {target}"
        + (f"; every link shaped to {opts.bw:g} Mbit/s" if opts.bw else "")
        + f"; logs in {run_dir}"
    )
    t0 = time.monotonic()
    bmv2, p4info = compile_program(target, opts.elems, opts.pool_size, run_dir, opts.bits)
    say(
        f"compiled p4src/aggregate.p4 (ELEMS={opts.elems}, POOL_SIZE={opts.pool_size}, "
        f"LANE_BITS={opts.bits}) in {time.monotonic() - t0:.2f} s"
    )
    network = Network(topo, str(run_dir), target, run_id, opts.p4runtime_compat, opts.pcap)
    result = RunResult(str(run_dir), loss_mode=loss_mode)
    if target == "bmv2":
        result.toolchain = bmv2_toolchain()
        say(
            "BMv2: "
            + "; ".join(
                f"{name} {t['version']} ({t['path']})" for name, t in result.toolchain.items()
            )
        )
        say(
            "BMv2 cannot show slot state: simple_switch_grpc has no P4Runtime register reads "
            "(UNIMPLEMENTED); the run is judged by the workers' results and the switch's counters"
        )
    try:
        network.start()
        say("switches answer on gRPC; programming them")
        from ina.topologies.topology_setup import program_topology

        installed = program_topology(
            dataclasses.replace(topo, jobs=()) if opts.scenario else topo,
            bmv2,
            p4info,
            allocator=opts.allocator,
            fallbacks=fallbacks,
        )
        epochs = {job.job_id: job.epoch for jobs in installed.values() for job in jobs}
        for jobs in installed.values():
            for job in (j for j in jobs if j.fallback is not None):
                say(
                    f"job {job.job_id} best effort: slots {job.base}..{job.base + job.num_slots - 1}"
                    f", its host fallback server {job.fallback.ip}:{job.fallback.udp_port}"
                )
        for s in network.switches():
            path = s.data_path()
            if path:
                say(f"{s.name}: {path}")
        if loss_mode == "switch":
            emulate_loss(topo, lossy, opts.loss)
        elif loss_mode == "netem":
            netem_loss(network, lossy, opts.loss)
        if opts.cli:
            from mininet.cli import CLI

            say("entering the Mininet CLI (exit to tear down)")
            CLI(network.net)
            return result
        cpu_before = {s.name: process_cpu_seconds(s.proc) for s in network.switches()}
        slots = {job.job_id: job.num_slots for jobs in installed.values() for job in jobs}
        if opts.scenario is None:
            result.workers = run_workers(network, topo, opts, epochs, run_dir, fallbacks, slots)
        else:
            result.workers = opts.scenario(network, topo, run_dir)
        result.switch_cpu_s = {
            s.name: round(process_cpu_seconds(s.proc) - cpu_before[s.name], 3)
            for s in network.switches()
        }
        result.ok = all(w.get("verified") for w in result.workers)
        result.switch_stats = switch_stats(topo)
        for s in network.switches():
            if not s.alive():
                result.ok = False
                say(f"switch {s.name} died during the run; see {s.log_path}")
    finally:
        network.stop()
        say("network torn down")
    (run_dir / "result.json").write_text(json.dumps(result.__dict__, indent=2))
    return result


def process_cpu_seconds(proc: subprocess.Popen | None) -> float:
    """User + system CPU time of a running process (all its threads), from /proc."""
    if proc is None:
        return 0.0
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def netem_available() -> bool:
    """Whether tc can attach netem (link loss and delay); some kernels are built without it."""
    probe = ["ip", "link", "add", "inanetem0", "type", "veth", "peer", "name", "inanetem1"]
    if subprocess.run(probe, capture_output=True).returncode:
        return False
    try:
        return (
            subprocess.run(
                ["tc", "qdisc", "add", "dev", "inanetem0", "root", "netem", "loss", "1%"],
                capture_output=True,
            ).returncode
            == 0
        )
    finally:
        subprocess.run(["ip", "link", "del", "inanetem0"], capture_output=True)


def pick_loss_mode(mode: str) -> str:
    """Where --loss goes: "netem" on the links or "switch" (the drop simulator); "auto" prefers
    netem, so the switch runs unmodified where the kernel allows it."""
    if mode == "auto":
        return "netem" if netem_available() else "switch"
    if mode == "netem" and not netem_available():
        raise RunError(
            "--loss-mode netem: this kernel has no netem qdisc (`tc qdisc add ... netem` "
            "fails); use --loss-mode switch for the switch's drop simulator"
        )
    return mode


MAX_BW_MBIT = 1000.0  # the largest rate Mininet's TCLink shapes (it ignores a larger bw)
NETEM_PARAMS = ("delay", "jitter", "loss")  # TCLink parameters that Mininet applies with netem


def delay_links(topo: Topology, delays: dict[str, str]) -> Topology:
    """The topology with each named host's link given its one-way delay (TCLink's netem `delay`);
    refuses, naming the link, any delay, jitter or loss a link asks for when this kernel has no netem."""
    for host, delay in delays.items():
        if host not in topo.hosts:
            raise RunError(f"--link-delay {host}: no such host (hosts: {', '.join(topo.hosts)})")
        topo = topo.with_link_params({"delay": delay}, host)
    asking = [(link, p) for link in topo.links for p in NETEM_PARAMS if link.params.get(p)]
    if asking and not netem_available():
        link, param = asking[0]
        raise RunError(
            f"link {link.a}-{link.b} asks for {param} {link.params[param]}, which Mininet "
            "applies with the netem qdisc, and this kernel has none: a slower host can be emulated "
            "with --straggler HOST:Fx, loss with --loss-mode switch"
        )
    return topo


@dataclass(frozen=True)
class LossyEnd:
    """One switch port's share of the emulated loss: the packets it receives from `peer`
    (`ingress`: a host's sends) and those it sends to `peer` (`egress`)."""

    switch: str
    port: int
    peer: str  # the host or switch at the link's other end
    ingress: bool
    egress: bool


def loss_ends(topo: Topology, host: str | None, direction: str) -> list[LossyEnd]:
    """Where the loss goes: each host link (`host`'s alone when named) in `direction`, and, with
    no host named and direction both, each switch-to-switch link both ways (once per direction:
    on each end's sends), so every link of a tree loses alike."""
    ends = [
        LossyEnd(s, port, h, direction in ("up", "both"), direction in ("down", "both"))
        for s, sw in topo.switches.items()
        for h, port in sw.hosts.items()
        if host in (None, h)
    ]
    if not ends:
        raise RunError(f"--loss-link {host}: no such host (hosts: {', '.join(topo.hosts)})")
    if host is None and direction == "both":
        ends += [
            LossyEnd(s, port, peer, False, True)
            for s, sw in topo.switches.items()
            for peer, port in sw.peers.items()
        ]
    return ends


def emulate_loss(topo: Topology, ends: list[LossyEnd], loss: float | BurstLoss) -> None:
    """The drop simulator on each lossy end's switch port: ingress drops what the port receives,
    egress what it sends."""
    from ina.controller.aggregation import Aggregation
    from ina.controller.client import SwitchConnection

    for name in sorted({end.switch for end in ends}):
        sw = topo.switches[name]
        with SwitchConnection(sw.grpc, sw.device_id, election_id=1) as conn:
            agg = Aggregation(conn)
            for end in (e for e in ends if e.switch == name):
                agg.set_drop(
                    end.port,
                    ingress=loss if end.ingress else None,
                    egress=loss if end.egress else None,
                )


def netem_args(loss: float | BurstLoss) -> list[str]:
    """netem's loss arguments: random, or gemodel p r 1-h 1-k (in percent), the same chain as the
    drop simulator's burst mode."""
    if isinstance(loss, BurstLoss):
        return [
            "loss",
            "gemodel",
            *(f"{100 * x:g}%" for x in (loss.p_gb, loss.p_bg, loss.loss_bad, loss.loss_good)),
        ]
    return ["loss", "random", f"{100 * loss:g}%"]


def netem_loss(network: Network, ends: list[LossyEnd], loss: float | BurstLoss) -> None:
    """netem as the root qdisc of each lossy end's interfaces: the peer's toward the switch for
    what the port receives, the switch's own for what it sends."""
    for end in ends:
        switch_intf, peer_intf = network.host(end.switch).connectionsTo(network.host(end.peer))[0]
        for intf in [peer_intf] * end.ingress + [switch_intf] * end.egress:
            out = intf.node.cmd(
                " ".join(
                    ["tc", "qdisc", "replace", "dev", intf.name, "root", "netem", *netem_args(loss)]
                )
            )
            if out.strip():
                raise RunError(f"netem on {intf.name}: {out.strip()}")


FALLBACK_PORT_BASE = UDP_PORT + 0x100  # job j's host fallback server listens on this + j


def fallback_servers(topo: Topology) -> dict[int, Fallback]:
    """`--best-effort`: each job's host fallback server, on the topology's extra host at
    FALLBACK_PORT_BASE + job id, reached from the job's switch by its route to that host. Only a
    single-switch job under the sync policy can have one (docs/protocol.md)."""
    host = topo.hosts[topo.extra_host]
    servers = {}
    for job in topo.jobs:
        tree = job_tree(topo, job)
        if len(tree.nodes) != 1 or job.policy != SYNC:
            raise RunError(
                f"--best-effort: job {job.id} aggregates {job.aggregation} under policy "
                f"{job.policy}; a host fallback server serves a single-switch job under sync"
            )
        (switch,) = tree.nodes
        port = route(topo, switch, topo.extra_host)
        servers[job.id] = Fallback(port, host.mac, host.ip, FALLBACK_PORT_BASE + job.id)
    return servers


def _start_server(
    network: Network,
    host: str,
    role: str,
    job: Job,
    elems: int,
    ip: str,
    epoch: int,
    options: Sequence[str] = (),
) -> subprocess.Popen:
    """One job's host-side server on `host`: `role` --baseline-server (the host-only baseline) or
    --fallback-server (a best-effort job's host fallback), with its own `options`."""
    return network.host(host).popen(
        [
            sys.executable,
            "-m",
            "ina",
            "worker",
            role,
            "--job",
            str(job.id),
            "--workers",
            str(len(job.workers)),
            "--elems",
            str(elems),
            "--local-ip",
            ip,
            *options,
            "--epoch",
            str(epoch),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def run_workers(
    network: Network,
    topo: Topology,
    opts: RunOptions,
    epochs: dict[int, int],
    run_dir: Path,
    fallbacks: Mapping[int, Fallback] | None = None,
    slots: Mapping[int, int] | None = None,
    on_host: Collection[int] = (),
) -> list[dict]:
    """Start every job's workers (and the baseline server, or each job's host fallback server in
    `fallbacks`) with the job's epoch, each worker's window at most its job's installed `slots`
    (default the topology's); collect reports, each worker's sums checked: by itself, or a
    hierarchical job's all together (`saved_sums`). The workers of a job `on_host` (preempted
    onto its host fallback server: docs/protocol.md, "Preemption") address that server."""
    fallbacks, slots = fallbacks or {}, slots or {}
    servers = [
        _start_server(
            network,
            topo.extra_host,
            "--fallback-server",
            job,
            opts.elems,
            fallbacks[job.id].ip,
            epochs[job.id],
            ["--udp-port", str(fallbacks[job.id].udp_port)],
        )
        for job in topo.jobs
        if job.id in fallbacks
    ]
    server = None
    if opts.baseline:
        ps_host = topo.extra_host
        job = topo.jobs[0]
        server = _start_server(
            network,
            ps_host,
            "--baseline-server",
            job,
            opts.elems,
            topo.hosts[ps_host].ip,
            epochs[job.id],
        )
        say(
            f"host-only baseline: parameter server on {ps_host} ({topo.hosts[ps_host].ip}); the switch only forwards"
        )
        time.sleep(0.5)
    procs = []
    saved = saved_sums(topo, opts, run_dir)
    for job in topo.jobs:
        tree = job_tree(topo, job)
        check = ["--save-sums", str(saved[job.id])] if job.id in saved else ["--verify"]
        # the workers each leaf sums: a worker's turns at its switch (loss recovery) count them
        leaf_workers = Counter(leaf for leaf, _rank in tree.endpoints.values())
        for rank, host in enumerate(job.workers):
            leaf, wire_rank = tree.endpoints[host]
            target_ip = topo.hosts[topo.extra_host].ip if opts.baseline else topo.switches[leaf].ip
            via: list[str] = []
            if job.id in on_host:
                target_ip, via = (
                    fallbacks[job.id].ip,
                    ["--switch-port", str(fallbacks[job.id].udp_port)],
                )
            cmd = [
                sys.executable,
                "-m",
                "ina",
                "worker",
                "--job",
                str(job.id),
                "--rank",
                str(rank),
                "--workers",
                str(len(job.workers)),
                "--switch",
                target_ip,
                *via,
                *(
                    ["--wire-rank", str(wire_rank)]
                    if wire_rank != rank and not opts.baseline
                    else []
                ),
                *(
                    ["--leaf-workers", str(leaf_workers[leaf])]
                    if leaf_workers[leaf] != len(job.workers) and not opts.baseline
                    else []
                ),
                "--size",
                str(opts.size),
                "--dtype",
                opts.dtype,
                "--elems",
                str(opts.elems),
                "--bits",
                str(opts.bits),
                "--window",
                str(min(slots.get(job.id, job.slots), 256)),
                "--timeout",
                str(opts.timeout),
                "--seed",
                str(opts.seed + job.id),
                "--epoch",
                str(epochs[job.id]),
                *check,
                "--json",
                "--repeat",
                str(opts.repeat),
                "--staleness",
                str(job.policy.staleness),
            ]
            if opts.compute_ms or opts.stragglers or opts.straggler_dist:
                cmd += [
                    "--compute-ms",
                    str(opts.compute_ms),
                    "--slowdown",
                    str(opts.stragglers.get(host, 1.0)),
                ]
            if opts.straggler_dist:
                cmd += ["--delay-dist", opts.straggler_dist]
            if job.id in fallbacks and job.id not in on_host:
                cmd += ["--fallback", f"{fallbacks[job.id].ip}:{fallbacks[job.id].udp_port}"]
            procs.append(
                (
                    job.id,
                    host,
                    network.host(host).popen(
                        [*cmd, "--start-barrier"],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    ),
                )
            )
    for _job, _host, proc in procs:  # every worker bound (or failed: its line is empty) ...
        proc.stdout.readline()
    go = release_line()
    for _job, _host, proc in procs:  # ... then all start together (communicate closes stdin)
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(go)
            proc.stdin.flush()
    say(f"running {len(procs)} workers: all-reduce of {opts.size} {opts.dtype} elements each")
    results = []
    deadline = time.monotonic() + 300
    for job_id, host, proc in procs:
        try:
            out, err = proc.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            err += "\n(killed after the run's time limit)"
        try:
            report = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            report = {"job": job_id, "verified": False, "error": err.strip()[-500:]}
        report["host"] = host
        if proc.returncode and "error" not in report:
            report["error"] = err.strip()[-500:]
        results.append(report)
    for proc in [server] * (server is not None) + servers:
        proc.kill()
        proc.wait()
    for job in topo.jobs:
        if job.id in saved:
            check_saved_sums(topo, job, opts, saved[job.id], results)
    return results


def saved_sums(topo: Topology, opts: RunOptions, run_dir: Path) -> dict[int, Path]:
    """Per hierarchical job, the directory its workers save their sums in (created here): their
    RESULT bitmaps name ranks at a leaf, so the job's sums are checked once all are done."""
    dirs = {
        job.id: run_dir / "sums" / f"job{job.id}"
        for job in topo.jobs
        if job.aggregation == HIERARCHICAL and not opts.baseline
    }
    for directory in dirs.values():
        directory.mkdir(parents=True, exist_ok=True)
    return dirs


def check_saved_sums(
    topo: Topology, job: Job, opts: RunOptions, directory: Path, reports: list[dict]
) -> None:
    """Each of `job`'s workers' `verified`: its sums checked rank by rank against the ranks the
    job's RESULTs name (topologies/job_sums.py)."""
    tree = job_tree(topo, job)
    ok = check_job_sums(
        directory,
        [tree.endpoints[host] for host in job.workers],
        seed=opts.seed + job.id,
        size=opts.size,
        dtype=opts.dtype,
        iterations=opts.repeat,
    )
    for report in reports:
        if report.get("job") == job.id and "rank" in report:
            report["verified"] = ok[report["rank"]]


def switch_stats(topo: Topology) -> dict:
    from ina.controller.aggregation import Aggregation
    from ina.controller.client import ControllerError, SwitchConnection

    stats = {}
    for name in switch_jobs(topo):
        try:
            sw = topo.switches[name]
            with SwitchConnection(sw.grpc, sw.device_id, election_id=None) as conn:
                stats[name] = Aggregation(conn).stats()
        except ControllerError as err:
            stats[name] = {"error": str(err)}
    return stats


def summary(result: RunResult) -> str:
    """One row per worker; `entered` is the share of the rank's contributions (chunks, over every
    repetition) that the sums hold: below 100% a quorum or timeout completed sums without it."""
    header = [
        "host",
        "job",
        "elements",
        "time s",
        "M elem/s",
        "Gbps",
        "sent",
        "retrans",
        "entered",
        "verified",
    ]
    rows = []
    for w in result.workers:
        if "error" in w and "elements" not in w:
            rows.append([w["host"], w.get("job", "?"), "-", "-", "-", "-", "-", "-", "-", "FAILED"])
            continue
        rows.append(
            [
                w["host"],
                w["job"],
                w["elements"],
                f"{w['elapsed_s']:.3f}",
                f"{w['goodput_elements_per_s'] / 1e6:.2f}",
                f"{w['goodput_gbps']:.3f}",
                w["packets_sent"],
                w["retransmissions"],
                f"{w['contributions_entered']:.1%}",
                "yes" if w["verified"] else "NO",
            ]
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    lines = [
        "  ".join(str(x).rjust(wd) for x, wd in zip(r, widths, strict=False))
        for r in [header, *rows]
    ]
    errors = [f"{w['host']}: {w['error']}" for w in result.workers if w.get("error")]
    left_out = [w["host"] for w in result.workers if w.get("contributions_entered", 1.0) < 1.0]
    notes = (
        [
            f"entered: the share of each rank's contributions in the sums; {', '.join(left_out)} had some left "
            "out by the completion policy (docs/protocol.md)"
        ]
        if left_out
        else []
    )
    return "\n".join(lines + errors + notes + fallback_notes(result) + drop_notes(result))


def fallback_notes(result: RunResult) -> list[str]:
    """Per best-effort job, the share of its chunks its host fallback server summed (the mean of
    its workers' counts: each learns of every fallen-back use from the switch's notice)."""
    shares: dict[int, list[float]] = {}
    for w in result.workers:
        if "host_share" in w:
            shares.setdefault(w["job"], []).append(w["host_share"])
    return [
        f"job {job}: {sum(s) / len(s):.1%} of its chunks summed by its host fallback server"
        for job, s in sorted(shares.items())
        if any(s)
    ]


DROP_COUNTERS = ("refused", "malformed", "out_of_range", "wrong_epoch")


def drop_notes(result: RunResult) -> list[str]:
    """What the switches counted against a failed run's packets: the reason a worker cannot see."""
    if all(w.get("verified") for w in result.workers):
        return []
    notes = []
    for name, stats in result.switch_stats.items():
        for group in ("jobs", "ports"):
            for index, counts in sorted(stats.get(group, {}).items()):
                dropped = [f"{k} {counts[k]}" for k in DROP_COUNTERS if counts.get(k)]
                if dropped:
                    notes.append(
                        f"switch {name} dropped, {group[:-1]} {index}: {', '.join(dropped)}"
                    )
    return notes
