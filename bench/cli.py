"""`ina bench`: compile time, switch packets/s (in process and over veth), all-reduce goodput,
communication time of a replayed model's training iterations (train: switch, ring, parameter server),
the controller's time to primary while streams flood the P4Runtime port (arbitration), a huge
pipeline pushed over P4Runtime (hostile: time to answer, memory, Reads meanwhile), what a big
P4Runtime message costs the switch's server and what real ones weigh (p4runtime), one all-reduce in
Mininet and in `ina sim` side by side (sim-vs-emulation: frames per link, times), hierarchical
against single-switch aggregation in Mininet (hier-emu: upper-link UPDATEs per chunk from the
switches' counters, goodput per worker), the switch's slot pool under a churn of jobs per
allocation policy (pool) and preemption with a short churn through `ina ctl` against a real
switch in Mininet (pool-emu), elements/s, wire bytes and accuracy per lane width (lanes),
hierarchical aggregation's upper-link packets and goodput from 32 to 1,024 workers against
the ring in `ina sim` (hier), wire bytes and time zero-block skipping saves (zero).

Each benchmark repeats, reports median and spread, writes JSON (with the machine and git revision)
and PNG plots into --out, and a markdown summary (summary.md). Timing never decides pass or fail.
"""

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ina.args import float_range, int_choice, int_range
from ina.bench import plots
from ina.bench.results import Progress, summarise, write
from ina.p4src.protocol import ELEMS_CHOICES
from ina.sim.churn import TraceError
from ina.topologies import lock
from ina.topologies.lock import MachineBusy


def bench_compile(out: Path, reps: int) -> list[dict]:
    from ina.compiler import compile_file
    from ina.p4src import AGGREGATE_P4

    rows = []
    progress = Progress(3 * reps, "compile")
    for elems in (16, 32, 64):
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            compile_file(AGGREGATE_P4, defines={"ELEMS": str(elems)})
            times.append(time.perf_counter() - t0)
            progress.step(f"ELEMS={elems}")
        rows.append({"compiler": "ina", "elems": elems, "seconds": summarise(times)})
    if shutil.which("p4c-bm2-ss"):
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            subprocess.run(
                ["p4c-bm2-ss", "-o", str(out / "p4c.json"), str(AGGREGATE_P4)],
                check=True,
                capture_output=True,
            )
            times.append(time.perf_counter() - t0)
        rows.append({"compiler": "p4c-bm2-ss", "elems": 64, "seconds": summarise(times)})
    write(out, "compile", rows)
    plots.bars(
        out / "compile.png",
        "Compile time of p4src/aggregate.p4",
        [f"{r['compiler']} E={r['elems']}" for r in rows],
        [r["seconds"]["median"] * 1000 for r in rows],
        "milliseconds (median)",
    )
    return rows


SWITCH_CONFIGS = (("forward", 8), ("aggregate", 16), ("aggregate", 32), ("aggregate", 64))


