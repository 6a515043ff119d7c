"""Data-parallel training in Mininet: a star of N worker hosts around one switch, one training
process per host, gradients all-reduced through the switch (or a parameter server on one more host,
or a ring all-reduce over TCP between the worker hosts, through the switch's L2 forwarding).

The network is built and programmed the way `ina run` does it (topologies.runner, controller's
program_topology); only the processes on the hosts differ. Whatever happens, every process this
module started is killed and the network torn down before it returns or raises.
"""

import contextlib
import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ina.controller.client import ControllerError
from ina.hosts.compute import check_stragglers
from ina.p4src.protocol import DEFAULT_ELEMS, SYNC, Policy
from ina.topologies import clean, lock
from ina.topologies.net import Network
from ina.topologies.runner import compile_program
from ina.topologies.topo import load
from ina.topologies.topology_setup import program_topology
from ina.train import traffic
from ina.train.options import lanes_argv, replay_argv, training_argv
from ina.train.replay import ReplayConfig
from ina.train.sgd import Config

AGGREGATIONS = ("switch", "ps", "ring")


def say(message: str) -> None:
    print(f"[ina train] {message}", flush=True)


class TrainError(Exception):
    """A run that could not finish; the message names the host, switch or job and the log to read."""


@dataclass
class TrainOptions:
    config: Config
    dataset: str = "digits"
    workers: int = 4
    aggregation: str = (
        "switch"  # "switch": in-network; "ps": the host parameter server; "ring": TCP ring
    )
    elems: int = DEFAULT_ELEMS
    bits: int = 32  # the switch's lanes (-DLANE_BITS) and its workers'
    error_feedback: bool = False  # each worker carries its quantization residual (feedback.py)
    pool_size: int = 1024
    window: int = 64  # slots of the job, and each worker's window
    timeout: float = 0.05  # a worker's first retransmission timer
    max_retries: int = 6  # a worker gives up (exit 1) after this many retransmissions of one packet
    time_limit: float = 600.0  # the whole run, workers started to last report
    run_dir: str = "runs/train"
    replay: ReplayConfig | None = (
        None  # replay a real model's iterations instead of training `config`
    )
    bw: float | None = None  # Mbit/s of every link (TCLink), so the network is the bottleneck
    policy: Policy = SYNC  # the job's completion policy
    compute_ms: float = 0.0  # emulated compute added to every training iteration
    stragglers: dict[str, float] = field(default_factory=dict)  # host -> compute slowdown factor
    straggler_dist: str | None = (
        None  # extra compute per iteration on every host (DelayDistribution)
    )


