"""Compile generated C with the runtime sources into a shared object, cached by content.

gcc runs under limits (GCC_SECONDS of CPU and of wall-clock time, GCC_MEMORY of address space),
so no program, however gcc takes it, can hold the machine: past them the build is a BuildError
and the switch runs the program on the Python engine (engine="auto") or refuses it.
"""

import ctypes
import hashlib
import os
import shutil
import signal
import subprocess
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNTIME_SOURCES = ("state.c", "io.c")
HEADERS = ("runtime.h", "state.h")
CFLAGS = ("-O2", "-fPIC", "-shared", "-pthread", "-fwrapv", "-D_GNU_SOURCE", "-Wall",
          "-Wno-unused-label", "-Wno-unused-function")  # fmt: skip
# INA_NATIVE_SANITIZE: pipelines built with a sanitizer (a test of the engine's memory safety;
# the process must load its runtime first: LD_PRELOAD=$(gcc -print-file-name=libasan.so))
SANITIZERS = {"address": ("-fsanitize=address", "-fno-omit-frame-pointer")}
GCC_SECONDS = 120  # CPU and wall-clock seconds one gcc run may take (budget.py's largest: ~20 s)
GCC_MEMORY = (
    1 << 30
)  # bytes of address space of each of gcc's processes (the largest needs ~150 MB)


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

    `profile` builds the variant that counts ticks per stage (ina bench profile);
    INA_NATIVE_SANITIZE the one a sanitizer checks (`SANITIZERS`)."""
    flags = [*CFLAGS, f"-I{HERE}", *(["-DINA_PROFILE"] if profile else []), *sanitizer_flags()]
    runtime = [(HERE / name).read_bytes() for name in RUNTIME_SOURCES + HEADERS]
    digest = hashlib.sha256(b"\0".join([source.encode(), *runtime, " ".join(flags).encode()]))
    target = cache_dir() / f"pipeline-{digest.hexdigest()[:20]}.so"
    _compile(target, source, flags, [str(HERE / s) for s in RUNTIME_SOURCES])
    return ctypes.CDLL(str(target))


def sanitizer_flags() -> tuple[str, ...]:
    """gcc's flags for the sanitizer INA_NATIVE_SANITIZE names (none when unset)."""
    name = os.environ.get("INA_NATIVE_SANITIZE", "")
    if name and name not in SANITIZERS:
        raise BuildError(f"INA_NATIVE_SANITIZE={name!r}: expected one of {', '.join(SANITIZERS)}")
    return SANITIZERS[name] if name else ()


def build_program(source_file: Path) -> Path:
    """A stand-alone C program (a benchmark tool), compiled once per content; returns its path."""
    source = source_file.read_text()
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    target = cache_dir() / f"{source_file.stem}-{digest}"
    _compile(target, source, ["-O2", "-Wall"], [])
    return target


def build_extension(source_file: Path) -> Path:
    """A Python extension module for this interpreter, compiled with runtime.h once per content
    and interpreter; returns its path (the module's name is its PyInit_ function's, the loader's)."""
    source = source_file.read_text()
    include, suffix = sysconfig.get_paths()["include"], sysconfig.get_config_var("EXT_SUFFIX")
    flags = ["-O2", "-fPIC", "-shared", "-Wall", f"-I{HERE}", f"-I{include}"]
    key = "\0".join([source, (HERE / "runtime.h").read_text(), " ".join(flags), suffix])
    target = (
        cache_dir() / f"{source_file.stem}-{hashlib.sha256(key.encode()).hexdigest()[:20]}{suffix}"
    )
    _compile(target, source, flags, [])
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
        returncode, stderr = _run_limited(cmd, f"{Path(cc).name} on {target.name}")
        if returncode != 0:
            raise BuildError(
                f"{Path(cc).name} failed on {target.name} (limits: {GCC_SECONDS} s, "
                f"{GCC_MEMORY >> 20} MiB): {_reason(stderr)}"
            )
        os.replace(partial, target)


def _run_limited(cmd: list[str], what: str) -> tuple[int, str]:
    """(exit status, stderr) of `cmd` run by prlimit under GCC_SECONDS of CPU and GCC_MEMORY of
    address space, which gcc's own children (cc1, as, ld) inherit, in a process group of its own
    that is killed whole after GCC_SECONDS of wall-clock time."""
    limited = ["prlimit", f"--as={GCC_MEMORY}", f"--cpu={GCC_SECONDS}", "--", *cmd]
    # a library preloaded into this process (a sanitizer's runtime) is not the compiler's
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    try:
        proc = subprocess.Popen(
            limited,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            env=env,
        )
    except FileNotFoundError:
        raise BuildError("no prlimit (util-linux) on PATH: gcc only runs under limits") from None
    try:
        _out, stderr = proc.communicate(timeout=GCC_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise BuildError(f"{what} took longer than {GCC_SECONDS} s; stopped") from None
    return proc.returncode, stderr


def _reason(stderr: str) -> str:
    """The line of a compiler's output that says why it failed: the first error, else the last."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    found = next(
        (line for line in lines if "error" in line or "memory" in line), lines[-1] if lines else ""
    )
    return found[:300] or "no message"
