"""Workers against the host-only parameter server on loopback: exact int32, bounded float error, loss."""

import errno
import os
import socket
import struct
import threading

import numpy as np
import pytest
from ranks import run_ranks
from test_core import update_of

from ina.hosts import batch, packets
from ina.hosts.baseline import ParameterServer
from ina.hosts.cli import make_array, verify
from ina.hosts.quantize import chunk_exponents, error_bound, quantize, scale_for
from ina.hosts.worker import RX_HOLD, SOCKET_BUFFER, Worker, WorkerError
from ina.p4src.protocol import (
    FLAG_ZERO,
    HEADER_LEN,
    MSG_RESULT,
    MSG_STATUS,
    MSG_UPDATE,
    header_struct,
)

PS_IP = "127.0.0.1"
EPOCH = 0x5EED0001
pytestmark = pytest.mark.usefixtures("worker_io")  # each test on both I/O paths (conftest.py)


def run_job(
    n: int,
    arrays,
    loss: float = 0.0,
    elems: int = 16,
    window: int = 8,
    before=None,
    stats: list | None = None,
):
    """Each rank's result; `before(worker)` runs before its all-reduce, `stats` gets each rank's Stats.
    The server and the workers take ports the kernel picks: concurrent runs never share one."""
    ps = ParameterServer(0, n, EPOCH, elems, PS_IP, loss=loss, seed=7)
    server = threading.Thread(target=ps.serve_forever, daemon=True)
    server.start()
    results, errors = [None] * n, []
    workers = [
        Worker(
            0,
            rank,
            n,
            PS_IP,
            f"127.0.0.{rank + 2}",
            0,
            elems,
            window,
            timeout=0.005,
            switch_port=ps.port,
            epoch=EPOCH,
        )
        for rank in range(n)
    ]
    if before is not None:
        for w in workers:
            before(w)

    def work(rank):
        w = workers[rank]
        try:
            results[rank] = w.allreduce(arrays[rank])
        except WorkerError as err:
            errors.append(err)
        finally:
            w.close()

    run_ranks(work, n)
    ps.close()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as waker:  # serve_forever's recvfrom
        waker.sendto(
            b"", (PS_IP, ps.port)
        )  # holds the closed socket, and its port, until it returns
    server.join()
    assert not errors
    if stats is not None:
        stats += [w.stats for w in workers]
    return results


@pytest.mark.parametrize("n", [2, 3])
def test_int32_allreduce_is_bit_exact(n):
    arrays = [make_array(5, r, 1000, "int32") for r in range(n)]
    for result in run_job(n, arrays):
        assert np.array_equal(result, np.sum(arrays, axis=0, dtype=np.int32))


def test_int32_exact_with_ten_percent_loss():
    arrays = [make_array(6, r, 2000, "int32") for r in range(3)]
    for result in run_job(3, arrays, loss=0.10):
        assert np.array_equal(result, np.sum(arrays, axis=0, dtype=np.int32))


def test_float32_within_documented_bound_for_every_rank():
    arrays = [make_array(8, r, 3000, "float32") for r in range(3)]
    results = run_job(3, arrays)
    for result in results:
        ok, max_error = verify(result, 8, 3, 3000, "float32", 16)
        assert ok and max_error > 0  # within the bound, and quantized (not exact by accident)
        assert np.array_equal(result, results[0])  # every rank gets the same sums and exponents


def test_unreachable_switch_fails_with_a_clear_error():
    w = Worker(
        0, 0, 2, "127.0.0.1", "127.0.0.9", 0xBEE7, 16, 4, timeout=0.001, max_retries=3, epoch=EPOCH
    )
    with pytest.raises(WorkerError, match="no answer from the switch"):
        w.allreduce(np.ones(64, dtype=np.int32))
    w.close()


def test_update_packet_bytes():
    buf = packets.datagram(
        MSG_UPDATE,
        0x5EED0003,
        np.array([-1, 2], dtype=np.int64),
        rank=3,
        job=0x0102,
        index=5,
        round_=1,
        exponent=130,
    )
    assert buf.hex() == "010301028005820000005eed00030000000100000000ffffffff00000002"
    assert packets.parse_header(buf) == (1, 3, 0x0102, 1, 5, 130, 0, 0, 0x5EED0003, 1, 0)


