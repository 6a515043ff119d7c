"""Best effort under contention (issue 33): jobs placed on one switch's pool too small for them
all, each with a host fallback server, in the in-process harness (virtual time, the real switch
program and controller, the workers' real cores). The allocator places what fits and
`allocators.best_effort` the rest (fewer slots, or a hashed range shared with another job); a chunk
whose slot/set another job holds is summed by its job's server (hosts/baseline.py `ServerCore`
with `fallback`, on a host of its own: sim/ps.py `ServerHost`), and every sum stays exact
(docs/protocol.md, "Best effort and the host fallback").
"""

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from ina.args import int_choice, int_range, probability
from ina.controller.aggregation import Fallback
from ina.hosts.baseline import ServerCore
from ina.hosts.core import AllReduceCore
from ina.hosts.inprocess import InProcessSwitch, RandomLoss
from ina.p4src.protocol import ELEMS_CHOICES, MAX_WORKERS, UDP_PORT
from ina.sim.ps import ServerHost


@dataclass(frozen=True)
class JobOutcome:
    job: int
    base: int
    num_slots: int
    chunks: int  # chunks per worker in the all-reduce
    host_sums: int  # chunks the job's fallback server summed
    exact: bool  # every rank's result is the exact sum

    @property
    def host_share(self) -> float:
        """The share of the job's chunks that fell back to the host."""
        return self.host_sums / self.chunks


def add_fallback_job(
    net: InProcessSwitch,
    job: int,
    workers: int,
    slots: int,
    delays: dict[int, float] | None = None,
) -> tuple[list[AllReduceCore], ServerHost]:
    """Job `job` of `workers` workers asking for `slots` slots, with a host fallback server on a
    host of its own on the switch port after its workers' (best effort: `add_job` with
    `fallback`), its server's and workers' MACs in the switch's L2 table (the server's answers
    reach the workers through the switch). Returns the job's cores by rank and its server."""
    port = 1 + len(net.network.hosts) + workers  # the port after the job's workers'
    fallback = Fallback(port, f"02:00:00:01:{job:02x}:00", f"10.2.{job}.1", UDP_PORT)
    cores = net.add_job(job, workers, window=slots, fallback=fallback, delays=delays)
    name = f"fallback{job}"
    net.add_host(name, port)
    members = net.jobs[job]
    server = ServerHost(
        net,
        name,
        (fallback.mac, fallback.ip, fallback.udp_port),
        ServerCore(job, workers, cores[0].epoch, net.elems, fallback=True),
        {m.entry.ip: m.entry.mac for m in members},
    )
    net.controller.install_forwarding(
        [(m.entry.mac, m.entry.port) for m in members] + [(fallback.mac, port)]
    )
    return cores, server


def best_effort_run(
    jobs: int = 2,
    workers: int = 2,
    slots: int = 8,
    pool_size: int = 8,
    size: int = 4096,
    elems: int = 8,
    seed: int = 1,
    engine: str = "native",
    skew: float = 15e-6,
    loss: float = 0.0,
) -> list[JobOutcome]:
    """`jobs` jobs of `workers` workers, each asking for `slots` slots of a pool of `pool_size`,
    all-reduce seeded int32 arrays of `size` values at once, job j's last rank `skew` x (j + 1) / jobs
    virtual seconds late (so the jobs' uses overlap in time), each UPDATE and answer copy lost with
    probability `loss`; each job's outcome."""
    rng = np.random.default_rng(seed)
    arrays = {
        job: [rng.integers(-(2**20), 2**20, size, dtype=np.int32) for _ in range(workers)]
        for job in range(jobs)
    }
    losses = [RandomLoss(loss, loss, seed)] if loss else []
    with InProcessSwitch(
        elems=elems, pool_size=pool_size, engine=engine, record=False, loss=losses
    ) as net:
        servers = [
            add_fallback_job(net, job, workers, slots, {workers - 1: skew * (job + 1) / jobs})[1]
            for job in range(jobs)
        ]
        placed = {j.job_id: j for j in net.controller.jobs()}
        results = net.allreduce(arrays)
    chunks = -(-size // elems)
    sums = {job: np.sum(job_arrays, axis=0) for job, job_arrays in arrays.items()}
    return [
        JobOutcome(
            job,
            placed[job].base,
            placed[job].num_slots,
            chunks,
            servers[job].core.stats["results_sent"] // workers,
            all(np.array_equal(r, sums[job]) for r in results[job]),
        )
        for job in range(jobs)
    ]


def main(argv: list[str] | None = None) -> int:
    """`python -m ina.sim.best_effort`: the run above as a table, one row per job."""
    p = argparse.ArgumentParser(prog="python -m ina.sim.best_effort", description=__doc__)
    p.add_argument("--jobs", type=int_range(1, 16), default=2, help="jobs (1..16, default 2)")
    p.add_argument(
        "--workers", type=int_range(1, MAX_WORKERS), default=2, help="workers per job (default 2)"
    )
    p.add_argument(
        "--slots", type=int_range(1, 1024), default=8, help="slots each job asks for (default 8)"
    )
    p.add_argument(
        "--pool-size", type=int_range(1, 1024), default=8, help="the switch's slots (default 8)"
    )
    p.add_argument(
        "--size", type=int_range(1, 1 << 20), default=4096, help="int32 values (default 4096)"
    )
    p.add_argument("--elems", type=int_choice(ELEMS_CHOICES), default=8, help="values per packet")
    p.add_argument("--loss", type=probability, default=0.0, help="loss per datagram (default 0)")
    p.add_argument("--seed", type=int_range(0, 2**32 - 1), default=1, help="seed (default 1)")
    args = p.parse_args(argv)
    outcomes = best_effort_run(
        args.jobs,
        args.workers,
        args.slots,
        args.pool_size,
        args.size,
        args.elems,
        args.seed,
        loss=args.loss,
    )
    print("job  base  slots  chunks  host-summed  host share  exact")
    for o in outcomes:
        print(
            f"{o.job:<4} {o.base:<5} {o.num_slots:<6} {o.chunks:<7} {o.host_sums:<12} "
            f"{o.host_share:<11.3f} {'yes' if o.exact else 'NO'}"
        )
    return 0 if all(o.exact for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
