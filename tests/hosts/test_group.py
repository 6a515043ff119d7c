"""A group all-reduce (ina.hosts.group) is one call whose every array's sums and contributors are
bit for bit a call of its own's: on the in-process switch with loss (hypothesis), through `Worker`
against the parameter server on loopback, and on the ring over TCP (int32 exact, float32 the same
on every rank). Mixed dtypes, an empty group and NaN or infinities (named by array) are refused
before anything is sent."""

import socket
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ranks import run_ranks
from test_ring import free_ports, run_rings

from ina.hosts.baseline import ParameterServer
from ina.hosts.cli import make_array
from ina.hosts.core import AllReduceCore, NonFiniteError
from ina.hosts.group import Group
from ina.hosts.inprocess import InProcessSwitch, RandomLoss
from ina.hosts.worker import Worker, WorkerError

ELEMS, WORKERS = 8, 3
EPOCH = 0x6A0F0001


def reduce_one(net: InProcessSwitch, arrays: list[np.ndarray]):
    """Every rank's (sum, contributors) of one call of `arrays[rank]` on job 0."""
    cores = [net.start(0, rank, array) for rank, array in enumerate(arrays)]
    net.run()
    return [(core.result(), core.contributors()) for core in cores]


def same(a, b) -> bool:
    """Sums of the same bytes, dtype and shape, and the same contributors per chunk."""
    (total_a, who_a), (total_b, who_b) = a, b
    return (
        total_a.dtype == total_b.dtype
        and total_a.shape == total_b.shape
        and total_a.tobytes() == total_b.tobytes()
        and who_a.elems == who_b.elems
        and np.array_equal(who_a.counts, who_b.counts)
        and np.array_equal(who_a.bitmaps, who_b.bitmaps)
    )


@pytest.mark.fuzz
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_a_group_sums_bit_for_bit_as_separate_calls_with_loss(dtype, fuzz_cases):
    """Arrays of sizes that are not whole chunks (or empty, or a shape) through the real switch
    losing 5% of every kind of datagram: each array's sum and contributors from the group equal
    its own call's, on every rank."""
    loss = RandomLoss(0.05, 0.05, seed=3)
    with InProcessSwitch(elems=ELEMS, loss=[loss], record=False) as net:
        net.add_job(0, WORKERS, window=4)

        @settings(
            max_examples=fuzz_cases(12),
            derandomize=True,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        )
        @given(st.lists(st.integers(0, 3 * ELEMS + 5), min_size=1, max_size=4), st.integers(0, 99))
        def group(sizes: list[int], seed: int) -> None:
            arrays = [
                [make_array(seed + i, rank, size, dtype) for i, size in enumerate(sizes)]
                for rank in range(WORKERS)
            ]
            if sizes[0] == 6:  # a shape is kept too
                arrays = [[rank[0].reshape(2, 3), *rank[1:]] for rank in arrays]
            alone = [
                reduce_one(net, [arrays[r][i] for r in range(WORKERS)]) for i in range(len(sizes))
            ]
            groups = [Group(arrays[rank], ELEMS) for rank in range(WORKERS)]
            whole = reduce_one(net, [g.flat for g in groups])
            for rank, (g, (total, who)) in enumerate(zip(groups, whole, strict=True)):
                split = g.split(total, who)
                assert len(split) == len(sizes)
                for i, reduced in enumerate(split):
                    assert same(reduced, alone[i][rank])

        group()
        assert sum(m.core.stats.retransmissions for m in net.jobs[0]) > 0  # the loss was repaired


LAYOUT = [np.arange(1, 4, dtype=np.int32), np.zeros(0, np.int32), np.full((3, 3), 7, np.int32)]


def test_a_group_pads_each_array_to_whole_chunks():
    """The layout itself: each array starts on a chunk boundary, zeros between, an empty array one
    chunk of zeros (as a call of its own makes)."""
    g = Group(LAYOUT, 4)
    assert g.offsets == [0, 4, 8, 20]
    assert g.flat.tolist() == [1, 2, 3, 0, 0, 0, 0, 0] + [7] * 9 + [0] * 3
    sums = g.sums(g.flat * 2)
    assert [s.tolist() for s in sums] == [[2, 4, 6], [], [[14] * 3] * 3]


def test_the_rings_layout_is_the_concatenation_unpadded():
    """No chunks (`values` None): the arrays end to end, an empty one taking no values, and the sums
    cut back at the same offsets in each array's shape."""
    g = Group(LAYOUT, None)
    assert g.offsets == [0, 3, 3, 12]
    assert g.flat.dtype == np.int32 and g.flat.tolist() == [1, 2, 3] + [7] * 9
    sums = g.sums(g.flat * 2)
    assert [s.tolist() for s in sums] == [[2, 4, 6], [], [[14] * 3] * 3]
    assert [s.dtype for s in sums] == [np.int32] * 3


class Converted:
    """An array-like that counts its conversions to an array (a tensor, a memmap: each costs)."""

    def __init__(self, array: np.ndarray):
        self.array, self.conversions = array, 0

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        self.conversions += 1
        return self.array


def test_each_array_is_converted_once():
    arrays = [Converted(a) for a in LAYOUT]
    g = Group(arrays, 4)
    assert [a.conversions for a in arrays] == [1, 1, 1]
    assert g.flat.tolist() == Group(LAYOUT, 4).flat.tolist()


