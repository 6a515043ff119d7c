"""The native engine under AddressSanitizer: pipelines built with INA_NATIVE_SANITIZE=address
(switch/native/build.py) run STF files in one process that loads ASan's runtime first, and any
read or write outside an allocation ends it with ASan's report. The cases reach each array's last
cell and the one past it (index_bounds), header stacks, unions and varbits in the parser and the
deparser, packet I/O, and aggregate.p4's every register per element at 256 values per packet."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ina.p4src import AGGREGATE_P4

P4 = Path(__file__).resolve().parent.parent / "p4"
DATAPLANE = P4.parent / "dataplane"
# (program, STF, `ina stf` options): every feature program the native engine runs, and aggregate.p4
CASES = [
    *(
        (P4 / f"{name}.p4", P4 / f"{name}.stf", [])
        for name in (
            "index_bounds",
            "header_stacks",
            "union_stack",
            "varbit_assign",
            "tuples_varbit",
            "packet_io",
        )
    ),
    (
        AGGREGATE_P4,
        DATAPLANE / "elems256" / "reduction_and_retransmission.stf",
        ["-D", "ELEMS=256", "-D", "POOL_SIZE=16"],
    ),
]
# Runs each case through `ina stf` on the native engine in this one process; prints their statuses
RUN_ALL = """
import json, sys
from ina.switch.stf import main
cases = json.loads(sys.argv[1])
print(json.dumps([main([p, s, *o, "--engine", "native"]) for p, s, o in cases]))
"""


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
def test_the_native_engine_stays_inside_its_memory(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "INA_NATIVE_SANITIZE": "address",
        "INA_CACHE": str(tmp_path),  # its own builds: the sanitized ones load only under ASan
        "LD_PRELOAD": str(RUNTIME),
        "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1",
    }
    cases = json.dumps([[str(p), str(s), o] for p, s, o in CASES])
    done = subprocess.run(
        [sys.executable, "-c", RUN_ALL, cases], env=env, capture_output=True, text=True, timeout=600
    )
    assert "AddressSanitizer" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]
    statuses = json.loads(done.stdout.splitlines()[-1])
    assert statuses == [0] * len(CASES), [
        (p.name, s.name) for (p, s, _o), status in zip(CASES, statuses, strict=True) if status
    ]
