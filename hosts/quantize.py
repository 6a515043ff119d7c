"""Block floating point, as SwitchML does it: floats -> int32 the switch can sum without overflow.

Each chunk of E values travels with an exponent byte: `e + 128` where 2**e bounds the chunk's
largest magnitude (math.frexp's exponent), or 0 when the chunk is all zeros. The switch keeps the
maximum over workers; every worker then scales by (2**31 - 1) / (n * 2**e) and rounds, so n
contributions cannot overflow int32. Error per element of the sum: at most n * 2**e / 2**32
(half a quantum per worker), documented with measurements in docs/accuracy.md.
"""

import numpy as np

INT32_MAX = 2**31 - 1
BIAS = 128


def chunk_exponents(chunks: np.ndarray) -> np.ndarray:
    """Exponent byte per row of `chunks` (float array of shape (C, E))."""
    peak = np.max(np.abs(chunks), axis=1)
    _mantissa, exp = np.frexp(peak)
    return np.where(peak > 0, np.clip(exp.astype(np.int64) + BIAS, 1, 255), 0).astype(np.int64)


def scale_for(exponent_byte: int, n_workers: int) -> float:
    if exponent_byte == 0:
        return 1.0
    return INT32_MAX / (n_workers * 2.0 ** (exponent_byte - BIAS))


def quantize(chunk: np.ndarray, scale: float) -> np.ndarray:
    return np.rint(chunk.astype(np.float64) * scale).astype(np.int64)


def error_bound(exponent_byte: int, n_workers: int) -> float:
    """Largest absolute error of one summed element for a chunk with this (maximum) exponent."""
    if exponent_byte == 0:
        return 0.0
    return n_workers * 0.5 / scale_for(exponent_byte, n_workers)