def bench_switch(
    out: Path,
    reps: int,
    seconds: float,
    veth: bool,
    bmv2: bool = False,
    configs: Sequence[tuple[str, int]] = SWITCH_CONFIGS,
) -> list[dict]:
    """Packets/s of both engines, in process and over veth, and the I/O ceiling of the links;
    with `bmv2`, simple_switch_grpc over the same veths in the same run, and the ratio.
    `configs`: the (kind, elements per packet) programs measured."""
    from ina.bench import switch_inprocess as inproc

    rows = []
    engines = ("native", "python")
    bmv2_runs = len(configs) * reps if veth and bmv2 else 0
    progress = Progress(
        len(configs) * len(engines) * reps * (2 if veth else 1) + (reps if veth else 0) + bmv2_runs,
        "switch",
    )
    for engine in engines:
        for kind, elems in configs:
            values = []
            for _ in range(reps):
                sw, packets = (
                    inproc.forwarding_switch(engine)
                    if kind == "forward"
                    else inproc.aggregation_switch(elems, 2, engine)
                )
                values.append(inproc.measure(sw, packets, seconds))
                progress.step(f"in-process {engine} {kind} E={elems}")
            rows.append(
                {
                    "mode": "in-process",
                    "engine": engine,
                    "kind": kind,
                    "elems": elems,
                    "packets_per_s": summarise(values),
                }
            )
    if veth:
        from ina.bench import veth as vb

        values = []
        for _ in range(reps):
            values.append(vb.measure_ceiling(seconds)["delivered_pps"])
            progress.step("veth I/O ceiling")
        rows.append(
            {
                "mode": "veth",
                "engine": "C loop, no P4",
                "kind": "ceiling",
                "elems": 0,
                "packets_per_s": summarise(values),
            }
        )
        # BMv2 beside them (the Vagrant VM): same frames, same run, same links.
        for engine in (*engines, "simple_switch") if bmv2 else engines:
            target = "bmv2" if engine == "simple_switch" else "builtin"
            for kind, elems in configs:
                bmv2, p4info = vb.load_program(elems, out / f"veth-{target}-E{elems}", target)
                values = []
                for _ in range(reps):
                    values.append(
                        vb.measure(kind, elems, seconds, bmv2, p4info, engine=engine)[
                            "delivered_pps"
                        ]
                    )
                    progress.step(f"veth {engine} {kind} E={elems}")
                rows.append(
                    {
                        "mode": "veth",
                        "engine": engine,
                        "kind": kind,
                        "elems": elems,
                        "packets_per_s": summarise(values),
                    }
                )
        if bmv2:
            bmv2_rows = {(r["kind"], r["elems"]): r for r in rows if r["engine"] == "simple_switch"}
            for r in rows:
                ref = bmv2_rows.get((r["kind"], r["elems"]))
                if r["mode"] == "veth" and ref and r is not ref:
                    r["x_simple_switch"] = round(
                        r["packets_per_s"]["median"] / max(ref["packets_per_s"]["median"], 1), 2
                    )
    write(out, "switch", rows)
    panels, lines = {}, {}
    for mode in dict.fromkeys(r["mode"] for r in rows):
        measured = [r for r in rows if r["mode"] == mode and r["kind"] != "ceiling"]
        cats = list(dict.fromkeys(f"{r['kind']} E={r['elems']}" for r in measured))
        series = {}
        for r in measured:
            series.setdefault(r["engine"], [0.0] * len(cats))[
                cats.index(f"{r['kind']} E={r['elems']}")
            ] = r["packets_per_s"]["median"]
        panels[mode] = (cats, series)
        ceiling = [
            r["packets_per_s"]["median"]
            for r in rows
            if r["mode"] == mode and r["kind"] == "ceiling"
        ]
        lines[mode] = {"I/O ceiling": ceiling[0]} if ceiling else {}
    plots.grouped(
        out / "switch.png", "ina switch packets/s by engine (median)", panels, "packets/s", lines
    )
    return rows


def bench_profile(out: Path, seconds: float, elems: int = 64, veth: bool = False) -> str:
    """Per-stage time of the native engine (and over veth as root), cProfile of the Python one."""
    from ina.bench import profile

    text = profile.native_stages(out, seconds, elems, veth)
    return text + "\n" + profile.python_cprofile(out, seconds, elems).read_text()


BASE = {"workers": 2, "size": 1 << 16, "elems": 64, "slots": 128, "loss": 0.0, "jobs": 1}
QUICK_SWEEPS = {"workers": [2, 4], "loss": [0.0, 0.01], "elems": [16, 64], "jobs": [1, 2]}
FULL_SWEEPS = {
    "workers": [2, 4, 8, 16],
    "size": [1 << 15, 1 << 18, 1 << 20],
    "elems": [16, 32, 64, 128, 256],
    "slots": [32, 128, 256],
    "loss": [0.0, 0.01, 0.05, 0.10],
    "jobs": [1, 2, 4],
}
LABELS = {
    "workers": "workers",
    "size": "elements per worker",
    "elems": "elements per packet (E)",
    "slots": "window (slots per job)",
    "loss": "loss probability",
    "jobs": "jobs sharing the switch",
}


