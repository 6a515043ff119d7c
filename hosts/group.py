"""Several arrays all-reduced as one call: the layout of a group (docs/protocol.md, "Worker
obligations").

A group is its arrays' flat values concatenated, each array padded with zeros to a whole number of
chunks (`values` per chunk: ELEMS, or a packet's lane values at narrow lanes), so every array's
chunks start on a chunk boundary and are exactly the chunks a call of its own would make (an empty
array takes one chunk of zeros, as a call of its own does). Quantization (block floating point) and
sums are per chunk, so each array's sums and contributors, split back, are bit for bit a separate
call's; the wire carries one call: one exponent-only use per slot and one tail instead of one per
array. Every worker of a job must group the same arrays in the same order: the grouping is the
caller's program, deterministic like its calls' order. The ring over TCP uses the same layout
without padding (`values` None: its all-reduce has no chunks), an empty array taking no values.
"""

import bisect
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ina.hosts.chunks import Contributors, chunk_count
from ina.hosts.core import NonFiniteError, WorkerError


class Reduced(NamedTuple):
    """One all-reduce's outcome: the sum, and whose contributions each chunk of it holds."""

    total: np.ndarray
    contributors: Contributors


def one_dtype(arrays: Sequence[np.ndarray], error: type[Exception]) -> np.dtype:
    """The group's dtype (`arrays` converted already: each read once); `error` naming the first
    array of another, or an empty group."""
    if not arrays:
        raise error("arrays = []: a group all-reduces one or more arrays")
    dtype = arrays[0].dtype
    for i, array in enumerate(arrays):
        if array.dtype != dtype:
            raise error(
                f"arrays[{i}] is {array.dtype}, arrays[0] {dtype}: a group is one dtype "
                "(all-reduce arrays of another dtype in a group of their own)"
            )
    return dtype


class Group:
    """`arrays` (one dtype) laid out for one all-reduce: `flat` is what goes on the wire, `sums` and
    `split` cut its outcome back per array. In chunks of `values` (the switch's layout) each array
    is padded to whole chunks, an empty one taking one chunk of zeros; with `values` None (the
    ring's) the arrays are concatenated unpadded, an empty one taking no values. `error` is what
    a group of mixed dtypes, or no array, raises."""

    def __init__(
        self,
        arrays: Sequence[np.ndarray],
        values: int | None,
        error: type[Exception] = WorkerError,
    ):
        arrays = [np.asarray(a) for a in arrays]  # once: an array-like may convert at a cost
        dtype = one_dtype(arrays, error)
        self.values = values
        self.shapes = [a.shape for a in arrays]
        self.sizes = [a.size for a in arrays]
        spans = (
            self.sizes if values is None else [chunk_count(n, values) * values for n in self.sizes]
        )
        self.offsets = np.cumsum([0, *spans]).tolist()  # each array's first value; the end last
        self.flat = np.zeros(self.offsets[-1], dtype=dtype)
        for array, at in zip(arrays, self.offsets, strict=False):
            self.flat[at : at + array.size] = array.ravel()

    def sums(self, total: np.ndarray) -> list[np.ndarray]:
        """Each array's sum, in its shape, from the group's."""
        return [
            total[at : at + size].reshape(shape)
            for at, size, shape in zip(self.offsets, self.sizes, self.shapes, strict=False)
        ]

    def split(self, total: np.ndarray, contributors: Contributors) -> list[Reduced]:
        """Each array's sum (in its shape) and contributors, from the group's (the switch's layout:
        contributors are per chunk)."""
        chunks = [at // self.values for at in self.offsets]  # each one's first chunk; the end last
        return [
            Reduced(
                total_,
                Contributors(
                    contributors.elems,
                    contributors.counts[first:end],
                    contributors.bitmaps[first:end],
                ),
            )
            for total_, first, end in zip(self.sums(total), chunks[:-1], chunks[1:], strict=True)
        ]

    def refusal(self, err: BaseException) -> BaseException:
        """`err`, the core's refusal of `flat`, as the caller sees the group: a NaN or infinity
        named by its array and its index in that array; any other error as it is."""
        if not isinstance(err, NonFiniteError) or err.array is not None:
            return err
        # the last array starting at or before it (an empty array's offset is the next one's)
        i = bisect.bisect_right(self.offsets, err.index) - 1
        return NonFiniteError(err.count, err.index - self.offsets[i], err.value, i)