def test_result_for_keeps_the_updates_slot_and_flags_and_sets_count_bitmap_exponent_values():
    update = bytes.fromhex("010301028005820100005eed00030000000100000000ffffffff00000002")
    assert packets.result_for(update, 2, 0b1010).hex() == (
        "020301028005820100025eed0003000000010000000affffffff00000002"
    )
    assert packets.result_for(update, 1, 0b1000, exponent=131, values=[2**31, -3]).hex() == (
        "020301028005830100015eed0003000000010000000880000000fffffffd"
    )


def test_a_header_struct_packs_the_words_it_names_and_zeros_the_others():
    words = header_struct("rank", "epoch")
    buf = bytearray(b"\xff" * (HEADER_LEN + 1))
    words.pack_into(buf, 0, 3, 7)
    assert bytes(buf) == packets.datagram(0, 7, [], rank=3) + b"\xff"
    assert words.unpack_from(packets.datagram(1, 7, [], rank=3, job=2, round_=5, bitmap=9)) == (
        3,
        7,
    )
    with pytest.raises(ValueError, match="the header has no word 'job'"):
        header_struct("job")
    with pytest.raises(ValueError, match="not in wire order"):
        header_struct("epoch", "rank")
    with pytest.raises(TypeError, match="rewrite\\(\\) takes no header word 'job'"):
        packets.rewrite(buf, job=1)


def test_quantization_scale_cannot_overflow():
    chunk = np.array([[0.75, -3.5, 0.0, 1e-3]])
    [e] = chunk_exponents(chunk)
    assert e == 128 + 2  # 3.5 < 2**2
    q = quantize(chunk[0], scale_for(e, 4))
    assert np.abs(q).max() * 4 <= 2**31 - 1
    assert error_bound(0, 4) == 0.0


class Reflector:
    """The switch of a one-socket job, in process: answers each UPDATE with its RESULT as rank 1's
    alone (count 1, bitmap 0b10, the values unchanged, the exponent mapped by `exponents`, as if
    another worker announced a larger one),
    then once more as a duplicate. Records every packet the worker sends."""

    def __init__(self, sock, exponents: dict[int, int] | None = None):
        self.sock, self.exponents, self.sent, self.queue = sock, exponents or {}, [], []

    def sendto(self, data, addr) -> int:
        data = bytes(data)
        self.sent.append(data)
        result = packets.result_for(data, 1, 0b10, exponent=self.exponents.get(data[6]))
        self.queue += [(result, addr), (result, addr)]
        return len(data)

    def recvfrom_into(self, buf) -> tuple[int, tuple[str, int]]:
        if not self.queue:  # what the real socket raises with nothing queued, in its mode
            raise BlockingIOError if self.sock.gettimeout() == 0 else TimeoutError
        data, addr = self.queue.pop(0)
        buf[: len(data)] = data
        return len(data), addr

    def __getattr__(self, name):  # fileno, setblocking, settimeout, close: the real socket's
        return getattr(self.sock, name)


def reflected_worker(n_workers: int, elems: int, window: int, exponents=None) -> Worker:
    """A worker on the Reflector: the per-datagram path, whose socket calls it replaces."""
    w = Worker(
        3,
        1,
        n_workers,
        "127.0.0.1",
        "127.0.0.1",
        0,
        elems,
        window,
        timeout=0.005,
        epoch=0x5EED0003,
        io="datagram",
    )
    w.sock = Reflector(w.sock, exponents)
    return w


def test_int32_packets_on_the_wire_alternate_sets_and_count_duplicates():
    w = reflected_worker(2, 2, 2)
    array = np.array([1, -2, 3, 2**31 - 1, -5], dtype=np.int32)
    assert np.array_equal(w.allreduce(array), array)
    assert w.sock.sent == [
        update_of(0, 0, [1, -2]),  # slot 0, set 0: chunk 0
        update_of(1, 0, [3, 2**31 - 1]),  # slot 1, set 0: chunk 1
        update_of(0, 1, [-5, 0]),  # slot 0, set 1: chunk 2, zero-padded
    ]
    s = w.stats  # the I/O thread may have read the last duplicate already, or not yet
    assert (s.packets_sent, s.retransmissions, s.packets_received - s.duplicates) == (3, 0, 3)
    # Each RESULT said it holds rank 1's contribution alone: the sum returned is that one.
    assert (w.contributors.counts.tolist(), w.contributors.bitmaps.tolist()) == (
        [1, 1, 1],
        [2, 2, 2],
    )
    w.sock.sent.clear()
    w.allreduce(array[:2])  # the next all-reduce continues each slot's set alternation
    assert w.sock.sent == [update_of(0, 2, [1, -2])]
    w.close()


