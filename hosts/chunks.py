"""The chunk codec of a worker's all-reduce: an array as chunks of E values, packed up front as the
switch sums them, and the sums back (docs/protocol.md, "Exponents").

int32 chunks travel as they are (the switch sums them with int32 wraparound). Float chunks are
quantized with block floating point into the switch's `bits`-bit lanes: each with its own exponent,
right whenever the switch's maximum equals it; a chunk whose maximum came out lower (its
announcement was not counted) is quantized again for that maximum and clipped to the headroom. In
narrow lanes the first pass leaves room for fewer than n workers (ina.hosts.quantize.headroom); a
chunk whose sum saturated (its RESULT flagged OVERFLOW) is `redo`ne at the scale for n, which
cannot overflow, clipped likewise. A chunk whose values are all zeros is `zero`: its UPDATE is the
header alone, flagged ZERO, as is a RESULT whose every contribution was (docs/protocol.md,
"Zero-block skipping").
"""

import math
from dataclasses import dataclass
from typing import Final, cast

import numpy as np
from mypy_extensions import mypyc_attr

from ina.hosts.packets import lane_dtype
from ina.hosts.quantize import chunk_exponents, headroom, lane_max, quantize, scale_for
from ina.p4src import protocol

# a C static each compiled, not a dict lookup (hosts/core.py)
FLAG_ZERO: Final = protocol.FLAG_ZERO
FLAGS_OFFSET: Final = protocol.FLAGS_OFFSET
HEADER_LEN: Final = protocol.HEADER_LEN


@mypyc_attr(native_class=False)  # compiled too, it stays picklable: see ina/compiled.py
@dataclass(frozen=True)
class Contributors:
    """Whose contributions each chunk's sum holds, after an all-reduce: under a quorum or timeout
    policy a sum may lack ranks, and the caller decides how to scale it (average over the count).
    Chunk c is the flat elements c * elems .. (c + 1) * elems - 1 of the array."""

    elems: int
    # uint16 per chunk (the header's count): workers in its sum; 0 = missing (the result holds 0)
    counts: np.ndarray
    # uint32 per chunk: bit r set = the contribution of rank r at its switch is in the sum
    bitmaps: np.ndarray

    @property
    def missing(self) -> np.ndarray:
        """The chunks with no sum: their use was done and replaced before this worker had its
        RESULT (or, for floats, came right after such a use, so their scale is unknown)."""
        return np.flatnonzero(self.counts == 0)

    def element_counts(self, shape: tuple[int, ...]) -> np.ndarray:
        """The count of every element of an array of `shape` (the all-reduced one's): divide the sum
        by it to average over the contributions each element holds."""
        return np.repeat(self.counts, self.elems)[: math.prod(shape)].reshape(shape)

    def element_bitmaps(self, shape: tuple[int, ...]) -> np.ndarray:
        """The bitmap of every element of an array of `shape`: bit r set = rank r is in its sum."""
        return np.repeat(self.bitmaps, self.elems)[: math.prod(shape)].reshape(shape)


