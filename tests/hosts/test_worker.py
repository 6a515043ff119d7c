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
