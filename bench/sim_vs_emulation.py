"""`ina bench sim-vs-emulation`: one all-reduce in Mininet and in `ina sim`, side by side (issue 29,
"Against emulation").

The same 4-worker star, size, E, window, seed and first RTO run twice: in Mininet with every link
shaped by TCLink to 10 Mbit/s (`ina bench train`'s setting, where the links and not the Python
workers set the pace), and in the simulator with links of the same rate, no propagation delay (the
TCLinks have none) and the same queue (Mininet's HTB leaf is a pfifo of the veth's txqueuelen,
1,000 frames). Per link it prints the aggregation frames each way in both, and the communication
time (the slowest worker's, from its start to its result) in both with their ratio. The emulation
times its lossless runs (a worker descheduled past its RTO on a loaded machine resends, and the
simulation is lossless), and also gives the last worker to start: its workers start up to tens of
milliseconds apart (a line on each one's stdin), the simulated ones together, and a slot completes
only when the last worker's packet comes, so the earlier starters' time includes the wait.

The emulation's frames: the kernel's interface counters of each host link (the host's transmissions
are the link's up direction, the switch port's its down direction: train/traffic.py's snapshot),
taken just before the workers start and after they end, minus the frames in that interval that are
not the protocol's, which a capture on the host's interface filtered to everything but the
protocol's UDP port counts (tcpdump; ARP and IPv6 from the root namespace's switch ports would be
such frames, but topologies/net.py turns their IPv6 off and the hosts' neighbours are static). A
capture of the protocol's frames themselves would cost the CPU the workers need and could drop;
the counters cannot.

Three simulated rates: the nominal one; the one at which a frame takes as long as HTB should give
it (HTB meters a frame's own bytes, from the destination MAC to the payload's end: 320 at E = 64,
while the simulator charges the wire's 24 more: preamble, FCS, inter-frame gap, docs/simulation.md;
so at one nominal rate each simulated frame takes 344/320 = 1.075 times as long); and the one at
which a frame takes as long as a TCLink alone measurably gives it (`htb_frame_time`: a full queue
between two Mininet hosts, no workers, no switch).

Methods are pluggable: `SIMULATORS` maps a method to its simulated run. The switch path runs
sim/allreduce.py's `simulate`; the parameter server sim/ps.py's `simulate_ps` (hosts/baseline.py's
server core on one more host, as emulation runs hosts/baseline.py there); the ring sim/ring.py's
`simulate_ring` over sim/tcp.py's TCP (emulation runs hosts/ring.py over Linux's TCP: bench/ring_worker.py,
its hosts set to the congestion control sim/tcp.py models, Reno, whatever the machine's default).
Frames are compared for the switch path and the parameter server; the ring's are printed beside
each other (TCP's ACK count depends on when the delayed ACKs fire, so they are not held equal).
"""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ina.bench.results import Progress, summarise, write
from ina.hosts.inprocess import FRAME_HEADERS
from ina.hosts.ring import PORT as RING_PORT
from ina.p4src.protocol import UDP_PORT
from ina.sim.allreduce import AllReduceConfig, AllReduceResult, frame_bytes, simulate
from ina.sim.links import LinkSpec, wire_bits
from ina.sim.ps import simulate_ps as run_ps
from ina.sim.ring import simulate_ring as run_ring_sim
from ina.sim.tcp import CONGESTION_CONTROL, TCP_LINUX
from ina.topologies import clean
from ina.topologies.net import Network
from ina.topologies.runner import RunOptions, compile_program, run_workers
from ina.topologies.topo import Topology, load
from ina.topologies.topology_setup import program_topology
from ina.train import traffic

SIM_RATES = ("nominal", "htb", "measured")  # Setup.links' keys
HTB_QUEUE_FRAMES = 1000  # the pfifo under Mininet's HTB class holds the veth's txqueuelen of frames
POOL_SIZE = 1024  # the switch program's slots (as ina train's): a job's window fits
PROTOCOL_FRAMES = {  # tcpdump's filter for each method's own frames (the capture counts the others)
    "switch": f"udp port {UDP_PORT}",
    "ps": f"udp port {UDP_PORT}",
    "ring": f"tcp port {RING_PORT}",
}


