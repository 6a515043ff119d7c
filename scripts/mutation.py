"""Mutation testing of the protocol-critical Python modules with cosmic-ray (#35).

Each module is mutated with the narrow test subset that covers it (`TARGETS`), in a scratch copy
of this tree (cosmic-ray edits the file it mutates in place; the copy's `ina/` links its
subpackages, and PYTHONPATH puts it before the editable install), one mutant at a time at nice 10.
The operators are the boundary ones (`KEPT_OPERATORS`: one replacement per arithmetic and
comparison operator, numbers +-1, and/or, not, True/False, break/continue, loops and handlers), not
cosmic-ray's every-operator-by-every-other cross product. Sessions are resumable: `--minutes`
bounds each module's batch, and the next run goes on from where it stopped (`--fresh` restarts).
`--sample N` tests a seeded sample of N mutants of a module (the rest are skipped, and the score is
the sample's). Survivors that no test can kill are listed in `EQUIVALENT` with the reason, and
leave the score.

    .venv/bin/pip install -e '.[mutation]'
    .venv/bin/python scripts/mutation.py [--modules M ...] [--minutes 20] [--sample N] [--json F]

A benchmark-style run (docs/testing.md has the command and the score), not part of `make test`.
Exit 0 when every module tested reaches `TARGET_SCORE`.
"""

