"""Training under bounded staleness (SSP, `stale:S`) on the real switch program in the harness:
each rank's all-reduces are pipelined over S + 1 groups of slots, every update is applied S
iterations late (the most SSP allows), and the model still trains to the synchronous accuracy."""

import concurrent.futures
import threading

import numpy as np
import pytest
from ranks import run_ranks

from ina.hosts.inprocess import InProcessSwitch
from ina.hosts.worker import Reduced
from ina.p4src.protocol import Policy
from ina.train.data import load
from ina.train.sgd import Config, train

CONFIG = Config(model="mlp", epochs=8, batch=64, lr=0.1, hidden=32, seed=0)
N = 4


@pytest.fixture(scope="module")
def digits():
    return load("digits", seed=0)


class LateFuture(concurrent.futures.Future):
    """A call's sum for one rank, run to completion in the harness only when the rank asks for it:
    by then the rank has started S more calls, which stay in flight on the other groups."""

    def __init__(self, net: InProcessSwitch, lock: threading.Lock, cores: list, rank: int):
        super().__init__()
        self.net, self.lock, self.cores, self.rank = net, lock, cores, rank

    def done(self) -> bool:
        return False  # never early: every update waits the full staleness

    def result(self, timeout=None) -> Reduced:
        with self.lock:
            self.net.run(until=lambda: all(c.finished for c in self.cores))
            core = self.cores[self.rank]
            return Reduced(core.result(), core.contributors())


def train_stale(config, data, staleness: int) -> list:
    """4 ranks in threads; call t starts on every rank once all handed in their gradient (a barrier),
    on group t mod (staleness + 1) of the job's slots."""
    with InProcessSwitch(elems=64, pool_size=256) as net:
        net.add_job(0, N, window=64 * (staleness + 1), policy=Policy(staleness=staleness))
        lock = threading.Lock()
        handed: list = [None] * N
        started: list = []

        def start_call():
            with lock:
                started.append([net.start(0, rank, handed[rank]) for rank in range(N)])

        barrier = threading.Barrier(N, action=start_call)
        out: list = [None] * N

        def run(rank):
            def allreduce_async(grad):
                handed[rank] = grad
                barrier.wait()
                return LateFuture(net, lock, started[-1], rank)

            out[rank] = train(
                config, data, rank, N, allreduce_async=allreduce_async, staleness=staleness
            )

        run_ranks(run, N)
    assert all(o is not None for o in out), "a worker's training failed"
    return out


def test_stale_2_trains_to_within_2_points_of_sync_and_every_worker_ends_with_the_same_weights(
    digits,
):
    sync = train_stale(CONFIG, digits, staleness=0)
    stale = train_stale(CONFIG, digits, staleness=2)
    for results in (sync, stale):
        assert all(np.array_equal(model.params, results[0][0].params) for model, _ in results)
    sync_accuracy = sync[0][1].epochs[-1].test_accuracy
    stale_accuracy = stale[0][1].epochs[-1].test_accuracy
    assert abs(stale_accuracy - sync_accuracy) <= 0.02, (stale_accuracy, sync_accuracy)
    assert not np.array_equal(stale[0][0].params, sync[0][0].params)  # the updates really came late
