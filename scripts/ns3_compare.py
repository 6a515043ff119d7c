"""ina's network model against ns-3, side by side: every scenario of ina.sim.ns3 in both, one row each.

    .venv/bin/python scripts/ns3_compare.py [--out results]     # needs .venv-ns3 (`make ns3`)

Per scenario: packets, drops in ina and in ns-3, packets one dropped and the other delivered, and
over the packets both delivered the largest difference in delivery time (ns, and relative to the
packet's time in flight in ns-3), with the wall time each took (ns-3's includes loading it, tens
of seconds). Writes ns3_compare.json (bench/results.py's format) to --out. Exit 0 when every
scenario agrees (same drops, every delivery within 1%), 1 when one does not, 2 without ns-3.
"""

import argparse
import sys
import time
from dataclasses import asdict
from pathlib import Path

from ina.bench.results import write
from ina.sim.ns3 import SCENARIOS, compare, ns3_missing, run_ina, run_ns3

TOLERANCE = 0.01  # of a packet's time in flight (issue 29)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ns3_compare", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=Path("results"), help="directory for ns3_compare.json"
    )
    args = parser.parse_args(argv)
    missing = ns3_missing()
    if missing:
        print(f"ns3_compare: {missing}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    version, outcomes = run_ns3(list(SCENARIOS))
    ns3_wall = time.perf_counter() - started
    rows = []
    print(f"ns-3 {version} (all scenarios in one process: {ns3_wall:.1f} s wall, loading included)")
    print(
        f"{'scenario':<15}{'packets':>8}{'drops ina':>10}{'drops ns-3':>11}{'differ':>7}"
        f"{'max |dt| ns':>13}{'max rel':>10}{'ina wall s':>11}"
    )
    for scenario, ns3 in zip(SCENARIOS, outcomes, strict=True):
        started = time.perf_counter()
        ina = run_ina(scenario)
        wall = time.perf_counter() - started
        c = compare(scenario, ina, ns3)
        rows.append(
            {
                **asdict(c),
                "rate": scenario.rate,
                "delay_ns": scenario.delay_ns,
                "queue_frames": scenario.queue_frames,
                "ina_wall_s": wall,
            }
        )
        print(
            f"{c.name:<15}{c.packets:>8}{c.ina_drops:>10}{c.ns3_drops:>11}{c.drops_differ:>7}"
            f"{c.max_diff_ns:>13.3g}{c.max_relative:>10.2g}{wall:>11.2f}"
        )
    path = write(args.out, "ns3_compare", [{"ns3": version, "ns3_wall_s": ns3_wall}, *rows])
    print(f"wrote {path}")
    agree = all(
        r["drops_differ"] == 0
        and r["ina_drops"] == r["ns3_drops"]
        and r["max_relative"] <= TOLERANCE
        for r in rows
    )
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
