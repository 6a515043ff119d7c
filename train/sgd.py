"""Data-parallel SGD, and the single-process reference it must match.

Every iteration takes one global batch (a seeded permutation per epoch, the last partial batch
dropped) and cuts it into `n_workers` consecutive shards (`shard`: the first batch % n_workers ranks
one sample more). Each worker computes the mean gradient of its shard, weighted by its shard's share
of the batch (`shard_weight`), all-reduces it as flattened float32 (through the switch: block floating point), divides the
sum by the number of gradients it holds (n, or fewer under a quorum or timeout policy, per chunk)
and applies the same update, so all workers keep the same weights and, up to the quantization of
the sum, follow the reference: one process, the whole batch, float64 gradients. An emulated compute
time per iteration (a sleep, `compute`) lets a straggler be slower than the others.

Under bounded staleness S (SSP; the switch's `stale:S` policy) the all-reduces are pipelined
(`allreduce_async`): iteration t's update is applied when its all-reduce finishes, in iteration
order, and at most S iterations late: before computing iteration t a worker waits for the
all-reduce of t - S - 1. Every worker applies the same sums in the same order, so the weights
they end with (all updates applied) are the same; in between, gradients are computed on weights
that lack up to S updates.

The loop is one program, `steps`: a generator that yields a `Compute` request for each emulated
compute and a `Reduce` for each all-reduce. `train` serves them in real time (a sleep, the
worker's all-reduce); `ina sim` (sim/training.py) serves them in virtual time through the
simulated network, so both apply exactly the same updates.
"""

import collections
import concurrent.futures
import time
from collections.abc import Callable, Generator
from dataclasses import asdict, dataclass, field

import numpy as np

from ina.hosts.compute import ComputeModel
from ina.train.data import Dataset
from ina.train.feedback import ErrorFeedback
from ina.train.models import Model, make_model

AllReduce = Callable[[np.ndarray], np.ndarray]  # the element-wise sum over every worker's array
Counts = Callable[
    [tuple[int, ...]], np.ndarray
]  # per element: how many gradients the last sum holds
AsyncAllReduce = Callable[
    [np.ndarray], concurrent.futures.Future
]  # a future of the sum's `Reduced`


@dataclass(frozen=True)
class Config:
    model: str = "mlp"
    epochs: int = 20
    batch: int = 64  # the global batch: every worker's shard together
    lr: float = 0.1
    hidden: int = 32
    seed: int = 0


@dataclass
class EpochRecord:
    epoch: int
    wall_s: float  # since training began, after this epoch's evaluation
    loss: float  # on the whole training set, after the epoch
    test_accuracy: float
    compute_s: float  # this epoch's gradients and updates
    comm_s: float  # this epoch's all-reduces


@dataclass
class History:
    iterations: int = 0
    epochs: list[EpochRecord] = field(default_factory=list)
    missing_elements: int = 0  # gradient elements whose sum this worker never got (updated with 0)

    @property
    def compute_s(self) -> float:
        return sum(e.compute_s for e in self.epochs)

    @property
    def comm_s(self) -> float:
        return sum(e.comm_s for e in self.epochs)

    def as_dict(self) -> dict:
        return {
            "iterations": self.iterations,
            "compute_s": self.compute_s,
            "comm_s": self.comm_s,
            "missing_elements": self.missing_elements,
            "epochs": [asdict(e) for e in self.epochs],
        }


def time_to_accuracy(epochs: list[dict], target: float) -> float | None:
    """Seconds (`wall_s`: real or simulated) at the end of the first epoch whose test accuracy
    reaches `target`."""
    return next((e["wall_s"] for e in epochs if e["test_accuracy"] >= target), None)


def global_batches(n_samples: int, batch: int, epoch: int, seed: int) -> list[np.ndarray]:
    """Sample indices of each full global batch of `epoch`: the same on every worker."""
    order = np.random.default_rng([seed, epoch]).permutation(n_samples)
    return [order[i : i + batch] for i in range(0, n_samples - batch + 1, batch)]


def shard(batch: np.ndarray, rank: int, n_workers: int) -> np.ndarray:
    """Rank `rank`'s part of a global batch: consecutive parts, the first len(batch) % n_workers
    ranks one sample more, so any batch of at least n_workers samples splits over any worker count."""
    size, extra = divmod(len(batch), n_workers)
    start = rank * size + min(rank, extra)
    return batch[start : start + size + (rank < extra)]


def shard_weight(shard_size: int, batch_size: int, n_workers: int) -> float:
    """What a rank's mean gradient is multiplied by before the all-reduce, so that the average over
    the ranks is the whole batch's mean gradient with unequal shards too (exactly 1 for equal ones)."""
    return shard_size * n_workers / batch_size


def check(config: Config, data: Dataset, n_workers: int) -> None:
    """Refuse a batch that leaves a worker without samples, or one larger than the training set."""
    if config.batch < n_workers:
        raise ValueError(
            f"batch {config.batch} leaves {n_workers - config.batch} of the {n_workers} workers "
            f"without a sample: use at least {n_workers}"
        )
    if config.batch > len(data.y_train):
        raise ValueError(
            f"batch {config.batch} is larger than {data.name}'s {len(data.y_train)} training samples"
        )


def average(total: np.ndarray, counts: np.ndarray | int) -> np.ndarray:
    """The mean gradient from a sum of `counts` gradients per element; 0 where the sum holds none."""
    return np.divide(total, counts, out=np.zeros_like(total), where=np.asarray(counts) > 0)


@dataclass(frozen=True)
class Compute:
    """A request of a training program: let `seconds` of emulated compute pass (a sleep, or virtual
    time in `ina sim`)."""

    seconds: float