def run(
    opts: TrainOptions,
    on_epoch: Callable[[dict], None],
    on_traffic: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Train in Mininet; rank 0's epoch records go to `on_epoch` as they arrive, and what the
    links and CPUs did from the workers' start to their end to `on_traffic` (traffic.py). Returns
    every worker's last report (history and weight digest), by rank. The machine is held for the
    run (topologies/lock.py): MachineBusy, before anything is touched, while another run holds it."""
    if os.geteuid() != 0:
        raise TrainError(
            "ina train needs root: Mininet creates network namespaces, veth pairs and raw "
            "sockets (try: sudo ina train ...)"
        )
    with lock.machine():
        try:
            return _run_on_machine(opts, on_epoch, on_traffic)
        except ControllerError as err:  # the switch refused or did not answer its programming
            raise TrainError(f"programming the switch: {err}") from None


def _run_on_machine(
    opts: TrainOptions, on_epoch: Callable[[dict], None], on_traffic: Callable[[dict], None] | None
) -> list[dict]:
    run_dir = Path(opts.run_dir).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    leftovers = clean.cleanup()
    if leftovers:
        say(f"removed leftovers of an earlier run: {', '.join(leftovers[:6])}")
    topo = load("star", opts.workers, 1, None, opts.window, extra_host=opts.aggregation == "ps")
    topo = topo.with_link_params({"bw": opts.bw}).with_policy(opts.policy)
    try:
        check_stragglers(opts.stragglers, topo.jobs[0].workers)
    except ValueError as err:
        raise TrainError(str(err)) from None
    bmv2, p4info = compile_program("builtin", opts.elems, opts.pool_size, run_dir, opts.bits)
    network = Network(topo, str(run_dir), "builtin", f"train-{os.getpid()}")
    procs: list[subprocess.Popen] = []
    try:
        network.start()
        installed = program_topology(topo, bmv2, p4info)
        job = installed["s1"][0]
        switch = topo.switches["s1"]
        target, aggregator = switch.ip, f"switch s1 ({switch.ip})"
        if opts.aggregation == "ps":
            ps_host = topo.extra_host
            target, aggregator = topo.hosts[ps_host].ip, f"the parameter server on {ps_host}"
            procs.append(
                network.host(ps_host).popen(
                    [
                        sys.executable,
                        "-m",
                        "ina",
                        "worker",
                        "--baseline-server",
                        "--job",
                        str(job.job_id),
                        "--workers",
                        str(opts.workers),
                        "--elems",
                        str(opts.elems),
                        "--local-ip",
                        target,
                        "--epoch",
                        str(job.epoch),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        hosts = topo.jobs[0].workers
        where = ["--switch", target]
        if opts.aggregation == "ring":
            where = ["--ring", ",".join(topo.hosts[h].ip for h in hosts)]
            aggregator = "a ring over TCP between the workers"
        what = (
            f"replaying {opts.replay.workload} (scale {opts.replay.scale:g})"
            if opts.replay
            else f"training {opts.config.model} on {opts.dataset}"
        )
        links = f" over {opts.bw:g} Mbit/s links" if opts.bw else ""
        say(
            f"{what}: {opts.workers} workers through {aggregator}{links}, job {job.job_id}; logs in {run_dir}"
        )
        workers = []
        before = traffic.snapshot(network)
        for rank, host in enumerate(hosts):
            cmd = [
                sys.executable,
                "-m",
                "ina.train.worker_main",
                "--job",
                str(job.job_id),
                "--rank",
                str(rank),
                "--workers",
                str(opts.workers),
                "--epoch",
                str(job.epoch),
                *where,
                "--aggregator",
                aggregator,
                "--elems",
                str(opts.elems),
                *lanes_argv(opts.bits, opts.error_feedback),
                "--window",
                str(opts.window),
                "--timeout",
                str(opts.timeout),
                "--max-retries",
                str(opts.max_retries),
                "--start-barrier",
                "--staleness",
                str(opts.policy.staleness),
                *(
                    replay_argv(opts.replay)
                    if opts.replay
                    else training_argv(opts.config, opts.dataset)
                ),
                "--compute-ms",
                str(opts.compute_ms),
                "--slowdown",
                str(opts.stragglers.get(host, 1.0)),
                *(["--delay-dist", opts.straggler_dist] if opts.straggler_dist else []),
            ]
            log = run_dir / f"train-{host}.log"
            with open(log, "w") as err:
                proc = network.host(host).popen(
                    cmd, stdout=subprocess.PIPE, stdin=subprocess.PIPE, stderr=err
                )
            procs.append(proc)
            workers.append((rank, host, proc, log))
        finals = collect(workers, network, job.job_id, opts.time_limit, on_epoch)
        if on_traffic is not None:
            on_traffic({**traffic.difference(before, traffic.snapshot(network)), "workers": hosts})
        return finals
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        network.stop()
        say("network torn down")


def collect(
    workers: list,
    network: Network,
    job_id: int,
    time_limit: float,
    on_epoch: Callable[[dict], None],
) -> list[dict]:
    """Read every worker's JSON lines until all have exited, releasing them together once every one
    said it is ready (bound to its port). A worker that exits with an error, a switch that dies or
    the time limit ends the run at once with a TrainError saying which."""
    selector = selectors.DefaultSelector()
    pending = {}
    ready: set[int] = set()
    for rank, host, proc, log in workers:
        selector.register(proc.stdout, selectors.EVENT_READ, (rank, host, proc, log))
        pending[proc.stdout] = b""
    finals: dict[int, dict] = {}
    deadline = time.monotonic() + time_limit
    while pending:
        for key, _ in selector.select(timeout=0.5):
            rank, host, proc, log = key.data
            chunk = os.read(key.fileobj.fileno(), 1 << 16)
            if not chunk:
                selector.unregister(key.fileobj)
                del pending[key.fileobj]
                if proc.wait() != 0:
                    raise TrainError(
                        f"worker {rank} on {host} failed in job {job_id}: {log_tail(log)}"
                    )
                continue
            *lines, pending[key.fileobj] = (pending[key.fileobj] + chunk).split(b"\n")
            for line in lines:
                record = json.loads(line)
                if record.get("ready"):
                    ready.add(rank)
                    if len(ready) == len(workers):
                        release(workers)
                elif "history" in record:
                    finals[rank] = record
                elif rank == 0:
                    on_epoch(record)
        for s in network.switches():
            if not s.alive():
                raise TrainError(f"switch {s.name} died during job {job_id}; its log: {s.log_path}")
        if time.monotonic() > deadline:
            raise TrainError(
                f"job {job_id} did not finish within {time_limit:.0f} s; logs: "
                f"{', '.join(str(w[3]) for w in workers)}"
            )
    return [finals[rank] for rank in sorted(finals)]


def release(workers: list) -> None:
    """Let every worker's first all-reduce start (one line on each one's stdin)."""
    for _rank, _host, proc, _log in workers:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(b"go\n")
            proc.stdin.close()


def log_tail(path: Path, lines: int = 3) -> str:
    text = path.read_text(errors="replace").strip().splitlines()
    return "\n".join(text[-lines:]) or f"(no output; see {path})"
