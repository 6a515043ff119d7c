"""Zero-block skipping end to end in `ina sim` (sim/sparse.py): exact sums, and the workers' links
carry exactly one header-only frame for each chunk of zeros."""

import dataclasses

import numpy as np

from ina.sim.allreduce import ZERO_FRAME, AllReduceConfig, frame_bytes
from ina.sim.links import LinkSpec
from ina.sim.sparse import dense_bytes, simulate_sparse, sparse_arrays

CONFIG = AllReduceConfig(workers=4, size=8 * 400, elems=8, window=16, seed=3)


def test_sparse_gradients_sum_exactly_and_each_zero_chunk_costs_a_header_only_frame():
    run = simulate_sparse(CONFIG, 0.6)
    assert run.exact
    assert (run.chunks, run.updates) == (400, 4 * 400)
    # 0.6 of each rank's 400 chunks are zeros (973 of 1,600); 46 chunks are zeros at all four
    # (0.6^4 = 13%), so their RESULTs go as ZERO frames to every worker
    chunks = np.array(sparse_arrays(CONFIG, 0.6)).reshape(4, 400, 8).any(axis=2)
    assert (run.zero_updates, run.zero_chunks) == (int((~chunks).sum()), 46) == (973, 46)
    full = frame_bytes(CONFIG.elems)
    assert run.up_bytes == 973 * ZERO_FRAME + (1600 - 973) * full
    assert run.down_bytes == 4 * (46 * ZERO_FRAME + (400 - 46) * full)
    assert run.up_bytes < dense_bytes(CONFIG) and run.down_bytes < dense_bytes(CONFIG)


def test_sparse_gradients_sum_exactly_under_loss():
    # lost ZERO UPDATEs are resent ZERO, lost ZERO RESULTs asked again: every sum still exact
    lossy = dataclasses.replace(CONFIG, link=LinkSpec(rate=100e9, delay=1e-6, loss=0.02))
    run = simulate_sparse(lossy, 0.9)
    assert run.exact
    assert run.updates > 4 * 400  # some were resent
