"""Where a packet's time goes at the worker: one `Worker` (a one-worker job) against a reflector
process on loopback that answers each UPDATE with its RESULT (in batches, so it keeps ahead), per
ELEMS and per I/O path (hosts/worker.py: `batch`, `datagram`). The worker's I/O thread runs under
cProfile: its CPU time per packet is split by function (tottime: the time in a function itself;
a ctypes call's system call counts in the Python function that made it).

    .venv/bin/python -m ina.bench.worker_io [--elems 64 256] [--io batch datagram] [--size N]

`--loop` measures instead the batched path's hand-over alone (ina.hosts.dispatch's loop over a
burst and the core it calls), with no socket: RESULTs written into buffers as recvmmsg leaves
them, the answers kept in a list; CPU per RESULT, less at the mercy of the machine's load.

Prints a table per configuration and writes results/worker_io.json. A benchmark, not a test: the
figures depend on the machine and its load (report `uptime` beside them).
"""

import argparse
import cProfile
import json
import multiprocessing
import pstats
import select
import socket
import time
from pathlib import Path

import numpy as np

from ina.args import int_range
from ina.hosts import batch, packets
from ina.hosts.core import AllReduceCore
from ina.hosts.dispatch import Dispatch
from ina.hosts.heap import keep_freed_memory
from ina.hosts.worker import Worker
from ina.p4src.protocol import ELEMS_CHOICES, HEADER_LEN, MSG_RESULT

EPOCH = 0x5EED0032
WORKER, REFLECTOR = ("127.0.0.1", 0xBE32), ("127.0.0.1", 0xBE33)
TOP = 8  # functions shown per configuration


