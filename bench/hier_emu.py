"""`ina bench hier-emu`: hierarchical against single-switch aggregation in Mininet, on the same
topology and jobs (issue 31's emulation targets).

Each job runs twice per target, loss and link rate: over its tree of switches (`--aggregation
hierarchical`) and summed by its root alone (`--aggregation single`: the same switch, the workers'
UPDATEs forwarded to it hop by hop). Link rates: unshaped, where two shared cores set the time (every
switch and worker is a process; hierarchical aggregation does work at every leaf), and every link
shaped to SHAPED_MBIT (`ina run --bw`), where the links do, as across racks: single-switch
aggregation then carries every worker's UPDATE and RESULT over a leaf's one uplink, hierarchical one
partial sum and one RESULT (SwitchML's and ATP's multi-rack argument). Per job, read from the switches' P4Runtime counters after the run:
- `root_updates_per_chunk`: the root's `job_accepted` / chunks: its child switches (hierarchical)
  or every worker (single);
- `partials_per_chunk`: the tree's `job_partials_sent` summed over its switches / chunks: the
  UPDATEs crossing the tree's switch-to-switch links upward, one per child switch the job spans
  when nothing is lost (a resent partial sum adds one);
- `upper_link_updates_per_chunk`: the UPDATEs crossing switch-to-switch links upward per chunk:
  hierarchical, `partials_per_chunk` (counters); single, every worker's hops to the root (the
  forwarding switches count no aggregation packets, so this is the topology's figure, checked by
  the root's counter holding every worker's UPDATE).
Goodput per worker is the workers' own report (elements summed per second of their all-reduce);
per rep, hierarchical's over single's of the same rep (`goodput_ratio_pairs`, the pairs run a
minute apart at most, so a load that changes falls on both), and with several jobs the same over
all their workers together (`run_goodput_ratio_pairs`: jobs sharing switches and cores take them
from each other, so one job's figure can fall while the run's does not). Unshaped, a run sums
UNSHAPED_ELEMENTS over all its workers, so its all-reduce lasts about half a second whatever the
topology's worker count and a few ms of start-up and scheduling weigh little. CPU, which a loaded
machine does not distort as it does wall time, per aggregated chunk of a job:
- `worker_cpu_us_per_chunk`: a worker's own `allreduce_cpu_s` (every thread of its process during
  its all-reduces, without making arrays or checking sums), the job's workers' mean;
- `switch_cpu_us_per_chunk`: every switch process's CPU while the workers ran (`ina run`'s
  `switch_cpu_s`) over all the run's jobs' chunks, and `switch_cpu_s` per switch;
- `cpu_us_per_chunk`: the two together, every switch and every worker over all jobs' chunks: the
  run's whole CPU cost of one job chunk.
`start_skew_ms` is how far apart a job's workers began (their `started_monotonic_s`, the machine's
clock): each worker times its all-reduce from its own start, so the first to start counts the wait
for the last in its time.
Every worker must verify its sums; a run that does not is printed and flagged (`verified`). The
machine is shared: times are pessimistic; `load` records the 1-minute load average per run.
"""

import math
import os
from pathlib import Path

from ina.bench.results import Progress, summarise, write
from ina.topologies.model import HIERARCHICAL, SINGLE, Topology
from ina.topologies.runner import RunOptions, RunResult, run
from ina.topologies.topo import load
from ina.topologies.tree import Tree, job_tree

