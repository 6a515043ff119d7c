"""`ina stf` on randomly mutated copies of the repo's STF files: a pass, a located failure or a
located error (exit 0 or 1), never a traceback. Seeded; `--fuzz-scale` runs more cases."""

import json
import random
import re
from pathlib import Path

import pytest

from ina.compiler import compile_file
from ina.p4src import AGGREGATE_P4
from ina.switch.stf import main

TESTS = Path(__file__).resolve().parents[1]
CORPUS = sorted((TESTS / "dataplane").glob("*.stf")) + sorted((TESTS / "p4").glob("*.stf"))
WORDS = [
    "",
    "-1",
    "0",
    "0x",
    "0x**",
    "512",
    "65536",
    "99999999999999999999999",
    "nan",
    "*",
    "$",
    ":",
    "(",
    ")",
    "()",
    "a:",
    "1/999",
    "5..2",
    "0x1&&&0x",
    "'",
    '"',
    "\\",
    "ab",
    "abc",
    "zz",
    "add",
    "packet",
    "expect",
    "mc_node_associate 1 7",
    "setdefault",
    "register_write",
    "x(y:1)",
    "x(y:)",
    "$0",
    "0b102",
]


def _program(stf: Path, tmp: Path) -> str:
    """The BMv2 JSON the STF file runs against, compiled once into tmp (the dataplane files'
    aggregation program once for all of them)."""
    dataplane = stf.parent.name == "dataplane"
    path = tmp / ("aggregate.json" if dataplane else f"{stf.parent.name}-{stf.stem}.json")
    if not path.exists():
        if dataplane:
            bmv2 = compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"}).bmv2
        else:
            bmv2 = compile_file(stf.with_suffix(".p4")).bmv2
        path.write_text(json.dumps(bmv2))
    return str(path)


def _mutate(rng: random.Random, text: str) -> bytes:
    lines = text.splitlines() or [""]
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(lines))
        words = lines[i].split(" ")
        kind = rng.randrange(8)
        if kind == 0 and len(words) > 1:
            del words[rng.randrange(len(words))]
        elif kind == 1:
            words[rng.randrange(len(words))] = rng.choice(WORDS)
        elif kind == 2:
            words.insert(rng.randrange(len(words) + 1), rng.choice(WORDS))
        elif kind == 3:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
            continue
        elif kind == 4:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            continue
        elif kind == 5 and lines[i]:
            k = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:k] + rng.choice("0f*$:(),.#/&x_- \t") + lines[i][k + 1 :]
            continue
        elif kind == 6:
            lines.insert(i, rng.choice(lines))
            continue
        else:
            words.append(rng.choice(WORDS))
        lines[i] = " ".join(words)
    data = "\n".join(lines).encode()
    if rng.random() < 0.05:  # now and then a byte that is not text
        k = rng.randrange(len(data) + 1)
        data = data[:k] + rng.choice([b"\0", b"\xff", b"\xc3"]) + data[k:]
    return data


def _located(output: str, stf: str) -> bool:
    """Every problem line names FILE:LINE (or a port of the output diff)."""
    here = re.escape(stf)
    heads = [
        line
        for line in output.splitlines()
        if line and not line.startswith((" ", "FAIL: ", "PASS: "))
    ]
    return bool(heads) and all(
        re.match(rf"({here}:\d+: |port \d+: |ina stf: Python engine: )", h) for h in heads
    )


@pytest.mark.fuzz
def test_mutated_stf_files_never_crash(tmp_path, capsys, fuzz_cases):
    rng = random.Random(20240611)
    for case in range(fuzz_cases(120)):
        source = rng.choice(CORPUS)
        data = _mutate(rng, source.read_text())
        stf = tmp_path / f"case{case}.stf"
        stf.write_bytes(data)
        engine = "python" if case % 4 else "auto"
        try:
            status = main([_program(source, tmp_path), str(stf), "--engine", engine])
        except Exception as err:  # the test's whole point: report the input that crashed
            pytest.fail(
                f"case {case} (from {source.name}) raised {type(err).__name__}: {err}\n{data!r}"
            )
        out = capsys.readouterr()
        assert status in (0, 1), (case, data)
        if status:
            assert _located(out.out + out.err, str(stf)), (case, data, out.out + out.err)
