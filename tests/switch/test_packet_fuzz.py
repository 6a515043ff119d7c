"""Seeded packet fuzzing: both engines must send the same packets and keep the same state for any
input, hostile or broken.

Each case programs both engines with an STF file (its table entries, groups and packets), then
feeds them mutants of the STF's packets: aggregation fields rewritten at docs/protocol.md's
offsets (valid UPDATEs to other slots, sets, jobs and ranks), new values, truncations, extensions,
bit flips, other ports, random bytes. Every packet out is compared as it comes and every
register, counter and statistic after each chunk. `pytest -m fuzz --fuzz-scale 50` hunts longer.
"""

import random
import re
from pathlib import Path

import pytest
from engine_compare import program, run_both, same_state

from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.state.replication import MAX_PORT
from ina.switch.stf import run_stf

TESTS = Path(__file__).parents[1]
AGG_DEFINES = {"ELEMS": "8", "POOL_SIZE": "16"}
ELEMS = 8
AGG = 14 + 20 + 8  # the aggregation header's offset: after Ethernet, IPv4 (no options) and UDP
CHUNK = 250  # packets between two comparisons of the whole state

# (STF, program, defines, a counter the mutants must reach: proof they get past parser and
# admission): the aggregation program with jobs and with plain L2 traffic, then programs with
# LPM routes, header stacks, multicast and registers, and the CPU port.
CASES = [
    (
        TESTS / "dataplane" / "two_jobs_interleaved.stf",
        AGGREGATE_P4,
        AGG_DEFINES,
        "InaIngress.job_completed",
    ),
    (TESTS / "dataplane" / "broadcast_flooded.stf", AGGREGATE_P4, AGG_DEFINES, None),
    *[
        (TESTS / "p4" / f"{name}.stf", TESTS / "p4" / f"{name}.p4", {}, counter)
        for name, counter in [
            ("basic_forward", None),
            ("header_stacks", None),
            ("register_accumulate", "MainIngress.seen"),
            ("packet_io", None),
        ]
    ],
]


def seed_packets(stf: str) -> list[tuple[int, bytes]]:
    """The STF's `packet` lines: well-formed inputs its table entries were written for."""
    found = re.findall(r"^packet\s+(\d+)\s+(.+)$", stf, re.MULTILINE)
    return [(int(port), bytes.fromhex(re.sub(r"\s+", "", data))) for port, data in found]


def set_field(rng: random.Random, data: bytearray) -> None:
    """One aggregation header field (docs/protocol.md) set to a value near the valid ones."""
    if len(data) < AGG + 8:
        return
    field = rng.randrange(6)
    if field == 0:  # msg_type: UPDATE, RESULT or other
        data[AGG] = rng.choice([1, 2, rng.randrange(256)])
    elif field == 1:  # rank 0..31 and beyond
        data[AGG + 1] = rng.randrange(40)
    elif field == 2:  # job_id: the STF's jobs are small numbers
        data[AGG + 2 : AGG + 4] = rng.choice([rng.randrange(12), rng.randrange(1 << 16)]).to_bytes(
            2, "big"
        )
    elif field == 3:  # set bit and a slot index around the jobs' ranges
        data[AGG + 4 : AGG + 6] = (rng.randrange(2) << 15 | rng.randrange(20)).to_bytes(2, "big")
    elif field == 4:  # exponent
        data[AGG + 6] = rng.randrange(256)
    else:  # flags
        data[AGG + 7] = rng.choice([0, rng.randrange(256)])


def mutant(rng: random.Random, seeds: list[tuple[int, bytes]]) -> tuple[int, bytes]:
    """A seed changed in one or two ways; rarely something unrelated (random bytes, or either side
    of the 65535-byte input limit)."""
    if rng.random() < 0.03:
        return rng.randrange(MAX_PORT + 1), rng.randbytes(
            rng.choice([rng.randrange(128), 65535, 65536])
        )
    port, seed = rng.choice(seeds)
    data = bytearray(seed)
    for _ in range(rng.randint(1, 2)):
        kind = rng.randrange(9)
        if (
            kind < 2 and len(data) >= AGG + 8 + 4 * ELEMS
        ):  # the sender's next UPDATE: slot, exponent, values
            pool = rng.randrange(2) << 15 | rng.randrange(
                6
            )  # set bit, index in or just past a job's range
            data[AGG + 4 : AGG + 7] = (pool << 8 | rng.randrange(256)).to_bytes(3, "big")
            data[-4 * ELEMS :] = rng.randbytes(4 * ELEMS)
        elif kind == 2:
            set_field(rng, data)
        elif kind == 3:
            del data[rng.randrange(len(data) + 1) :]
        elif kind == 4:
            data += rng.randbytes(rng.randint(1, 64))
        elif kind == 5 and data:
            for _ in range(rng.randint(1, 4)):
                bit = rng.randrange(8 * len(data))
                data[bit // 8] ^= 0x80 >> (bit % 8)
        elif kind == 6:
            port = rng.randrange(MAX_PORT + 1)
        # else: unchanged, as a retransmission
    return port, bytes(data)


@pytest.mark.fuzz
@pytest.mark.parametrize(
    ("stf", "p4", "defines", "reached"), CASES, ids=[f"{p.stem}-{s.stem}" for s, p, _d, _r in CASES]
)
def test_any_packet_gives_the_same_outputs_and_state_on_both_engines(
    stf: Path, p4: Path, defines: dict, reached: str | None, fuzz_cases
) -> None:
    bmv2, text = program(p4, **defines), stf.read_text()
    py, native = (run_stf(bmv2, text, engine).switch for engine in ("python", "native"))
    assert native.engine_name == "native"
    same_state(py, native)
    seeds = seed_packets(text)
    rng = random.Random(f"{stf.stem}-{p4.stem}")
    packets = [mutant(rng, seeds) for _ in range(fuzz_cases(3000))]
    tx, counted = py.stats["tx"], total(py, reached)
    for start in range(0, len(packets), CHUNK):
        run_both(py, native, packets[start : start + CHUNK])
    assert py.stats["tx"] > tx
    assert total(py, reached) > counted or reached is None


def total(sw: Switch, counter: str | None) -> int:
    """Packets counted by every index of `counter` (0 for None)."""
    if counter is None:
        return 0
    view = sw.counters[counter]
    return sum(view.read(i)[0] for i in range(view.size))