def _reflect(elems: int, ready, stop) -> None:
    """The switch of a one-worker job: each UPDATE's RESULT (its own values, count 1) back."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)  # a window in a burst
    sock.bind(REFLECTOR)
    sock.setblocking(False)
    io = batch.BatchSocket(sock, HEADER_LEN + 4 * elems, WORKER, 0.01)
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    ready.set()
    while not stop.is_set():
        n = io.receive()
        if not n:
            poller.poll(100)
            continue
        for i in range(n):
            data = io.views[i][: io.info[3 * i]]
            h = packets.parse_header(data)
            header = packets.datagram(
                MSG_RESULT,
                h.epoch,
                [],
                rank=h.rank,
                job=h.job,
                index=h.index,
                round_=h.round,
                exponent=h.exponent,
                count=1,
                bitmap=1 << h.rank,
            )
            io.queue(header + data[HEADER_LEN:])
        io.flush()


def _run_once(elems: int, io: str, size: int, reps: int, profile: cProfile.Profile | None):
    """reps all-reduces of `size` elements against a fresh reflector: (worker, wall s, CPU s of
    this process), the I/O thread under `profile` when given."""
    ctx = multiprocessing.get_context("fork")
    ready, stop = ctx.Event(), ctx.Event()
    reflector = ctx.Process(target=_reflect, args=(elems, ready, stop), daemon=True)
    reflector.start()
    ready.wait(10)
    worker = Worker(0, 0, 1, REFLECTOR[0], WORKER[0], WORKER[1], elems, 256, 0.05, 12,
                    REFLECTOR[1], EPOCH, io=io)  # fmt: skip
    if profile is not None:
        run = worker._run
        worker._run = lambda: profile.runcall(run)  # the I/O thread's target, made on first call
    array = np.arange(size, dtype=np.int32)
    try:
        t0, cpu0 = time.perf_counter(), time.process_time()
        for _ in range(reps):
            assert np.array_equal(worker.allreduce(array), array)
        return worker, time.perf_counter() - t0, time.process_time() - cpu0
    finally:
        worker.close()
        stop.set()
        reflector.join(5)


def measure(elems: int, io: str, size: int, reps: int) -> dict:
    """One configuration: wall and CPU time per packet (a plain run), and the worker thread's
    profile per packet (a second run under cProfile, which slows every Python call)."""
    worker, wall, cpu = _run_once(elems, io, size, reps, None)
    stats = worker.stats
    packets_ = stats.packets_sent + stats.packets_received
    profile = cProfile.Profile()
    profiled, _wall, _cpu = _run_once(elems, io, size, reps, profile)
    profiled_packets = profiled.stats.packets_sent + profiled.stats.packets_received
    table = pstats.Stats(profile).stats  # (file, line, name) -> (cc, nc, tottime, cumtime, callers)
    rows = sorted(table.items(), key=lambda kv: kv[1][2], reverse=True)[:TOP]
    return {
        "elems": elems,
        "io": io,
        "size": size,
        "reps": reps,
        "packets_sent": stats.packets_sent,
        "retransmissions": stats.retransmissions,
        "elements_per_s": round(size * reps / wall),
        "us_per_packet_wall": round(wall / packets_ * 1e6, 3),
        "us_per_packet_cpu": round(cpu / packets_ * 1e6, 3),
        "profile_us_per_packet": [
            {
                "function": f"{Path(f).name}:{line}({name})",
                "us": round(tt / profiled_packets * 1e6, 3),
            }
            for (f, line, name), (_cc, _nc, tt, _ct, _callers) in rows
        ],
    }


def _burst(io: batch.BatchSocket, datagrams: list[bytes], source: tuple[str, int]) -> None:
    """`datagrams` written into `io` as its `receive` leaves what recvmmsg took (what `burst` reads)."""
    ip = batch.wire_ip(source[0])
    for i, datagram in enumerate(datagrams):
        io.views[i][: len(datagram)] = datagram
        io.info[3 * i], io.info[3 * i + 1], io.info[3 * i + 2] = len(datagram), ip, source[1]


def loop_cost(elems: int, size: int, reps: int) -> dict:
    """CPU per RESULT of `Dispatch.burst` and the core, no system call: reps all-reduces of `size`
    int32 by a one-worker core, each RESULT a reflector's answer, handed over in bursts of BATCH."""
    answers: list[bytes] = []
    core = AllReduceCore(0, 0, 1, EPOCH, elems, 256, 1.0, 12, REFLECTOR)
    dispatch = Dispatch(
        [core],
        256,
        REFLECTOR,
        lambda pkt, _to: answers.append(bytes(pkt)),
        lambda _pkt: None,
        lambda _core: None,
    )  # a list never blocks; the sums are read below
    values = np.arange(size, dtype=np.int32)
    unused = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # its buffers only: no I/O
    io = batch.BatchSocket(unused, core.datagram_size, REFLECTOR, 1.0)
    cpu, results = 0.0, 0
    for _ in range(reps):
        sent = [bytes(pkt) for pkt in core.start(values, 0.0)]
        while sent:
            answers.clear()
            for at in range(0, len(sent), batch.BATCH):
                part = [packets.result_for(u, 1, 1) for u in sent[at : at + batch.BATCH]]
                _burst(io, part, REFLECTOR)
                t0 = time.process_time()
                dispatch.burst(io, len(part))
                cpu += time.process_time() - t0
                results += len(part)
            sent = list(answers)
        assert np.array_equal(core.result(), values)
    unused.close()
    return {"elems": elems, "size": size, "reps": reps, "us_per_result": cpu / results * 1e6}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ina.bench.worker_io", description=__doc__)
    p.add_argument("--elems", type=int, nargs="+", choices=ELEMS_CHOICES, default=[64, 256])
    p.add_argument("--io", nargs="+", choices=["batch", "datagram"], default=["datagram", "batch"])
    p.add_argument("--size", type=int_range(1, 1 << 26), default=1 << 20, help="elements")
    p.add_argument("--reps", type=int_range(1, 1000), default=3)
    p.add_argument("--out", default="results/worker_io.json")
    p.add_argument("--loop", action="store_true", help="the hand-over loop and core alone")
    args = p.parse_args(argv)
    keep_freed_memory()  # as a worker's process does (ina.hosts.heap)
    rows = []
    for elems in args.elems:
        if args.loop:
            rows.append(row := loop_cost(elems, args.size, args.reps))
            print(f"ELEMS={elems}: {row['us_per_result']:.3f} us of CPU per RESULT (loop + core)")
            continue
        for io in args.io:
            row = measure(elems, io, args.size, args.reps)
            rows.append(row)
            print(
                f"ELEMS={elems} {io}: {row['elements_per_s'] / 1e6:.2f} M elements/s, "
                f"{row['us_per_packet_wall']:.2f} us per packet (wall), "
                f"{row['us_per_packet_cpu']:.2f} us of the worker process's CPU, "
                f"{row['retransmissions']} retransmissions"
            )
            print(
                "    under cProfile, per packet sent or received, the I/O thread's top functions:"
            )
            for entry in row["profile_us_per_packet"]:
                print(f"    {entry['us']:8.3f} us  {entry['function']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
