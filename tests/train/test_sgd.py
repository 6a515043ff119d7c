"""Data-parallel SGD with every gradient summed by the real switch program (the in-process harness),
against the single-process reference: the same accuracy within 1 point, the same weights on a rerun."""

import threading

import numpy as np
import pytest
from ranks import run_ranks

from ina.hosts.inprocess import InProcessSwitch
from ina.p4src.protocol import SYNC
from ina.train.data import load
from ina.train.models import make_model
from ina.train.sgd import Config, global_batches, shard, shard_weight, train

CONFIG = Config(model="mlp", epochs=8, batch=64, lr=0.1, hidden=32, seed=0)


@pytest.fixture(scope="module")
def digits():
    return load("digits", seed=0)


def train_through_switch(config, data, n_workers, policy=SYNC, delays=None, bitmaps=None):
    """Every rank in its own thread; one all-reduce per iteration through the harness once all ranks
    have handed in their gradient (a barrier), so the workers run in lockstep as over a network.
    Each rank averages over the counts its RESULTs carry; `bitmaps` (a set) collects theirs."""
    with InProcessSwitch(elems=64, pool_size=256) as net:
        cores = net.add_job(0, n_workers, window=64, policy=policy, delays=delays)
        handed: list = [None] * n_workers
        summed: list = [None] * n_workers

        def reduce_all():
            summed[:] = net.allreduce({0: handed})[0]
            if bitmaps is not None:
                bitmaps.update(int(b) for core in cores for b in core.contributors().bitmaps)

        barrier = threading.Barrier(n_workers, action=reduce_all)
        out: list = [None] * n_workers

        def run(rank):
            def allreduce(grad):
                handed[rank] = grad
                barrier.wait()
                return summed[rank]

            out[rank] = train(
                config,
                data,
                rank,
                n_workers,
                allreduce,
                counts=lambda shape: cores[rank].contributors().element_counts(shape),
            )

        run_ranks(run, n_workers)
    assert all(o is not None for o in out), "a worker's training failed"
    return out


@pytest.mark.parametrize("n_workers", [2, 4])
def test_switch_trained_mlp_matches_the_reference(digits, n_workers):
    _, reference = train(CONFIG, digits)
    results = train_through_switch(CONFIG, digits, n_workers)
    first = results[0][0].params
    for model, _history in results:  # every worker applied the same updates
        assert np.array_equal(model.params, first)
    accuracy = results[0][1].epochs[-1].test_accuracy
    assert abs(accuracy - reference.epochs[-1].test_accuracy) <= 0.01
    assert reference.epochs[-1].test_accuracy > 0.9


def test_rerun_gives_the_same_weights(digits):
    config = Config(model="softmax", epochs=2, batch=32, seed=5)
    a = train_through_switch(config, digits, 2)[0][0].params
    b = train_through_switch(config, digits, 2)[0][0].params
    assert np.array_equal(a, b)
    assert np.array_equal(train(config, digits)[0].params, train(config, digits)[0].params)


def test_shards_cover_each_global_batch_once():
    batches = global_batches(100, 12, epoch=3, seed=1)
    assert len(batches) == 8  # the partial batch is dropped
    for batch in batches:
        assert np.array_equal(np.concatenate([shard(batch, r, 4) for r in range(4)]), batch)
    assert not np.array_equal(batches[0], global_batches(100, 12, epoch=4, seed=1)[0])


def test_a_batch_splits_over_any_worker_count_with_the_remainder_on_the_first_ranks():
    batch = np.arange(64)
    parts = [shard(batch, r, 3) for r in range(3)]
    assert [p.tolist() for p in parts] == [
        list(range(0, 22)),
        list(range(22, 43)),
        list(range(43, 64)),
    ]
    assert [len(shard(np.arange(5), r, 5)) for r in range(5)] == [1] * 5


def test_unequal_shards_average_to_the_whole_batchs_gradient(digits):
    """3 workers on a batch of 64 (22, 21, 21 samples): the mean of their weighted gradients is the
    one-process gradient of the batch, so training follows the reference."""
    config = Config(model="softmax", epochs=1, batch=64, seed=2)
    model = make_model(
        config.model, digits.n_features, digits.n_classes, config.seed, config.hidden
    )
    batch = global_batches(len(digits.y_train), 64, 0, config.seed)[0]
    whole = model.loss_and_grad(digits.x_train[batch], digits.y_train[batch])[1]
    parts = [
        model.loss_and_grad(digits.x_train[mine], digits.y_train[mine])[1]
        * shard_weight(len(mine), 64, 3)
        for mine in (shard(batch, r, 3) for r in range(3))
    ]
    assert np.allclose(sum(parts) / 3, whole, rtol=0, atol=1e-12)
    assert not np.allclose(
        sum(p / shard_weight(len(shard(batch, r, 3)), 64, 3) for r, p in enumerate(parts)) / 3,
        whole,
        rtol=0,
        atol=1e-12,
    )  # unweighted, the shards' means are not the batch's


def test_a_batch_smaller_than_the_workers_is_refused(digits):
    with pytest.raises(
        ValueError, match="batch 2 leaves 1 of the 3 workers without a sample: use at least 3"
    ):
        train(Config(batch=2), digits, 0, 3, allreduce=lambda g: g)
