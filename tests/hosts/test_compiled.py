"""ina/compiled.py: the per-packet modules load compiled or interpreted as INA_COMPILED says, a build
is keyed by every source mypy reads, and the compiled core answers byte for byte as the source."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ina import compiled

PROBE = """
import json, sys
from ina import compiled
from ina.bench import core as bench
import ina.hosts.core, ina.sim.links
cases = [bench.CoreCase(4096, dtype, elems=16, window=8) for dtype in ("int32", "float32")]
answers = [bench.record(c, bench.array_of(c)) for c in cases]
print(json.dumps({
    "files": [ina.hosts.core.__file__, ina.sim.links.__file__],
    "active": compiled.active(),
    "answers": [[a.hex() for a in run] for run in answers],
}))
"""


def probe(mode: str, cache: Path | None = None) -> dict:
    """Which files a fresh process loads under INA_COMPILED=mode, and the answers its core makes."""
    env = {**os.environ, "INA_COMPILED": mode}
    if cache is not None:
        env["INA_CACHE"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_interpreted_when_asked():
    got = probe("0")
    assert got["files"] == [
        str(compiled.source("ina.hosts.core")),
        str(compiled.source("ina.sim.links")),
    ]
    assert got["active"] is False


def test_auto_without_a_build_runs_the_source_and_builds_nothing(tmp_path):
    got = probe("auto", tmp_path)
    assert got["active"] is False and got["files"][0].endswith("hosts/core.py")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_compiled_core_answers_exactly_as_the_interpreted_one():
    try:
        compiled.build()  # once per source content, into the machine's cache (about a minute)
    except compiled.BuildError as err:
        pytest.skip(f"no mypyc build here: {err}")
    fast, slow = probe("1"), probe("0")
    assert fast["active"] is True and all(f.endswith(compiled.SUFFIX) for f in fast["files"])
    assert fast["answers"] == slow["answers"] and len(fast["answers"][1]) == 256 + 8


def test_a_bad_choice_names_the_variable_and_the_choices(monkeypatch):
    monkeypatch.setenv("INA_COMPILED", "yes")
    with pytest.raises(
        compiled.BuildError, match=r"^INA_COMPILED = 'yes': expected one of auto, 0, 1$"
    ):
        compiled.mode()


def test_without_mypyc_the_build_says_so_and_leaves_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("INA_CACHE", str(tmp_path))
    real = compiled.importlib.util.find_spec
    monkeypatch.setattr(
        compiled.importlib.util, "find_spec", lambda name: None if name == "mypyc" else real(name)
    )
    with pytest.raises(compiled.BuildError, match="mypyc is not installed"):
        compiled.build()
    assert list(tmp_path.iterdir()) == []


def ina_imports(module: str) -> set[str]:
    """The ina modules a source imports (`from ina.x import y`, `import ina.x`)."""
    tree = ast.parse(compiled.source(module).read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ina."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ina."))
    return found


def test_the_build_key_covers_every_ina_module_the_compiled_ones_import():
    # each is compiled, staged for its types (and hashed), or declared opaque (Any to mypy)
    known = compiled.HOT + compiled.DEPENDS + compiled.OPAQUE
    for module in compiled.HOT:
        assert ina_imports(module) <= set(known), module
    assert not set(compiled.OPAQUE) & set(compiled.HOT + compiled.DEPENDS)


def test_the_build_key_changes_with_any_source_it_covers(monkeypatch, tmp_path):
    for module in compiled.HOT + compiled.DEPENDS:
        copy = tmp_path / compiled.source(module).relative_to(compiled.ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(compiled.source(module).read_bytes())
    monkeypatch.setattr(compiled, "ROOT", tmp_path)
    keys = {compiled.digest()}
    for module in compiled.HOT + compiled.DEPENDS:
        path = compiled.source(module)
        path.write_bytes(path.read_bytes() + b"\n")
        keys.add(compiled.digest())
    assert len(keys) == 1 + len(compiled.HOT + compiled.DEPENDS)


def test_a_bad_choice_stops_ina_in_one_line_with_exit_2():
    env = {**os.environ, "INA_COMPILED": "yes"}
    done = subprocess.run(
        [sys.executable, "-m", "ina", "--help"], env=env, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "ina: INA_COMPILED = 'yes': expected one of auto, 0, 1\n",
    )