def test_float_packets_quantize_with_the_exponent_the_switch_returns():
    # Chunk 0 ([0.5, -0.25], exponent byte 128) is quantized with its own exponent; for chunk 1
    # ([3.0, 0.0], 130) the switch answers 131, so it is quantized with the larger one.
    w = reflected_worker(2, 2, 1, exponents={130: 131})
    array = np.array([0.5, -0.25, 3.0, 0.0], dtype=np.float32)
    result = w.allreduce(array)
    assert w.sock.sent == [
        # use 0: all zeros, so ZERO (0x08), the header alone; announces chunk 0's exponent
        update_of(0, 0, [], exponent=128, flags=FLAG_ZERO),
        update_of(0, 1, [1 << 29, -(1 << 28)], exponent=130),  # chunk 0 at scale (2**31-1)/2
        update_of(0, 2, [0x18000000, 0]),  # chunk 1 at scale (2**31-1)/16, nothing after
    ]
    assert result.dtype == np.float32 and np.array_equal(result, array)
    w.close()


def test_every_answer_leaves_before_the_worker_waits():
    # One slot, three chunks: each RESULT's answer is the next chunk's UPDATE, which must leave at
    # once (on the batched path: flushed after its batch), long before the 60 s timer would resend.
    switch = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    switch.bind(("127.0.0.1", 0))
    switch.settimeout(20)
    w = Worker(3, 1, 2, "127.0.0.1", "127.0.0.30", 0, 2, 1, 60.0, 0, switch.getsockname()[1], 7)
    array = np.array([1, 2, 3, 4, 5, 6], dtype=np.int32)
    future = w.allreduce_async(array)
    for _ in range(3):
        update, source = switch.recvfrom(64)
        switch.sendto(packets.result_for(update, 1, 0b10), source)
    assert np.array_equal(future.result(timeout=20).total, array)
    assert (w.stats.packets_sent, w.stats.retransmissions) == (3, 0)
    w.close()
    switch.close()


def test_start_sets_up_the_io_thread_before_any_call():
    # `start` (ina worker's, before its start barrier): the I/O thread runs and its path is set up,
    # nothing sent; a second start and the first call use that thread.
    switch = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    switch.bind(("127.0.0.1", 0))
    switch.settimeout(20)
    w = Worker(3, 1, 2, "127.0.0.1", "127.0.0.31", 0, 2, 1, 60.0, 0, switch.getsockname()[1], 7)
    w.start()
    thread = w._thread
    assert thread is not None and thread.is_alive() and w._ready.is_set()
    assert w.stats.packets_sent == 0
    w.start()
    future = w.allreduce_async(np.array([1, 2], dtype=np.int32))
    update, source = switch.recvfrom(64)
    switch.sendto(packets.result_for(update, 1, 0b10), source)
    assert np.array_equal(future.result(timeout=20).total, [1, 2]) and w._thread is thread
    w.close()
    switch.close()


def forged_result(job: int, pool_set: int, index: int, epoch: int, elems: int = 16) -> bytes:
    header = packets.datagram(
        MSG_RESULT, epoch, [], job=job, index=index, round_=pool_set, count=2, bitmap=3
    )
    return header + bytes(range(4 * elems))


def udp_from(src: tuple[str, int], dst: tuple[str, int], payload: bytes) -> None:
    """Send a UDP datagram with any source address (a raw socket, as an attacker with root would)."""
    udp = struct.pack("!HHHH", src[1], dst[1], 8 + len(payload), 0) + payload
    ip = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        0,
        20 + len(udp),
        0,
        0,
        64,
        socket.IPPROTO_UDP,
        0,
        socket.inet_aton(src[0]),
        socket.inet_aton(dst[0]),
    )
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW) as raw:
        raw.sendto(ip + udp, (dst[0], 0))


