"""`ina ctl shell` becomes p4runtime-shell, run by its own virtualenv's Python, on ina's options."""

import subprocess
import sys
import threading

from ina.compiler import compile_file
from ina.controller.cli import main as ctl_main
from ina.controller.client import SwitchConnection
from ina.controller.shell import shell_argv, shell_python
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve


def test_shell_argv_passes_ina_ctl_options_in_p4runtime_shell_spelling():
    assert shell_argv("10.0.0.1:9559", 3, (7 << 64) | 9) == [
        str(shell_python()),
        "-m",
        "p4runtime_sh",
        "--grpc-addr",
        "10.0.0.1:9559",
        "--device-id",
        "3",
        "--election-id",
        "7,9",
    ]
    assert shell_argv("h:1", 0, 1, ssl=True, ca_cert="ca.crt", cert="c.crt", key="c.key")[-7:] == [
        "--ssl",
        "--cacert",
        "ca.crt",
        "--cert",
        "c.crt",
        "--private-key",
        "c.key",
    ]
    assert shell_argv("h:1", 0, 1, ssl=True, ca_cert="ca.crt")[-3:] == [
        "--ssl",
        "--cacert",
        "ca.crt",
    ]


def test_ina_ctl_shell_runs_p4runtime_shell_as_primary_on_the_switch():
    """Typed lines reach the shell's IPython; it arbitrates with --election-id and reads the P4Info."""
    program = compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})
    service = P4RuntimeService(Switch(), threading.Lock())
    srv = serve(service, "127.0.0.1:0")
    address = f"127.0.0.1:{srv.bound_port}"
    try:
        with SwitchConnection(address, election_id=1) as conn:
            conn.set_pipeline(program.bmv2, program.p4info)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "ina",
                "ctl",
                "--grpc-addr",
                address,
                "--election-id",
                str((2 << 64) | 5),
                "shell",
            ],
            input="print(sorted(t.preamble.name for t in p4info.tables))\n",
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        srv.stop(None)
    assert done.returncode == 0, done.stderr
    assert str(sorted(t.preamble.name for t in program.p4info.tables)) in done.stdout
    assert service.arbiter.highest == (2 << 64) | 5


def test_ina_ctl_shell_without_its_virtualenv_says_how_to_make_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    assert ctl_main(["shell"]) == 1
    assert capsys.readouterr().err == (
        f"ina ctl: p4runtime-shell runs in its own virtualenv, {tmp_path}/venv-shell, "
        "which is missing (make setup creates it)\n"
    )
