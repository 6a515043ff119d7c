"""Hand-made mutants of p4src/aggregate.p4's slot, round, quorum, timeout and epoch rules (#35).

Each mutant is one textual edit of the program: a copy with that rule broken once is compiled by
ina's compiler and run against every dataplane STF case (tests/dataplane/*.stf with ELEMS=8,
tests/dataplane/elems64/*.stf with ELEMS=64, POOL_SIZE=16, as tests/dataplane/test_dataplane.py
runs them) through `ina stf`'s runner on each engine. A mutant is killed on an engine when some case
fails there; it must be killed on both. An edit whose text is no longer in the program is reported
as stale (the rule moved: update its text here), never counted as killed.

    .venv/bin/python scripts/p4_mutants.py [--only NAME ...] [--engines python,native] [--every]
        [--json F]

Exit 0 when every mutant is killed on every engine, 1 otherwise. A benchmark-style run (minutes:
one native build per mutant and ELEMS), not part of `make test`; docs/testing.md has its score.
"""

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATAPLANE = ROOT / "tests" / "dataplane"
CASES = [(stf, 8) for stf in sorted(DATAPLANE.glob("*.stf"))] + [
    (stf, 64) for stf in sorted(DATAPLANE.glob("elems64/*.stf"))
]
ENGINES = ("python", "native")


@dataclass(frozen=True)
class Mutant:
    name: str
    rule: str  # slot, round, quorum, timeout or epoch
    old: str  # the program's text, found exactly once
    new: str
    equivalent: str = ""  # why no packet can tell it from the program: listed, not run


