"""In-process packets/s of the built-in switch (no I/O): the aggregation program and plain forwarding.

Run: `python -m ina.bench.switch_inprocess [--elems 64] [--clock cpu] [--out results/switch_inprocess.json]`.
An aggregation row replays one round per slot again and again: after the first pass, each packet
is a retransmission into a done slot (answered from its registers). Its "contributions" row counts
only UPDATEs that add: the job's epoch alternates between passes, so every pass finds each slot
left by the other epoch (the first worker's packet writes it, the second adds and completes it).
`--clock cpu` times the calling thread's CPU seconds (on a shared machine, others' load does not
count).
"""

import argparse
import json
import platform
import struct
import time
from collections.abc import Callable
from pathlib import Path

from ina.compiler import compile_file
from ina.hosts.packets import datagram
from ina.p4src import AGGREGATE_P4
from ina.p4src.protocol import MSG_UPDATE, UDP_PORT, job_group, word_span, worker_rid
from ina.switch.engine import Switch
from ina.switch.native.datapath import Frames

SWITCH_MAC, SWITCH_IP = 0x02AA00000001, 0x0A0000FE
EPOCH = 1
HEADERS = 14 + 20 + 8  # Ethernet, IPv4, UDP before the aggregation header
SET_JOB_EPOCH = 4  # set_job's parameter: base, num_slots, num_workers, mgid, epoch, ...
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def aggregation_switch(
    elems: int, workers: int, engine: str = "auto", profile: bool = False
) -> tuple[Switch, list[tuple[int, bytes]]]:
    """A switch with one job of `workers` workers and one full round of UPDATE packets per slot."""
    sw = Switch(engine=engine, profile=profile)
    sw.load(compile_file(AGGREGATE_P4, defines={"ELEMS": str(elems), "POOL_SIZE": "1024"}).bmv2)
    sw.tables["InaIngress.switch_config"].set_default(
        "InaIngress.set_switch_addr", [SWITCH_MAC, SWITCH_IP]
    )
    replicas = []
    for rank in range(workers):
        mac, ip = 0x020000000001 + rank, 0x0A000001 + rank
        sw.tables["InaIngress.admission"].add([rank + 1, mac, ip, 0, rank], "InaIngress.admit", [])
        sw.tables["InaEgress.result_rewrite"].add(
            [worker_rid(0, rank)], "InaEgress.to_worker", [mac, ip, UDP_PORT]
        )
        replicas.append((rank + 1, worker_rid(0, rank)))
    sync = [workers, 0, 0]  # quorum all, no timeout, no staleness (docs/protocol.md)
    sw.tables["InaIngress.jobs"].add(
        [0], "InaIngress.set_job", [0, 1024, workers, job_group(0), EPOCH, *sync]
    )
    sw.multicast.set_group(job_group(0), replicas)
    packets = []
    for slot in range(1024):
        for rank in range(workers):
            body = datagram(MSG_UPDATE, EPOCH, range(elems), rank=rank, index=slot)
            udp = struct.pack("!HHHH", UDP_PORT, UDP_PORT, 8 + len(body), 0) + body
            ip = struct.pack(
                "!BBHHHBBHII", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, 0x0A000001 + rank, SWITCH_IP
            )
            eth = (
                SWITCH_MAC.to_bytes(6, "big")
                + (0x020000000001 + rank).to_bytes(6, "big")
                + b"\x08\x00"
            )
            packets.append((rank + 1, eth + ip + udp))
    return sw, packets


def forwarding_switch(
    engine: str = "auto", profile: bool = False
) -> tuple[Switch, list[tuple[int, bytes]]]:
    sw, _ = aggregation_switch(8, 2, engine, profile)
    sw.tables["InaIngress.l2_forward"].add([0x020000000002], "InaIngress.forward", [2])
    frame = (
        bytes.fromhex("0200000000020200000000010800")
        + struct.pack("!BBHHHBBHII", 0x45, 0, 46, 0, 0, 64, 17, 0, 0x0A000001, 0x0A000002)
        + bytes(26)
    )
    return sw, [(1, frame)] * 4096


def measure(
    sw: Switch,
    packets: list[tuple[int, bytes]],
    seconds: float,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Packets/s through the pipeline; the native engine's loop runs in C (no ctypes per packet)."""
    if sw.native is not None:
        rounds, elapsed, sent = 1, 0.0, 0
        while elapsed < seconds:
            start = clock()
            sw.native.replay(packets, rounds)
            elapsed += clock() - start
            sent += rounds * len(packets)
            rounds *= 2
        return sent / elapsed
    process = sw.process
    sent = 0
    start = clock()
    while clock() - start < seconds:
        for port, data in packets:
            process(port, data)
        sent += len(packets)
    return sent / (clock() - start)


def contributions(
    sw: Switch,
    packets: list[tuple[int, bytes]],
    seconds: float,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Packets/s of aggregation_switch's UPDATEs when every one adds: passes alternate between
    epochs EPOCH and EPOCH + 1 (the job's entry set to match), so each finds every slot empty."""
    at = HEADERS + word_span("epoch")[0]
    other = [(port, d[:at] + struct.pack("!I", EPOCH + 1) + d[at + 4 :]) for port, d in packets]
    jobs = sw.tables["InaIngress.jobs"]
    entry = jobs.entries()[0]
    params = list(entry.args)
    if sw.native is not None:  # the C arrays built once, outside the time
        native, passes = sw.native, (Frames(packets), Frames(other))

        def run(batch: Frames) -> None:
            native.replay(batch, 1)
    else:
        passes = (packets, other)

        def run(batch: list[tuple[int, bytes]]) -> None:
            for port, data in batch:
                sw.process(port, data)

    sent, elapsed, n = 0, 0.0, 0
    while elapsed < seconds:
        params[SET_JOB_EPOCH] = EPOCH + n % 2
        jobs.modify(entry.handle, "InaIngress.set_job", params)
        start = clock()
        run(passes[n % 2])
        elapsed += clock() - start
        sent, n = sent + len(packets), n + 1
    return sent / elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--elems", type=int, nargs="+", default=[16, 32, 64])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument(
        "--engine", choices=["native", "python"], nargs="+", default=["native", "python"]
    )
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    parser.add_argument("--out", default="results/switch_inprocess.json")
    args = parser.parse_args(argv)
    clock = CLOCKS[args.clock]
    results = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "clock": args.clock,
        "runs": [],
    }
    for engine in args.engine:
        sw, packets = forwarding_switch(engine)
        pps = measure(sw, packets, args.seconds, clock)
        results["runs"].append(
            {"engine": engine, "program": "aggregate.p4 L2 forwarding", "packets_per_s": round(pps)}
        )
        print(f"{engine}: forwarding (aggregate.p4, l2_forward hit): {pps:,.0f} packets/s")
        for elems in args.elems:
            sw, packets = aggregation_switch(elems, 2, engine)
            for kind, rate in (("", measure), (" contributions", contributions)):
                pps = rate(sw, packets, args.seconds, clock)
                results["runs"].append(
                    {
                        "engine": engine,
                        "program": f"aggregate.p4 ELEMS={elems}{kind}",
                        "packets_per_s": round(pps),
                        "elements_per_s": round(pps * elems),
                    }
                )
                print(
                    f"{engine}: aggregation ELEMS={elems}{kind}: {pps:,.0f} packets/s, {pps * elems / 1e6:.2f} M elements/s"
                )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
