"""bench/worker_io.py's --loop: bursts handed over in a BatchSocket's buffers reach the core whole."""

import pytest

from ina.bench.worker_io import loop_cost


@pytest.mark.parametrize("elems", [64, 256])
def test_the_loop_sums_every_burst_it_hands_over(elems: int) -> None:
    # 3 calls of 40 chunks: loop_cost asserts each call's sums (a RESULT written into the wrong
    # buffer, cut short or from another source would be dropped or summed wrong, and never finish)
    row = loop_cost(elems, 40 * elems, 3)
    assert (row["elems"], row["size"], row["reps"]) == (elems, 40 * elems, 3)
    assert row["us_per_result"] > 0