MUTANTS = [
    # slot: where a contribution lands, and what a slot holds
    Mutant(
        "slot-ignores-job-base",
        "slot",
        "bit<32> slot = (bit<32>)(meta.base + (bit<16>)hdr.agg.pool_index);",
        "bit<32> slot = (bit<32>)((bit<16>)hdr.agg.pool_index);",
    ),
    Mutant(
        "slot-sets-share-registers",
        "slot",
        "meta.reg_index = (bit<32>)hdr.agg.pool_set * POOL_SIZE + slot;",
        "meta.reg_index = slot;",
    ),
    Mutant(
        "slot-range-off-by-one",
        "slot",
        "if ((bit<16>)hdr.agg.pool_index >= meta.num_slots) {",
        "if ((bit<16>)hdr.agg.pool_index > meta.num_slots) {",
    ),
    Mutant(
        "slot-rank-range-off-by-one",
        "slot",
        "hdr.agg.rank >= meta.num_workers",
        "hdr.agg.rank > meta.num_workers",
    ),
    Mutant(
        "slot-reuse-keeps-bitmap",
        "slot",
        "                bitmap = 0;\n                count = 0;",
        "                count = 0;",
    ),
    Mutant(
        "slot-reuse-keeps-count",
        "slot",
        "                bitmap = 0;\n                count = 0;",
        "                bitmap = 0;",
    ),
    Mutant(
        "slot-reuse-keeps-exponent",
        "slot",
        "                exponent = 0;\n                done = 0;",
        "                done = 0;",
        "an emptied slot always takes the packet as its first contribution (its bitmap and done"
        " are cleared too, so neither a retransmission nor a late one), which sets the exponent",
    ),
    Mutant(
        "slot-first-exponent-not-taken",
        "slot",
        "count = meta.weight;  // its values written above\n                    exponent = hdr.agg.exponent;",
        "count = meta.weight;  // its values written above",
    ),
    Mutant(
        "slot-bitmap-forgets-earlier-ranks",
        "slot",
        "bitmap = bitmap | worker_bit;",
        "bitmap = worker_bit;",
    ),
    Mutant(
        "slot-retransmission-not-recognised",
        "slot",
        "bool retransmission = (bitmap & worker_bit) != 0;",
        "bool retransmission = false;",
    ),
    Mutant(
        "slot-exponent-minimum",
        "slot",
        "if (hdr.agg.exponent > exponent) {",
        "if (hdr.agg.exponent < exponent) {",
    ),
    Mutant(
        "slot-first-contribution-added",
        "slot",
        "                write_first();  // one call site: each expands to ELEMS register writes\n",
        "                add_values();\n",
    ),
    # round: rounds never mixed, a later round only on a completed use
    Mutant(
        "round-ignored",
        "round",
        "if (!empty && round != hdr.agg.round) {",
        "if (false) {",
    ),
    Mutant(
        "round-later-over-incomplete-use",
        "round",
        "stale = done == 0 || ahead >= 32w0x80000000;",
        "stale = ahead >= 32w0x80000000;",
    ),
    Mutant(
        "round-earlier-accepted",
        "round",
        "stale = done == 0 || ahead >= 32w0x80000000;",
        "stale = done == 0;",
    ),
    Mutant(
        "round-half-space-boundary",
        "round",
        "stale = done == 0 || ahead >= 32w0x80000000;",
        "stale = done == 0 || ahead > 32w0x80000000;",
    ),
    Mutant(
        "round-newer-restarts-nothing",
        "round",
        "empty = !stale;",
        "empty = false;",
    ),
    Mutant(
        "round-not-stored",
        "round",
        "slot_round.write(meta.reg_index, hdr.agg.round);\n                    slot_started",
        "slot_round.write(meta.reg_index, round);\n                    slot_started",
    ),
    Mutant(
        "round-status-keeps-sender-round",
        "round",
        "hdr.agg.round = round;\n",
        "",
    ),
    # quorum: when a slot completes, and what it answers then
    Mutant(
        "quorum-one-more",
        "quorum",
        "} else if (count >= meta.quorum || expired) {",
        "} else if (count > meta.quorum || expired) {",
    ),
    Mutant(
        "quorum-done-not-stored",
        "quorum",
        "                    slot_done.write(meta.reg_index, 1);\n"
        "                    multicast_answer(MSG_RESULT);",
        "                    multicast_answer(MSG_RESULT);",
    ),
    Mutant(
        "quorum-late-contribution-added",
        "quorum",
        "bool contribution = update && !stale && !retransmission && done == 0 && forwarded == 0;",
        "bool contribution = update && !stale && !retransmission && forwarded == 0;",
    ),
    Mutant(
        "quorum-late-counted-as-retransmission",
        "quorum",
        "                if (retransmission) {\n                    job_retrans_answered",
        "                if (!retransmission) {\n                    job_retrans_answered",
    ),
    Mutant(
        "quorum-completing-retransmission-sends-packet-values",
        "quorum",
        "done == 1 || forwarded == 1 || (retransmission\n                    && (count >= meta.quorum"
        " || (meta.timeout != 0 && age >= (bit<48>)meta.timeout)))",
        "done == 1 || forwarded == 1",
    ),
    Mutant(
        "quorum-reuse-keeps-done",
        "quorum",
        "                    slot_done.write(meta.reg_index, 0);\n",
        "",
    ),
    # timeout: completion with what a slot has once its deadline passed
    Mutant(
        "timeout-zero-means-at-once",
        "timeout",
        "bool expired = meta.timeout != 0 && age >= (bit<48>)meta.timeout;",
        "bool expired = age >= (bit<48>)meta.timeout;",
    ),
    Mutant(
        "timeout-never",
        "timeout",
        "} else if (count >= meta.quorum || expired) {",
        "} else if (count >= meta.quorum) {",
    ),
    Mutant(
        "timeout-start-not-stored",
        "timeout",
        "                    slot_started.write(meta.reg_index, started);\n",
        "",
    ),
    Mutant(
        "timeout-counted-on-quorum",
        "timeout",
        "if (count < meta.quorum) {",
        "if (count <= meta.quorum) {",
    ),
    # epoch: a job's incarnation; slots left by another run
    Mutant(
        "epoch-unchecked",
        "epoch",
        "if (hdr.agg.epoch != meta.epoch) {",
        "if (hdr.agg.epoch == 0) {",
    ),
    Mutant(
        "epoch-dirty-slot-trusted",
        "epoch",
        "bool empty = epoch != meta.epoch;",
        "bool empty = false;",
    ),
    Mutant(
        "epoch-not-stored",
        "epoch",
        "slot_epoch.write(meta.reg_index, meta.epoch);\n"
        "                    slot_round.write(meta.reg_index, hdr.agg.round);\n"
        "                    slot_started",
        "slot_round.write(meta.reg_index, hdr.agg.round);\n                    slot_started",
    ),
]


