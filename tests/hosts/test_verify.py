"""`ina worker --verify` checks a partial sum against exactly the ranks its RESULTs counted."""

import numpy as np

from ina.hosts.cli import make_array, verify
from ina.hosts.core import Contributors


def test_int32_partial_sums_are_checked_against_the_counted_ranks_only():
    seed, n, size, elems = 3, 4, 20, 8  # chunks: 0..7, 8..15, 16..19
    counted = Contributors(elems, np.array([3, 4, 0], np.uint8), np.array([0b1101, 0b1111, 0], np.uint32))
    arrays = [make_array(seed, r, size, "int32").astype(np.int64) for r in range(n)]
    model = np.concatenate([(arrays[0] + arrays[2] + arrays[3])[:8], sum(arrays)[8:16], np.zeros(4, np.int64)])
    result = ((model + 2**31) % 2**32 - 2**31).astype(np.int32)
    assert verify(result, seed, n, size, "int32", elems, counted) == (True, 0.0)
    everyone = sum(arrays)
    assert not verify(((everyone + 2**31) % 2**32 - 2**31).astype(np.int32), seed, n, size, "int32", elems, counted)[0]
    assert verify(((everyone + 2**31) % 2**32 - 2**31).astype(np.int32), seed, n, size, "int32", elems)[0]


def test_float_partial_sums_stay_within_the_bound_of_their_ranks():
    seed, n, size, elems = 5, 3, 16, 8
    counted = Contributors(elems, np.array([2, 3], np.uint8), np.array([0b011, 0b111], np.uint32))
    arrays = [make_array(seed, r, size, "float32").astype(np.float64) for r in range(n)]
    model = np.concatenate([(arrays[0] + arrays[1])[:8], sum(arrays)[8:]])
    ok, error = verify(model.astype(np.float32), seed, n, size, "float32", elems, counted)
    assert ok and error < 1e-5
    assert not verify(sum(arrays).astype(np.float32), seed, n, size, "float32", elems, counted)[0]


def test_a_counted_float_clipped_to_the_smallest_exponent_still_verifies_and_more_does_not():
    seed, n, size, elems = 7, 3, 8, 8
    counted = Contributors(elems, np.array([2], np.uint8), np.array([0b011], np.uint32))
    arrays = [make_array(seed, r, size, "float32").astype(np.float64) for r in range(n)]
    floor = min(2.0 ** np.frexp(np.abs(a).max())[1] for a in arrays)
    clipped = sum(np.clip(arrays[r], -floor, floor) for r in (0, 1))
    assert verify(clipped.astype(np.float32), seed, n, size, "float32", elems, counted)[0]
    worse = clipped - np.sign(clipped) * 0.5 * floor
    assert not verify(worse.astype(np.float32), seed, n, size, "float32", elems, counted)[0]