import argparse
import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TARGET_SCORE = 0.85
SEED = 35
SUBPACKAGES = (
    "bench",
    "compiler",
    "controller",
    "hosts",
    "p4rt",
    "p4src",
    "sim",
    "switch",
    "topologies",
    "train",
)
P4RUNTIME_TESTS = (  # the quickest to fail first: a mutant's run stops at its first failure
    "tests/switch/test_digests.py",
    "tests/switch/test_p4runtime_server.py",
    "tests/switch/test_p4runtime_security.py",
    "tests/switch/test_p4runtime_rules.py",
    "tests/switch/test_p4runtime_messages.py",
    "tests/p4rt/test_entities.py",
    "tests/switch/test_p4runtime_entities_bounds.py",
    "-m",
    "not fuzz and not netns",
)
# module -> (its tests, seconds one mutant may take before it counts as killed by a hang)
TARGETS: dict[str, tuple[tuple[str, ...], float]] = {
    "hosts/quantize.py": (("tests/hosts/test_quantize.py", "tests/hosts/test_chunks.py"), 60),
    "hosts/core.py": (
        (
            "tests/hosts/test_core.py",
            "tests/hosts/test_core_bounds.py",
            "tests/hosts/test_core_fallback.py",
            "tests/hosts/test_core_lanes.py",
            "tests/hosts/test_core_zero.py",
            "tests/hosts/test_chunks.py",
        ),
        60,
    ),
    "controller/aggregation.py": (
        (
            "tests/controller/test_aggregation.py",
            "tests/controller/test_aggregation_bounds.py",
            # the best-effort job's fallback server, written and read back (jobs())
            "tests/controller/test_pool.py::"
            "test_a_job_with_a_fallback_server_shares_a_full_pool_and_reads_back",
        ),
        120,
    ),
    "switch/p4runtime/entities.py": (P4RUNTIME_TESTS, 240),
    "switch/p4runtime/server.py": (P4RUNTIME_TESTS, 240),
}
KEPT_OPERATORS = (
    "ReplaceBinaryOperator_(Add_Sub|Sub_Add|Mul_Div|Div_Mul|FloorDiv_Div|Mod_FloorDiv|Pow_Mul"
    "|LShift_RShift|RShift_LShift|BitAnd_BitOr|BitOr_BitAnd|BitXor_BitOr)",
    "ReplaceComparisonOperator_(Eq_NotEq|NotEq_Eq|Lt_LtE|LtE_Lt|Gt_GtE|GtE_Gt|Is_IsNot|IsNot_Is"
    "|In_NotIn|NotIn_In)",
    "ReplaceUnaryOperator_(USub_UAdd|Delete_Not|Delete_Invert)",
    "NumberReplacer",
    "AddNot",
    "ReplaceTrueWithFalse",
    "ReplaceFalseWithTrue",
    "ReplaceAndWithOr",
    "ReplaceOrWithAnd",
    "ReplaceBreakWithContinue",
    "ReplaceContinueWithBreak",
    "ZeroIterationForLoop",
    "ExceptionReplacer",
)
# (module, the mutated statement's first line, the mutant's lines as its diff adds them: stripped,
# joined by a space) -> why no test can tell the mutant from the program
WAITING_SEQ = (
    "a waiting transmission's sequence number never equals _rack_seq (the latest answered one:"
    " that use was taken, and its slot has a new transmission or is done), so < and <= (> and >=)"
    " read the same"
)
FIRST_SEND = (
    "start() sets every slot's entry before it is read: _next_use sends the slot's use, which"
    " resets it, or takes a held RESULT, whose only read of it is `_behind = retries > 0 and not"
    " status` (retries still 0); a slot done without sending is never read again"
)
EQUIVALENT: dict[tuple[str, str, str], str] = {
    (
        "hosts/core.py",
        "MAX_DATAGRAM_ELEMS = (65507 - HEADER_LEN) // 4  # values that fit one UDP datagram over IPv4",
        "MAX_DATAGRAM_ELEMS = ( 65506 - HEADER_LEN) // 4  # values that fit one UDP datagram over IPv4",
    ): "the same quotient: (65506 - 22) // 4 == (65507 - 22) // 4 == 16371",
    (
        "hosts/core.py",
        "MAX_DATAGRAM_ELEMS = (65507 - HEADER_LEN) // 4  # values that fit one UDP datagram over IPv4",
        "MAX_DATAGRAM_ELEMS = ( 65508 - HEADER_LEN) // 4  # values that fit one UDP datagram over IPv4",
    ): "the same quotient: (65508 - 22) // 4 == (65507 - 22) // 4 == 16371",
    ("hosts/core.py", "self._window = 0", "self._window = -1"): (
        "_window -1 before the first call: receive's `index >= self._window` and _other_round's"
        " `index < self._window` read the same for -1 as for 0 (indexes are >= 0); 1 is killed"
    ),
    (
        "hosts/core.py",
        "self._sequence = 0  # transmissions so far: orders them, ties in time included",
        "self._sequence = 1  # transmissions so far: orders them, ties in time included",
    ): "sequence numbers are only compared with each other and _rack_seq starts at 0 below them all",
    ("hosts/core.py", "self._sequence += 1", "self._sequence += 2"): (
        "a resend's number still exceeds every earlier one: sequence numbers are only compared"
    ),
    ("hosts/core.py", "self._retries[index] += 1", "self._retries[index] += 2"): (
        "a slot's resend count is only tested against 0 (Karn's rule, _behind, its turn)"
    ),
    **{
        ("hosts/core.py", first, mutated): FIRST_SEND
        for first, mutated in (
            ("self._chunk_of = [", "self._chunk_of = [ -1"),
            ("self._chunk_of = [", "self._chunk_of = [ 1"),
            ("self._blind = [", "True"),
            ("self._status = [", "self._status = [ 1"),
            ("self._status = [", "self._status = [ -1"),
            (
                "self._timeouts = [0] * window  # ... of which timed out: max_retries bounds these",
                "self._timeouts = [ 1] * window  # ... of which timed out: max_retries bounds these",
            ),
            (
                "self._timeouts = [0] * window  # ... of which timed out: max_retries bounds these",
                "self._timeouts = [ -1] * window  # ... of which timed out: max_retries bounds these",
            ),
            (
                "self._seq_of = [0] * window  # each slot's latest transmission, in order",
                "self._seq_of = [ 1] * window  # each slot's latest transmission, in order",
            ),
            (
                "self._seq_of = [0] * window  # each slot's latest transmission, in order",
                "self._seq_of = [ -1] * window  # each slot's latest transmission, in order",
            ),
        )
    },
    **{
        ("hosts/core.py", first, mutated): WAITING_SEQ
        for first, mutated in (
            ("if (", "seq_of[index] >= self._rack_seq and not self._behind[index]"),
            (
                "if not self._status[index] and self._seq_of[index] < self._rack_seq:",
                "if not self._status[index] and self._seq_of[index] <= self._rack_seq:",
            ),
            (
                "if self._seq_of[rack] < self._rack_seq and not status[rack]:",
                "if self._seq_of[rack] <= self._rack_seq and not status[rack]:",
            ),
            (
                "timed_out = self._seq_of[index] > self._rack_seq",
                "timed_out = self._seq_of[index] >= self._rack_seq",
            ),
        )
    },
    (
        "switch/p4runtime/server.py",
        'value = int.from_bytes(data[:nbytes], "big") if nbytes else 0',
        'value = int.from_bytes(data[:nbytes], "big") if nbytes else 1',
    ): (
        "with nbytes 0 the packet_in layout is empty (P4Info metadata are at least 1 bit wide),"
        " so the value is never read; int.from_bytes(b'') is 0 anyway"
    ),
    ("switch/p4runtime/server.py", "value, bits = 0, 0", "value, bits = 0, -1"): (
        "controller headers are whole bytes (the compiler refuses others), so (8k - 1 + 7) // 8 =="
        " (8k + 7) // 8 == k bytes; with no header, 0 .to_bytes(0) is b'' as the else is"
    ),
    (
        "switch/p4runtime/server.py",
        'header = value.to_bytes((bits + 7) // 8, "big") if bits else b""',
        'header = value.to_bytes((bits + 6) // 8, "big") if bits else b""',
    ): "controller headers are whole bytes: (8k + 6) // 8 == (8k + 7) // 8 == k",
    ("switch/p4runtime/server.py", "nbytes = (bits + 7) // 8", "nbytes = (bits + 6) // 8"): (
        "controller headers are whole bytes: (8k + 6) // 8 == (8k + 7) // 8 == k"
    ),
    **{
        ("switch/p4runtime/server.py", "context.abort(", mutated): (
            "json.loads's errors are short (a JSONDecodeError's message and position, a"
            " UnicodeDecodeError's byte and position, RecursionError's fixed text): the 200"
            " characters kept only bound a text that never reaches them"
        )
        for mutated in (
            'f"p4_device_config is not BMv2 JSON: {str(err)[: 201]}",',
            'f"p4_device_config is not BMv2 JSON: {str(err)[: 199]}",',
        )
    },
    **{
        (module, "@dataclass(frozen=True)", "@dataclass(frozen=False)"): (
            "nothing assigns to these records' fields, hashes them or copies them with replace():"
            " frozen only stops a future write"
        )
        for module in ("switch/p4runtime/server.py", "switch/p4runtime/entities.py")
    },
    ("hosts/core.py", "if self._allowance < timer:", "if self._allowance <= timer:"): (
        "with the allowance equal to the timer, RACK's due time sent_at[rack] + allowance is never"
        " before the RTO's sent_at[oldest] + timer (rack is the oldest waiting or sent after it),"
        " so the min leaves due as it was"
    ),
    ("hosts/core.py", "if due < self.deadline:", "if due <= self.deadline:"): (
        "when equal, the deadline is assigned the value it has"
    ),
    (
        "hosts/core.py",
        "if timed_out and (due < sent + rtt.timer or not self._rack_seq):",
        "if timed_out and (due <= sent + rtt.timer or not self._rack_seq):",
    ): "when equal, due is assigned the value it has",
    (
        "hosts/core.py",
        "next_due = min((due for seq, due in waits.items() if seq < cut), default=math.inf)",
        "next_due = min((due for seq, due in waits.items() if seq <= cut), default=math.inf)",
    ): "cut is a due transmission's number and waits holds only those not due: never equal",
    (
        "hosts/core.py",
        "for old in [r for r in held if (r - current) & ROUND_MASK >= self.hold_rounds]:",
        "for old in [r for r in held if (r - current) & ROUND_MASK > self.hold_rounds]:",
    ): (
        "a round was held less than hold_rounds ahead and the current round only moves forward,"
        " so its distance is below hold_rounds or wrapped far above it (over 2**31), never equal"
    ),
}


