"""Resends per lost packet of the workers' loss recovery, in the in-process harness (the real switch
and controller, worker cores on a virtual clock, seeded loss both ways: hosts/inprocess.py).

    python -m ina.bench.loss_inprocess [--workers 2 4] [--loss 0 0.01 0.05 0.1] [--seeds 3] [--policy timeout:5ms]

A run is deterministic for its seed, with no queueing and one fixed latency per hop, so it shows
what the protocol costs per loss, apart from a real host's scheduling (docs/performance.md's loss
sweep sets it beside Mininet runs of `ina run`).
"""

import argparse
import json

import numpy as np

from ina.args import int_range, parsed_by, probability
from ina.hosts.cli import make_array
from ina.hosts.inprocess import InProcessSwitch, RandomLoss
from ina.p4src.protocol import SYNC, Policy


def measure(
    workers: int,
    loss: float,
    seed: int,
    size: int,
    elems: int,
    window: int,
    latency: float,
    policy: Policy = SYNC,
) -> dict:
    """One all-reduce of `size` int32 per worker under `policy` with `loss` on every UPDATE and
    RESULT copy; `exact` compares with the sum of every worker's array (so a partial sum is not)."""
    with InProcessSwitch(
        elems=elems,
        pool_size=max(256, window),
        latency=latency,
        loss=[RandomLoss(loss, loss, seed)] if loss else [],
    ) as net:
        net.add_job(0, workers, window=window, timeout=0.05, policy=policy)
        arrays = [make_array(seed, rank, size, "int32") for rank in range(workers)]
        results = net.allreduce({0: arrays})[0]
        exact = all(np.array_equal(got, np.sum(arrays, axis=0, dtype=np.int32)) for got in results)
        stats = [m.core.stats for m in net.jobs[0]]
    lost, resends = len(net.dropped), sum(s.retransmissions for s in stats)
    return {
        "workers": workers,
        "loss": loss,
        "seed": seed,
        "policy": str(policy),
        "exact": exact,
        "lost": lost,
        "resends": resends,
        "resends_per_lost": round(resends / lost, 3) if lost else None,
        "timeouts": sum(s.timeouts for s in stats),
        "statuses": sum(s.statuses for s in stats),
        "virtual_ms": round(max(s.elapsed for s in stats) * 1e3, 3),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m ina.bench.loss_inprocess", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--workers", type=int_range(1, 32), nargs="+", default=[2, 4])
    p.add_argument("--loss", type=probability, nargs="+", default=[0.0, 0.01, 0.05, 0.10])
    p.add_argument("--seeds", type=int_range(1), default=3, help="runs per point, seeds 1..N")
    p.add_argument("--size", type=int_range(1), default=262144, help="int32 elements per worker")
    p.add_argument("--elems", type=int_range(1), default=64)
    p.add_argument("--window", type=int_range(1), default=128)
    p.add_argument(
        "--latency", type=float, default=0.5e-3, help="one-way seconds per hop (RTT = 2 x latency)"
    )
    p.add_argument(
        "--policy",
        type=parsed_by(Policy.parse),
        default=SYNC,
        help="the job's completion policy (docs/protocol.md), e.g. timeout:5ms",
    )
    args = p.parse_args(argv)
    for workers in args.workers:
        for loss in args.loss:
            for seed in range(1, args.seeds + 1):
                print(
                    json.dumps(
                        measure(
                            workers,
                            loss,
                            seed,
                            args.size,
                            args.elems,
                            args.window,
                            args.latency,
                            args.policy,
                        )
                    ),
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