def test_results_from_another_address_are_counted_as_forged_and_ignored():
    # 64 RESULTs with the right job, epoch and slots, queued before the run from another socket:
    # only the source address tells them apart, and every one is read before any real result.
    arrays = [make_array(9, r, 1000, "int32") for r in range(2)]
    attacker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    attacker.bind(("127.0.0.50", 0))

    def flood(w: Worker) -> None:
        for k in range(64):
            attacker.sendto(forged_result(0, 0, k % 8, EPOCH), w.sock.getsockname())

    stats: list = []
    results = run_job(2, arrays, before=flood, stats=stats)
    attacker.close()
    for result in results:
        assert np.array_equal(result, np.sum(arrays, axis=0, dtype=np.int32))
    assert [s.forged for s in stats] == [64, 64]


@pytest.mark.skipif(
    os.geteuid() != 0, reason="spoofing the switch's address needs a raw socket (root)"
)
def test_results_with_the_switch_address_but_not_this_run_are_forged():
    # From the switch's own address and port: a wrong epoch, a wrong job, a slot beyond the window,
    # a wrong message type and a short datagram are each refused; the results stay exact.
    arrays = [make_array(10, r, 1000, "int32") for r in range(2)]
    bad = [
        forged_result(0, 0, 1, EPOCH + 1),
        forged_result(0, 0, 1, 0),
        forged_result(1, 0, 1, EPOCH),
        forged_result(0, 0, 8, EPOCH),
        bytes([MSG_UPDATE]) + forged_result(0, 0, 1, EPOCH)[1:],
        forged_result(0, 0, 1, EPOCH)[:-1],
        forged_result(0, 0, 1, EPOCH) + b"x",
    ]

    def spoof(w: Worker) -> None:
        for payload in bad:
            udp_from((PS_IP, w.switch_port), w.sock.getsockname(), payload)

    stats: list = []
    results = run_job(2, arrays, before=spoof, stats=stats)
    for result in results:
        assert np.array_equal(result, np.sum(arrays, axis=0, dtype=np.int32))
    assert [s.forged for s in stats] == [len(bad), len(bad)]


def test_no_other_socket_can_share_the_workers_port():
    w = Worker(0, 0, 2, PS_IP, "127.0.0.21", 0xBEEA, 16, 4, epoch=EPOCH)
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    with pytest.raises(OSError) as err:
        other.bind(("127.0.0.21", 0xBEEA))
    assert err.value.errno == errno.EADDRINUSE
    other.close()
    w.close()


