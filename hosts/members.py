"""Whose contributions each chunk's sum holds, job-wide, from every worker's RESULTs (issue 31).

A RESULT's bitmap names ranks at the worker's own switch (32 bits), and its count the workers in
the job's sum: in a hierarchical job a worker alone cannot name the job ranks in a partial sum.
The job's workers together can (docs/protocol.md, "Which ranks a hierarchical sum holds"): every
worker of a leaf that has a chunk's RESULT got the same bitmap, its leaf's children in the sum (0
if the leaf is not in it), so the union over the leaves names them, and the count settles the
leaves none of whose workers had the RESULT when it says they are all in or all out.
"""

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ina.hosts.chunks import Contributors


@dataclass(frozen=True)
class Members:
    """Per job rank and chunk, whether the rank's contribution is in the chunk's sum (`in_sum`,
    ranks x chunks); `unresolved` marks the chunks the RESULTs do not settle (a leaf without the
    RESULT whose share the count leaves open, or workers told different bitmaps or counts)."""

    in_sum: np.ndarray
    unresolved: np.ndarray


def job_members(
    contributors: Sequence[Contributors], endpoints: Sequence[tuple[Hashable, int]]
) -> Members:
    """The members of every chunk's sum, from each job rank's `contributors` and `endpoints` (its
    leaf switch and its rank there; a single-switch job: one leaf, rank = job rank)."""
    counts = np.stack([c.counts.astype(np.int64) for c in contributors])  # ranks x chunks
    bitmaps = np.stack([c.bitmaps.astype(np.int64) for c in contributors])
    n, chunks = counts.shape
    got = counts > 0
    total = counts.max(axis=0, initial=0)
    unresolved = (got & (counts != total)).any(axis=0)  # everyone told the same count
    in_sum = np.zeros((n, chunks), dtype=bool)
    open_workers = np.zeros(chunks, dtype=np.int64)  # workers of leaves without the RESULT
    leaves: dict[Hashable, list[int]] = {}
    for rank, (leaf, _wire) in enumerate(endpoints):
        leaves.setdefault(leaf, []).append(rank)
    unknown = {}
    for leaf, ranks in leaves.items():
        leaf_got = got[ranks].any(axis=0)
        bitmap = np.where(got[ranks], bitmaps[ranks], -1).max(axis=0)
        unresolved |= (got[ranks] & (bitmaps[ranks] != bitmap)).any(axis=0)
        for rank in ranks:
            in_sum[rank] = leaf_got & (bitmap >> endpoints[rank][1] & 1 == 1)
        unknown[leaf] = ~leaf_got
        open_workers += np.where(leaf_got, 0, len(ranks))
    remainder = total - in_sum.sum(axis=0)
    everyone_open = remainder == open_workers
    unresolved |= (remainder != 0) & ~everyone_open
    for leaf, ranks in leaves.items():
        in_sum[ranks] |= unknown[leaf] & everyone_open
    return Members(in_sum, unresolved)


def sums_path(directory: Path, rank: int, iteration: int) -> Path:
    """Where `ina worker --save-sums DIR` keeps rank `rank`'s sum of all-reduce `iteration`."""
    return directory / f"rank{rank}-iteration{iteration}.npz"


def save_sums(
    directory: Path, rank: int, iteration: int, result: np.ndarray, counted: Contributors
) -> None:
    """One all-reduce's sum and its RESULTs' counts and bitmaps, for a check of the job's sums
    once every worker has finished (`ina run`'s of hierarchical jobs)."""
    np.savez(
        sums_path(directory, rank, iteration),
        result=result,
        counts=counted.counts,
        bitmaps=counted.bitmaps,
        elems=counted.elems,
    )


def load_sums(directory: Path, rank: int, iteration: int) -> tuple[np.ndarray, Contributors]:
    """`save_sums`'s record, read back; OSError when the worker left none."""
    with np.load(sums_path(directory, rank, iteration)) as saved:
        counted = Contributors(int(saved["elems"]), saved["counts"], saved["bitmaps"])
        return saved["result"], counted
