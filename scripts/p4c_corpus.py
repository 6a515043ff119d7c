"""Run p4c's public v1model STF tests through `ina stf` on both engines and count the outcome.

    python scripts/p4c_corpus.py P4C_CHECKOUT [-j JOBS] [--list]

Every testdata/p4_16_samples/*-bmv2.p4 that includes v1model.p4 and has a .stf beside it is
compiled with ina's compiler and run with `ina stf`'s runner (ina.switch.stf) on the Python engine
and on the native engine. It prints how many compile, run natively, pass on each engine, and
differ between the engines (packets out, verdict, registers, counters or statistics); --list
names each program that falls out of a count and why. This is the script behind README's figure.
Each program runs in its own process, with a time limit, so one crash or hang costs one program.
"""

import argparse
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

V1MODEL = re.compile(r'^\s*#\s*include\s*[<"]v1model\.p4[>"]', re.MULTILINE)
TIME_LIMIT_S = 120


def state(switch) -> dict:
    """What both engines must agree on besides the packets: registers, counters, statistics."""
    return {
        "registers": {n: [r.read(i) for i in range(r.size)] for n, r in switch.registers.items()},
        "counters": {n: [c.read(i) for i in range(c.size)] for n, c in switch.counters.items()},
        "stats": dict(switch.stats),
    }


def run_one(p4: Path) -> dict:
    """The outcome of one program: compiled, native (or why not), pass per engine, differ."""
    from ina.compiler import CompileError
    from ina.files import FileError
    from ina.switch.model.errors import PipelineError
    from ina.switch.stf import StfError, load_program, read_stf, run_stf

    out: dict = {"program": p4.name}
    try:
        program = load_program(str(p4), [str(p4.parent)], {})
        text = read_stf(str(p4.with_suffix(".stf")))
    except (CompileError, StfError, FileError) as err:
        return {**out, "compiled": False, "why": str(err).splitlines()[0]}
    out["compiled"] = True
    results = {}
    for engine in ("python", "native"):
        try:
            results[engine] = run_stf(json.loads(json.dumps(program)), text, engine, p4.name)
        except PipelineError as err:
            out[f"{engine}_refused"] = str(err).splitlines()[0]
    py, native = results.get("python"), results.get("native")
    out["native"] = native is not None
    out["python_pass"] = py is not None and py.ok
    out["native_pass"] = native is not None and native.ok
    out["report"] = (
        py.report if py and not py.ok else native.report if native and not native.ok else ""
    )
    out["differ"] = bool(
        py
        and native
        and (
            py.ok != native.ok
            or py.outputs != native.outputs
            or state(py.switch) != state(native.switch)
        )
    )
    return out


def run_isolated(p4: Path) -> dict:
    """run_one in a child process: a crash or a hang is that program's outcome, not the script's."""
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(p4)],
            capture_output=True,
            text=True,
            timeout=TIME_LIMIT_S,
        )
    except subprocess.TimeoutExpired:
        return {"program": p4.name, "compiled": None, "why": f"no result within {TIME_LIMIT_S} s"}
    if done.returncode:
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return {"program": p4.name, "compiled": None, "why": f"crashed: {tail}"}
    return json.loads(done.stdout)


def programs(checkout: Path) -> list[Path]:
    samples = checkout / "testdata" / "p4_16_samples"
    if not samples.is_dir():
        raise SystemExit(
            f"p4c_corpus: {samples} is not a directory (give the root of a p4c checkout)"
        )
    return [
        p
        for p in sorted(samples.glob("*-bmv2.p4"))
        if p.with_suffix(".stf").exists() and V1MODEL.search(p.read_text(errors="replace"))
    ]


def summary(rows: list[dict], listing: bool) -> str:
    compiled = [r for r in rows if r["compiled"]]
    native = [r for r in compiled if r["native"]]
    lines = [
        f"{len(rows)} v1model programs with an STF test",
        f"compile with ina: {len(compiled)}",
        f"run natively: {len(native)}",
        f"pass on the Python engine: {sum(r['python_pass'] for r in compiled)}",
        f"pass on the native engine: {sum(r['native_pass'] for r in native)}",
        f"differ between the engines: {sum(r['differ'] for r in native)}",
    ]
    if listing:
        for r in rows:
            if not r["compiled"]:
                lines.append(f"  not compiled: {r['program']}: {r['why']}")
            elif not r["native"]:
                lines.append(f"  Python engine only: {r['program']}: {r.get('native_refused', '')}")
        for r in compiled:
            if r["differ"]:
                lines.append(f"  DIFFER: {r['program']}")
            if not (r["python_pass"] and (r["native_pass"] or not r["native"])):
                first = r["report"].splitlines()[0] if r["report"] else r.get("python_refused", "")
                lines.append(f"  FAIL: {r['program']}: {first}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "checkout", nargs="?", help="root of a p4c checkout (has testdata/p4_16_samples)"
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=2, help="programs run at once (default 2)"
    )
    parser.add_argument(
        "--list", action="store_true", help="name each program outside a count, and why"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: one program, JSON on stdout
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(Path(args.one))))
        return 0
    if not args.checkout:
        parser.error("give the root of a p4c checkout")
    found = programs(Path(args.checkout))
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        rows = list(pool.map(run_isolated, found))
    print(summary(rows, args.list))
    return 0 if all(r["compiled"] is not None and not r.get("differ") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
