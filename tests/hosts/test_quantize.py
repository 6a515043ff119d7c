"""hosts/quantize.py: block floating point's exponent bytes, scales, rounding and error bound, exactly."""

import numpy as np

from ina.hosts.quantize import (
    BIAS,
    INT32_MAX,
    chunk_exponents,
    error_bound,
    headroom,
    lane_max,
    quantize,
    scale_for,
)


def test_exponent_byte_per_row_bounds_the_largest_magnitude_and_is_clipped():
    chunks = np.array(
        [
            [0.0, 0.0],  # all zeros: 0, the byte no exponent has
            [0.75, -3.5],  # 3.5 < 2**2
            [1.0, 0.0],  # 1.0 = 0.5 * 2**1: frexp's exponent, not log2's
            [0.5, -0.25],  # 0.5 = 0.5 * 2**0
            [2.0**-200, 0.0],  # below the byte's range: its smallest exponent
            [0.0, -(2.0**200)],  # above it: its largest
        ]
    )
    assert chunk_exponents(chunks).tolist() == [0, BIAS + 2, BIAS + 1, BIAS, 1, 255]
    assert chunk_exponents(chunks).dtype == np.int64


def test_scale_leaves_room_for_every_worker_and_zero_chunks_are_unscaled():
    assert (BIAS, INT32_MAX) == (128, 2**31 - 1)
    assert scale_for(0, 4) == 1.0
    assert scale_for(BIAS + 2, 4) == INT32_MAX / 16
    assert scale_for(BIAS - 3, 2) == INT32_MAX * 4
    top = quantize(np.array([-3.5, 3.5]), scale_for(BIAS + 2, 4))
    assert top.tolist() == [-round(INT32_MAX * 3.5 / 16), round(INT32_MAX * 3.5 / 16)]
    assert 4 * int(top[1]) <= INT32_MAX


def test_quantize_rounds_half_to_even_in_int64():
    q = quantize(np.array([0.5, 1.5, -2.5, 2.4, -0.6], dtype=np.float32), 1.0)
    assert q.tolist() == [0, 2, -2, 2, -1]
    assert q.dtype == np.int64
    assert quantize(np.array([3.0]), 2.5).tolist() == [8]  # 7.5 rounds to the even 8


def test_error_bound_is_half_a_quantum_per_worker():
    assert error_bound(0, 4) == 0.0
    assert error_bound(BIAS + 2, 4) == 4 * 0.5 * 16 / INT32_MAX
    assert error_bound(BIAS, 3) == 3 * 0.5 * 3 / INT32_MAX


def test_narrow_lanes_hold_the_root_of_the_workers_each_an_integer_share():
    """At 32 bits a lane holds every worker's largest value; narrower, ceil(sqrt(n)) of them (the
    first pass), each worker's share of the lane's largest value rounded down to an integer."""
    assert (lane_max(32), lane_max(16), lane_max(8)) == (INT32_MAX, 32767, 127)
    assert [headroom(n, 16) for n in (1, 2, 4, 5, 9, 10, 32)] == [1, 2, 2, 3, 3, 4, 6]
    assert [headroom(n, 8) for n in (3, 16, 17)] == [2, 4, 5]
    assert headroom(5, 32) == 5
    assert scale_for(BIAS, 3, bits=16) == 32767 // 3
    assert scale_for(BIAS + 1, 3, bits=8) == (127 // 3) / 2