def statement_of(source: str, row: int) -> str:
    """The first line (stripped) of the innermost statement of `source` holding line `row`: a
    mutant's place that a multi-line statement's inner lines (`0`, `False`) would not name."""
    rows = [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.stmt) and node.lineno <= row <= (node.end_lineno or node.lineno)
    ]
    line = max(rows, default=row)
    return source.splitlines()[line - 1].strip()


def added_lines(diff: str) -> str:
    """The lines a mutant's diff adds, stripped and joined by a space."""
    return " ".join(
        line[1:].strip()
        for line in diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    )


def scratch_copy(workdir: Path) -> Path:
    """This tree's files (tracked and new, as they are now) under workdir/src, `ina/` linking the
    subpackages, so `PYTHONPATH=workdir/src` imports the copy cosmic-ray mutates."""
    src = workdir / "src"
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    for package in SUBPACKAGES:
        link = src / "ina" / package
        if not link.exists():
            link.symlink_to(Path("..") / package)
    return src


def config_text(module: str, tests: tuple[str, ...], timeout: float) -> str:
    command = " ".join(
        [
            "nice -n 10",
            str(BIN / "python"),
            "-m pytest -x -q -p no:cacheprovider",
            *(f"'{t}'" if " " in t else t for t in tests),
        ]
    )
    return (
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n\n'
        '[cosmic-ray.distributor]\nname = "local"\n'
    )


