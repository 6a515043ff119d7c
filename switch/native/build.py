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


def build(source: str) -> ctypes.CDLL:
    """The loaded shared object for `source` plus the runtime, compiled once per content."""
    cc = compiler()
    if cc is None:
        raise BuildError("no C compiler (gcc) on PATH; install gcc for the native data path")
    runtime = [(HERE / name).read_bytes() for name in RUNTIME_SOURCES + HEADERS]
    digest = hashlib.sha256(b"\0".join([source.encode(), *runtime, " ".join(CFLAGS).encode()]))
    target = cache_dir() / f"pipeline-{digest.hexdigest()[:20]}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".build-", dir=target.parent) as tmp:
            generated = Path(tmp) / "pipeline.c"
            generated.write_text(source)
            partial = Path(tmp) / "pipeline.so"
            cmd = [cc, *CFLAGS, f"-I{HERE}", str(generated), *(str(HERE / s) for s in RUNTIME_SOURCES),
                   "-o", str(partial)]
            result = subprocess.run(cmd, capture_output=True, text=True)
            if result.returncode != 0:
                raise BuildError(f"{Path(cc).name} failed on the generated pipeline:\n{result.stderr[-2000:]}")
            os.replace(partial, target)  # atomic: concurrent builds of one program are safe
    return ctypes.CDLL(str(target))