@dataclass(frozen=True)
class Setup:
    """One configuration both runners run: a star of `workers`, one job, `size` int32 per worker."""

    workers: int = 4
    size: int = 1 << 18
    elems: int = 64
    window: int = 64
    seed: int = 1
    mbit: float = 10.0  # every link's rate, Mbit/s
    timeout: float = 0.05  # the workers' first RTO (ina run's)

    def frame_time(self) -> float:
        """Seconds HTB should take for one aggregation frame: its own bytes at the rate."""
        return frame_bytes(self.elems) * 8 / (self.mbit * 1e6)

    def links(self, measured_frame_time: float | None = None) -> dict[str, LinkSpec]:
        """The simulated links: at the nominal rate, at the rate whose aggregation frame takes what
        HTB should give it, and (when measured: `htb_frame_time`) at the one whose frame takes what
        HTB gave. Queues hold 1,000 aggregation frames' bytes (HTB's hold 1,000 frames of any size;
        no run here comes near either)."""
        queue = HTB_QUEUE_FRAMES * frame_bytes(self.elems)
        wire = wire_bits(frame_bytes(self.elems))
        times = {"htb": self.frame_time(), "measured": measured_frame_time}
        return {
            "nominal": LinkSpec(rate=self.mbit * 1e6, delay=0.0, queue=queue),
            **{
                kind: LinkSpec(rate=wire / t, delay=0.0, queue=queue)
                for kind, t in times.items()
                if t
            },
        }


def htb_frame_time(setup: Setup, seconds: float = 3.0) -> float:
    """Seconds per aggregation frame a TCLink at the setup's rate delivers when its queue never
    empties: two Mininet hosts on one link, one sending the frames as fast as its socket lets it
    (blocking on a full queue), the other's interface counting what arrives (root, under the lock)."""
    from mininet.link import TCLink
    from mininet.net import Mininet

    clean.cleanup()
    net = Mininet(topo=None, build=False, controller=None, link=TCLink, autoSetMacs=True)
    try:
        sender, receiver = (
            net.addHost("h1", ip="10.77.0.1/24"),
            net.addHost("h2", ip="10.77.0.2/24"),
        )
        net.addLink(sender, receiver, bw=setup.mbit)
        net.build()
        sender.cmd(
            f"ip neigh replace 10.77.0.2 lladdr {receiver.MAC()} dev {sender.defaultIntf().name} nud permanent"
        )
        payload = frame_bytes(setup.elems) - FRAME_HEADERS
        blast = sender.popen(
            [
                sys.executable,
                "-c",
                "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                f"while True:\n    s.sendto(bytes({payload}), ('10.77.0.2', {UDP_PORT}))",
            ]
        )
        try:
            time.sleep(0.5)  # past HTB's burst
            counter = f"/sys/class/net/{receiver.defaultIntf().name}/statistics/rx_packets"
            first, start = int(receiver.cmd(f"cat {counter}")), time.monotonic()
            time.sleep(seconds)
            last, end = int(receiver.cmd(f"cat {counter}")), time.monotonic()
        finally:
            blast.kill()
            blast.wait()
    finally:
        net.stop()
    return (end - start) / (last - first)


@dataclass
class Side:
    """What one runner measured: per host link (by host name) the protocol's frames (up, down),
    the communication time, and whether every worker's sum was right."""

    frames: dict[str, tuple[int, int]]
    communication_s: float
    verified: bool
    notes: dict = field(
        default_factory=dict
    )  # runner-specific figures (other frames, queue drops, ...)


def sim_config(setup: Setup, link: LinkSpec) -> AllReduceConfig:
    """The setup as `ina sim` takes it, every link `link`."""
    return AllReduceConfig(
        topo="star",
        workers=setup.workers,
        jobs=1,
        size=setup.size,
        elems=setup.elems,
        window=setup.window,
        link=link,
        seed=setup.seed,
        timeout=setup.timeout,
    )


