"""Priority preemption (issue 33), packet by packet in the in-process harness (virtual time, the
real switch program and controller, the workers' real cores): a low-priority job holds the whole
pool; a high-priority job arrives in the middle of its second iteration. The controller waits for
that iteration to end (the drain: every slot the low job used has its RESULT), shrinks the low job
onto the lower part of its range with a fresh epoch and gives the high job the slots freed
(controller/pool.py `preempt`; docs/protocol.md, "Preemption"). Both then iterate side by side.
With a host fallback server (`host_fallback`) the low job may give all its slots: a high job asking
for the whole pool takes them, and the low job's workers go on through their server, addressed as
their aggregator with a fresh epoch. The figures: the high job's start delay in the low job's
iterations (at most one: the rest of the iteration in flight), the chunks the server summed, and
whether every rank's sum of every iteration is exact.
"""

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from ina.args import int_choice, int_range, probability
from ina.controller.pool import preempt
from ina.hosts.baseline import ServerCore
from ina.hosts.inprocess import InProcessSwitch, RandomLoss
from ina.p4src.protocol import ELEMS_CHOICES, MAX_WORKERS
from ina.sim.best_effort import add_fallback_job

LOW, HIGH = 0, 1  # the jobs' ids: the running low-priority job, the arriving high-priority one


@dataclass(frozen=True)
class PreemptionOutcome:
    iteration_s: float  # the low job's iteration the high job arrived in (virtual seconds)
    arrived_s: float  # when the high job arrived
    started_s: float  # when it started: the low job's iteration in flight drained
    low_before: tuple[int, int]  # the low job's (base, slots) before, and after:
    low_after: tuple[int, int] | None  # None: off the switch, through its host fallback server
    high: tuple[int, int]  # the high job's (base, slots)
    host_sums: int  # the low job's chunks its host fallback server summed (per rank)
    exact: bool  # every rank's sum of every iteration of both jobs is exact

    @property
    def delay_iterations(self) -> float:
        """The high job's start delay in the low job's iterations (that one's length): the rest
        of the iteration in flight, so at most 1."""
        return (self.started_s - self.arrived_s) / self.iteration_s


def preemption_run(
    workers: int = 2,
    pool_size: int = 8,
    high_slots: int = 4,
    size: int = 4096,
    elems: int = 8,
    iterations: int = 3,
    arrival: float = 0.5,
    seed: int = 1,
    engine: str = "native",
    loss: float = 0.0,
    host_fallback: bool = False,
) -> PreemptionOutcome:
    """The low job (`workers` workers, the whole pool of `pool_size` slots; with a host fallback
    server if `host_fallback`) all-reduces seeded int32 arrays of `size` values; the high job
    (`workers` workers, `high_slots` slots) arrives `arrival` of the first iteration's length into
    the low job's second one, and after the preemption both run `iterations` more, each UPDATE and
    answer copy lost with probability `loss`."""
    rng = np.random.default_rng(seed)

    def arrays() -> list[np.ndarray]:
        return [rng.integers(-(2**20), 2**20, size, dtype=np.int32) for _ in range(workers)]

    exact = True

    def run_iteration(jobs: dict[int, list[np.ndarray]], until_s: float | None = None) -> None:
        """Start the jobs' iteration; run it to the end (checking every sum), or until `until_s`
        (the caller finishes it)."""
        nonlocal exact
        cores = {j: [net.start(j, r, a) for r, a in enumerate(arr)] for j, arr in jobs.items()}
        pending.update({j: (cores[j], np.sum(arr, axis=0)) for j, arr in jobs.items()})
        if until_s is not None:
            net.run(lambda: net.now >= until_s)
            return
        finish()

    def finish() -> None:
        nonlocal exact
        net.run(lambda: all(c.finished for cs, _ in pending.values() for c in cs))
        for cs, total in pending.values():
            exact &= all(np.array_equal(c.result(), total) for c in cs)
        pending.clear()

    pending: dict[int, tuple] = {}
    losses = [RandomLoss(loss, loss, seed)] if loss else []
    with InProcessSwitch(
        elems=elems, pool_size=pool_size, engine=engine, record=False, loss=losses
    ) as net:
        if host_fallback:
            server = add_fallback_job(net, LOW, workers, pool_size)[1]
        else:
            net.add_job(LOW, workers, window=pool_size)
        (low,) = net.controller.jobs()
        first = net.now
        run_iteration({LOW: arrays()})
        second = net.now
        arrived = second + arrival * (second - first)  # into the second, as long as the first
        run_iteration({LOW: arrays()}, until_s=arrived)  # the high job arrives: the pool is full
        finish()  # the drain: the low job's iteration in flight ends
        done = preempt(net.controller, [LOW], high_slots)
        if host_fallback:  # its server restarts with the new run's epoch, as its workers do
            server.core = ServerCore(LOW, workers, done.victim.epoch, elems, fallback=True)
        if done.on_host:  # off the switch: its workers address its server as their aggregator
            assert low.fallback is not None
            net.resume(LOW, done.victim, server=(low.fallback.mac, low.fallback.ip))
        else:
            net.resume(LOW, done.victim)
        high_start = net.now
        net.add_job(HIGH, workers, window=high_slots)  # first fit: the one free range, `freed`
        high = next(j for j in net.controller.jobs() if j.job_id == HIGH)
        assert (high.base, high.num_slots) == (done.freed.base, done.freed.size)
        for _ in range(iterations):
            run_iteration({LOW: arrays(), HIGH: arrays()})
    return PreemptionOutcome(
        high_start - second,
        arrived,
        high_start,
        (low.base, low.num_slots),
        None if done.on_host else (done.victim.base, done.victim.num_slots),
        (high.base, high.num_slots),
        server.core.stats["results_sent"] // workers if host_fallback else 0,
        exact,
    )