def session_for(workdir: Path, src: Path, module: str, sample: int | None, fresh: bool) -> Path:
    """The module's session, made (mutants found, operators filtered, sampled) unless it exists."""
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    stem = module.replace("/", ".")
    config, session = workdir / f"{stem}.toml", workdir / f"{stem}.sqlite"
    tests, timeout = TARGETS[module]
    config.write_text(config_text(module, tests, timeout))
    if fresh:
        session.unlink(missing_ok=True)
    if session.exists():
        return session
    subprocess.run([BIN / "cosmic-ray", "init", config, session], cwd=src, check=True)
    kept = [f"core/{name}$" for name in KEPT_OPERATORS]
    with use_db(str(session)) as db:
        pending = list(db.pending_work_items)
        chosen = [
            item
            for item in pending
            if any(re.match(pattern, m.operator_name) for m in item.mutations for pattern in kept)
        ]
        if sample is not None and sample < len(chosen):
            chosen = random.Random(SEED).sample(chosen, sample)
        keep = {item.job_id for item in chosen}
        for item in pending:
            if item.job_id not in keep:
                db.set_result(
                    item.job_id,
                    WorkResult(output="not run", worker_outcome=WorkerOutcome.SKIPPED),
                )
    return session


def retest_survivors(session: Path, close: bool) -> None:
    """Make the session's survivors pending again: tests added since decide them anew. `close`
    first skips the mutants never run, so the session's sample is the ones a bounded run reached
    (cosmic-ray runs them in the random order of their ids)."""
    import sqlite3

    with sqlite3.connect(session) as db:
        if close:
            db.execute(
                "INSERT INTO work_results (worker_outcome, output, test_outcome, diff, job_id) "
                "SELECT 'SKIPPED', 'not run', NULL, NULL, job_id FROM work_items "
                "WHERE job_id NOT IN (SELECT job_id FROM work_results)"
            )
        db.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'")


