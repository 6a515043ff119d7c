"""p4runtime-shell (`ina ctl shell`) in a virtualenv of its own, run in its own process.

p4runtime-shell 0.0.6 needs protobuf < 3.21 and the p4runtime 1.4.1 wheel's old generated modules;
ina runs protobuf's fast (upb) backend, which refuses those modules. One interpreter cannot hold
both, so `make setup` gives p4runtime-shell its own virtualenv (requirements-shell.txt) beside
ina's, named after it: `.venv` -> `.venv-shell`. Only standard-library imports here:
scripts/p4runtime_protos.py finds the wheel through this module before ina's protobuf modules exist.
"""

import sys
from pathlib import Path


def shell_venv() -> Path:
    """p4runtime-shell's virtualenv: this interpreter's environment with `-shell` appended."""
    return Path(f"{sys.prefix}-shell")


def shell_python() -> Path:
    return shell_venv() / "bin" / "python"


def shell_argv(
    grpc_addr: str,
    device_id: int,
    election_id: int,
    ssl: bool = False,
    ca_cert: str | None = None,
    cert: str | None = None,
    key: str | None = None,
) -> list[str]:
    """p4runtime-shell's own command line (`python -m p4runtime_sh`) for ina ctl's options."""
    argv = [
        str(shell_python()),
        "-m",
        "p4runtime_sh",
        "--grpc-addr",
        grpc_addr,
        "--device-id",
        str(device_id),
        "--election-id",
        f"{election_id >> 64},{election_id & (2**64 - 1)}",
    ]
    if ssl:
        argv.append("--ssl")
        for option, value in (("--cacert", ca_cert), ("--cert", cert), ("--private-key", key)):
            if value:
                argv += [option, value]
    return argv
