"""`ina bench hier-emu`: hierarchical against single-switch aggregation in Mininet, on the same
topology and jobs (issue 31's emulation targets).

Each job runs twice per target and loss: over its tree of switches (`--aggregation hierarchical`)
and summed by its root alone (`--aggregation single`: the same switch, the workers' UPDATEs
forwarded to it hop by hop). Per job, read from the switches' P4Runtime counters after the run:
- `root_updates_per_chunk`: the root's `job_accepted` / chunks: its child switches (hierarchical)
  or every worker (single);
- `partials_per_chunk`: the tree's `job_partials_sent` summed over its switches / chunks: the
  UPDATEs crossing the tree's switch-to-switch links upward, one per child switch the job spans
  when nothing is lost (a resent partial sum adds one);
- `upper_link_updates_per_chunk`: the UPDATEs crossing switch-to-switch links upward per chunk:
  hierarchical, `partials_per_chunk` (counters); single, every worker's hops to the root (the
  forwarding switches count no aggregation packets, so this is the topology's figure, checked by
  the root's counter holding every worker's UPDATE).
Goodput per worker is the workers' own report (elements summed per second of their all-reduce).
Every worker must verify its sums; a run that does not is printed and flagged (`verified`). The
machine is shared: times are pessimistic; `load` records the 1-minute load average per run.
"""

import math
import os
from pathlib import Path

from ina.bench.results import Progress, summarise, write
from ina.topologies.model import HIERARCHICAL, SINGLE, Topology
from ina.topologies.runner import RunOptions, run
from ina.topologies.topo import load
from ina.topologies.tree import Tree, job_tree

POOL_SIZE = 1024  # the switch program's slots: every job's window fits on every switch
ELEMS = {"builtin": 256, "bmv2": 16}  # BMv2 is slower per element: smaller packets, fewer ops
SLOTS = {"builtin": 128, "bmv2": 32}


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


def bench_hier_emu(
    out: Path,
    reps: int,
    topo_name: str,
    targets: tuple[str, ...],
    losses: tuple[float, ...] = (0.0,),
    size: int = 1 << 16,
) -> list[dict]:
    """Both aggregations of `topo_name`'s jobs on each target and loss, `reps` runs each: one row
    per job."""
    hier = load(topo_name).with_aggregation(HIERARCHICAL)
    plan = [(t, loss, a) for t in targets for loss in losses for a in (HIERARCHICAL, SINGLE)]
    progress = Progress(len(plan) * reps, "hier-emu", own_lines=True)
    rows = []
    for target, loss, aggregation in plan:
        elems = ELEMS[target]
        chunks = math.ceil(size / elems)
        runs = []
        for rep in range(reps):
            tag = f"{target}-{aggregation}-loss{loss:g}-{rep}"
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
                    run_dir=str(out / "runs" / f"hier-emu-{tag}"),
                )
            )
            if not result.ok:
                print(f"ina bench: hier-emu run {tag} failed verification; see {result.run_dir}")
            figures = job_figures(hier, result.switch_stats, aggregation, chunks)
            runs.append((result, figures, os.getloadavg()[0]))
            progress.step(tag)
        for job in hier.jobs:
            reports = [[w for w in r.workers if w.get("job") == job.id] for r, _f, _l in runs]
            goodputs = [
                sum(w.get("goodput_elements_per_s", 0.0) for w in ws) / max(len(ws), 1)
                for ws in reports
            ]
            shape = runs[0][1][job.id]
            rows.append(
                {
                    "topo": topo_name,
                    "target": target,
                    "aggregation": aggregation,
                    "loss": loss,
                    "job": job.id,
                    "workers": shape["workers"],
                    "child_switches": shape["child_switches"],
                    "size": size,
                    "elems": elems,
                    "chunks": chunks,
                    "verified": all(w.get("verified") for ws in reports for w in ws),
                    "upper_link_source": shape["upper_link_source"],
                    **{
                        key: summarise([f[job.id][key] for _r, f, _l in runs])
                        for key in shape
                        if key.endswith("per_chunk")
                    },
                    "goodput_elements_per_s_per_worker": summarise(goodputs),
                    "gbps_per_worker": summarise([g * 32 / 1e9 for g in goodputs]),
                    "seconds": summarise(
                        [max((w.get("elapsed_s", 0.0) for w in ws), default=0.0) for ws in reports]
                    ),
                    "retransmissions": summarise(
                        [sum(w.get("retransmissions", 0) for w in ws) for ws in reports]
                    ),
                    "load_1min": summarise([load_avg for _r, _f, load_avg in runs]),
                }
            )
    write(out, "hier_emu", rows)
    return rows