def chunk_count(size: int, values: int) -> int:
    """Chunks of `values` that carry `size` values: at least one (an empty array sends one chunk of
    zeros), the last padded with zeros."""
    return max(1, -(-size // values))


class Chunks:
    """One all-reduce's array (int32, float32 or float64, finite) as `n` chunks of `elems` values
    for `n_workers` in `bits`-bit lanes, and the sums that come back. `exponents[c]` is the exponent
    byte chunk c's scale was announced with (0 for int32, and after the last chunk)."""

    __slots__ = (
        "_agreed",
        "_bitmaps",
        "_blank",
        "_clip",
        "_counts",
        "_dtype",
        "_payload",
        "_plen",
        "_redone",
        "_safe_clip",
        "_safe_of",
        "_scale_of",
        "_scales",
        "_sums",
        "_values",
        "_zero",
        "dtype",
        "elems",
        "exponents",
        "is_float",
        "n",
        "shape",
    )

    def __init__(self, array: np.ndarray, elems: int, n_workers: int, bits: int = 32):
        flat = array.ravel()
        self.shape, self.dtype, self.elems = array.shape, array.dtype, elems
        self.n = n = chunk_count(flat.size, elems)
        self.is_float = array.dtype != np.int32
        self._dtype = dtype = lane_dtype(bits)
        room = headroom(n_workers, bits)  # a first pass's lane holds `room` largest values
        if self.is_float:
            values = np.zeros((n, elems), dtype=array.dtype)
            values.ravel()[: flat.size] = flat
            exponents = chunk_exponents(values)
            self._scale_of: list[float] = [scale_for(e, room, bits) for e in range(256)]
            self._safe_of: list[float] = [scale_for(e, n_workers, bits) for e in range(256)]
            self.exponents: list[int] = exponents.tolist()
            payload = quantize(values, np.array(self._scale_of)[exponents][:, None], dtype)
            zero = exponents == 0  # a chunk's largest magnitude is 0: all zeros, no second pass
        else:  # int32 in 32-bit lanes: the lanes are the values, in one array made in one pass
            values = payload = np.zeros((n, elems), dtype=dtype)
            payload.ravel()[: flat.size] = flat
            self._scale_of = self._safe_of = []
            self.exponents = [0] * n
            zero = ~values.any(axis=1)
        self.exponents.append(0)  # the exponent announced after the last chunk
        self._values = (
            values  # a float chunk's values, quantized again by `_clipped` (int32: unused)
        )
        # per chunk, whether its values are all zeros: zeros at any scale, so its UPDATE is ZERO
        self._zero: list[bool] = cast(list[bool], zero.tolist())  # read per packet
        self._clip = lane_max(bits) // room  # the largest quantized magnitude of a first pass
        self._safe_clip = lane_max(bits) // n_workers  # ... of a redo: n of them cannot overflow
        self._agreed = [0] * n  # per chunk, the switch's maximum exponent it was quantized for
        self._redone = [False] * n  # per chunk, whether it was redone (after an OVERFLOW)
        self._plen: int = elems * dtype.itemsize  # payload bytes per datagram (a machine integer)
        # a packet's values, a slice of bytes (compiled: a memcpy, no slice object or view)
        self._payload: bytes = payload.tobytes()
        # per chunk, the RESULT datagram that carries its sums (kept, not copied: bytes are
        # immutable); a datagram of zeros until one comes, and for a ZERO RESULT
        self._blank = bytes(HEADER_LEN + self._plen)
        self._sums = [self._blank] * n
        self._scales = [1.0] * n
        self._counts = [0] * n  # per chunk, its RESULT's count and bitmap (0: no sum yet)
        self._bitmaps = [0] * n

    def agree(self, chunk: int, exponent: int | None) -> None:
        """The switch's maximum `exponent` for chunk `chunk` (None: not known): for floats, everyone's
        scale for it."""
        if exponent is not None and self.is_float:
            self._scales[chunk] = self._scale_of[exponent]
            self._agreed[chunk] = exponent

    def payload(self, chunk: int, exponent: int | None) -> bytes:
        """Chunk `chunk`'s values (chunk >= 0) as a packet carries them after the header, for the
        switch's maximum `exponent` (None: not known, its own scale), which it agrees (`agree`)."""
        if self.is_float and exponent is not None:
            self._agreed[chunk] = exponent
            if self._redone[chunk]:  # the scale n contributions cannot overflow
                self._scales[chunk] = self._safe_of[exponent]
                return self._clipped(chunk, self._safe_clip)
            self._scales[chunk] = self._scale_of[exponent]
            if exponent != self.exponents[chunk]:
                # clipped: a maximum below its own exponent means its announcement was not counted
                return self._clipped(chunk, self._clip)
        at = chunk * self._plen
        return self._payload[at : at + self._plen]

    def _clipped(self, chunk: int, clip: int) -> bytes:
        """Chunk `chunk` quantized again at its agreed scale, clipped to +-`clip`."""
        values = quantize(self._values[chunk], self._scales[chunk])
        return np.clip(values, -clip, clip).astype(self._dtype).tobytes()

    def redo(self, chunk: int) -> bool:
        """Chunk `chunk`'s sum saturated a lane: whether it can be sent again at the scale that cannot
        overflow (a float chunk not redone yet), then its `agreed` exponent's `payload` uses that scale."""
        if not self.is_float or self._redone[chunk]:
            return False
        self._redone[chunk] = True
        return True

    def zero(self, chunk: int) -> bool:
        """Whether chunk `chunk`'s values are all zeros (its UPDATE is ZERO, the header alone)."""
        return self._zero[chunk]

    def agreed(self, chunk: int) -> int:
        """The switch's maximum exponent chunk `chunk` was quantized for."""
        return self._agreed[chunk]

    @property
    def redone(self) -> int:
        """How many chunks were redone."""
        return sum(self._redone)

    def store(self, chunk: int, data: bytes, count: int, bitmap: int) -> None:
        """The RESULT `data` of chunk `chunk` (kept, not copied): its sum (zeros if flagged ZERO:
        the header alone), and whose contributions it holds."""
        self._sums[chunk] = self._blank if data[FLAGS_OFFSET] & FLAG_ZERO else data
        self._counts[chunk], self._bitmaps[chunk] = count, bitmap

    def contributors(self) -> Contributors:
        """Whose contributions each chunk's sum holds (counts and bitmaps per chunk)."""
        return Contributors(
            self.elems,
            np.array(self._counts, dtype=np.uint16),
            np.array(self._bitmaps, dtype=np.uint32),
        )

    def result(self) -> np.ndarray:
        """The sums, in the array's shape and dtype; 0 where a chunk has no sum."""
        datagrams = np.frombuffer(b"".join(self._sums), np.uint8).reshape(self.n, -1)
        got = datagrams[:, HEADER_LEN:].view(self._dtype)  # each row's values, in place
        size = math.prod(self.shape)
        if not self.is_float:
            return got.astype(np.int32).ravel()[:size].reshape(self.shape)
        # divided in float64, rounded once into the array's dtype: one pass, no float64 copy
        out = np.empty((self.n, got.shape[1]), self.dtype)
        np.divide(got, np.array(self._scales)[:, None], out=out, dtype=np.float64, casting="unsafe")
        return out.ravel()[:size].reshape(self.shape)