def mutate(source: str, mutant: Mutant) -> str | None:
    """The program with the mutant's edit, or None when its text is not there exactly once."""
    if source.count(mutant.old) != 1:
        return None
    return source.replace(mutant.old, mutant.new)


def failing_cases(program: Path, engine: str, every: bool = True) -> list[str]:
    """The STF cases `program` fails on `engine` (only the first unless `every`; "compile: ..."
    when ina's compiler refuses it)."""
    from ina.compiler import CompileError, compile_file
    from ina.switch.stf import run_stf

    failed = []
    compiled: dict[int, dict] = {}
    for stf, elems in CASES:
        if elems not in compiled:
            try:
                compiled[elems] = compile_file(
                    program,
                    [str(ROOT / "p4src")],
                    {"ELEMS": str(elems), "POOL_SIZE": "16"},
                ).bmv2
            except CompileError as err:
                return [f"compile: {err}"]
        if not run_stf(compiled[elems], stf.read_text(), engine, stf.name).ok:
            failed.append(f"E{elems}-{stf.stem}")
            if not every:
                break
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="p4_mutants.py", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these mutants alone")
    parser.add_argument("--engines", default=",".join(ENGINES), help="python,native (default both)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--every", action="store_true", help="run every case on a mutant, not up to the first kill"
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ina-p4-mutants"))
    args = parser.parse_args(argv)
    engines = args.engines.split(",")
    if bad := [e for e in engines if e not in ENGINES]:
        parser.error(f"argument --engines: expected python and/or native, got {','.join(bad)}")
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    if args.only and (unknown := set(args.only) - {m.name for m in chosen}):
        parser.error(f"argument --only: no mutant named {', '.join(sorted(unknown))}")
    source = (ROOT / "p4src" / "aggregate.p4").read_text()
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    original = args.workdir / "aggregate.p4"
    original.write_text(source)
    for engine in engines:  # a mutant counts as killed only where the program itself passes
        if broken := failing_cases(original, engine):
            print(f"p4 mutants: aggregate.p4 itself fails on {engine}: {', '.join(broken)}")
            return 1
    rows = []
    for mutant in chosen:
        text = mutate(source, mutant)
        row: dict = {"name": mutant.name, "rule": mutant.rule}
        if mutant.equivalent:
            row["equivalent"] = mutant.equivalent
            print(f"EQUIVAL  {mutant.rule:8} {mutant.name}: {mutant.equivalent}")
        elif text is None:
            row["stale"] = True
            print(f"STALE    {mutant.rule:8} {mutant.name}: its text is not in aggregate.p4 once")
        else:
            program = args.workdir / f"{mutant.name}.p4"
            program.write_text(text)
            row["killed_by"] = {
                engine: failing_cases(program, engine, args.every) for engine in engines
            }
            killed = all(row["killed_by"].values())
            verdict = "killed" if killed else "SURVIVED"
            detail = "; ".join(
                f"{engine}: {', '.join(cases)}" if cases else f"{engine}: none"
                for engine, cases in row["killed_by"].items()
            )
            print(f"{verdict:8} {mutant.rule:8} {mutant.name}: {detail}", flush=True)
        rows.append(row)
    killed = [r for r in rows if "killed_by" in r and all(r["killed_by"].values())]
    rows_run = [r for r in rows if "equivalent" not in r]
    print(
        f"p4 mutants: {len(killed)}/{len(rows_run)} killed on {' and '.join(engines)}, "
        f"{len(rows) - len(rows_run)} equivalent "
        f"({time.monotonic() - started:.0f} s)"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if len(killed) == len(rows_run) else 1


if __name__ == "__main__":
    sys.exit(main())