def simulated_side(result: AllReduceResult) -> Side:
    """A simulated run's figures (host names are the first part of a star's link names, h1-s1)."""
    frames = {name.split("-")[0]: (up.frames, down.frames) for name, up, down in result.links}
    dropped = sum(
        up.dropped + down.dropped + up.lost + down.lost for _name, up, down in result.links
    )
    return Side(
        frames,
        result.communication_s,
        result.verified,
        {"retransmissions": sum(result.retransmissions), "dropped": dropped},
    )


def simulate_switch(setup: Setup, link: LinkSpec) -> Side:
    """The switch path in `ina sim`."""
    return simulated_side(simulate(sim_config(setup, link)))


def simulate_ps(setup: Setup, link: LinkSpec) -> Side:
    """The parameter server in `ina sim` (sim/ps.py: hosts/baseline.py's server core on one more
    host)."""
    return simulated_side(run_ps(sim_config(setup, link))[0])


def simulate_ring(setup: Setup, link: LinkSpec) -> Side:
    """The ring in `ina sim` (sim/ring.py: hosts/ring.py's schedule) over sim/tcp.py's TCP, as
    emulation's ring runs over Linux's, with a step's segment sent as one message (hosts/ring.py
    forwards a segment once it has all of it)."""
    segment = 4 * -(-setup.size // setup.workers)
    return simulated_side(run_ring_sim(sim_config(setup, link), TCP_LINUX, chunk=segment))


SIMULATORS: dict[str, Callable[[Setup, LinkSpec], Side]] = {
    "switch": simulate_switch,
    "ps": simulate_ps,
    "ring": simulate_ring,
}
FRAMES_COMPARED = ("switch", "ps")  # the ring's ACKs depend on the kernel's delayed-ACK timing
METHODS = (
    "switch",
    "ps",
    "ring",
)  # in-network aggregation, the host parameter server, the ring over TCP


def topology(method: str, setup: Setup) -> Topology:
    """The star both runners use; the parameter server gets one more host."""
    topo = load("star", setup.workers, 1, slots=setup.window, extra_host=method == "ps")
    return topo.with_link_params({"bw": setup.mbit})


def emulate(method: str, setup: Setup, run_dir: Path) -> Side:
    """One all-reduce in Mininet (root; the caller holds the machine's namespace lock)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    clean.cleanup()
    topo = topology(method, setup)
    bmv2, p4info = compile_program("builtin", setup.elems, POOL_SIZE, run_dir)
    network = Network(topo, str(run_dir), "builtin", f"emucmp-{os.getpid()}")
    captures: dict[str, Capture] = {}
    try:
        network.start()
        installed = program_topology(topo, bmv2, p4info)
        epochs = {job.job_id: job.epoch for jobs in installed.values() for job in jobs}
        captures = {
            h: Capture.start(
                network.host(h), topo.hosts[h].mac, run_dir, f"not ({PROTOCOL_FRAMES[method]})"
            )
            for h in topo.hosts
        }
        load = os.getloadavg()[0]  # the machine's other work: the emulation shares its cores
        before, started = traffic.snapshot(network), time.time()
        if method == "ring":
            reports = run_ring(network, topo, setup)
        else:
            reports = run_workers(
                network,
                topo,
                RunOptions(
                    workers=setup.workers,
                    size=setup.size,
                    elems=setup.elems,
                    slots=setup.window,
                    timeout=setup.timeout,
                    seed=setup.seed,
                    baseline=method == "ps",
                ),
                epochs,
                run_dir,
            )
        counted = traffic.difference(before, traffic.snapshot(network))
        ended = time.time()
        others = {h: c.stop(started, ended) for h, c in captures.items()}
    finally:
        for c in captures.values():
            c.kill()
        network.stop()
    links = counted["links"]
    frames = {
        h: (links[h]["up"]["packets"] - others[h][0], links[h]["down"]["packets"] - others[h][1])
        for h in topo.hosts
    }
    return Side(
        frames,
        max(w.get("elapsed_s", 0.0) for w in reports),
        all(w.get("verified") for w in reports),
        {
            "other_frames": {h: list(o) for h, o in others.items() if any(o)},
            "queue_drops": sum(w["drops"] for ways in links.values() for w in ways.values()),
            **{
                k: sum(w.get(k, 0) for w in reports)
                for k in ("retransmissions", "timeouts", "spurious")
            },
            "elapsed_s": [w.get("elapsed_s") for w in reports],
            "machine_busy": round(counted["machine_busy_s"] / counted["machine_s"], 3),
            "switch_cpu_s": round(counted["switch_cpu_s"], 3),
            "load_average": load,
        },
    )


def set_congestion_control(network: Network, hosts: list[str]) -> None:
    """Each host's TCP congestion control set to the one sim/tcp.py models (a network namespace's
    own sysctl; a host otherwise takes the machine's default, which may be BBR: docs/simulation.md,
    "Against emulation"). Raises RuntimeError when a host refuses it."""
    for h in hosts:
        host = network.host(h)
        host.cmd(f"sysctl -qw net.ipv4.tcp_congestion_control={CONGESTION_CONTROL}")
        got = host.cmd("sysctl -n net.ipv4.tcp_congestion_control").strip()
        if got != CONGESTION_CONTROL:
            raise RuntimeError(
                f"{h}: TCP congestion control is {got!r}, could not set {CONGESTION_CONTROL!r}"
            )


def run_ring(network: Network, topo: Topology, setup: Setup) -> list[dict]:
    """hosts/ring.py's all-reduce over TCP between the job's hosts (bench/ring_worker.py on each),
    with sim/tcp.py's congestion control, all released at once once every one is connected; each
    one's JSON report."""
    job = topo.jobs[0]
    set_congestion_control(network, list(job.workers))
    ips = ",".join(topo.hosts[h].ip for h in job.workers)
    procs = [
        network.host(h).popen(
            [
                sys.executable,
                "-m",
                "ina.bench.ring_worker",
                str(rank),
                ips,
                str(setup.size),
                str(setup.seed + job.id),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank, h in enumerate(job.workers)
    ]
    for proc in procs:  # every rank connected (or failed: its line is empty) ...
        proc.stdout.readline()
    for proc in procs:  # ... then all start together
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write("go\n")
            proc.stdin.flush()
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        lines = out.strip().splitlines()
        reports.append(
            json.loads(lines[-1])
            if proc.returncode == 0 and lines
            else {"verified": False, "error": err}
        )
    return reports


@dataclass
class Capture:
    """tcpdump on one host's interface, keeping the frames that are not the protocol's."""

    proc: subprocess.Popen
    mac: str
    path: Path

    @classmethod
    def start(cls, host, mac: str, run_dir: Path, others: str) -> "Capture":
        """Start it on the frames the filter `others` takes, and wait until it listens (tcpdump
        says so on stderr)."""
        path = run_dir / f"others-{host.name}.txt"
        with open(path, "w") as out:
            proc = host.popen(
                ["tcpdump", "-i", host.defaultIntf().name, "-n", "-e", "-tt", "-l", others],
                stdout=out,
                stderr=subprocess.PIPE,
                text=True,
            )
        said = [proc.stderr.readline()]
        while said[-1] and "listening on" not in said[-1]:
            said.append(proc.stderr.readline())
        if not said[-1]:
            raise RuntimeError(f"tcpdump on {host.name} did not start: {''.join(said).strip()}")
        return cls(proc, mac, path)

    def stop(self, started: float, ended: float) -> tuple[int, int]:
        """Stop it; the frames captured between `started` and `ended` (host, switch side) sent up
        (from the host's MAC) and down. A capture that dropped frames counts nothing exactly."""
        self.proc.send_signal(signal.SIGINT)
        summary = self.proc.communicate(timeout=10)[1]
        dropped = re.search(r"^(\d+) packets dropped by kernel", summary, re.MULTILINE)
        if dropped is None or int(dropped[1]):
            raise RuntimeError(f"the capture of other frames dropped some: {summary.strip()}")
        return other_frames(self.path.read_text(), self.mac, started, ended)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def other_frames(capture: str, mac: str, started: float, ended: float) -> tuple[int, int]:
    """Frames of a `tcpdump -n -e -tt` listing (`TIME SRC > DST, ...`) from `started` to `ended`:
    (sent by `mac`, sent to it or anyone else)."""
    up = down = 0
    for stamp, src, *_ in (line.split() for line in capture.splitlines() if line.strip()):
        if started <= float(stamp) <= ended:
            if src.lower() == mac.lower():
                up += 1
            else:
                down += 1
    return up, down


def compare(
    method: str, setup: Setup, out: Path, reps: int, measured_frame_time: float | None = None
) -> dict:
    """`reps` emulated runs and the simulated ones. Per link the frames of every emulated run beside
    the simulation's; `frames_equal` says whether every lossless emulated run (no worker resent:
    the simulation is lossless) matched them. Times: the emulation's median over its lossless runs
    (over all runs when none was) and its ratio to each simulated time. A flat row: `ina bench`'s
    summary prints it without its lists."""
    emulated = [emulate(method, setup, out / "runs" / f"{method}-{rep}") for rep in range(reps)]
    lossless = [e for e in emulated if e.notes["retransmissions"] == 0]
    links = setup.links(measured_frame_time)
    simulated = {kind: SIMULATORS[method](setup, link) for kind, link in links.items()}
    timed = summarise([e.communication_s for e in lossless or emulated])
    unskewed = summarise([min(e.notes["elapsed_s"]) for e in lossless or emulated])
    row = {
        "method": method,
        **asdict(setup),
        "verified": all(e.verified for e in [*emulated, *simulated.values()]),
        "lossless_runs": len(lossless),
        "frames_equal": None,
        "emulation_s": summarise([e.communication_s for e in emulated]),
        "emulation_timed_s": timed,
        "emulation_last_start_s": unskewed,
    }
    for kind, sim in simulated.items():
        row[f"sim_{kind}_s"] = sim.communication_s
        row[f"sim_{kind}_rate_bps"] = links[kind].rate
        row[f"x_{kind}"] = round(timed["median"] / sim.communication_s, 4)
        row[f"x_{kind}_last_start"] = round(unskewed["median"] / sim.communication_s, 4)
    per_link = []
    for host in sorted(emulated[-1].frames, key=lambda h: int(h[1:])):
        per_link.append(
            {
                "link": host,
                "emulation": [e.frames[host] for e in emulated],
                "simulation": simulated["nominal"].frames[host],
            }
        )
    if lossless and method in FRAMES_COMPARED:
        row["frames_equal"] = all(
            e.frames[link["link"]] == link["simulation"] for link in per_link for e in lossless
        )
    row["links"] = per_link
    row["emulation_runs"] = [e.notes for e in emulated]
    row["simulation_runs"] = [{"rate": kind, **sim.notes} for kind, sim in simulated.items()]
    return row


def bench_sim_vs_emulation(
    out: Path, reps: int, setup: Setup = Setup(), methods: tuple[str, ...] = METHODS
) -> list[dict]:
    """HTB's frame time measured, then every method compared: JSON (sim_vs_emulation.json, every
    run's figures), PNG (sim_vs_emulation.png), printed; returns the rows without their lists."""
    progress = Progress(1 + len(methods), "sim-vs-emulation", own_lines=True)
    measured = htb_frame_time(setup)
    progress.step(f"HTB alone: {measured * 1e6:.2f} us per frame")
    rows = []
    for method in methods:
        rows.append(
            {
                **compare(method, setup, out, reps, measured),
                "htb_frame_time_s": measured,
                "rate_frame_time_s": setup.frame_time(),
            }
        )
        progress.step(method)
    write(out, "sim_vs_emulation", rows)
    for row in rows:
        print(describe(row), flush=True)
    plot(out / "sim_vs_emulation.png", rows)
    return [{k: v for k, v in row.items() if not isinstance(v, list)} for row in rows]


def describe(row: dict) -> str:
    t = row["emulation_s"]
    lines = [
        f"[sim vs emulation] {row['method']}: {row['workers']} workers x {row['size']} int32 (E={row['elems']}, "
        f"window {row['window']}), {row['mbit']:g} Mbit/s links, {t['reps']} emulated runs; frames per link "
        "(emulation: its last run)",
        f"{'link':>6} {'emulation up':>13} {'sim up':>8} {'emulation down':>15} {'sim down':>9}",
    ]
    for link in row["links"]:
        up, down = link["emulation"][-1]
        sim_up, sim_down = link.get("simulation", ("-", "-"))
        lines.append(f"{link['link']:>6} {up:>13} {sim_up:>8} {down:>15} {sim_down:>9}")
    resent = [n["retransmissions"] for n in row["emulation_runs"]]
    lines.append(
        f"frames equal in every lossless run ({row['lossless_runs']} of {len(resent)}; resends per run "
        f"{resent}): {row['frames_equal']}; sums verified: {row['verified']}"
    )
    lines.append(
        f"HTB alone: {row['htb_frame_time_s'] * 1e6:.2f} us per frame (its rate says "
        f"{row['rate_frame_time_s'] * 1e6:.2f})"
    )
    timed = row["emulation_timed_s"]
    lines.append(
        f"communication: emulation {t['median'] * 1e3:.1f} ms median [{t['min'] * 1e3:.1f}, {t['max'] * 1e3:.1f}] "
        f"over all runs, {timed['median'] * 1e3:.1f} ms over the "
        + ("lossless ones" if row["lossless_runs"] else "same (none was lossless)")
        + "; the last worker to start "
        f"{row['emulation_last_start_s']['median'] * 1e3:.1f} ms (the others' time includes their start before it)"
    )
    if "x_nominal" not in row:
        lines.append(f"simulation: this tree's `ina sim` has no {row['method']}")
    for kind in SIM_RATES:
        if f"x_{kind}" in row:
            lines.append(
                f"  sim at {row[f'sim_{kind}_rate_bps'] / 1e6:.4g} Mbit/s ({kind}): "
                f"{row[f'sim_{kind}_s'] * 1e3:.1f} ms, emulation / simulation = {row[f'x_{kind}']:.3f} "
                f"({row[f'x_{kind}_last_start']:.3f} for the last worker to start)"
            )
    return "\n".join(lines)


def plot(path: Path, rows: list[dict]) -> None:
    """Per method: frames per link each way in both runners (emulation's last run), and the
    communication times."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(rows), 2, figsize=(12, 4 * len(rows)), squeeze=False)
    for (frames_ax, time_ax), row in zip(axes, rows, strict=True):
        hosts = [link["link"] for link in row["links"]]
        series = {
            f"emulation {way}": [link["emulation"][-1][i] for link in row["links"]]
            for i, way in enumerate(("up", "down"))
        }
        if "simulation" in row["links"][0]:
            series |= {
                f"simulation {way}": [link["simulation"][i] for link in row["links"]]
                for i, way in enumerate(("up", "down"))
            }
        width = 0.8 / len(series)
        for k, (label, values) in enumerate(series.items()):
            frames_ax.bar(
                [i + (k - (len(series) - 1) / 2) * width for i in range(len(hosts))],
                values,
                width,
                label=label,
            )
        frames_ax.set_xticks(range(len(hosts)), hosts)
        frames_ax.set(title=f"{row['method']}: aggregation frames per link", ylabel="frames")
        frames_ax.legend(fontsize=8, loc="lower center")
        labels, values = (
            ["emulation\n(median, lossless runs)"],
            [row["emulation_timed_s"]["median"] * 1e3],
        )
        for kind in SIM_RATES:
            if f"x_{kind}" in row:
                labels.append(f"sim, {kind}\n{row[f'sim_{kind}_rate_bps'] / 1e6:.4g} Mbit/s")
                values.append(row[f"sim_{kind}_s"] * 1e3)
        time_ax.bar(
            labels, values, color=["#3b7dd8", "#d8843b", "#6a9f58", "#9b59b6"][: len(values)]
        )
        for i, v in enumerate(values):
            time_ax.text(i, v, f"{v:,.1f}", ha="center", va="bottom", fontsize=8)
        time_ax.set(title=f"{row['method']}: communication time", ylabel="ms")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
