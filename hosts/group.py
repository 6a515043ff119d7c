"""Several arrays all-reduced as one call: the layout of a group (docs/protocol.md, "Worker
obligations").

A group is its arrays' flat values concatenated, each array padded with zeros to a whole number of
chunks (`values` per chunk: ELEMS, or a packet's lane values at narrow lanes), so every array's
chunks start on a chunk boundary and are exactly the chunks a call of its own would make (an empty
array takes one chunk of zeros, as a call of its own does). Quantization (block floating point) and
sums are per chunk, so each array's sums and contributors, split back, are bit for bit a separate
call's; the wire carries one call: one exponent-only use per slot and one tail instead of one per
array. Every worker of a job must group the same arrays in the same order: the grouping is the
caller's program, deterministic like its calls' order. The ring over TCP groups the same way
without padding (its all-reduce has no chunks).
"""

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ina.hosts.chunks import Contributors, chunk_count
from ina.hosts.core import WorkerError


class Reduced(NamedTuple):
    """One all-reduce's outcome: the sum, and whose contributions each chunk of it holds."""

    total: np.ndarray
    contributors: Contributors


def one_dtype(arrays: Sequence[np.ndarray], error: type[Exception] = WorkerError) -> np.dtype:
    """The group's dtype; `error` naming the first array of another, or an empty group."""
    if not arrays:
        raise error("arrays = []: a group all-reduces one or more arrays")
    dtype = np.asarray(arrays[0]).dtype
    for i, array in enumerate(arrays):
        if np.asarray(array).dtype != dtype:
            raise error(
                f"arrays[{i}] is {np.asarray(array).dtype}, arrays[0] {dtype}: a group is one "
                "dtype (all-reduce arrays of another dtype in a group of their own)"
            )
    return dtype


class Group:
    """`arrays` (one dtype) laid out for one all-reduce in chunks of `values`: `flat` is what goes on
    the wire, `split` cuts its outcome back per array."""

    def __init__(self, arrays: Sequence[np.ndarray], values: int):
        dtype = one_dtype(arrays)
        arrays = [np.asarray(a) for a in arrays]
        self.values = values
        self.shapes = [a.shape for a in arrays]
        counts = [chunk_count(a.size, values) for a in arrays]  # chunks per array, as Chunks makes
        self.starts = np.cumsum([0, *counts]).tolist()  # each array's first chunk; the end last
        self.flat = np.zeros(self.starts[-1] * values, dtype=dtype)
        for array, start in zip(arrays, self.starts, strict=False):
            self.flat[start * values : start * values + array.size] = array.ravel()

    def split(self, total: np.ndarray, contributors: Contributors) -> list[Reduced]:
        """Each array's sum (in its shape) and contributors, from the group's."""
        out = []
        for shape, first, end in zip(self.shapes, self.starts[:-1], self.starts[1:], strict=True):
            at = first * self.values
            size = int(np.prod(shape, dtype=np.int64))
            out.append(
                Reduced(
                    total[at : at + size].reshape(shape),
                    Contributors(
                        contributors.elems,
                        contributors.counts[first:end],
                        contributors.bitmaps[first:end],
                    ),
                )
            )
        return out