POOL_SIZE = 1024  # the switch program's slots: every job's window fits on every switch
ELEMS = {"builtin": 256, "bmv2": 16}  # BMv2 is slower per element: smaller packets, fewer ops
SLOTS = {"builtin": 128, "bmv2": 32}
SIZE = {"builtin": 1 << 18, "bmv2": 1 << 16}  # int32 per worker, shaped (and on BMv2)
# Unshaped, the two shared cores set the time: each run sums this many int32 over all its workers
# (leafspine_hier's 4 workers 2^21 each, fattree4's 16 2^19), about 0.5 s of all-reduce on ina's
# switch (quiet machine). 2^18 per worker on leafspine_hier lasted 40-50 ms, and pairs ranged 0.62x
# to 1.20x.
UNSHAPED_ELEMENTS = {"builtin": 1 << 23}
# Every link's rate in the shaped runs, Mbit/s: a fifth of what ina's switch reaches per worker on
# two shared cores (about 50 Mbit/s on leafspine_hier), so the links set the time, not the CPUs.
# None for BMv2: its CPU binds at about 0.2 Mbit/s per worker, below any rate whose runs fit a bench.
SHAPED_MBIT = {"builtin": 10.0}


def run_size(target: str, link_mbit: float | None, workers: int) -> int:
    """Each worker's int32: a share of UNSHAPED_ELEMENTS unshaped, SIZE per worker otherwise."""
    if link_mbit is None and target in UNSHAPED_ELEMENTS:
        return max(UNSHAPED_ELEMENTS[target] // workers, ELEMS[target])
    return SIZE[target]


def depths(tree: Tree) -> dict[str, int]:
    """Each node's switch-to-switch hops to the root."""
    out: dict[str, int] = {}
    for name, node in tree.nodes.items():  # root first, then breadth-first: parents come first
        out[name] = 0 if node.uplink is None else out[node.uplink.parent] + 1
    return out


def job_figures(topo: Topology, stats: dict, aggregation: str, chunks: int) -> dict[int, dict]:
    """Per job: the counters' packets per chunk (see the module's docstring) and the tree's
    shape, `topo` being the hierarchical variant (its trees say the hops)."""
    figures = {}
    for job in topo.jobs:
        tree = job_tree(topo, job)
        at = {name: stats.get(name, {}).get("jobs", {}).get(job.id, {}) for name in tree.nodes}
        hops = depths(tree)
        row = {
            "child_switches": len(tree.nodes) - 1,
            "workers": len(job.workers),
            "root_updates_per_chunk": at[tree.root].get("accepted", 0) / chunks,
        }
        if aggregation == HIERARCHICAL:
            row["partials_per_chunk"] = sum(c.get("partials_sent", 0) for c in at.values()) / chunks
            row["upper_link_updates_per_chunk"] = row["partials_per_chunk"]
            row["upper_link_source"] = "counters (job_partials_sent)"
        else:
            row["upper_link_updates_per_chunk"] = sum(
                hops[leaf] for leaf, _rank in tree.endpoints.values()
            )
            row["upper_link_source"] = "topology (each worker's hops to the root)"
        figures[job.id] = row
    return figures


def goodput(result: RunResult, job_id: int | None = None) -> float:
    """The job's mean goodput per worker in one run, elements per second (None: every job's
    workers together, where jobs that share switches and cores may take them from each other)."""
    reports = [w for w in result.workers if job_id in (None, w.get("job"))]
    return sum(w.get("goodput_elements_per_s", 0.0) for w in reports) / max(len(reports), 1)


def cpu_figures(result: RunResult, job_id: int, chunks: int, jobs: int) -> dict[str, float]:
    """One run's CPU in microseconds per chunk (see the module's docstring); `chunks` is one
    job's, `jobs` how many ran at once (the switches' and the whole run's CPU is theirs)."""
    reports = [w for w in result.workers if w.get("job") == job_id]
    worker = sum(w.get("allreduce_cpu_s", 0.0) for w in reports) / max(len(reports), 1)
    switches = sum(result.switch_cpu_s.values())
    workers = sum(w.get("allreduce_cpu_s", 0.0) for w in result.workers)
    return {
        "worker_cpu_us_per_chunk": 1e6 * worker / chunks,
        "switch_cpu_us_per_chunk": 1e6 * switches / (chunks * jobs),
        "cpu_us_per_chunk": 1e6 * (switches + workers) / (chunks * jobs),
    }


def job_row(
    topo: Topology,
    job_id: int,
    runs: list[tuple[RunResult, dict, float]],
    chunks: int,
    **setting,
) -> dict:
    """One job's row over its runs in one setting (target, loss, link rate, aggregation)."""
    reports = [[w for w in r.workers if w.get("job") == job_id] for r, _f, _l in runs]
    goodputs = [goodput(r, job_id) for r, _f, _l in runs]
    cpus = [cpu_figures(r, job_id, chunks, len(topo.jobs)) for r, _f, _l in runs]
    shape = runs[0][1][job_id]
    return {
        "topo": topo.name,
        **setting,
        "job": job_id,
        "workers": shape["workers"],
        "child_switches": shape["child_switches"],
        "verified": all(w.get("verified") for ws in reports for w in ws),
        "upper_link_source": shape["upper_link_source"],
        **{
            key: summarise([f[job_id][key] for _r, f, _l in runs])
            for key in shape
            if key.endswith("per_chunk")
        },
        "goodput_elements_per_s_per_worker": summarise(goodputs),
        "jobs_in_run": len(topo.jobs),
        "run_goodput_elements_per_s_per_worker": summarise([goodput(r) for r, _f, _l in runs]),
        "gbps_per_worker": summarise([g * 32 / 1e9 for g in goodputs]),
        "seconds": summarise(
            [max((w.get("elapsed_s", 0.0) for w in ws), default=0.0) for ws in reports]
        ),
        "start_skew_ms": summarise([start_skew_ms(ws) for ws in reports]),
        "retransmissions": summarise(
            [sum(w.get("retransmissions", 0) for w in ws) for ws in reports]
        ),
        **{key: summarise([c[key] for c in cpus]) for key in cpus[0]},
        "switch_cpu_s": {
            name: summarise([r.switch_cpu_s.get(name, 0.0) for r, _f, _l in runs])
            for name in runs[0][0].switch_cpu_s
        },
        "load_1min": summarise([load_avg for _r, _f, load_avg in runs]),
    }


# per rep, hierarchical's figure over single's (the pair run back to back): the key it goes under
PAIR_RATIOS = {
    "goodput_elements_per_s_per_worker": "goodput_ratio_pairs",
    "run_goodput_elements_per_s_per_worker": "run_goodput_ratio_pairs",
    "cpu_us_per_chunk": "cpu_per_chunk_ratio_pairs",
}


def pair_ratios(h: dict, s: dict) -> None:
    """Into the hierarchical row `h`, each of PAIR_RATIOS over `s`'s, rep by rep."""
    for key, name in PAIR_RATIOS.items():
        values = zip(h[key]["values"], s[key]["values"], strict=True)
        h[name] = summarise([a / max(b, 1e-9) for a, b in values])


def start_skew_ms(reports: list[dict]) -> float:
    """How far apart, in ms, the reporting workers began their all-reduces (0 for fewer than two)."""
    starts = [w["started_monotonic_s"] for w in reports if "started_monotonic_s" in w]
    return 1e3 * (max(starts) - min(starts)) if len(starts) > 1 else 0.0


def bench_hier_emu(
    out: Path,
    reps: int,
    topo_name: str,
    targets: tuple[str, ...],
    losses: tuple[float, ...] = (0.0,),
) -> list[dict]:
    """Both aggregations of `topo_name`'s jobs on each target, loss and link rate (unshaped, and
    SHAPED_MBIT where the target has one), `reps` runs each, the two aggregations alternating so
    the shared machine's load falls on both alike: one row per job and setting."""
    hier = load(topo_name).with_aggregation(HIERARCHICAL)
    plan = [
        (t, loss, bw)
        for t in targets
        for loss in losses
        for bw in (None, *([SHAPED_MBIT[t]] if t in SHAPED_MBIT else []))
    ]
    progress = Progress(len(plan) * reps * 2, "hier-emu", own_lines=True)
    rows = []
    workers = sum(len(job.workers) for job in hier.jobs)
    for target, loss, bw in plan:
        elems, size = ELEMS[target], run_size(target, bw, workers)
        chunks = math.ceil(size / elems)
        runs: dict[str, list] = {HIERARCHICAL: [], SINGLE: []}
        for rep in range(reps):
            for aggregation in runs:
                tag = f"{target}-{aggregation}-loss{loss:g}-{f'{bw:g}mbit' if bw else 'unshaped'}-{rep}"
                result = run(
                    RunOptions(
                        topo=topo_name,
                        workers=None,
                        target=target,
                        size=size,
                        elems=elems,
                        slots=SLOTS[target],
                        pool_size=POOL_SIZE,
                        loss=loss or None,
                        aggregation=aggregation,
                        bw=bw,
                        run_dir=str(out / "runs" / f"hier-emu-{tag}"),
                    )
                )
                if not result.ok:
                    print(
                        f"ina bench: hier-emu run {tag} failed verification; see {result.run_dir}"
                    )
                figures = job_figures(hier, result.switch_stats, aggregation, chunks)
                runs[aggregation].append((result, figures, os.getloadavg()[0]))
                progress.step(tag)
        setting = {"target": target, "loss": loss, "link_mbit": bw, "size": size, "elems": elems}
        pair = {
            aggregation: [
                job_row(hier, job.id, done, chunks, aggregation=aggregation, **setting)
                for job in hier.jobs
            ]
            for aggregation, done in runs.items()
        }
        for h, s in zip(pair[HIERARCHICAL], pair[SINGLE], strict=True):
            pair_ratios(h, s)
            print(comparison(h, s))
        rows += pair[HIERARCHICAL] + pair[SINGLE]
    write(out, "hier_emu", rows)
    return rows


def comparison(h: dict, s: dict) -> str:
    """One line per job and setting: both goodputs, the pairs' ratios and the CPU per chunk."""
    rate = f"every link {h['link_mbit']:g} Mbit/s" if h["link_mbit"] else "links unshaped"
    good_h = h["goodput_elements_per_s_per_worker"]["median"]
    good_s = s["goodput_elements_per_s_per_worker"]["median"]
    ratio, cpu, run = (
        h[k]
        for k in ("goodput_ratio_pairs", "cpu_per_chunk_ratio_pairs", "run_goodput_ratio_pairs")
    )
    every_job = (
        f"; all {h['jobs_in_run']} jobs' workers, pairs x{run['median']:.2f} "
        f"[{run['min']:.2f}, {run['max']:.2f}]"
        if h["jobs_in_run"] > 1
        else ""
    )
    return (
        f"hier-emu {h['topo']} job {h['job']} {h['target']}, loss {h['loss']:g}, {rate}: "
        f"goodput per worker hierarchical {good_h / 1e6:.3f} M elem/s, single {good_s / 1e6:.3f} "
        f"(x{good_h / max(good_s, 1e-9):.2f}; pairs x{ratio['median']:.2f} "
        f"[{ratio['min']:.2f}, {ratio['max']:.2f}]{every_job}); CPU per chunk hierarchical "
        f"{cpu_line(h)}, single {cpu_line(s)} (pairs x{cpu['median']:.2f} "
        f"[{cpu['min']:.2f}, {cpu['max']:.2f}]); upper-link UPDATEs per chunk "
        f"{h['upper_link_updates_per_chunk']['median']:g} against "
        f"{s['upper_link_updates_per_chunk']['median']:g}; start skew "
        f"{h['start_skew_ms']['median']:.1f} / {s['start_skew_ms']['median']:.1f} ms; "
        f"verified {h['verified']} / {s['verified']}"
    )


def cpu_line(row: dict) -> str:
    """A row's median CPU per chunk: the run's, its switches' and one worker's."""
    return (
        f"{row['cpu_us_per_chunk']['median']:.1f} us (switches "
        f"{row['switch_cpu_us_per_chunk']['median']:.1f}, a worker "
        f"{row['worker_cpu_us_per_chunk']['median']:.1f})"
    )