def test_mixed_dtypes_and_an_empty_group_are_refused_before_anything_is_sent():
    w = Worker(0, 0, 2, "127.0.0.1", "127.0.0.9", 0, ELEMS, 4, timeout=0.001, epoch=EPOCH)
    try:
        with pytest.raises(WorkerError, match=r"arrays\[2\] is float64, arrays\[0\] float32"):
            w.allreduce_many([np.ones(3, np.float32), np.ones(2, np.float32), np.ones(2)])
        with pytest.raises(WorkerError, match=r"arrays = \[\]"):
            w.allreduce_many([])
        assert w.stats.packets_sent == 0 and w._thread is None
    finally:
        w.close()


def test_a_refused_group_names_the_array_and_the_index_in_it():
    """A NaN or infinity: the core refuses the group's flat values, and the worker names the array
    and the index in it (the caller passed arrays, not their concatenation), before anything is sent."""
    arrays = [np.ones(5, np.float32), np.zeros(0, np.float32), np.ones((2, 3), np.float32)]
    arrays[2][1, 1:] = [np.nan, np.inf]
    w = Worker(0, 0, 2, "127.0.0.1", "127.0.0.9", 0, ELEMS, 4, timeout=0.001, epoch=EPOCH)
    try:
        with pytest.raises(WorkerError) as err:
            w.allreduce_many(arrays)
        assert w.stats.packets_sent == 0
    finally:
        w.close()
    assert str(err.value) == (
        "the arrays hold 2 NaN or infinite value(s) (first at arrays[2], flat index 4: nan); "
        "in-network aggregation sums finite values only"
    )


@pytest.mark.parametrize("values", [ELEMS, None])
def test_a_refusal_at_an_arrays_first_value_names_that_array_in_either_layout(values):
    """At an array's first value, after an empty array (unpadded: the same offset as the empty one)."""
    arrays = [np.ones(5, np.float32), np.zeros(0, np.float32), np.ones(6, np.float32)]
    arrays[2][0] = -np.inf
    group = Group(arrays, values)
    core = AllReduceCore(0, 0, 2, EPOCH, ELEMS, 4, 0.01, 3, ("127.0.0.9", 0xBEE0))
    with pytest.raises(NonFiniteError) as err:
        core.start(group.flat, 0.0)
    assert str(group.refusal(err.value)) == (
        "the arrays hold 1 NaN or infinite value(s) (first at arrays[2], flat index 0: -inf); "
        "in-network aggregation sums finite values only"
    )
    other = WorkerError("no switch")
    assert group.refusal(other) is other


@pytest.mark.usefixtures("worker_io")
def test_workers_group_against_the_parameter_server_as_separate_calls():
    """`Worker.allreduce_many` (the switch's protocol, here the parameter server's) returns each
    array's sums as `allreduce` of it alone does, and its async form the contributors too."""
    ps = ParameterServer(0, 2, EPOCH, ELEMS, "127.0.0.1")
    server = threading.Thread(target=ps.serve_forever, daemon=True)
    server.start()
    sizes = [13, 0, 8, 30]
    results: dict = {}

    def work(rank: int) -> None:
        w = Worker(
            0,
            rank,
            2,
            "127.0.0.1",
            f"127.0.0.{rank + 2}",
            0,
            ELEMS,
            4,
            timeout=0.005,
            switch_port=ps.port,
            epoch=EPOCH,
        )
        try:
            for dtype in ("int32", "float32"):
                arrays = [make_array(9 + i, rank, n, dtype) for i, n in enumerate(sizes)]
                alone = [w.allreduce(a) for a in arrays]
                grouped = w.allreduce_many_async(arrays).result(timeout=30)
                results[rank, dtype] = (alone, grouped)
        finally:
            w.close()

    run_ranks(work, 2, timeout=60)
    ps.close()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as waker:
        waker.sendto(b"", ("127.0.0.1", ps.port))
    server.join()
    assert len(results) == 4
    for alone, grouped in results.values():
        assert [r.total.tobytes() for r in grouped] == [a.tobytes() for a in alone]
        assert [r.total.dtype for r in grouped] == [a.dtype for a in alone]
        assert [r.contributors.counts.tolist() for r in grouped] == [
            [2] * max(1, -(-n // ELEMS)) for n in sizes
        ]


def test_the_ring_groups_as_one_all_reduce_of_the_concatenation():
    """int32 sums equal separate calls'; float32 ones every rank's the same, close to the float64
    sum; shapes kept; mixed dtypes refused by name."""
    n, sizes = 3, [5, 0, 17]
    ints = [[make_array(4 + i, r, s, "int32") for i, s in enumerate(sizes)] for r in range(n)]
    floats = [[make_array(4 + i, r, s, "float32") for i, s in enumerate(sizes)] for r in range(n)]
    results = run_rings(
        free_ports(n),
        list(range(n)),
        lambda ring: (ring.allreduce_many(ints[ring.rank]), ring.allreduce_many(floats[ring.rank])),
    )
    for rank in range(n):
        got_ints, got_floats = results[rank]
        for i in range(len(sizes)):
            expected = np.sum([ints[r][i] for r in range(n)], axis=0, dtype=np.int32)
            assert got_ints[i].dtype == np.int32 and np.array_equal(got_ints[i], expected)
            assert got_floats[i].tobytes() == results[0][1][i].tobytes()
            np.testing.assert_allclose(
                got_floats[i],
                np.sum([floats[r][i].astype(np.float64) for r in range(n)], axis=0),
                rtol=1e-5,
                atol=1e-5,
            )
    refused = run_rings(
        free_ports(1), [0], lambda ring: ring.allreduce_many([np.ones(2, np.int32), np.ones(2)])
    )
    assert isinstance(refused[0], ValueError)
    assert "arrays[1] is float64, arrays[0] int32" in str(refused[0])
