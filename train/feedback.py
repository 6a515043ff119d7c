"""Error feedback for gradients in narrow lanes: each worker keeps what quantization dropped from
its gradient (the residual) and adds it to its next one, so rounding delays gradient mass instead
of losing it (1-bit SGD's and EF-SGD's remedy; the sum's own rounding is to nearest, which this
makes unbiased over steps).

The residual is measured against the worker's own first pass (ina.hosts.quantize: its chunk's own
exponent, the lane's headroom), which is its contribution whenever its exponent is the switch's
maximum; a chunk whose maximum came from another worker, or that was redone, was quantized more
coarsely than this model says, and that difference is not carried over.
"""

import concurrent.futures
from typing import Protocol

import numpy as np

from ina.hosts.quantize import chunk_exponents, headroom, quantize, scale_for
from ina.p4src.protocol import lane_values


class ErrorFeedback:
    """One worker's residual for gradients of one shape, quantized in chunks of the switch's
    `elems` words of `bits`-bit lanes for `n_workers`."""

    def __init__(self, elems: int, n_workers: int, bits: int):
        self.values = lane_values(elems, bits)  # per chunk
        self.room, self.bits = headroom(n_workers, bits), bits
        self.residual: np.ndarray | None = None

    def compensate(self, grad: np.ndarray) -> np.ndarray:
        """`grad` plus the residual carried from the last step (float32, what the all-reduce
        sends); the residual becomes what quantizing it drops."""
        sent = grad.astype(np.float64) + (0.0 if self.residual is None else self.residual)
        sent = sent.astype(np.float32).astype(np.float64)
        self.residual = sent - self.contribution(sent)
        return sent.astype(np.float32)

    def contribution(self, array: np.ndarray) -> np.ndarray:
        """`array` as this worker's first pass quantizes it, back in floats."""
        flat = array.ravel()
        chunks = np.zeros((-(-flat.size // self.values), self.values))
        chunks.ravel()[: flat.size] = flat
        scales = np.array(
            [scale_for(int(e), self.room, self.bits) for e in chunk_exponents(chunks)]
        )[:, None]
        back = quantize(chunks, scales) / scales
        return back.ravel()[: flat.size].reshape(array.shape)


class AllReduce(Protocol):
    """What error feedback sends through: an ina `Worker`, or anything with its `allreduce_async`."""

    def allreduce_async(self, array: np.ndarray) -> concurrent.futures.Future: ...


class BucketFeedback:
    """Error feedback for a step sent as several arrays (DDP's gradient buckets, train/torch_hook.py):
    a residual per bucket index, since each bucket holds the same parameters every step. Its
    `allreduce_async` is `worker`'s, so it stands where the worker stood."""

    def __init__(self, worker: AllReduce, elems: int, n_workers: int, bits: int):
        self.worker = worker
        self.elems, self.n_workers, self.bits = elems, n_workers, bits
        self.buckets: dict[int, ErrorFeedback] = {}

    def compensate(self, bucket: int, array: np.ndarray) -> np.ndarray:
        """Bucket `bucket`'s gradients plus its residual from the last step (`ErrorFeedback`)."""
        if bucket not in self.buckets:
            self.buckets[bucket] = ErrorFeedback(self.elems, self.n_workers, self.bits)
        return self.buckets[bucket].compensate(array)

    def allreduce_async(self, array: np.ndarray) -> concurrent.futures.Future:
        return self.worker.allreduce_async(array)
