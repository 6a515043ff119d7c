"""Error feedback (train/feedback.py): the residual is exactly what the worker's first pass drops,
and the next gradient carries it."""

import numpy as np

from ina.hosts.quantize import chunk_exponents, headroom, quantize, scale_for
from ina.train.feedback import BucketFeedback, ErrorFeedback


def first_pass(array: np.ndarray, values: int, n: int, bits: int) -> np.ndarray:
    """The codec's first pass of one chunk of `values` (ina.hosts.chunks), back in floats."""
    chunk = array.reshape(1, values).astype(np.float64)
    scale = scale_for(int(chunk_exponents(chunk)[0]), headroom(n, bits), bits)
    return quantize(chunk, scale)[0] / scale


def test_the_residual_is_what_the_first_pass_drops_and_the_next_gradient_carries_it() -> None:
    rng = np.random.default_rng(3)
    feedback = ErrorFeedback(elems=8, n_workers=8, bits=8)  # 32 values per chunk, headroom 3
    g1, g2 = (rng.standard_normal(32).astype(np.float32) for _ in range(2))
    sent1 = feedback.compensate(g1)
    assert sent1.dtype == np.float32 and np.array_equal(sent1, g1)
    dropped = g1.astype(np.float64) - first_pass(g1, 32, 8, 8)
    assert feedback.residual is not None and np.array_equal(feedback.residual, dropped)
    assert np.abs(dropped).max() > 0
    sent2 = feedback.compensate(g2)
    assert np.array_equal(sent2, (g2.astype(np.float64) + dropped).astype(np.float32))
    assert np.array_equal(feedback.residual, sent2.astype(np.float64) - first_pass(sent2, 32, 8, 8))


def test_an_array_of_several_chunks_is_quantized_chunk_by_chunk() -> None:
    feedback = ErrorFeedback(elems=8, n_workers=4, bits=16)  # 16 values per chunk
    array = np.concatenate([np.full(16, 0.3), np.full(16, 300.0), [7.0]])
    back = feedback.contribution(array)
    assert back.shape == array.shape
    expected = [first_pass(array[i : i + 16], 16, 4, 16) for i in (0, 16)]
    assert np.array_equal(back[:32], np.concatenate(expected))
    assert back[32] == first_pass(np.array([7.0] + [0.0] * 15), 16, 4, 16)[0]


def test_train_sends_each_gradient_with_its_workers_residual() -> None:
    """`train(feedback=)` (ina train's workers): what the all-reduce gets is the gradient the
    feedback compensated, the residual then its first pass's loss."""
    from ina.train.data import load
    from ina.train.sgd import Config, train

    sent: list[np.ndarray] = []

    def allreduce(array: np.ndarray) -> np.ndarray:
        sent.append(array.copy())
        return array * 2

    feedback = ErrorFeedback(elems=8, n_workers=2, bits=8)
    config = Config(model="softmax", epochs=1, batch=1400)  # one iteration on digits
    train(config, load("digits", 0), 0, 2, allreduce, feedback=feedback)
    [grad] = sent
    assert np.array_equal(feedback.residual, grad.astype(np.float64) - feedback.contribution(grad))
    assert np.abs(feedback.residual).max() > 0


def test_each_ddp_bucket_carries_its_own_residual() -> None:
    """BucketFeedback, the DDP hook's state for error feedback (train/torch_hook.py, which this
    machine's tests cannot import without torch): bucket i's residual goes into bucket i's next
    step only, and what the worker sends is the compensated array."""
    sent: list[np.ndarray] = []

    class Worker:
        def allreduce_async(self, array: np.ndarray):
            sent.append(array)
            return "future"

    state = BucketFeedback(Worker(), elems=8, n_workers=4, bits=8)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(40).astype(np.float32), rng.standard_normal(7).astype(np.float32)
    alone = {i: ErrorFeedback(8, 4, 8) for i in (0, 1)}
    for step in range(3):
        for index, grad in ((0, a * (step + 1)), (1, b - step)):
            assert state.allreduce_async(state.compensate(index, grad)) == "future"
            assert np.array_equal(sent[-1], alone[index].compensate(grad))
    assert sorted(state.buckets) == [0, 1]
    assert np.array_equal(state.buckets[1].residual, alone[1].residual)