def bench_allreduce(
    out: Path,
    reps: int,
    sweeps: dict[str, list],
    base: dict | None = None,
    targets: tuple[str, ...] = ("builtin",),
) -> list[dict]:
    """End-to-end all-reduce in Mininet, one parameter swept at a time from `base`, on each target.

    The workers sweep also runs the host-only baseline (a parameter server) on the same topology.
    The jobs sweep uses 4 workers split into jobs. Identical configurations run once.
    """
    from ina.topologies.runner import RunOptions, run

    base = {**BASE, **(base or {})}
    plan: list[tuple[str, dict, bool]] = []
    for target in targets:
        for name, values in sweeps.items():
            for value in values:
                config = {"target": target, **base, name: value}
                if name == "jobs":
                    config["workers"] = max(4, value)
                plan.append((name, config, False))
                if name == "workers" and target == targets[0]:
                    plan.append((name, config, True))
    measured: dict[tuple, dict] = {}
    unique = {(tuple(sorted(c.items())), b) for _n, c, b in plan}
    progress = Progress(len(unique) * reps, "allreduce", own_lines=True)
    rows = []
    for name, config, baseline in plan:
        key = (tuple(sorted(config.items())), baseline)
        if key not in measured:
            goodputs, times, retrans, lost, cpu = [], [], [], [], []
            for rep in range(reps):
                tag = "-".join(f"{k}{v}" for k, v in sorted(config.items())) + (
                    "-baseline" if baseline else ""
                )
                result = run(
                    RunOptions(
                        target=config["target"],
                        workers=config["workers"],
                        size=config["size"],
                        elems=config["elems"],
                        slots=config["slots"],
                        loss=config["loss"] or None,
                        jobs=config["jobs"],
                        baseline=baseline,
                        pool_size=1024,
                        run_dir=str(out / "runs" / f"{tag}-{rep}"),
                    )
                )
                ok = [w for w in result.workers if w.get("verified")]
                if len(ok) != len(result.workers):
                    print(f"ina bench: a run of {tag} failed verification; see {result.run_dir}")
                goodputs.append(sum(w["goodput_elements_per_s"] for w in ok) / max(len(ok), 1))
                times.append(max((w["elapsed_s"] for w in ok), default=0.0))
                retrans.append(sum(w["retransmissions"] for w in ok))
                lost.append(dropped(result.switch_stats))
                cpu.append(sum(result.switch_cpu_s.values()))
                progress.step(f"{'baseline' if baseline else 'ina'} {tag}")
            measured[key] = {
                "goodput_elements_per_s_per_worker": summarise(goodputs),
                "gbps_per_worker": summarise([g * 32 / 1e9 for g in goodputs]),
                "seconds": summarise(times),
                "retransmissions": summarise(retrans),
                "lost_packets": summarise(lost),
                "switch_cpu_s": summarise(cpu),
            }
            if all(lost):
                measured[key]["resends_per_lost"] = summarise(
                    [r / n for r, n in zip(retrans, lost, strict=True)]
                )
        rows.append(
            {
                "sweep": name,
                **config,
                "aggregation": "host baseline" if baseline else "in-network",
                **measured[key],
            }
        )
    write(out, "allreduce", rows)
    for name in sweeps:
        series = {}
        for target in targets:
            for label in ("in-network", "host baseline"):
                pts = [
                    r
                    for r in rows
                    if r["sweep"] == name and r["aggregation"] == label and r["target"] == target
                ]
                if pts:
                    key = (
                        label
                        if len(targets) == 1
                        else f"{label} ({'ina' if target == 'builtin' else 'BMv2'})"
                    )
                    series[key] = (
                        [r[name] for r in pts],
                        [r["goodput_elements_per_s_per_worker"]["median"] for r in pts],
                    )
        plots.lines(
            out / f"allreduce_vs_{name}.png",
            f"All-reduce goodput per worker vs {LABELS[name]}",
            LABELS[name],
            "elements/s per worker (median)",
            series,
        )
    if "loss" in sweeps:
        series = {}
        for target in targets:
            pts = [
                r
                for r in rows
                if r["sweep"] == "loss" and r["target"] == target and "resends_per_lost" in r
            ]
            if pts:
                series["in-network" if len(targets) == 1 else target] = (
                    [r["loss"] for r in pts],
                    [r["resends_per_lost"]["median"] for r in pts],
                )
        plots.lines(
            out / "allreduce_resends_vs_loss.png",
            "Retransmissions per lost packet vs loss",
            LABELS["loss"],
            "retransmissions per lost packet (median)",
            series,
        )
    return rows


def dropped(switch_stats: dict) -> int:
    """Packets the switches' drop simulators dropped in a run (`Aggregation.stats`, per port)."""
    return sum(
        counts.get("drop_sim_in", 0) + counts.get("drop_sim_out", 0)
        for stats in switch_stats.values()
        for counts in stats.get("ports", {}).values()
    )


def _num(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.4g}"


