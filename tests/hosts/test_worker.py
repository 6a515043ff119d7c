"""Workers against the host-only parameter server on loopback: exact int32, bounded float error, loss."""

import threading

import numpy as np
import pytest

from ina.hosts import packets
from ina.hosts.baseline import ParameterServer
from ina.hosts.cli import make_array, verify
from ina.hosts.quantize import chunk_exponents, error_bound, quantize, scale_for
from ina.hosts.worker import Worker, WorkerError

PS_IP = "127.0.0.1"


def run_job(n: int, arrays, loss: float = 0.0, elems: int = 16, window: int = 8, port: int = 0xBEE0):
    ps = ParameterServer(0, n, elems, PS_IP, port, loss=loss, seed=7)
    threading.Thread(target=ps.serve_forever, daemon=True).start()
    results, errors = [None] * n, []

    def work(rank):
        w = Worker(0, rank, n, PS_IP, f"127.0.0.{rank + 2}", port, elems, window, timeout=0.005, switch_port=port)
        try:
            results[rank] = w.allreduce(arrays[rank])
        except WorkerError as err:
            errors.append(err)
        finally:
            w.close()

    threads = [threading.Thread(target=work, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ps.close()
    assert not errors
    return results


@pytest.mark.parametrize("n", [2, 3])
def test_int32_allreduce_is_bit_exact(n):
    arrays = [make_array(5, r, 1000, "int32") for r in range(n)]
    for result in run_job(n, arrays, port=0xBEE0 + n):
        assert np.array_equal(result, np.sum(arrays, axis=0, dtype=np.int32))


def test_int32_exact_with_ten_percent_loss():
    arrays = [make_array(6, r, 2000, "int32") for r in range(3)]
    for result in run_job(3, arrays, loss=0.10, port=0xBEE5):
        assert np.array_equal(result, np.sum(arrays, axis=0, dtype=np.int32))


def test_float32_within_documented_bound():
    arrays = [make_array(8, r, 3000, "float32") for r in range(3)]
    [result, *_] = run_job(3, arrays, port=0xBEE6)
    ok, max_error = verify(result, 8, 3, 3000, "float32", 16)
    assert ok and max_error > 0


def test_unreachable_switch_fails_with_a_clear_error():
    w = Worker(0, 0, 2, "127.0.0.1", "127.0.0.9", 0xBEE7, 16, 4, timeout=0.001, max_retries=3)
    with pytest.raises(WorkerError, match="no answer from the switch"):
        w.allreduce(np.ones(64, dtype=np.int32))
    w.close()


def test_update_packet_bytes():
    buf = bytearray(packets.HEADER_LEN + 8)
    packets.pack_update(buf, 3, 0x0102, 1, 5, 130, np.array([-1, 2], dtype=np.int64))
    assert bytes(buf).hex() == "0103010280058200" "ffffffff" "00000002"
    assert packets.parse_header(buf) == (1, 3, 0x0102, 1, 5, 130)


def test_quantization_scale_cannot_overflow():
    chunk = np.array([[0.75, -3.5, 0.0, 1e-3]])
    [e] = chunk_exponents(chunk)
    assert e == 128 + 2  # 3.5 < 2**2
    q = quantize(chunk[0], scale_for(e, 4))
    assert np.abs(q).max() * 4 <= 2**31 - 1
    assert error_bound(0, 4) == 0.0


class Reflector:
    """The switch of a one-socket job, in process: answers each UPDATE with its RESULT (the values
    unchanged, the exponent mapped by `exponents`, as if another worker announced a larger one),
    then once more as a duplicate. Records every packet the worker sends."""

    def __init__(self, sock, exponents: dict[int, int] | None = None):
        self.sock, self.exponents, self.sent, self.queue = sock, exponents or {}, [], []

    def sendto(self, data, _addr) -> int:
        data = bytes(data)
        self.sent.append(data)
        exponent = self.exponents.get(data[6], data[6])
        result = bytes([packets.MSG_RESULT]) + data[1:6] + bytes([exponent]) + data[7:]
        self.queue += [result, result]
        return len(data)

    def recv_into(self, buf) -> int:
        if not self.queue:  # what the real socket raises with nothing queued, in its mode
            raise BlockingIOError if self.sock.gettimeout() == 0 else TimeoutError
        data = self.queue.pop(0)
        buf[: len(data)] = data
        return len(data)

    def __getattr__(self, name):  # fileno, setblocking, settimeout, close: the real socket's
        return getattr(self.sock, name)


def reflected_worker(n_workers: int, elems: int, window: int, exponents=None) -> Worker:
    w = Worker(3, 1, n_workers, "127.0.0.1", "127.0.0.1", 0, elems, window, timeout=0.005)
    w.sock = Reflector(w.sock, exponents)
    return w


def test_int32_packets_on_the_wire_alternate_sets_and_count_duplicates():
    w = reflected_worker(1, 2, 2)
    array = np.array([1, -2, 3, 2**31 - 1, -5], dtype=np.int32)
    assert np.array_equal(w.allreduce(array), array)
    assert [p.hex() for p in w.sock.sent] == [
        "0101000300000000" "00000001" "fffffffe",  # slot 0, set 0: chunk 0
        "0101000300010000" "00000003" "7fffffff",  # slot 1, set 0: chunk 1
        "0101000380000000" "fffffffb" "00000000",  # slot 0, set 1: chunk 2, zero-padded
    ]
    s = w.stats
    assert (s.packets_sent, s.packets_received, s.duplicates, s.retransmissions) == (3, 5, 2, 0)
    w.sock.sent.clear()
    w.allreduce(array[:2])  # the next all-reduce continues each slot's set alternation
    assert [p.hex() for p in w.sock.sent] == ["0101000300000000" "00000001" "fffffffe"]
    w.close()


def test_float_packets_quantize_with_the_exponent_the_switch_returns():
    # Chunk 0 ([0.5, -0.25], exponent byte 128) is quantized with its own exponent; for chunk 1
    # ([3.0, 0.0], 130) the switch answers 131, so it is quantized with the larger one.
    w = reflected_worker(2, 2, 1, exponents={130: 131})
    array = np.array([0.5, -0.25, 3.0, 0.0], dtype=np.float32)
    result = w.allreduce(array)
    assert [p.hex() for p in w.sock.sent] == [
        "0101000300008000" "00000000" "00000000",  # use 0: all zeros, announces chunk 0's exponent
        "0101000380008200" "20000000" "f0000000",  # chunk 0 at scale (2**31-1)/2, announces 130
        "0101000300000000" "18000000" "00000000",  # chunk 1 at scale (2**31-1)/16, nothing after it
    ]
    assert result.dtype == np.float32 and np.array_equal(result, array)
    w.close()