@dataclass(frozen=True)
class Reduce:
    """A request of a training program: all-reduce `grad` (None: nothing new), then hand back the
    sums of the oldest calls in flight, in order, until at most `keep` remain: a list of (sum,
    gradients per element or an int for all)."""

    grad: np.ndarray | None
    keep: int = 0

    @property
    def sent(self) -> np.ndarray:
        """What the all-reduce carries: a float64 gradient as float32 (the reference keeps float64),
        any other array as it is."""
        return self.grad.astype(np.float32) if self.grad.dtype == np.float64 else self.grad


Request = Compute | Reduce
Sums = list[tuple[np.ndarray, np.ndarray | int]]


def steps(
    config: Config,
    data: Dataset,
    rank: int = 0,
    n_workers: int = 1,
    clock: Callable[[], float] = time.perf_counter,
    on_epoch: Callable[[EpochRecord], None] | None = None,
    compute: ComputeModel | None = None,
    staleness: int = 0,
    feedback: ErrorFeedback | None = None,
) -> Generator[Request, Sums | None, tuple[Model, History]]:
    """Worker `rank`'s training as a program: each iteration's gradient, its emulated compute (a
    `Compute` request) and its all-reduce (a `Reduce`, each update applied when its sum comes back,
    at most `staleness` iterations late); `clock` times the phases. `train` runs it on a real
    all-reduce and clock, `ina sim` (sim/training.py) in virtual time; both apply the same updates.
    With `feedback` each gradient carries the residual its worker's quantization left last step."""
    check(config, data, n_workers)
    model = make_model(config.model, data.n_features, data.n_classes, config.seed, config.hidden)
    history = History()
    per_epoch = len(data.y_train) // config.batch
    sleeps = iter(compute.durations(config.epochs * per_epoch) if compute else [])

    def apply(sums: Sums) -> None:
        """One update per sum of `counted` gradients per element (a missing sum updates nothing)."""
        for total, counted in sums:
            history.missing_elements += int(np.count_nonzero(np.asarray(counted) == 0))
            model.params -= config.lr * average(total.astype(np.float64), counted)

    start = clock()
    for epoch in range(config.epochs):
        compute_s = comm_s = 0.0
        for batch in global_batches(len(data.y_train), config.batch, epoch, config.seed):
            t0 = clock()
            mine = shard(batch, rank, n_workers)
            _loss, grad = model.loss_and_grad(data.x_train[mine], data.y_train[mine])
            if len(batch) % n_workers:
                grad *= shard_weight(len(mine), len(batch), n_workers)
            if feedback is not None:
                grad = feedback.compensate(grad)
            emulated = next(sleeps, 0.0)
            if emulated:
                yield Compute(emulated)
            t1 = clock()
            apply((yield Reduce(grad, staleness)))
            t2 = clock()
            compute_s += t1 - t0
            comm_s += t2 - t1
            history.iterations += 1
        if epoch == config.epochs - 1:  # the last updates, so the model trained is every worker's
            t1 = clock()
            apply((yield Reduce(None)))
            comm_s += clock() - t1
        record = EpochRecord(
            epoch + 1,
            clock() - start,
            model.loss(data.x_train, data.y_train),
            model.accuracy(data.x_test, data.y_test),
            compute_s,
            comm_s,
        )
        history.epochs.append(record)
        if on_epoch is not None:
            on_epoch(record)
    return model, history


def train(
    config: Config,
    data: Dataset,
    rank: int = 0,
    n_workers: int = 1,
    allreduce: AllReduce | None = None,
    on_epoch: Callable[[EpochRecord], None] | None = None,
    counts: Counts | None = None,
    compute: ComputeModel | None = None,
    allreduce_async: AsyncAllReduce | None = None,
    staleness: int = 0,
    feedback: ErrorFeedback | None = None,
) -> tuple[Model, History]:
    """Train worker `rank` of `n_workers` in real time; without an all-reduce (one worker) this is the
    reference. `counts` says how many gradients each element of `allreduce`'s last sum holds
    (default: all n); `allreduce_async` instead pipelines the all-reduces, each update applied at
    most `staleness` iterations late (earlier if its sum is already there); `compute` adds its
    emulated compute time (a sleep) to every iteration; `feedback` carries each gradient's
    quantization residual into the next (`steps`)."""
    if allreduce is None and allreduce_async is None and n_workers != 1:
        raise ValueError("several workers need an all-reduce")
    pending: collections.deque = (
        collections.deque()
    )  # the all-reduces whose updates are not applied yet

    def serve(request: Request) -> Sums | None:
        if isinstance(request, Compute):
            time.sleep(request.seconds)
            return None
        if allreduce_async is not None:
            if request.grad is not None:
                pending.append(allreduce_async(request.sent))
            sums = []
            while pending and (len(pending) > request.keep or pending[0].done()):
                reduced = pending.popleft().result()
                sums.append(
                    (reduced.total, reduced.contributors.element_counts(reduced.total.shape))
                )
            return sums
        if request.grad is None:
            return []
        if allreduce is None:
            return [(request.grad, 1)]
        total = allreduce(request.sent)
        return [(total, counts(total.shape) if counts else n_workers)]

    return run(
        steps(
            config,
            data,
            rank,
            n_workers,
            time.perf_counter,
            on_epoch,
            compute,
            staleness if allreduce_async is not None else 0,
            feedback,
        ),
        serve,
    )


def run(
    program: Generator[Request, Sums | None, tuple[Model, History]],
    serve: Callable[[Request], Sums | None],
) -> tuple[Model, History]:
    """Run a training program to its end, each request served as it comes."""
    answer = None
    while True:
        try:
            request = program.send(answer)
        except StopIteration as finished:
            return finished.value
        answer = serve(request)
