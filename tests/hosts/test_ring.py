"""Ring all-reduce on loopback, one thread per rank: int32 sums exact (numpy's wrap-around), float32
close to the float64 sum and identical on every rank, 1-5 ranks, sizes that do not split evenly
(smaller than the ring, too), and a neighbour that is missing or dies named in the error."""

import socket
import subprocess
import sys

import numpy as np
import pytest
from ranks import run_ranks

from ina.hosts.ring import PORT, Ring, RingError


def free_ports(n: int) -> list[tuple[str, int]]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    peers = [s.getsockname() for s in socks]
    for s in socks:
        s.close()
    return peers


def run_rings(peers: list[tuple[str, int]], ranks: list[int], work, timeout: float = 10.0) -> dict:
    """Run `work(ring)` for each of `ranks` on its own thread; each rank's result or exception."""
    results: dict = {}

    def one(rank: int) -> None:
        ring = None
        try:
            ring = Ring(rank, peers, timeout=timeout, chunk_bytes=64)
            results[rank] = work(ring)
        except Exception as err:  # handed to the test
            results[rank] = err
        finally:
            if ring is not None:
                ring.close()

    run_ranks(one, ranks, timeout=30)
    return results


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("size", [1, 7, 1000, 4099])
def test_int32_sum_is_exact_and_float32_close(n, size):
    rng = np.random.default_rng([n, size])
    ints = rng.integers(-(2**31), 2**31, size=(n, size), dtype=np.int64).astype(np.int32)
    floats = rng.standard_normal((n, size)).astype(np.float32)
    results = run_rings(
        free_ports(n),
        list(range(n)),
        lambda ring: (ring.allreduce(ints[ring.rank]), ring.allreduce(floats[ring.rank])),
    )
    expected = ints.sum(axis=0, dtype=np.int32)
    for rank in range(n):
        got_ints, got_floats = results[rank]
        assert got_ints.dtype == np.int32 and np.array_equal(got_ints, expected)
        assert got_floats.dtype == np.float32
        np.testing.assert_allclose(
            got_floats, floats.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-5
        )
        assert got_floats.tobytes() == results[0][1].tobytes()


def test_shape_is_kept_and_input_untouched():
    arrays = [np.arange(12, dtype=np.int32).reshape(3, 4) * (r + 1) for r in range(3)]
    copies = [a.copy() for a in arrays]
    results = run_rings(free_ports(3), [0, 1, 2], lambda ring: ring.allreduce(arrays[ring.rank]))
    for rank in range(3):
        assert results[rank].shape == (3, 4)
        assert np.array_equal(results[rank], np.arange(12, dtype=np.int32).reshape(3, 4) * 6)
        assert np.array_equal(arrays[rank], copies[rank])


def test_other_dtypes_are_refused():
    ring = Ring(0, free_ports(1))
    with pytest.raises(ValueError, match="float32 or int32, not float64"):
        ring.allreduce(np.zeros(4))
    ring.close()


def test_missing_neighbour_is_named():
    """Rank 2 never starts: rank 1 cannot reach it, rank 0 never hears from it."""
    peers = free_ports(3)
    results = run_rings(peers, [0, 1], lambda ring: None, timeout=0.5)
    assert isinstance(results[1], RingError)
    assert str(results[1]).startswith(
        f"ring rank 1: cannot reach rank 2 at 127.0.0.1:{peers[2][1]} within 0.5 s"
    )
    assert isinstance(results[0], RingError)
    assert (
        str(results[0])
        == f"ring rank 0: no connection from rank 2 at 127.0.0.1:{peers[2][1]} within 0.5 s"
    )


def test_neighbour_that_dies_mid_allreduce_is_named():
    """Rank 1 closes its connections instead of all-reducing: rank 2, its right neighbour, reads EOF."""
    peers = free_ports(3)

    def work(ring: Ring):
        if ring.rank == 1:
            ring.close()
            return None
        return ring.allreduce(np.ones(100, dtype=np.float32))

    results = run_rings(peers, [0, 1, 2], work, timeout=2.0)
    assert isinstance(results[2], RingError)
    assert (
        str(results[2]) == f"ring rank 2: rank 1 at 127.0.0.1:{peers[1][1]} closed the connection"
    )
    assert isinstance(results[0], RingError)
    assert "rank 1" in str(results[0]) or "rank 2" in str(results[0])


def test_training_worker_on_a_ring_fails_naming_the_missing_neighbour():
    """`ina train --aggregation ring`'s worker process: rank 1 (127.0.0.2) never listens."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ina.train.worker_main",
            "--job",
            "3",
            "--rank",
            "0",
            "--workers",
            "2",
            "--epoch",
            "9",
            "--ring",
            "127.0.0.1,127.0.0.2",
            "--ring-timeout",
            "0.5",
            "--epochs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"ina train: worker 0 of job 3: ring rank 0: cannot reach rank 1 at "
        f"127.0.0.2:{PORT} within 0.5 s"
    )
    assert done.stdout == ""
