"""Training under the switch's completion policies (the in-process harness on the real switch
program): each gradient is averaged over the workers its sum holds, every worker applies the same
update, and a quorum that always leaves out a straggler trains on the other shards."""

import threading

import numpy as np
import pytest
from ranks import run_ranks
from test_sgd import train_through_switch

from ina.p4src.protocol import Policy
from ina.train.data import load
from ina.train.sgd import Config, average, train

CONFIG = Config(model="mlp", epochs=6, batch=64, lr=0.1, hidden=32, seed=0)
N = 4


@pytest.fixture(scope="module")
def digits():
    return load("digits", seed=0)


def test_average_divides_by_each_elements_count_and_zeroes_the_missing():
    total = np.array([6.0, 6.0, 9.0, 5.0])
    assert average(total, np.array([3, 2, 3, 0])).tolist() == [2.0, 3.0, 3.0, 0.0]
    assert average(total, 4).tolist() == [1.5, 1.5, 2.25, 1.25]


def train_with_quorum(config, data, straggler_delay: float):
    """4 ranks in lockstep, quorum 3 of 4; rank 3's UPDATEs reach the switch `straggler_delay`
    (virtual) seconds late, so every slot completes with ranks 0-2 and rank 3 is answered late."""
    bitmaps: set = set()
    out = train_through_switch(config, data, N, Policy(quorum=3), {3: straggler_delay}, bitmaps)
    return out, bitmaps


def three_shard_reference(config, data):
    """The same training with the float64 mean of ranks 0-2's shard gradients: what quorum 3 of 4
    with rank 3 always late computes, before quantization."""
    grads: list = [None] * N
    total: list = [None]

    def sum_three():
        total[0] = grads[0] + grads[1] + grads[2]

    def collect(rank):
        def allreduce(grad):
            grads[rank] = grad.astype(np.float64)
            barrier.wait()
            return total[0]

        return allreduce

    barrier = threading.Barrier(N, action=sum_three)
    out: list = [None] * N

    def run(rank):
        out[rank] = train(config, data, rank, N, collect(rank), counts=lambda shape: 3)

    run_ranks(run, N)
    return out[0]


def test_quorum_3_of_4_trains_on_the_three_counted_shards(digits):
    results, bitmaps = train_with_quorum(CONFIG, digits, straggler_delay=0.05)
    assert bitmaps == {0b0111}  # rank 3 never counted, every chunk of every iteration
    first = results[0][0].params
    for model, _history in results:  # the straggler applied the same sums as the others
        assert np.array_equal(model.params, first)
    reference = three_shard_reference(CONFIG, digits)
    assert (
        abs(results[0][1].epochs[-1].test_accuracy - reference[1].epochs[-1].test_accuracy) <= 0.01
    )


def test_quorum_sums_are_averaged_over_three_not_four(digits):
    config = Config(model="softmax", epochs=1, batch=64, lr=0.5, seed=1)
    results, _bitmaps = train_with_quorum(config, digits, straggler_delay=0.05)
    reference = three_shard_reference(config, digits)[0].params
    assert (
        np.max(np.abs(results[0][0].params - reference)) < 1e-5
    )  # one epoch: quantization noise only


def test_emulated_compute_is_slept_every_iteration_and_counted_as_compute(digits):
    from ina.hosts.compute import ComputeModel

    config = Config(model="softmax", epochs=1, batch=256, seed=2)
    model = ComputeModel(0.002, 2.0)  # a 2x straggler of 2 ms
    _, history = train(config, digits, compute=model)
    assert history.iterations == len(digits.y_train) // 256
    assert history.compute_s >= 0.004 * history.iterations  # a sleep never returns early


def test_elements_without_a_sum_are_counted_and_not_updated(digits):
    config = Config(model="softmax", epochs=1, batch=256, seed=3)

    def counts(shape):
        c = np.full(shape, 2)
        c[:5] = 0  # five elements' sums never came
        return c

    model, history = train(config, digits, 0, 2, lambda g: 2 * g, counts=counts)
    assert history.missing_elements == 5 * history.iterations
    initial = train(Config(model="softmax", epochs=1, batch=256, seed=3, lr=0.0), digits)[0].params
    assert np.array_equal(model.params[:5], initial[:5])  # never moved
    assert not np.array_equal(model.params[5:], initial[5:])
    assert history.as_dict()["missing_elements"] == 5 * history.iterations
