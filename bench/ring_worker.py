"""One rank of a timed ring all-reduce (hosts/ring.py over TCP) on an emulated host, for `ina bench
sim-vs-emulation`: `python -m ina.bench.ring_worker RANK IP,IP,... SIZE SEED`. It connects to its
neighbours, says it is ready and waits for the runner's line (hosts/compute.py's start_together),
all-reduces `make_array(SEED, RANK, SIZE, "int32")`, and prints one JSON line: its time, whether
the sum is bit-exact, and the TCP segments its host's kernel resent meanwhile (the host's network
namespace is its own: /proc/net/snmp counts this worker's connections alone).
"""

import json
import sys
import time
from pathlib import Path

from ina.hosts.cli import make_array, verify
from ina.hosts.compute import start_together
from ina.hosts.ring import PORT, Ring, RingError


def tcp_retransmitted() -> int:
    """RetransSegs of this network namespace's TCP (/proc/net/snmp: a header line, then values)."""
    header, values = (
        line.split()
        for line in Path("/proc/net/snmp").read_text().splitlines()
        if line.startswith("Tcp:")
    )
    return int(values[header.index("RetransSegs")])


def main(argv: list[str] | None = None) -> int:
    rank, ips, size, seed = argv if argv is not None else sys.argv[1:]
    rank, size, seed, peers = int(rank), int(size), int(seed), [(ip, PORT) for ip in ips.split(",")]
    array = make_array(seed, rank, size, "int32")
    try:
        ring = Ring(rank, peers)
        start_together(rank)
        resent, started = tcp_retransmitted(), time.perf_counter()
        result = ring.allreduce(array)
        elapsed = time.perf_counter() - started
        ring.close()
    except RingError as err:
        print(f"ring worker {rank}: {err}", file=sys.stderr)
        return 1
    ok, _error = verify(result, seed, len(peers), size, "int32", 1)
    print(
        json.dumps(
            {
                "rank": rank,
                "elapsed_s": round(elapsed, 6),
                "verified": ok,
                "retransmissions": tcp_retransmitted() - resent,
            }
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
