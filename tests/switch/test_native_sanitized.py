"""The native engine under AddressSanitizer: pipelines built with INA_NATIVE_SANITIZE=address
(switch/native/build.py) run STF files in a process that loads ASan's runtime first, and any read or
write outside an allocation ends it with ASan's report. The cases reach each array's last cell and
the one past it (tests/p4/index_bounds), and aggregate.p4's every register per element at 256
values per packet."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ina.p4src import AGGREGATE_P4

HERE = Path(__file__).resolve().parent
INDEX_BOUNDS = HERE.parent / "p4" / "index_bounds.p4"
ELEMS256 = HERE.parent / "dataplane" / "elems256" / "reduction_and_retransmission.stf"


def asan_runtime() -> str | None:
    """gcc's libasan.so, or None (gcc prints the bare name when it has none)."""
    try:
        path = subprocess.run(
            ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return path if os.path.isabs(path) and os.path.exists(path) else None


RUNTIME = asan_runtime()


@pytest.mark.skipif(RUNTIME is None, reason="gcc has no AddressSanitizer runtime here")
@pytest.mark.parametrize(
    ("program", "stf", "defines"),
    [
        (INDEX_BOUNDS, INDEX_BOUNDS.with_suffix(".stf"), []),
        (AGGREGATE_P4, ELEMS256, ["-D", "ELEMS=256", "-D", "POOL_SIZE=16"]),
    ],
    ids=["index_bounds", "aggregate-E256"],
)
def test_the_native_engine_stays_inside_its_memory(
    program: Path, stf: Path, defines: list[str], tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "INA_NATIVE_SANITIZE": "address",
        "INA_CACHE": str(tmp_path),  # its own builds: the sanitized ones load only under ASan
        "LD_PRELOAD": str(RUNTIME),
        "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1",
    }
    cmd = [sys.executable, "-m", "ina", "stf", str(program), str(stf), *defines]
    done = subprocess.run(
        [*cmd, "--engine", "native"], env=env, capture_output=True, text=True, timeout=300
    )
    assert "AddressSanitizer" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
