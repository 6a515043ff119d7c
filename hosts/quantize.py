"""Block floating point, as SwitchML does it: floats -> integers in the switch's lanes (32, 16 or
8 bits) that it sums.

Each chunk of values travels with an exponent byte: `e + 128` where 2**e bounds the chunk's largest
magnitude (math.frexp's exponent), or 0 when the chunk is all zeros. The switch keeps the maximum
over workers; every worker then scales by LANE_MAX / (h * 2**e) and rounds to nearest, so a
worker's value is at most LANE_MAX / h and h contributions cannot overflow a lane.

h, the headroom, is `headroom(n, bits)`: n for 32-bit lanes, so n contributions never overflow
int32 (as before lanes). A narrow lane has few bits to spare, and n of them buy a bound that
values rarely reach, so its first pass takes ceil(sqrt(n)) (the spread of a sum of n independent
values); a sum that still saturates comes back flagged OVERFLOW and is redone at `redo_headroom`,
n, which cannot overflow (ina.hosts.chunks, docs/protocol.md "Lanes at the workers").

Rounding is to nearest, not stochastic: every worker and the numpy model of a sum agree on it bit
for bit, it costs no random numbers per value, and its bias is what error feedback (ina.train)
carries into the next step. Error per element of the sum: at most h * 2**e / (2 * LANE_MAX) per
worker's half a quantum (docs/accuracy.md).
"""

import math

import numpy as np

INT32_MAX = 2**31 - 1
BIAS = 128


def lane_max(bits: int) -> int:
    """The largest value of a `bits`-bit two's complement lane."""
    return (1 << (bits - 1)) - 1


def headroom(n_workers: int, bits: int) -> int:
    """How many workers' largest values a lane holds in a chunk's first pass."""
    return n_workers if bits == 32 else math.isqrt(n_workers - 1) + 1


def chunk_exponents(chunks: np.ndarray) -> np.ndarray:
    """Exponent byte per row of `chunks` (float array of shape (C, E))."""
    peak = np.max(np.abs(chunks), axis=1)
    _mantissa, exp = np.frexp(peak)
    return np.where(peak > 0, np.clip(exp.astype(np.int64) + BIAS, 1, 255), 0).astype(np.int64)


def scale_for(exponent_byte: int, n_workers: int, bits: int = 32) -> float:
    """The scale of a chunk with this (maximum) exponent whose lane holds `n_workers` values. A
    narrow lane's share per worker is rounded down to an integer, so that rounding to nearest
    cannot carry n values past the lane (int32's 2^31 / n leaves room for that)."""
    if exponent_byte == 0:
        return 1.0
    share = INT32_MAX / n_workers if bits == 32 else lane_max(bits) // n_workers
    return share / 2.0 ** (exponent_byte - BIAS)


def quantize(chunk: np.ndarray, scale, dtype: np.dtype | type = np.int64) -> np.ndarray:
    """`chunk` times `scale` (a float or an array that broadcasts), rounded to nearest, as `dtype`:
    computed in float64 in one buffer, so the packer's values go to the wire's lanes in three
    passes; a `dtype` narrower than int64 only for values known to fit it (a first pass's)."""
    scaled = np.multiply(chunk, scale, dtype=np.float64)
    return np.rint(scaled, out=scaled).astype(dtype)


def error_bound(exponent_byte: int, n_workers: int, bits: int = 32) -> float:
    """Largest absolute error of one summed element of `n_workers` for a chunk with this (maximum)
    exponent in `bits`-bit lanes, redone or not (a redo's quantum is the coarser)."""
    if exponent_byte == 0:
        return 0.0
    return n_workers * 0.5 / scale_for(exponent_byte, n_workers, bits)