def main(argv: list[str] | None = None) -> int:
    """`python -m ina.sim.preempt`: the run above, its figures in a few lines."""
    p = argparse.ArgumentParser(prog="python -m ina.sim.preempt", description=__doc__)
    p.add_argument(
        "--workers", type=int_range(1, MAX_WORKERS), default=2, help="workers per job (default 2)"
    )
    p.add_argument(
        "--pool-size", type=int_range(2, 1024), default=8, help="the switch's slots (default 8)"
    )
    p.add_argument(
        "--high-slots",
        type=int_range(1, 1024),
        default=4,
        help="slots the high-priority job asks for: below --pool-size, or up to it with "
        "--host-fallback (default 4)",
    )
    p.add_argument(
        "--host-fallback",
        action="store_true",
        help="the low job has a host fallback server: asked for its every slot, it gives them all "
        "and goes on through that server",
    )
    p.add_argument(
        "--size", type=int_range(1, 1 << 20), default=4096, help="int32 values (default 4096)"
    )
    p.add_argument("--elems", type=int_choice(ELEMS_CHOICES), default=8, help="values per packet")
    p.add_argument("--loss", type=probability, default=0.0, help="loss per datagram (default 0)")
    p.add_argument("--seed", type=int_range(0, 2**32 - 1), default=1, help="seed (default 1)")
    args = p.parse_args(argv)
    most = args.pool_size if args.host_fallback else args.pool_size - 1
    if args.high_slots > most:
        why = (
            "at most --pool-size"
            if args.host_fallback
            else "below --pool-size: without --host-fallback the preempted job keeps at least "
            "one slot"
        )
        p.error(
            f"argument --high-slots: expected an integer in 1..{most} ({why}), got "
            f"{args.high_slots}"
        )
    o = preemption_run(
        args.workers,
        args.pool_size,
        args.high_slots,
        args.size,
        args.elems,
        seed=args.seed,
        loss=args.loss,
        host_fallback=args.host_fallback,
    )
    after = (
        f"off the switch, through its host fallback server ({o.host_sums} chunks summed there)"
        if o.low_after is None
        else f"{o.low_after[0]}..{sum(o.low_after) - 1} (new epoch)"
    )
    print(
        f"low job: slots {o.low_before[0]}..{sum(o.low_before) - 1}, then {after}; high job: "
        f"slots {o.high[0]}..{sum(o.high) - 1}\n"
        f"high job arrived at {o.arrived_s * 1e6:.1f} us, started at {o.started_s * 1e6:.1f} us: "
        f"{o.delay_iterations:.2f} of the low job's iterations ({o.iteration_s * 1e6:.1f} us)\n"
        f"every sum exact: {'yes' if o.exact else 'NO'}"
    )
    return 0 if o.exact else 1


if __name__ == "__main__":
    sys.exit(main())
