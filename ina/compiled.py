"""The per-packet modules compiled by mypyc from their own typed source, or interpreted.

One source: hosts/core.py, the modules it calls per answer and the worker's loop that calls it
(hosts/dispatch.py) (HOT) are ordinary typed Python; mypyc compiles exactly those files into C
extensions, built once per content (the sources, their type dependencies DEPENDS, mypy's version,
the interpreter) and cached under $INA_CACHE/mypyc (else ~/.cache/ina/mypyc), as switch/native's
pipelines are. A finder on sys.meta_path, installed when
`ina` is imported, loads a HOT module from the cached build of its current source; any module
without one is imported from its .py file, so an edited source runs interpreted until rebuilt.

INA_COMPILED chooses (read once, at `import ina`):
  unset, "auto"  the compiled modules if the cache holds a build of today's sources, else the
                 interpreted ones (nothing is built at import: `make setup` builds them)
  "1"            the compiled modules, built now if missing; an error if they cannot be
  "0"            the interpreted modules, whatever is built

    .venv/bin/python -c "import ina.compiled as c; c.main()"   # build (if missing), say so

A frozen dataclass in a HOT module is `@mypyc_attr(native_class=False)`: as a native class,
unpickling it (a sweep's points in other processes) would assign its frozen fields and fail.
"""

import fcntl
import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

HOT = (
    "ina.hosts.rto",
    "ina.hosts.slots",
    "ina.hosts.expiry",
    "ina.hosts.chunks",
    "ina.hosts.core",
    "ina.hosts.dispatch",
    "ina.sim.events",
    "ina.sim.links",
    "ina.sim.nodes",
    "ina.hosts.inprocess",
)
# ina modules HOT imports whose types mypy reads (a change to one can change the compiled code);
# what they import in turn is not staged, and mypy takes it as Any
DEPENDS = (
    "ina.p4src",
    "ina.p4src.protocol",
    "ina.hosts.quantize",
    "ina.controller.aggregation",
    "ina.sim.network",
)
# ina modules HOT imports that are not staged: mypy takes them as Any, so the compiled code is the
# same whatever they hold (set-up, not the per-packet path)
OPAQUE = (
    "ina.compiler",
    "ina.controller.allocators",
    "ina.controller.client",
    "ina.topologies.topology_setup",
    "ina.hosts.packets",
    "ina.hosts.batch",
    "ina.sim.frames",
    "ina.switch.engine",
    "ina.switch.p4runtime.server",
    "ina.topologies.topo",
    "ina.topologies.tree",
)
GROUP = "ina_hot"  # mypyc's shared library of HOT: GROUP + "__mypyc"
MODES = ("auto", "0", "1")
BUILD_SECONDS = 600  # wall-clock seconds one build may take (about 1 min on the loaded dev machine)
ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = {
    "ina": "ina",
    "ina.hosts": "hosts",
    "ina.p4src": "p4src",
    "ina.sim": "sim",
    "ina.controller": "controller",
}
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]

_BUILD = """
import sys
from setuptools import setup
from mypyc.build import mypycify
out, tmp, group, *files = sys.argv[1:]
setup(name=group, ext_modules=mypycify(["--ignore-missing-imports", *files], opt_level="3", group_name=group),
      script_args=["build_ext", "--build-lib", out, "--build-temp", tmp])
"""


class BuildError(Exception):
    """mypyc or a C compiler is missing, or refused the sources."""


def mode() -> str:
    value = os.environ.get("INA_COMPILED", "auto") or "auto"
    if value not in MODES:
        raise BuildError(f"INA_COMPILED = {value!r}: expected one of {', '.join(MODES)}")
    return value


def staged(module: str) -> str:
    """An ina module's file in the `ina` package as mypyc sees it (ina/hosts/core.py)."""
    path = module.replace(".", "/")
    return f"{path}/__init__.py" if module in PACKAGE_DIRS else f"{path}.py"


def source(module: str) -> Path:
    """The file of an ina module in this tree (ina.X.Y -> the X package's folder, Y.py)."""
    if module in PACKAGE_DIRS:
        return ROOT / PACKAGE_DIRS[module] / "__init__.py"
    package, _, name = module.rpartition(".")
    return ROOT / PACKAGE_DIRS[package] / f"{name}.py"


def cache_root() -> Path:
    """$INA_CACHE, else ~/.cache/ina (switch/native's pipelines are in its native/)."""
    return Path(os.environ.get("INA_CACHE") or Path.home() / ".cache" / "ina")


