"""The worker core's chunk codec alone: the values a packet carries for a chunk, and the sums back."""

import numpy as np

from ina.hosts.chunks import Chunks
from ina.hosts.quantize import INT32_MAX, scale_for
from ina.p4src.protocol import HEADER_LEN


def packet(chunks: Chunks, chunk: int, exponent: int | None) -> bytes:
    return chunks.payload(chunk, exponent)


def test_int32_chunks_travel_as_they_are_and_come_back_in_the_arrays_shape():
    array = np.array([[1, -2, 3], [2**31 - 1, -5, 6]], dtype=np.int32)
    chunks = Chunks(array, elems=4, n_workers=2)
    assert (chunks.n, chunks.exponents) == (2, [0, 0, 0])
    assert packet(chunks, 1, 0) == np.array([-5, 6, 0, 0], dtype=">i4").tobytes()  # zero-padded
    for chunk in range(2):
        chunks.store(chunk, bytes(HEADER_LEN) + packet(chunks, chunk, 0), 2, 0b11)
    assert chunks.result().dtype == np.int32
    np.testing.assert_array_equal(chunks.result(), array)
    assert chunks.contributors().counts.tolist() == [2, 2]
    assert chunks.contributors().bitmaps.tolist() == [0b11, 0b11]


def test_a_chunk_without_its_result_sums_to_zero_and_counts_none():
    chunks = Chunks(np.arange(8, dtype=np.int32), elems=4, n_workers=2)
    chunks.store(0, bytes(HEADER_LEN) + packet(chunks, 0, 0), 1, 0b01)
    assert chunks.result().tolist() == [0, 1, 2, 3, 0, 0, 0, 0]
    assert chunks.contributors().missing.tolist() == [1]


def test_a_float_chunk_is_scaled_by_the_agreed_maximum_and_clipped_below_its_own_exponent():
    chunks = Chunks(np.array([1.0, -1.0, 0.5, 0.0], dtype=np.float32), elems=2, n_workers=4)
    own = chunks.exponents[0]
    assert chunks.exponents == [own, own - 1, 0]  # 2**e bounds each chunk; 0 after the last
    scale = scale_for(own, 4)
    assert packet(chunks, 0, own) == np.array([round(scale), -round(scale)], dtype=">i4").tobytes()
    assert packet(chunks, 0, None) == packet(chunks, 0, own)  # not known yet: its own scale
    clip = INT32_MAX // 4
    # its announcement was not counted: the others' maximum is lower
    assert packet(chunks, 0, own - 1) == np.array([clip, -clip], dtype=">i4").tobytes()
    # a higher maximum: quantized again, coarser
    assert packet(chunks, 1, own) == np.array([round(0.5 * scale), 0], dtype=">i4").tobytes()


def test_float_sums_are_scaled_back_with_each_chunks_agreed_scale():
    chunks = Chunks(np.array([1.0, -1.0, 0.5, 0.0], dtype=np.float64), elems=2, n_workers=4)
    own = chunks.exponents
    chunks.agree(0, own[0])  # a held RESULT's maximum: agreed with no packet filled
    chunks.store(0, bytes(HEADER_LEN) + packet(chunks, 0, None), 1, 0b1)
    chunks.store(
        1, bytes(HEADER_LEN) + packet(chunks, 1, own[0]), 1, 0b1
    )  # filled for a higher maximum
    assert chunks.result().dtype == np.float64
    np.testing.assert_allclose(
        chunks.result(), [1.0, -1.0, 0.5, 0.0], atol=4 / 2**31
    )  # within a quantum


def test_a_chunk_is_zero_exactly_when_its_every_value_is_a_zero_of_either_sign():
    smallest = np.finfo(np.float32).smallest_subnormal  # its exponent byte clips to 1, not 0
    for dtype in (np.float32, np.float64, np.int32):
        array = np.array([0, -0.0, smallest, 0, 0, 0, 3, 0], dtype=dtype)
        chunks = Chunks(array, elems=2, n_workers=2)
        zeros = [chunks.zero(c) for c in range(chunks.n)]
        assert zeros == [True, dtype == np.int32, True, False], dtype  # int32: the subnormal is 0
