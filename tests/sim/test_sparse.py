"""Zero-block skipping end to end in `ina sim` (sim/sparse.py): exact sums, and the workers' links
carry exactly one header-only frame for each chunk of zeros."""

import dataclasses

import numpy as np

from ina.sim.allreduce import ZERO_FRAME, AllReduceConfig, frame_bytes
from ina.sim.links import LinkSpec
from ina.sim.sparse import dense_bytes, simulate_sparse, sparse_arrays

CONFIG = AllReduceConfig(workers=4, size=8 * 200, elems=8, window=16, seed=3)


def test_sparse_gradients_sum_exactly_and_each_zero_chunk_costs_a_header_only_frame():
    run = simulate_sparse(CONFIG, 0.6)
    assert run.exact
    assert (run.chunks, run.updates) == (200, 4 * 200)
    # 0.6 of each rank's 200 chunks are zeros (482 of 800); 31 chunks are zeros at all four
    # (0.6^4 = 13%), so their RESULTs go as ZERO frames to every worker
    chunks = np.array(sparse_arrays(CONFIG, 0.6)).reshape(4, 200, 8).any(axis=2)
    assert (run.zero_updates, run.zero_chunks) == (int((~chunks).sum()), 31) == (482, 31)
    full = frame_bytes(CONFIG.elems)
    assert run.up_bytes == 482 * ZERO_FRAME + (800 - 482) * full
    assert run.down_bytes == 4 * (31 * ZERO_FRAME + (200 - 31) * full)
    assert run.up_bytes < dense_bytes(CONFIG) and run.down_bytes < dense_bytes(CONFIG)


def test_sparse_gradients_sum_exactly_under_loss():
    # lost ZERO UPDATEs are resent ZERO, lost ZERO RESULTs asked again: every sum still exact
    lossy = dataclasses.replace(CONFIG, link=LinkSpec(rate=100e9, delay=1e-6, loss=0.02))
    run = simulate_sparse(lossy, 0.9)
    assert run.exact
    assert run.updates > 4 * 200  # some were resent
