"""Where the real P4 toolchain is, for the tests that check ina against it.

../shared/p4-toolchain/install.sh puts it under /tmp/anchors (.ci/run installs it when that folder
is there); each path can be moved with its environment variable. A test that needs a path skips
with `missing(...)`'s reason when it is absent.
"""

import os
from pathlib import Path

P4C_DIR = Path(os.environ.get("INA_P4C_DIR", "/tmp/anchors/p4c"))  # p4c's tree, with build/
P4C = P4C_DIR / "build" / "p4c-bm2-ss"
P4C_RUNNER = (
    P4C_DIR / "backends" / "bmv2" / "run-bmv2-test.py"
)  # p4c's STF runner for simple_switch
P4C_PYTHON = os.environ.get("INA_P4C_PYTHON", "/usr/bin/python3")  # a python3 with ply and scapy
BMV2_BIN_DIR = Path(
    os.environ.get("INA_BMV2_BIN_DIR", "/tmp/anchors/install/bin")
)  # simple_switch(_CLI)
BMV2_GRPC_BIN_DIR = Path(os.environ.get("INA_BMV2_GRPC_BIN_DIR", "/tmp/anchors/grpc-install/bin"))
SIMPLE_SWITCH_GRPC_BIN = BMV2_GRPC_BIN_DIR / "simple_switch_grpc"
VARIABLES = "INA_P4C_DIR, INA_P4C_PYTHON, INA_BMV2_BIN_DIR, INA_BMV2_GRPC_BIN_DIR"


def missing(*paths: Path) -> str | None:
    """Why a test needing `paths` cannot run here, or None."""
    for path in paths:
        if not path.exists():
            return f"no {path}: run ../shared/p4-toolchain/install.sh or set {VARIABLES}"
    return None