def test_the_workers_socket_holds_a_window_of_datagrams_each_way():
    """8 MB each way (the kernel reports twice what it was asked, for its overhead): a window of
    UPDATEs waiting on a slow link is charged to the socket, and past the default send buffer
    (212,992 bytes) a send waited, then was lost."""
    w = Worker(0, 0, 2, PS_IP, "127.0.0.22", 0xBEEB, 256, 128, epoch=EPOCH)
    try:
        buffers = [
            w.sock.getsockopt(socket.SOL_SOCKET, o) for o in (socket.SO_SNDBUF, socket.SO_RCVBUF)
        ]
    finally:
        w.close()
    assert buffers == [2 * SOCKET_BUFFER, 2 * SOCKET_BUFFER] == [16 << 20, 16 << 20]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_infinity_are_refused_before_anything_is_sent(bad, dtype):
    w = Worker(0, 0, 2, PS_IP, "127.0.0.22", 0xBEEB, 16, 4, epoch=EPOCH)
    array = np.ones(100, dtype=dtype)
    array[37] = bad
    with pytest.raises(WorkerError, match=r"1 NaN or infinite value\(s\) \(first at flat index 37"):
        w.allreduce(array)
    with pytest.raises(
        WorkerError, match="NaN"
    ):  # that call failed alone: the worker takes the next
        w.allreduce(array)
    assert w.stats.packets_sent == 0
    w.close()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("job_id", 256, "job_id = 256: expected 0..255"),
        ("job_id", -1, "job_id = -1"),
        ("rank", 2, r"rank = 2: expected 0..1"),
        ("n_workers", 0, "n_workers = 0: expected 1..32"),
        ("n_workers", 33, "n_workers = 33"),
        ("epoch", 0, "epoch = 0: expected 1..4294967295"),
        ("epoch", 1 << 32, "epoch = 4294967296"),
        ("elems", 0, "elems = 0: expected 1..16371"),
        ("window", 0, "window = 0: expected 1..32768"),
        ("window", -4, "window = -4"),
        ("window", 32769, "window = 32769"),
        ("timeout", -1.0, "timeout = -1.0: expected a finite"),
        ("timeout", float("nan"), "timeout = nan"),
        ("timeout", 0.0, "timeout = 0.0"),
        ("max_retries", -1, "max_retries = -1: expected 0 or more"),
        ("udp_port", 70000, "udp_port = 70000"),
        ("switch_port", 0, "switch_port = 0: expected 1..65535"),
        ("switch_ip", "not-an-ip", "switch_ip = 'not-an-ip'"),
        ("local_ip", "300.1.1.1", "local_ip = '300.1.1.1'"),
        ("io", "fast", "io = 'fast': expected auto or batch or datagram"),
        ("rx_hold", -1e-3, r"rx_hold = -0.001: expected 0..0.01 seconds"),
        ("rx_hold", 0.02, "rx_hold = 0.02"),
    ],
)
def test_bad_arguments_name_the_argument_and_range(name, value, message):
    args = {
        "job_id": 0,
        "rank": 0,
        "n_workers": 2,
        "switch_ip": PS_IP,
        "local_ip": "127.0.0.23",
        "udp_port": 0,
        "elems": 16,
        "window": 4,
        "epoch": EPOCH,
        name: value,
    }
    with pytest.raises(ValueError, match=message):
        Worker(**args)


def test_without_a_compiler_auto_takes_the_datagram_path_and_batch_is_refused(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(batch, "_loaded", None)  # build afresh: no cached helper, no gcc
    monkeypatch.setattr(batch, "_refusal", None)
    monkeypatch.setenv("INA_CACHE", str(tmp_path))
    monkeypatch.setenv("CC", "no-such-cc")
    monkeypatch.setenv("INA_WORKER_IO", "auto")
    w = Worker(0, 0, 2, PS_IP, "127.0.0.25", 0, 16, 4, epoch=EPOCH)
    assert w.io == "datagram"
    w.close()
    with pytest.raises(WorkerError) as refused:
        Worker(0, 0, 2, PS_IP, "127.0.0.25", 0, 16, 4, epoch=EPOCH, io="batch")
    assert str(refused.value) == (
        "the batched data path is off: no C compiler (gcc) on PATH; install gcc for the native "
        "data path"
    )


def test_unless_told_a_worker_batches_where_the_helper_builds(monkeypatch):
    monkeypatch.delenv("INA_WORKER_IO")  # set by the worker_io fixture
    w = Worker(0, 0, 2, PS_IP, "127.0.0.26", 0, 16, 4, epoch=EPOCH)
    assert w.io == ("batch" if batch.helper() is not None else "datagram")
    w.close()


def test_a_worker_needs_the_jobs_epoch(monkeypatch):
    monkeypatch.delenv("INA_EPOCH", raising=False)
    with pytest.raises(WorkerError, match="no epoch for job 3"):
        Worker(3, 0, 2, PS_IP, "127.0.0.24", 0)
    monkeypatch.setenv("INA_EPOCH", "0x10")
    w = Worker(3, 0, 2, PS_IP, "127.0.0.24", 0)
    assert w.epoch == 16
    w.close()


def test_the_parameter_server_answers_a_retransmission_with_a_status_to_everyone_then_the_result():
    ps = ParameterServer(0, 2, EPOCH, elems=2, bind_ip=PS_IP, port=0)
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as one,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as two,
    ):
        for sock in (one, two):
            sock.bind((PS_IP, 0))
            sock.settimeout(1.0)
        updates = [
            packets.datagram(MSG_UPDATE, EPOCH, [rank + 1, -1], rank=rank, index=index, round_=5)
            for rank, index in ((0, 3), (1, 3), (1, 4))
        ]
        ps.handle(updates[2], two.getsockname())  # rank 1 is known to the server from another slot
        ps.handle(updates[0], one.getsockname())
        ps.handle(updates[0], one.getsockname())  # a retransmission into a use still collecting
        for sock in (one, two):  # both hear that slot 3 holds rank 0 alone: rank 1 must resend
            assert packets.parse_header(sock.recv(64))[:10] == (
                MSG_STATUS,
                0,
                0,
                1,
                3,
                0,
                0,
                1,
                EPOCH,
                5,
            )
        ps.handle(updates[1], two.getsockname())
        results = [one.recv(64), two.recv(64)]
        assert all(packets.parse_header(r)[5:] == (0, 0, 2, EPOCH, 5, 0b11) for r in results)
        assert all(packets.values_of(r, 2).tolist() == [3, -2] for r in results)
    ps.close()


