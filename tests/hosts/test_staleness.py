"""Bounded staleness (docs/protocol.md, "Completion policies"): a worker's cores, one per group of
the job's slots, run up to S + 1 all-reduce calls at once, each exact, on the real switch program
in the harness and through a real socket to the parameter server."""

import threading

import numpy as np
import pytest
from ranks import run_ranks

from ina.hosts.baseline import ParameterServer
from ina.hosts.cli import make_array
from ina.hosts.inprocess import UPDATE, InProcessSwitch
from ina.hosts.worker import Worker
from ina.p4src.protocol import Policy

EPOCH = 0x5EED0002


def test_stale_2_runs_three_calls_at_once_on_three_groups_of_slots_and_each_sums_exactly():
    with InProcessSwitch(elems=8) as net:
        net.add_job(0, 3, window=12, policy=Policy(staleness=2))  # groups: slots 0-3, 4-7, 8-11
        calls = [[make_array(30 + t, rank, 100, "int32") for rank in range(3)] for t in range(4)]
        cores = {t: [net.start(0, rank, calls[t][rank]) for rank in range(3)] for t in range(3)}
        assert [[c.base for c in cores[t]] for t in range(3)] == [[0] * 3, [4] * 3, [8] * 3]
        net.run(until=lambda: all(c.finished for c in cores[0]))
        # Call 0 finished while calls 1 and 2 were in flight beside it: their first UPDATEs left at 0.
        first_sent = {
            d.slot // 4: t for t, d in reversed(net.sent) if d.direction == UPDATE and d.use == 0
        }
        assert first_sent == {0: 0.0, 1: 0.0, 2: 0.0}
        results = {0: [c.result() for c in cores[0]]}
        cores[3] = [net.start(0, rank, calls[3][rank]) for rank in range(3)]  # group 0 again
        net.run()
        results.update({t: [c.result() for c in cores[t]] for t in (1, 2, 3)})
        for t, got in results.items():
            expected = np.sum(calls[t], axis=0, dtype=np.int32)
            assert all(np.array_equal(r, expected) for r in got), t
            assert all(c.contributors().counts.tolist() == [3] * 13 for c in cores[t])
        assert (
            net.stats()["jobs"][0]["completed"] == 4 * 13 and "stale" not in net.stats()["jobs"][0]
        )


@pytest.mark.usefixtures("worker_io")  # on both I/O paths (conftest.py)
def test_a_worker_pipelines_its_calls_on_one_socket_and_every_sum_is_exact():
    n, calls = 2, 5
    ps = ParameterServer(0, n, EPOCH, 16, "127.0.0.1")
    port = ps.port
    threading.Thread(target=ps.serve_forever, daemon=True).start()
    arrays = [[make_array(40 + t, rank, 300, "int32") for rank in range(n)] for t in range(calls)]
    results: list = [None] * n

    def work(rank: int) -> None:
        w = Worker(
            0,
            rank,
            n,
            "127.0.0.1",
            f"127.0.0.{rank + 2}",
            0,
            16,
            8,
            timeout=0.005,
            switch_port=port,
            epoch=EPOCH,
            staleness=1,
        )
        try:
            futures = [
                w.allreduce_async(arrays[t][rank]) for t in range(calls)
            ]  # all asked at once
            results[rank] = [f.result(timeout=10) for f in futures]
        finally:
            w.close()

    run_ranks(work, n)
    ps.close()
    for rank in range(n):
        for t, reduced in enumerate(results[rank]):
            assert np.array_equal(reduced.total, np.sum(arrays[t], axis=0, dtype=np.int32)), (
                rank,
                t,
            )
            assert reduced.contributors.counts.tolist() == [n] * 19