def digest() -> str:
    """What a build depends on: every HOT and DEPENDS source, mypy's version, the interpreter."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        mypy = version("mypy")
    except PackageNotFoundError:
        mypy = "none"
    h = hashlib.sha256(f"{mypy}\0{sys.implementation.cache_tag}\0{SUFFIX}".encode())
    for module in HOT + DEPENDS:
        h.update(b"\0" + module.encode() + b"\0" + source(module).read_bytes())
    return h.hexdigest()[:20]


def build_dir() -> Path:
    """Where today's sources' build is (or would be)."""
    return cache_root() / "mypyc" / digest()


def built(directory: Path) -> dict[str, Path]:
    """Module name -> its extension in a finished build (empty: none there)."""
    if not (directory / "ok").exists():
        return {}
    files = {m: directory / (m.replace(".", "/") + SUFFIX) for m in HOT}
    files[f"{GROUP}__mypyc"] = directory / f"{GROUP}__mypyc{SUFFIX}"
    return files if all(f.exists() for f in files.values()) else {}


def build() -> Path:
    """Compile HOT with mypyc into the cache unless it is there (one process builds, others wait)."""
    target = build_dir()
    if built(target):
        return target
    if importlib.util.find_spec("mypyc") is None:
        raise BuildError("mypyc is not installed (pip install -r requirements.txt: mypy)")
    if sysconfig.get_config_var("CC") is None and not os.environ.get("CC"):
        raise BuildError("no C compiler configured for this Python")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built(target):
            _compile(target)
    return target


def _compile(target: Path) -> None:
    """Stage HOT and DEPENDS as the `ina` package, run mypyc on HOT, move the result into place."""
    with tempfile.TemporaryDirectory(prefix=".build-", dir=target.parent) as tmp:
        stage, out = Path(tmp) / "stage", Path(tmp) / "out"
        packages = {m.rpartition(".")[0] for m in HOT + DEPENDS} | {"ina"}
        for package in packages:
            folder = stage / package.replace(".", "/")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "__init__.py").touch()
        for module in HOT + DEPENDS:
            (stage / staged(module)).write_bytes(source(module).read_bytes())
        files = [staged(module) for module in HOT]
        cmd = [sys.executable, "-c", _BUILD, str(out), str(Path(tmp) / "tmp"), GROUP, *files]
        try:
            done = subprocess.run(
                cmd, cwd=stage, capture_output=True, text=True, timeout=BUILD_SECONDS
            )
        except subprocess.TimeoutExpired:
            raise BuildError(f"mypyc took longer than {BUILD_SECONDS} s; stopped") from None
        if done.returncode != 0:
            lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
            reason = next((line for line in lines if "error" in line), lines[-1] if lines else "")
            raise BuildError(f"mypyc failed: {reason.strip()[:300]}")
        (out / "ok").touch()
        try:
            os.replace(out, target)
        except OSError:  # another process finished the same build first
            if not built(target):
                raise


class _Finder:
    """Loads the modules of a finished build from their extensions (sys.meta_path)."""

    def __init__(self, files: dict[str, Path]):
        self.files = files

    def find_spec(self, name: str, path=None, target=None):
        file = self.files.get(name)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(
            name, file, loader=importlib.machinery.ExtensionFileLoader(name, str(file))
        )


def install() -> dict[str, Path]:
    """Put the finder for INA_COMPILED's choice first on sys.meta_path (once): the compiled
    modules it will load, by name (empty: every module interpreted)."""
    for finder in sys.meta_path:
        if isinstance(finder, _Finder):
            return finder.files
    chosen = "auto"
    try:
        chosen = mode()
        if chosen == "0":
            files: dict[str, Path] = {}
        elif chosen == "1":
            files = built(build())
        else:
            files = built(build_dir())
    except BuildError as err:  # one line, not a traceback at `import ina`; 2: a bad choice
        print(f"ina: {err}", file=sys.stderr)
        raise SystemExit(1 if chosen == "1" else 2) from None
    sys.meta_path.insert(0, _Finder(files))
    return files


def active(name: str = "ina.hosts.core") -> bool:
    """Whether module `name` (imported) runs compiled in this process."""
    module = sys.modules.get(name)
    return module is not None and not str(module.__file__).endswith(".py")


def main() -> int:
    try:
        target = build()
    except BuildError as err:
        print(f"ina: the interpreted modules run: {err}", file=sys.stderr)
        return 1
    print(f"ina: {', '.join(HOT)} compiled by mypyc in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