def run_batch(src: Path, module: str, session: Path, minutes: float) -> None:
    """Mutants of the session until it is done or `minutes` passed; the module restored after."""
    config = session.with_suffix(".toml")
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.Popen(
        [BIN / "cosmic-ray", "exec", config, session], cwd=src, env=env, start_new_session=True
    )
    try:
        proc.wait(timeout=minutes * 60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 15)
        proc.wait()
    shutil.copy2(ROOT / module, src / module)  # a batch cut short may leave its mutant applied


def summary(module: str, session: Path, src: Path) -> dict:
    """Killed, survived (with their lines), equivalent and pending mutants of the session."""
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    source = (src / module).read_text()
    lines = source.splitlines()
    killed, survivors, equivalent, errors = 0, [], [], 0
    with use_db(str(session)) as db:
        pending = sum(1 for _ in db.pending_work_items)
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            mutation = item.mutations[0]
            line = mutation.start_pos[0]
            where = {
                "line": line,
                "operator": mutation.operator_name,
                "occurrence": mutation.occurrence,
                "text": lines[line - 1].strip(),
            }
            key = (module, statement_of(source, line), added_lines(result.diff or ""))
            reason = EQUIVALENT.get(key)
            if result.test_outcome == TestOutcome.SURVIVED:
                (equivalent if reason else survivors).append({**where, "equivalent": reason})
            elif result.test_outcome == TestOutcome.KILLED:
                killed += 1
            else:
                errors += 1  # incompetent: the mutant cannot run (counted as killed, as cosmic-ray)
    decided = killed + errors + len(survivors)
    return {
        "module": module,
        "killed": killed + errors,
        "survived": len(survivors),
        "equivalent": len(equivalent),
        "pending": pending,
        "score": (killed + errors) / decided if decided else None,
        "survivors": sorted(survivors, key=lambda s: s["line"]),
        "equivalents": equivalent,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mutation.py", description=__doc__.splitlines()[0])
    parser.add_argument("--modules", nargs="+", choices=sorted(TARGETS), default=sorted(TARGETS))
    parser.add_argument("--minutes", type=float, default=20.0, help="bound of each module's batch")
    parser.add_argument("--sample", type=int, help="a seeded sample of N mutants per module")
    parser.add_argument("--fresh", action="store_true", help="restart the sessions")
    parser.add_argument("--report", action="store_true", help="only report the sessions so far")
    parser.add_argument(
        "--retest-survivors",
        action="store_true",
        help="run the survivors again (with the tests as they are now) before the rest",
    )
    parser.add_argument(
        "--close",
        action="store_true",
        help="with --retest-survivors: skip the mutants not run yet (the score is the run ones')",
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ina-mutation"))
    parser.add_argument("--json", type=Path, help="write the summaries here")
    args = parser.parse_args(argv)
    if not (BIN / "cosmic-ray").exists():
        print("mutation.py: cosmic-ray is not installed: pip install -e '.[mutation]'")
        return 2
    args.workdir.mkdir(parents=True, exist_ok=True)
    # --report reads the sessions only: a batch running in the same workdir keeps its copy
    src = args.workdir / "src" if args.report else scratch_copy(args.workdir)
    results = []
    for module in args.modules:
        session = session_for(args.workdir, src, module, args.sample, args.fresh)
        if args.retest_survivors:
            retest_survivors(session, args.close)
        if not args.report:
            run_batch(src, module, session, args.minutes)
        result = summary(module, session, src)
        results.append(result)
        score = "-" if result["score"] is None else f"{result['score']:.1%}"
        print(
            f"{module}: score {score}: {result['killed']} killed, {result['survived']} survived, "
            f"{result['equivalent']} equivalent, {result['pending']} not run yet",
            flush=True,
        )
        for s in result["survivors"]:
            print(f"  survived {module}:{s['line']} {s['operator']}: {s['text']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if all((r["score"] or 0) >= TARGET_SCORE for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
