"""`ina worker --verify` checks every repetition's sum (each of its own arrays) against exactly the
ranks its RESULTs counted, and counts the share of the rank's contributions in the sums."""

import argparse

import numpy as np

from ina.hosts.cli import Outcome, make_array, verify
from ina.hosts.core import Contributors
from ina.hosts.members import load_sums
from ina.hosts.worker import Share


def test_int32_partial_sums_are_checked_against_the_counted_ranks_only():
    seed, n, size, elems = 3, 4, 20, 8  # chunks: 0..7, 8..15, 16..19
    counted = Contributors(
        elems, np.array([3, 4, 0], np.uint8), np.array([0b1101, 0b1111, 0], np.uint32)
    )
    arrays = [make_array(seed, r, size, "int32").astype(np.int64) for r in range(n)]
    model = np.concatenate(
        [(arrays[0] + arrays[2] + arrays[3])[:8], sum(arrays)[8:16], np.zeros(4, np.int64)]
    )
    result = ((model + 2**31) % 2**32 - 2**31).astype(np.int32)
    assert verify(result, seed, n, size, "int32", elems, counted) == (True, 0.0)
    everyone = sum(arrays)
    assert not verify(
        ((everyone + 2**31) % 2**32 - 2**31).astype(np.int32),
        seed,
        n,
        size,
        "int32",
        elems,
        counted,
    )[0]
    assert verify(
        ((everyone + 2**31) % 2**32 - 2**31).astype(np.int32), seed, n, size, "int32", elems
    )[0]


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


def exact_sum(seed: int, n: int, size: int, iteration: int) -> np.ndarray:
    total = sum(make_array(seed, r, size, "int32", iteration).astype(np.int64) for r in range(n))
    return ((total + 2**31) % 2**32 - 2**31).astype(np.int32)


def test_each_repetition_has_its_own_arrays_and_the_first_is_the_seeds_own():
    first, second = make_array(5, 1, 64, "int32"), make_array(5, 1, 64, "int32", 1)
    assert np.array_equal(
        first, np.random.default_rng(5 * 1000 + 1).integers(-(2**20), 2**20, 64, dtype=np.int32)
    )
    assert not np.array_equal(first, second)
    assert not np.array_equal(second, make_array(5, 1, 64, "int32", 2))


def test_every_repetition_is_verified_against_its_own_sum_and_a_miss_names_it():
    args = argparse.Namespace(
        seed=2,
        rank=1,
        workers=3,
        size=20,
        dtype="int32",
        elems=8,
        bits=32,
        repeat=4,
        verify=True,
        save_sums=None,
    )
    everyone = Contributors(8, np.array([3, 3, 3], np.uint8), np.array([0b111] * 3, np.uint32))
    outcome = Outcome(args)
    outcome.add(0, (exact_sum(2, 3, 20, 0), everyone))
    outcome.add(1, (exact_sum(2, 3, 20, 0), everyone))  # the first repetition's sum again: wrong
    off = exact_sum(2, 3, 20, 2)
    off[7] += 5
    outcome.add(2, (off, everyone))
    outcome.add(3, (exact_sum(2, 3, 20, 3), everyone))
    wrong_by = int(np.abs(exact_sum(2, 3, 20, 0).astype(np.int64) - exact_sum(2, 3, 20, 1)).max())
    assert (outcome.ok, outcome.failed, outcome.max_error) == (False, [1, 2], float(wrong_by))
    assert outcome.mismatch() == (
        "the sum of 2 of 4 all-reduce(s) does not match the expected sum "
        f"(repetition 1, 2; max error {wrong_by:g})"
    )


def test_an_int32_mismatch_says_its_error():
    result = exact_sum(4, 2, 16, 0)
    result[3] -= 9
    assert verify(result, 4, 2, 16, "int32", 8) == (False, 9.0)


def test_the_share_of_a_ranks_contributions_in_the_sums_counts_chunks_over_all_reduces():
    share = Share(rank=2)
    assert share.fraction == 1.0  # nothing left out yet
    without = Contributors(8, np.array([2, 3, 0], np.uint8), np.array([0b011, 0b111, 0], np.uint32))
    share.add(without)
    share.add(Contributors(8, np.full(3, 3, np.uint8), np.full(3, 0b111, np.uint32)))
    assert (share.chunks, share.entered, share.fraction) == (6, 4, 4 / 6)
    first = Share(rank=0)
    first.add(without)
    assert first.fraction == 2 / 3  # rank 0 is in chunks 0 and 1, not in the missing one


def test_chunks_whose_sums_lack_ranks_are_counted_over_repetitions():
    args = argparse.Namespace(
        seed=1,
        rank=2,
        workers=3,
        size=24,
        dtype="int32",
        elems=8,
        bits=32,
        repeat=2,
        verify=False,
        save_sums=None,
    )
    outcome = Outcome(args)
    without = Contributors(8, np.array([2, 3, 0], np.uint8), np.array([0b011, 0b111, 0], np.uint32))
    outcome.add(0, (np.zeros(24, np.int32), without))
    outcome.add(
        1,
        (
            np.zeros(24, np.int32),
            Contributors(8, np.full(3, 3, np.uint8), np.full(3, 0b111, np.uint32)),
        ),
    )
    assert (outcome.partial, outcome.missing, outcome.ok) == (2, 1, True)


def test_save_sums_keeps_each_repetitions_sum_and_results_for_the_jobs_check(tmp_path):
    args = argparse.Namespace(
        seed=1,
        rank=2,
        workers=3,
        size=24,
        dtype="int32",
        elems=8,
        repeat=2,
        verify=False,
        save_sums=tmp_path,
    )
    outcome = Outcome(args)
    counted = Contributors(
        8, np.array([2, 3, 0], np.uint16), np.array([0b011, 0b111, 0], np.uint32)
    )
    for iteration in range(2):
        outcome.add(iteration, (np.arange(24, dtype=np.int32) + iteration, counted))
    for iteration in range(2):
        result, saved = load_sums(tmp_path, 2, iteration)
        assert result.tolist() == list(range(iteration, 24 + iteration))
        assert (saved.elems, saved.counts.tolist(), saved.bitmaps.tolist()) == (
            8,
            [2, 3, 0],
            [0b011, 0b111, 0],
        )
