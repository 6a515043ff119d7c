"""Sparse gradients in `ina sim`: one all-reduce of int32 arrays some of whose chunks are all zeros
at some workers, with zero-block skipping (docs/protocol.md, "Zero-block skipping"). Each chunk is
zeros with probability `zero_share`, drawn from the seed, at each worker independently (a chunk's
RESULT is ZERO only where it is zeros at every worker), or `shared`: the same chunks at every
worker. It returns whether every worker's sum is exact and what the workers' links carried, each
way, in frame bytes.
"""

import math
from dataclasses import dataclass

import numpy as np

from ina.hosts.cli import make_array
from ina.p4src.protocol import lane_values
from ina.sim.allreduce import AllReduceConfig, frame_bytes, harness, link_stats


@dataclass(frozen=True)
class SparseResult:
    exact: bool  # every worker's sum equals numpy's (int32 wraparound)
    communication_s: float  # simulated: until the last worker had its sum
    up_bytes: int  # frame bytes the workers' links carried to the switch (UPDATEs)
    down_bytes: int  # ... and from it (RESULTs and STATUSes)
    zero_updates: int  # UPDATEs sent as the header alone, all workers
    updates: int  # UPDATEs sent, all workers
    zero_chunks: int  # chunks that are zeros at every worker: their RESULT is ZERO too
    chunks: int


def sparse_arrays(
    config: AllReduceConfig, zero_share: float, shared: bool = False
) -> list[np.ndarray]:
    """Each rank's make_array int32 array with each of its chunks zeroed with probability
    `zero_share` (seeded by config.seed), per rank or, `shared`, the same chunks for all."""
    rng = np.random.default_rng(config.seed)
    values = lane_values(config.elems, config.bits)
    chunks = math.ceil(config.size / values)
    common = rng.random(chunks) < zero_share
    arrays = []
    for rank in range(config.workers):
        array = make_array(config.seed, rank, config.size, "int32")
        zero = common if shared else rng.random(chunks) < zero_share
        array[np.repeat(zero, values)[: config.size]] = 0
        arrays.append(array)
    return arrays


def simulate_sparse(
    config: AllReduceConfig, zero_share: float, shared: bool = False
) -> SparseResult:
    """One all-reduce of `sparse_arrays` on `config`'s star (one job, int32)."""
    topo = config.topology()
    [job] = topo.jobs
    arrays = sparse_arrays(config, zero_share, shared)
    with harness(config, topo) as net:
        results = net.allreduce({job.id: arrays})[job.id]
        links = link_stats(net)
        stats = [member.core.stats for member in net.jobs[job.id]]
    total = np.sum(arrays, axis=0, dtype=np.int64).astype(np.int32)
    values = lane_values(config.elems, config.bits)
    padded = np.zeros((len(arrays), math.ceil(config.size / values) * values), np.int32)
    padded[:, : config.size] = arrays
    nonzero = padded.reshape(len(arrays), -1, values).any(axis=2).any(axis=0)
    return SparseResult(
        all(np.array_equal(result, total) for result in results),
        max(s.elapsed for s in stats),
        sum(up.bytes for _name, up, _down in links),
        sum(down.bytes for _name, _up, down in links),
        sum(s.zeros for s in stats),
        sum(s.packets_sent for s in stats),
        int((~nonzero).sum()),
        nonzero.size,
    )


def dense_bytes(config: AllReduceConfig) -> int:
    """Frame bytes each way of the same lossless all-reduce without skipping: every chunk's UPDATE
    from every worker, and its RESULT to every worker, in full."""
    chunks = math.ceil(config.size / lane_values(config.elems, config.bits))
    return config.workers * chunks * frame_bytes(config.elems)
