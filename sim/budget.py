"""What an `ina sim` run will take in memory, estimated before it runs, and the refusal of a run
(or of a sweep's points at once) that would not fit in the memory this machine has available.

The estimate is linear in what the run holds, its constants a least-squares fit to the peak RSS
(/usr/bin/time -v) of 13 runs from 2 workers to 256 and from 1 switch to 80 (docs/simulation.md,
"Memory": every run within 12% of its estimate): a process with the compiled program and one switch;
each more switch (a `Switch` on the native engine, its P4Runtime server and tables); each slot of
the program's pool on every switch (its registers); each slot a worker uses (its core's buffer and
state); each element a worker all-reduces (its array, the core's chunks and packed payload, its
result; float32 converts more), and each element once more for the check (the expected sum in
int64 and its wrapped copy).
"""

import os
from collections.abc import Sequence

from ina.sim.allreduce import AllReduceConfig, packets_per_worker, pool_size
from ina.topologies.topo import Topology

BASE = 81.4e6  # bytes: Python, numpy, gRPC, the compiled program, one switch
PER_SWITCH = 4.1e6  # each switch after the first
PER_POOL_SLOT = 3.5e3  # per switch
PER_SLOT = 2.6e3  # per worker, per slot it uses (its window, or fewer when it has fewer packets)
PER_ELEMENT = {"int32": 21.0, "float32": 27.0}  # per worker
CHECK_PER_ELEMENT = 24.0  # once


def estimate(config: AllReduceConfig, topo: Topology) -> float:
    """Bytes the run's process will peak at, about."""
    workers = sum(len(job.workers) for job in topo.jobs)
    switches = len(topo.switches)
    slots = min(config.window, packets_per_worker(config))
    return (
        BASE
        + PER_SWITCH * (switches - 1)
        + PER_POOL_SLOT * switches * pool_size(topo)
        + workers * (PER_SLOT * slots + PER_ELEMENT[config.dtype] * config.size)
        + CHECK_PER_ELEMENT * config.size
    )


def available() -> float:
    """Bytes this machine can give a new process now: the kernel's MemAvailable."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def refusal(config: AllReduceConfig, topo: Topology, free: float | None = None) -> str | None:
    """None when the run's estimate fits in `free` bytes (default: `available()`), else the parser
    error naming --size, the estimate, what is available and the largest --size that fits."""
    free = available() if free is None else free
    need = estimate(config, topo)
    if need <= free:
        return None
    workers = sum(len(job.workers) for job in topo.jobs)
    per_element = workers * PER_ELEMENT[config.dtype] + CHECK_PER_ELEMENT
    largest = int((free - (need - per_element * config.size)) // per_element)
    where = (
        f"at most {largest:,} here"
        if largest >= 1
        else "too large here at any size (fewer workers or switches)"
    )
    return (
        f"argument --size: {config.size:,} {config.dtype} x {workers} workers needs an estimated {gb(need)} of "
        f"memory, above the {gb(free)} available; --size {where} (sim/budget.py)"
    )


def most_at_once(
    runs: Sequence[tuple[AllReduceConfig, Topology]], free: float | None = None
) -> int:
    """How many runs may run at once: the most whose largest estimates fit in `free` bytes together
    (at least 1: each alone was checked by `refusal`)."""
    free = available() if free is None else free
    needs = sorted((estimate(config, topo) for config, topo in runs), reverse=True)
    return max([1, *(k for k in range(1, len(needs) + 1) if sum(needs[:k]) <= free)])


def parallel_refusal(
    runs: Sequence[tuple[AllReduceConfig, Topology]], parallel: int, free: float | None = None
) -> str | None:
    """None when the `parallel` largest runs fit in `free` bytes together (they may run at once),
    else the parser error naming --parallel and the most that fit."""
    free = available() if free is None else free
    together = sum(
        sorted((estimate(config, topo) for config, topo in runs), reverse=True)[:parallel]
    )
    if together <= free:
        return None
    return (
        f"argument --parallel: {min(parallel, len(runs))} points at once need an estimated {gb(together)} of "
        f"memory, above the {gb(free)} available; --parallel at most {most_at_once(runs, free)} here "
        "(sim/budget.py)"
    )


def gb(size: float) -> str:
    return f"{size / 1e9:.2f} GB"
