"""gcc under limits (switch/native/build.py): past its memory or its time a build is a BuildError
with a one-line reason, the whole compiler stopped, and the switch runs Python (engine="auto")."""

import functools
import os
import re
from pathlib import Path

import pytest

from ina.compiler import compile_file
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.model.errors import PipelineError
from ina.switch.model.load import load_program
from ina.switch.native import build
from ina.switch.native.build import BuildError
from ina.switch.native.datapath import NativeBackend

SMALL_MEMORY = 48 << 20  # gcc's address space: too little to compile the aggregation program


@functools.cache
def program() -> dict:
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"}).bmv2


@pytest.fixture
def fresh_cache(monkeypatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("INA_CACHE", str(tmp_path / "cache"))  # nothing built: gcc must run
    return tmp_path


def test_gcc_out_of_memory_is_a_one_line_build_error_and_auto_runs_python(
    fresh_cache, monkeypatch
) -> None:
    monkeypatch.setattr(build, "GCC_MEMORY", SMALL_MEMORY)
    with pytest.raises(BuildError) as err:
        NativeBackend(*load_program(program()), 511)
    assert re.fullmatch(
        r"gcc failed on pipeline-[0-9a-f]{20}\.so \(limits: 120 s, 48 MiB\): .+", str(err.value)
    )
    sw = Switch()
    sw.load(program())
    assert sw.engine_name == "python"
    assert sw.engine_note.startswith(
        "the native engine cannot run this program: gcc failed on pipeline-"
    )
    with pytest.raises(
        PipelineError, match=r"^the native engine cannot run this program: gcc failed on"
    ):
        Switch(engine="native").load(program())
    assert not list((fresh_cache / "cache" / "native").glob("*.so"))


def test_a_compiler_that_never_finishes_is_stopped_whole(fresh_cache, monkeypatch) -> None:
    """A compiler stuck past GCC_SECONDS is killed with its children (cc1 and the like)."""
    pidfile = fresh_cache / "child.pid"
    stuck = fresh_cache / "stuck-cc"
    stuck.write_text(f"#!/bin/sh\nsleep 60 >/dev/null 2>&1 &\necho $! > {pidfile}\nwait\n")
    stuck.chmod(0o755)
    monkeypatch.setenv("CC", str(stuck))
    monkeypatch.setattr(build, "GCC_SECONDS", 1)
    with pytest.raises(BuildError) as err:
        NativeBackend(*load_program(program()), 511)
    assert re.fullmatch(
        r"stuck-cc on pipeline-[0-9a-f]{20}\.so took longer than 1 s; stopped", str(err.value)
    )
    child = int(pidfile.read_text())
    while _state(child) not in ("gone", "Z"):  # SIGKILL is on its way; a survivor would sleep on
        assert _state(child) != "S", "the compiler's child survived"


def _state(pid: int) -> str:
    """The process's state letter (R, S, Z...), or "gone"."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return "gone"


def test_gcc_runs_under_the_limits(fresh_cache, monkeypatch) -> None:
    """The limits reach gcc itself: prlimit runs it (what the tests above rely on)."""
    seen: list[list[str]] = []
    popen = build.subprocess.Popen

    def spy(cmd, **kwargs):
        seen.append(cmd)
        return popen(cmd, **kwargs)

    loaded = load_program(program())  # compiled first: the P4 compiler's preprocessor is no gcc
    monkeypatch.setattr(build.subprocess, "Popen", spy)
    NativeBackend(*loaded, 511)
    # the pipeline's gcc, and the entry module's if no earlier test in this process built it
    pipeline = [cmd for cmd in seen if any(arg.endswith("state.c") for arg in cmd)]
    assert len(pipeline) == 1 and len(seen) in (1, 2)
    for cmd in seen:
        limits = ["prlimit", f"--as={build.GCC_MEMORY}", f"--cpu={build.GCC_SECONDS}", "--"]
        assert cmd[:4] == limits and os.path.basename(cmd[4]) == "gcc"
