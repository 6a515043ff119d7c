"""Compile generated C with the runtime sources into a shared object, cached by content."""

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNTIME_SOURCES = ("state.c", "io.c")
HEADERS = ("runtime.h", "state.h")
CFLAGS = ("-O2", "-fPIC", "-shared", "-pthread", "-fwrapv", "-D_GNU_SOURCE", "-Wall",
          "-Wno-unused-label", "-Wno-unused-function")  # fmt: skip


class BuildError(Exception):
    """The C compiler is missing or refused the generated code."""


def cache_dir() -> Path:
    """Where built pipelines are kept: $INA_CACHE, else ~/.cache/ina/native."""
    root = os.environ.get("INA_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ina")
    return Path(root) / "native"


def compiler() -> str | None:
    return shutil.which(os.environ.get("CC", "gcc"))


def build(source: str, profile: bool = False) -> ctypes.CDLL:
    """The loaded shared object for `source` plus the runtime, compiled once per content.

    `profile` builds the variant that counts ticks per stage (ina bench profile)."""
    flags = [*CFLAGS, f"-I{HERE}", *(["-DINA_PROFILE"] if profile else [])]
    runtime = [(HERE / name).read_bytes() for name in RUNTIME_SOURCES + HEADERS]
    digest = hashlib.sha256(b"\0".join([source.encode(), *runtime, " ".join(flags).encode()]))
    target = cache_dir() / f"pipeline-{digest.hexdigest()[:20]}.so"
    _compile(target, source, flags, [str(HERE / s) for s in RUNTIME_SOURCES])
    return ctypes.CDLL(str(target))


def build_program(source_file: Path) -> Path:
    """A stand-alone C program (a benchmark tool), compiled once per content; returns its path."""
    source = source_file.read_text()
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    target = cache_dir() / f"{source_file.stem}-{digest}"
    _compile(target, source, ["-O2", "-Wall"], [])
    return target


def _compile(target: Path, source: str, flags: list[str], extra_sources: list[str]) -> None:
    """gcc `source` (+ extra files) into `target` unless it is there; atomic under concurrency."""
    if target.exists():
        return
    cc = compiler()
    if cc is None:
        raise BuildError("no C compiler (gcc) on PATH; install gcc for the native data path")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=target.parent) as tmp:
        generated = Path(tmp) / "source.c"
        generated.write_text(source)
        partial = Path(tmp) / "out"
        cmd = [cc, *flags, str(generated), *extra_sources, "-o", str(partial)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise BuildError(f"{Path(cc).name} failed on {target.name}:\n{result.stderr[-2000:]}")
        os.replace(partial, target)