def markdown(out: Path, sections: dict[str, list[dict]]) -> Path:
    lines = ["# ina benchmark summary", ""]
    for name, rows in sections.items():
        lines += [f"## {name}", ""]
        if not rows:
            continue
        names = list(
            dict.fromkeys(k for r in rows for k in r)
        )  # every column any row has, in order
        keys = [k for k in names if not any(isinstance(r.get(k), dict) for r in rows)]
        # summaries (median, min, max); any other mapping (per switch, say) stays in the JSON
        metrics = [
            k
            for k in names
            if k not in keys and all("median" in r[k] for r in rows if isinstance(r.get(k), dict))
        ]
        lines.append("| " + " | ".join(keys + [f"{m} (median [min, max])" for m in metrics]) + " |")
        lines.append("|" + "---|" * (len(keys) + len(metrics)))
        for r in rows:
            cells = [str(r.get(k, "")) for k in keys] + [
                f"{_num(r[m]['median'])} [{_num(r[m]['min'])}, {_num(r[m]['max'])}]"
                if m in r
                else ""
                for m in metrics
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    path = out / "summary.md"
    path.write_text("\n".join(lines))
    return path


MAX_REPS = (
    1000  # repetitions of every configuration: more never ends in practice (sweeps multiply them)
)
MAX_SECONDS = 3600.0  # measuring time per configuration, likewise


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ina bench", description=__doc__)
    p.add_argument(
        "what",
        choices=[
            "compile",
            "core",
            "switch",
            "allreduce",
            "profile",
            "train",
            "stragglers",
            "sim",
            "sim-shape",
            "arbitration",
            "hostile",
            "p4runtime",
            "sim-vs-emulation",
            "hier-emu",
            "pool",
            "pool-emu",
            "lanes",
            "hier",
            "zero",
            "all",
        ],
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--quick", action="store_true", help="a short sweep (the default; make bench)"
    )
    mode.add_argument("--full", action="store_true", help="every sweep of docs/performance.md")
    p.add_argument("--out", default="results", help="directory for JSON, PNG and summary.md")
    p.add_argument("--reps", type=int_range(1, MAX_REPS), default=3)
    p.add_argument(
        "--sweep", choices=list(FULL_SWEEPS), help="allreduce: this sweep alone (its --full values)"
    )
    p.add_argument(
        "--workers",
        type=int_range(2, 16),
        help="allreduce: workers of every run but the workers sweep's",
    )
    p.add_argument(
        "--elems",
        type=int_choice(ELEMS_CHOICES),
        help="allreduce and train: elements per packet of every run but the elems sweep's",
    )
    p.add_argument(
        "--seconds",
        type=float_range(0.0, MAX_SECONDS, lo_open=True),
        default=2.0,
        help="measuring time per switch configuration",
    )
    p.add_argument(
        "--no-veth",
        action="store_true",
        help="skip the veth measurements of switch and profile (no root needed)",
    )
    p.add_argument(
        "--target",
        choices=["auto", "builtin", "bmv2"],
        default="auto",
        help="bmv2: also measure simple_switch_grpc (and p4c) beside ina in the same run; "
        "auto: do so when BMv2 is installed (the Vagrant VM); builtin: ina only",
    )
    p.add_argument(
        "--topo",
        default="leafspine_hier",
        help="hier-emu: the topology whose jobs run hierarchical and single (default "
        "leafspine_hier; e.g. fattree4, fattree:4:hierarchical)",
    )
    p.add_argument(
        "--trace",
        metavar="CSV",
        help="pool: a churn trace of your own (arrival_s,workers,duration_s[,model][,slots]; "
        "docs/simulation.md) instead of the generated one",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    bmv2_installed = bool(shutil.which("simple_switch_grpc") and shutil.which("p4c-bm2-ss"))
    if args.target == "bmv2" and not bmv2_installed:
        print(
            "ina bench: --target bmv2 needs simple_switch_grpc and p4c-bm2-ss on PATH "
            "(they come with the Vagrant VM: vagrant up); use --target builtin here"
        )
        return 1
    with_bmv2 = args.target == "bmv2" or (args.target == "auto" and bmv2_installed)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        p.error(f"argument --out: cannot create {out}: {err.strerror}")
    needs_root = args.what in (
        "allreduce",
        "train",
        "stragglers",
        "sim-vs-emulation",
        "hier-emu",
        "pool-emu",
        "all",
    ) or (args.what in ("switch", "profile") and not args.no_veth)
    if needs_root and os.geteuid() != 0:
        print(
            "ina bench: veth and Mininet measurements need root (or use: ina bench switch --no-veth)"
        )
        return 1
    try:  # veth pairs and Mininet networks: the machine is held for the whole bench (topologies/lock.py)
        with lock.machine() if needs_root else contextlib.nullcontext():
            sections = measure(args, out, with_bmv2)
    except MachineBusy as err:
        print(f"ina bench: {err}", file=sys.stderr)
        return 2
    except TraceError as err:
        print(f"ina bench: {err}", file=sys.stderr)
        return 1
    print(markdown(out, sections).read_text())
    print(f"results, plots and summary in {out}/")
    return 0


def measure(args: argparse.Namespace, out: Path, with_bmv2: bool) -> dict:
    """Every section `args.what` names, measured and written under `out`."""
    sections = {}
    if args.what in ("compile", "all"):
        sections["compile"] = bench_compile(out, args.reps)
    if args.what in ("core", "all"):
        from ina.bench.core import bench_core

        sections["core"] = bench_core(out, args.reps, args.full)
    if args.what in ("switch", "all"):
        sections["switch"] = bench_switch(out, args.reps, args.seconds, not args.no_veth, with_bmv2)
    if args.what in ("allreduce", "all"):
        sweeps = FULL_SWEEPS if args.full else QUICK_SWEEPS
        if args.sweep:
            sweeps = {args.sweep: FULL_SWEEPS[args.sweep]}
        base = {"size": 1 << 18} if args.full or args.sweep else {}
        if args.workers:
            base["workers"] = args.workers
        if args.elems:
            base["elems"] = args.elems
        sections["allreduce"] = bench_allreduce(
            out, args.reps, sweeps, base, ("builtin", "bmv2") if with_bmv2 else ("builtin",)
        )
    if args.what in ("train", "all"):
        from ina.bench.train import bench_train

        sections["train"] = bench_train(
            out, iterations=20 if args.full else 10, **({"elems": args.elems} if args.elems else {})
        )
    if args.what in ("stragglers", "all"):
        from ina.bench.stragglers import bench_stragglers

        sections["stragglers"] = bench_stragglers(out, iterations=40 if args.full else 20)
        if args.full:
            from ina.bench.stragglers import bench_policy_training

            sections["policies"] = bench_policy_training(out)
    if args.what in ("sim", "all"):
        from ina.bench.sim import bench_fabrics, bench_sim

        sections["sim"] = bench_sim(out, args.reps, args.full)
        sections["sim_fabrics"] = bench_fabrics(out)
    if args.what in ("sim-vs-emulation", "all"):
        from ina.bench.sim_vs_emulation import bench_sim_vs_emulation

        sections["sim_vs_emulation"] = bench_sim_vs_emulation(out, args.reps)
    if args.what in ("hier-emu", "all"):
        from ina.bench.hier_emu import bench_hier_emu

        sections["hier_emu"] = bench_hier_emu(
            out,
            args.reps,
            args.topo,
            ("builtin", "bmv2") if with_bmv2 else ("builtin",),
            (0.0, 0.01) if args.full else (0.0,),
        )
    if args.what in ("sim-shape", "all"):
        from ina.bench.sim_shape import bench_sim_shape

        sections["sim_shape"] = bench_sim_shape(out, args.full)
    if args.what in ("arbitration", "all"):
        from ina.bench.arbitration import bench_arbitration

        sections["arbitration"] = bench_arbitration(out, trials=10 if args.full else args.reps)
    if args.what in ("hostile", "all"):
        from ina.bench.hostile import bench_hostile

        sections["hostile"] = bench_hostile(out)
    if args.what in ("p4runtime", "all"):
        from ina.bench.p4runtime_load import bench_p4runtime

        sections["p4runtime"] = bench_p4runtime(out, args.reps)
    if args.what in ("pool", "all"):
        from ina.bench.pool import bench_pool

        sections["pool"] = bench_pool(out, jobs=5000 if args.full else 2000, trace=args.trace)
    if args.what in ("pool-emu", "all"):
        from ina.bench.pool_emu import bench_pool_emu

        sections["pool_emu"] = bench_pool_emu(out)
    if args.what in ("lanes", "all"):
        from ina.bench.lanes import bench_lanes

        sections["lanes"] = bench_lanes(out, epochs=20 if args.full else 10)
    if args.what in ("hier", "all"):
        from ina.bench.hier import bench_hier

        sections["hier_links"], sections["hier_scale"] = bench_hier(out, args.full)
    if args.what in ("zero", "all"):
        from ina.bench.zero import bench_zero

        sections["zero"] = bench_zero(out)
    if args.what in ("profile", "all"):
        print(bench_profile(out, args.seconds, veth=not args.no_veth))
    return sections