def test_between_calls_the_worker_reads_its_socket_and_holds_the_next_calls_results():
    # The others ran ahead (a quorum without this worker): the RESULTs of its next call arrive while
    # it computes. Its I/O thread reads them at once (left queued, a long run of them would overflow
    # the socket) and the next call takes them without sending an UPDATE.
    switch = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    switch.bind(("127.0.0.1", 0))
    switch.settimeout(5)
    w = Worker(
        3,
        1,
        2,
        "127.0.0.1",
        "127.0.0.1",
        0,
        2,
        2,
        timeout=0.5,
        switch_port=switch.getsockname()[1],
        epoch=0x5EED0003,
    )
    try:
        future = w.allreduce_async(
            np.array([1, 2, 3, 4], dtype=np.int32)
        )  # chunks 0, 1 on slots 0, 1: round 0
        for _ in range(2):
            update, addr = switch.recvfrom(100)
            switch.sendto(packets.result_for(update, 1, 0b10), addr)
        assert future.result(timeout=5).total.tolist() == [1, 2, 3, 4]
        for slot in range(2):  # round 1 of each slot: rank 0's sums alone
            values = [10 * slot, 10 * slot + 1]
            switch.sendto(
                packets.datagram(
                    MSG_RESULT, 0x5EED0003, values, job=3, index=slot, round_=1, count=1, bitmap=1
                ),
                addr,
            )
        for _ in range(500):
            if w.stats.held == 2:
                break
            threading.Event().wait(0.01)
        assert w.stats.held == 2  # read before the call that needs them began
        reduced = w.allreduce_async(np.array([5, 6, 7, 8], dtype=np.int32)).result(timeout=5)
        assert reduced.total.tolist() == [
            0,
            1,
            10,
            11,
        ] and reduced.contributors.bitmaps.tolist() == [1, 1]
        assert w.stats.packets_sent == 2
    finally:
        w.close()
        switch.close()


def test_parameter_servers_on_one_address_take_ports_of_their_own():
    """Concurrent runs' servers on one host: each bound to the port the kernel chose for it."""
    servers = [ParameterServer(0, 2, EPOCH, 16, PS_IP) for _ in range(2)]
    try:
        ports = [ps.port for ps in servers]
        assert ports[0] != ports[1]
        assert [ps.sock.getsockname() for ps in servers] == [(PS_IP, port) for port in ports]
    finally:
        for ps in servers:
            ps.close()


def test_receive_moderation_waits_an_eighth_of_the_rtt_at_most_rx_hold():
    """After a read that took few datagrams the I/O thread waits `_hold()`: nothing before the
    first RTT sample, srtt / 8, at most rx_hold (0 turns it off)."""
    workers = [
        Worker(0, 0, 2, PS_IP, "127.0.0.24", 0, 16, 4, epoch=EPOCH, rx_hold=hold)
        for hold in (None, 0.0)
    ]
    try:
        default, off = workers
        assert default.rx_hold == RX_HOLD and default._hold() == 0.0  # no RTT sample yet
        for w in workers:
            w._cores[0]._rtt.sample(0.004)
        assert default._hold() == 0.004 / 8  # an eighth of the RTT, below RX_HOLD
        assert off._hold() == 0.0
        default._cores[0]._rtt.sample(1.0)
        assert default._hold() == RX_HOLD  # capped
    finally:
        for w in workers:
            w.close()
