"""Real training in virtual time (sim/training.py): train/sgd.py's SGD with its all-reduces through
the simulated switch ends with the accuracy of the same SGD with numpy all-reduces (the sums are
block floating point, so within docs/accuracy.md's point, not bit for bit), every worker with the
same weights, and its time in simulated seconds built from the compute and the all-reduces."""

import threading

import numpy as np
import pytest
from ranks import run_ranks

from ina.hosts.inprocess import InProcessSwitch
from ina.p4src.protocol import Policy
from ina.sim.allreduce import AllReduceConfig
from ina.sim.links import LinkSpec
from ina.sim.training import (
    TARGET_BELOW,
    TrainingConfig,
    numpy_training,
    simulate_training,
    sum_and_counts,
)
from ina.sim.workload import Programs, Stragglers
from ina.train.data import load
from ina.train.sgd import Compute, Config, Reduce, train

SGD = Config(model="mlp", epochs=8, batch=64, lr=0.1, hidden=32, seed=0)
LINK = LinkSpec(rate=100e9, delay=1e-6, queue=1 << 20)
COMPUTE = 1e-3


@pytest.fixture(scope="module")
def digits():
    return load("digits", seed=0)


@pytest.fixture(scope="module")
def trained():
    return simulate_training(
        TrainingConfig(
            AllReduceConfig(workers=4, dtype="float32", link=LINK),
            SGD,
            compute_s=COMPUTE,
            stragglers=Stragglers((("h3", 2.0),)),
        )
    )


def test_accuracy_equals_the_same_sgd_with_numpy_allreduces_within_a_point(trained, digits):
    _, numpy_history = numpy_training(SGD, digits, 4)
    numpy_accuracy = numpy_history.epochs[-1].test_accuracy
    assert trained.numpy_accuracy == numpy_accuracy
    assert abs(trained.histories[0].epochs[-1].test_accuracy - numpy_accuracy) <= 0.01
    assert numpy_accuracy > 0.9
    _, reference = train(
        SGD, digits
    )  # one process, float64: numpy's all-reduce changes nothing that matters
    assert abs(numpy_accuracy - reference.epochs[-1].test_accuracy) <= 0.01
    assert trained.target_accuracy == numpy_accuracy - TARGET_BELOW


def test_every_worker_ends_with_the_same_weights(trained):
    assert trained.weights_identical
    assert (
        len({(h.iterations, tuple(e.test_accuracy for e in h.epochs)) for h in trained.histories})
        == 1
    )


def test_time_is_simulated_compute_and_communication(trained):
    """Sync: every worker's iteration waits for h3's 2 ms compute; its time is compute then the
    all-reduce, epoch by epoch, and the time to the target is an epoch's end."""
    per_epoch = 1797 * 4 // 5 // 64  # digits' 1,437 training rows in batches of 64
    histories = dict(zip([h for _j, _r, h in trained.workers], trained.histories, strict=True))
    for host, history in histories.items():
        assert history.iterations == SGD.epochs * per_epoch
        factor = 2.0 if host == "h3" else 1.0
        for e in history.epochs:
            assert e.compute_s == pytest.approx(per_epoch * factor * COMPUTE, abs=1e-12)
    slow, fast = histories["h3"].epochs, histories["h1"].epochs
    for a, b in zip(slow, fast, strict=True):
        assert b.comm_s == pytest.approx(a.comm_s + per_epoch * COMPUTE, abs=1e-9)  # waiting for h3
        assert 0 < a.comm_s < per_epoch * 20e-6  # one small all-reduce at 100 Gbit/s per iteration
    assert slow[-1].wall_s == pytest.approx(sum(e.compute_s + e.comm_s for e in slow), abs=1e-9)
    reached = next(e for e in fast if e.test_accuracy >= trained.target_accuracy)
    assert trained.time_to_target_s(0) == reached.wall_s


def test_bounded_staleness_trains_with_every_worker_alike(digits):
    sgd = Config(model="mlp", epochs=4, batch=64, lr=0.1, hidden=32, seed=0)
    network = AllReduceConfig(
        workers=4, dtype="float32", link=LINK, window=128, policy=Policy.parse("stale:1")
    )
    stale = simulate_training(TrainingConfig(network, sgd, compute_s=COMPUTE))
    assert stale.weights_identical
    _, numpy_history = numpy_training(sgd, digits, 4)
    assert (
        abs(stale.histories[0].epochs[-1].test_accuracy - numpy_history.epochs[-1].test_accuracy)
        <= 0.02
    )


def test_numpy_training_is_train_with_a_numpy_allreduce(digits):
    """Every rank running `train` in a thread, its all-reduce numpy's sum of the ranks' float32
    gradients (a barrier): worker 0 ends with numpy_training's weights, bit for bit."""
    sgd = Config(model="mlp", epochs=2, batch=64, seed=2)
    handed: list = [None] * 4
    summed: list = [None]
    barrier = threading.Barrier(4, action=lambda: summed.__setitem__(0, np.sum(handed, axis=0)))
    out: list = [None] * 4

    def work(rank: int) -> None:
        def allreduce(grad):
            handed[rank] = grad
            barrier.wait()
            return summed[0]

        out[rank] = train(sgd, digits, rank, 4, allreduce)[0].params

    run_ranks(work, 4, timeout=120)
    model, _ = numpy_training(sgd, digits, 4)
    assert all(np.array_equal(params, model.params) for params in out)


def test_numpy_training_sums_float32_gradients(digits):
    """Its all-reduce is numpy's sum of the workers' float32 gradients: with one worker the update is
    the float32 gradient's, not far from the float64 reference's."""
    sgd = Config(model="softmax", epochs=1, batch=32, seed=3)
    model, _ = numpy_training(sgd, digits, 1)
    reference, _ = train(sgd, digits)
    assert not np.array_equal(model.params, reference.params)
    assert np.allclose(model.params, reference.params, atol=1e-5)


def test_under_a_quorum_each_sum_comes_with_the_gradients_it_holds():
    """quorum:2 of 3, rank 2 computing 10x longer: the two others' sums count 2 per element, which
    train/sgd.py divides by; the straggler takes the same sums and counts."""
    got: dict[int, list] = {0: [], 1: [], 2: []}
    with InProcessSwitch(elems=8, link=LINK, record=False) as net:
        net.add_job(0, 3, window=8, policy=Policy(quorum=2))
        programs = Programs(net)

        def program(rank: int):
            yield Compute(1e-6 * (10 if rank == 2 else 1))
            got[rank] += yield Reduce(np.full(20, rank + 1.0), keep=0)

        for rank in range(3):
            programs.add(0, rank, program(rank), sum_and_counts)
        programs.run()
    for rank in range(3):
        [(total, counts)] = got[rank]
        assert np.array_equal(total, np.full(20, 3.0, np.float32)) and np.array_equal(
            counts, np.full(20, 2)
        )


def test_training_under_a_quorum_with_a_straggler(digits):
    sgd = Config(model="mlp", epochs=4, batch=64, lr=0.1, hidden=32, seed=0)
    network = AllReduceConfig(
        workers=4, dtype="float32", link=LINK, policy=Policy.parse("quorum:3")
    )
    trained = simulate_training(
        TrainingConfig(network, sgd, compute_s=COMPUTE, stragglers=Stragglers((("h4", 3.0),)))
    )
    assert trained.weights_identical
    _, numpy_history = numpy_training(sgd, digits, 4)
    assert (
        abs(trained.histories[0].epochs[-1].test_accuracy - numpy_history.epochs[-1].test_accuracy)
        <= 0.02
    )
