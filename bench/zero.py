"""`ina bench zero`: what zero-block skipping saves (#34). One int32 all-reduce of 8 workers in
`ina sim` at 100 Gbit/s, each chunk zeros at each worker with probability 0, 50%, 90% or 99%
(sim/sparse.py): frame bytes each way, against the same all-reduce sending every chunk in full, and
the simulated communication time, against the run with no zeros. Every sum is checked exact.
"""

from pathlib import Path

from ina.bench import plots
from ina.bench.results import Progress, write
from ina.sim.allreduce import AllReduceConfig
from ina.sim.sparse import dense_bytes, simulate_sparse

ELEMS = 64  # the switch's 32-bit words per packet: 256 B of values, as SwitchML
SHARES = (0.0, 0.5, 0.9, 0.99)


def bench_zero(out: Path, workers: int = 8, size: int = 1 << 18) -> list[dict]:
    config = AllReduceConfig(workers=workers, size=size, elems=ELEMS)
    progress = Progress(len(SHARES), "zero")
    dense = dense_bytes(config)
    rows: list[dict] = []
    for share in SHARES:
        run = simulate_sparse(config, share)
        base = rows[0]["communication_s"] if rows else run.communication_s
        rows.append(
            {
                "zero_share": share,
                "zero_updates_share": run.zero_updates / run.updates,
                "zero_results_share": run.zero_chunks / run.chunks,
                "up_bytes": run.up_bytes,
                "down_bytes": run.down_bytes,
                "dense_bytes_each_way": dense,
                "up_bytes_saved": 1 - run.up_bytes / dense,
                "down_bytes_saved": 1 - run.down_bytes / dense,
                "communication_s": run.communication_s,
                "speedup": base / run.communication_s,
                "exact": run.exact,
            }
        )
        progress.step(f"{share:.0%} zeros")
    write(out, "zero", rows)
    labels = [f"{r['zero_share']:.0%}" for r in rows]
    plots.grouped(
        out / "zero.png",
        f"{workers} workers x {size:,} int32 in ina sim at 100 Gbit/s (E = {ELEMS}), share of zero chunks",
        {
            "wire bytes saved, %": (
                labels,
                {
                    "up (UPDATEs)": [100 * r["up_bytes_saved"] for r in rows],
                    "down (RESULTs)": [100 * r["down_bytes_saved"] for r in rows],
                },
            ),
            "speedup over no zeros": (labels, {"ina sim": [r["speedup"] for r in rows]}),
        },
        "",
    )
    for r in rows:
        print(
            f"zeros {r['zero_share']:>4.0%}: up {r['up_bytes']:>10,} B ({r['up_bytes_saved']:.1%} saved), "
            f"down {r['down_bytes']:>10,} B ({r['down_bytes_saved']:.1%} saved), "
            f"{r['communication_s'] * 1e6:8.1f} us (x{r['speedup']:.2f}), exact {r['exact']}"
        )
    return rows
