"""Where a packet's time goes: per-stage ticks of the native engine, cProfile of the Python one.

The native figures come from the build with -DINA_PROFILE (stage marks around parsing, table
lookups, actions, deparsing and the port loop's receive and send). Ticks become nanoseconds with a
factor measured in process (wall time of a replay over the ticks it recorded); the marks themselves
cost a little, so the profiled build is slower than the normal one and the split, not the total,
is the result.
"""

import cProfile
import io
import pstats
import tempfile
import time
from pathlib import Path

from ina.bench import plots
from ina.bench import switch_inprocess as inproc
from ina.bench.results import write

STAGES = ("parse", "lookup", "actions", "control", "deparse", "other")


def _replay_profile(kind: str, elems: int, seconds: float) -> tuple[dict[str, int], int, float]:
    """(ticks per stage, packets, ns per tick) of an in-process replay on the profiled build."""
    if kind == "forward":
        sw, packets = inproc.forwarding_switch("native", profile=True)
    else:
        sw, packets = inproc.aggregation_switch(elems, 2, "native", profile=True)
    sw.native.profile()  # start from zero: table set-up ran no packets, but be sure
    rounds, wall = 1, 0.0
    while wall < seconds:
        start = time.perf_counter()
        sw.native.replay(packets, rounds)
        wall += time.perf_counter() - start
        rounds *= 2
    ticks, count = sw.native.profile()
    return ticks, count, wall * 1e9 / max(sum(ticks.values()), 1)


def native_stages(out: Path, seconds: float, elems: int, veth: bool) -> str:
    """Nanoseconds per packet in each stage, in process and (as root) over veth; JSON, PNG, text."""
    rows = []
    ns_per_tick = 1.0
    for kind in ("forward", "aggregate"):
        ticks, count, ns_per_tick = _replay_profile(kind, elems, seconds)
        rows.append(
            {
                "mode": "in-process",
                "kind": kind,
                "elems": elems if kind == "aggregate" else 8,
                "packets": count,
                **{s: ticks[s] * ns_per_tick / max(count, 1) for s in STAGES},
            }
        )
    if veth:
        from ina.bench import veth as vb

        for kind in ("forward", "aggregate"):
            e = elems if kind == "aggregate" else 8
            bmv2, p4info = vb.load_program(e, out / f"profile-E{e}")
            with tempfile.TemporaryDirectory() as tmp:
                result = vb.measure(
                    kind,
                    e,
                    seconds,
                    bmv2,
                    p4info,
                    engine="native",
                    profile=str(Path(tmp) / "profile.json"),
                )
            report = result["profile"]
            count = max(report["packets"], 1)
            row = {"mode": "veth", "kind": kind, "elems": e, "packets": report["packets"]}
            row.update({s: report["stages"].get(s, 0) * ns_per_tick / count for s in STAGES})
            row.update({f"io_{k}": v * ns_per_tick / count for k, v in report["io"].items()})
            rows.append(row)
    write(out, "profile_native", rows)
    columns = [*STAGES, "io_receive", "io_send"]
    labels = [f"{r['mode']}\n{r['kind']} E={r['elems']}" for r in rows]
    plots.stacked(
        out / "profile_native.png",
        "Native engine: nanoseconds per packet by stage",
        labels,
        {c: [r.get(c, 0.0) for r in rows] for c in columns},
        "ns per packet",
    )
    header = f"{'':26}" + "".join(f"{c:>11}" for c in columns)
    lines = [
        "native engine, ns per packet by stage (profiled build; io_* = the port loop's system calls)",
        header,
    ]
    for r, label in zip(rows, labels, strict=True):
        lines.append(
            f"{label.replace(chr(10), ' '):26}" + "".join(f"{r.get(c, 0.0):11.0f}" for c in columns)
        )
    text = "\n".join(lines) + "\n"
    (out / "profile_native.txt").write_text(text)
    return text


def python_cprofile(out: Path, seconds: float, elems: int) -> Path:
    """cProfile of the Python engine's in-process aggregation run (profile.txt)."""
    sw, packets = inproc.aggregation_switch(elems, 2, "python")
    profiler = cProfile.Profile()
    profiler.enable()
    pps = inproc.measure(sw, packets, seconds)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(20)
    path = out / "profile.txt"
    path.write_text(
        f"Python engine, aggregation E={elems}: {pps:,.0f} packets/s under the profiler\n"
        "generated functions: parse_* parser, pipe_*/tbl_*/cond_* pipelines, act_* actions, "
        "calc_* checksums, deparse_*; engine.py: the traffic manager\n\n" + text.getvalue()
    )
    return path
