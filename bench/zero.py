"""`ina bench zero`: what zero-block skipping saves (#34). One int32 all-reduce of 8 workers in
`ina sim` at 100 Gbit/s (sim/sparse.py), each chunk zeros with probability 0, 50%, 90% or 99%,
at each worker independently or at all of them alike (shared), with the default window of 128
slots and with 512: frame bytes each way against the same all-reduce sending every chunk in full,
and the simulated communication time against the run with no zeros at that window. Every sum is
checked exact. A ZERO frame is 64 bytes (88 on the wire), not none: each chunk still costs every
worker one header, and 128 slots of such frames no longer fill the link's round trip.
"""

from pathlib import Path

from ina.bench import plots
from ina.bench.results import Progress, write
from ina.sim.allreduce import AllReduceConfig
from ina.sim.sparse import dense_bytes, simulate_sparse

ELEMS = 64  # the switch's 32-bit words per packet: 256 B of values, as SwitchML
SHARES = (0.0, 0.5, 0.9, 0.99)
RUNS = [  # (window, shared): which chunks are zeros, and the slots in flight
    (128, False),
    (128, True),
    (512, True),
]


def bench_zero(out: Path, workers: int = 8, size: int = 1 << 18) -> list[dict]:
    progress = Progress(len(SHARES) * len(RUNS), "zero")
    rows: list[dict] = []
    for window, shared in RUNS:
        config = AllReduceConfig(workers=workers, size=size, elems=ELEMS, window=window)
        dense = dense_bytes(config)
        base = None
        for share in SHARES:
            run = simulate_sparse(config, share, shared)
            base = base or run.communication_s
            rows.append(
                {
                    "window": window,
                    "shared": shared,
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
            progress.step(f"window {window}, {'shared' if shared else 'per worker'}, {share:.0%}")
    write(out, "zero", rows)
    plot(out, rows, f"{workers} workers x {size:,} int32 in ina sim at 100 Gbit/s, E = {ELEMS}")
    for r in rows:
        print(
            f"window {r['window']:>3} {'shared    ' if r['shared'] else 'per worker'} zeros "
            f"{r['zero_share']:>4.0%}: up {r['up_bytes']:>10,} B ({r['up_bytes_saved']:.1%} saved), "
            f"down {r['down_bytes']:>10,} B ({r['down_bytes_saved']:.1%} saved), "
            f"{r['communication_s'] * 1e6:6.1f} us (x{r['speedup']:.2f}), exact {r['exact']}"
        )
    return rows


def plot(out: Path, rows: list[dict], title: str) -> None:
    """zero_bytes.png (frame bytes saved each way) and zero_time.png (speedup) against the share of
    zero chunks, one line per run of RUNS."""
    runs = {
        f"window {w}, {'shared' if s else 'per worker'}": [
            r for r in rows if (r["window"], r["shared"]) == (w, s)
        ]
        for w, s in RUNS
    }
    shares = [100 * share for share in SHARES]
    plots.lines(
        out / "zero_bytes.png",
        title,
        "chunks that are zeros, %",
        "frame bytes saved, %",
        {
            f"{name}, {way}": (shares, [100 * r[f"{key}_bytes_saved"] for r in group])
            for name, group in runs.items()
            for way, key in (("UPDATEs", "up"), ("RESULTs", "down"))
        },
    )
    plots.lines(
        out / "zero_time.png",
        title,
        "chunks that are zeros, %",
        "speedup over no zeros",
        {name: (shares, [r["speedup"] for r in group]) for name, group in runs.items()},
    )
