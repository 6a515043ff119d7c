"""In-process packets/s of the built-in switch (no I/O): the aggregation program and plain forwarding.

Run: `python -m ina.bench.switch_inprocess [--elems 64] [--packets N] [--out results/switch_inprocess.json]`.
"""

import argparse
import json
import platform
import struct
import time
from pathlib import Path

from ina.compiler import compile_file
from ina.hosts.packets import datagram
from ina.p4src import AGGREGATE_P4
from ina.p4src.protocol import MSG_UPDATE, UDP_PORT, job_group, worker_rid
from ina.switch.engine import Switch

SWITCH_MAC, SWITCH_IP = 0x02AA00000001, 0x0A0000FE
EPOCH = 1


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


def measure(sw: Switch, packets: list[tuple[int, bytes]], seconds: float) -> float:
    """Packets/s through the pipeline; the native engine's loop runs in C (no ctypes per packet)."""
    if sw.native is not None:
        rounds, elapsed, sent = 1, 0.0, 0
        while elapsed < seconds:
            start = time.perf_counter()
            sw.native.replay(packets, rounds)
            elapsed += time.perf_counter() - start
            sent += rounds * len(packets)
            rounds *= 2
        return sent / elapsed
    process = sw.process
    sent = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for port, data in packets:
            process(port, data)
        sent += len(packets)
    return sent / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--elems", type=int, nargs="+", default=[16, 32, 64])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument(
        "--engine", choices=["native", "python"], nargs="+", default=["native", "python"]
    )
    parser.add_argument("--out", default="results/switch_inprocess.json")
    args = parser.parse_args(argv)
    results = {"machine": platform.platform(), "python": platform.python_version(), "runs": []}
    for engine in args.engine:
        sw, packets = forwarding_switch(engine)
        pps = measure(sw, packets, args.seconds)
        results["runs"].append(
            {"engine": engine, "program": "aggregate.p4 L2 forwarding", "packets_per_s": round(pps)}
        )
        print(f"{engine}: forwarding (aggregate.p4, l2_forward hit): {pps:,.0f} packets/s")
        for elems in args.elems:
            sw, packets = aggregation_switch(elems, 2, engine)
            pps = measure(sw, packets, args.seconds)
            results["runs"].append(
                {
                    "engine": engine,
                    "program": f"aggregate.p4 ELEMS={elems}",
                    "packets_per_s": round(pps),
                    "elements_per_s": round(pps * elems),
                }
            )
            print(
                f"{engine}: aggregation ELEMS={elems}: {pps:,.0f} packets/s, {pps * elems / 1e6:.2f} M elements/s"
            )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
