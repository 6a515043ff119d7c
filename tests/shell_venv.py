"""p4runtime-shell lives in a virtualenv of its own (ina.controller.shell; `make setup` makes it):
tests drive it with a script run by that virtualenv's Python and read what the script prints."""

import subprocess

from ina.controller.shell import shell_python


def run_in_shell_venv(script: str, *args: str) -> str:
    """`script` (Python source) run with `args` as sys.argv[1:] in p4runtime-shell's virtualenv;
    its standard output. The virtualenv is part of `make setup`, so a missing one fails."""
    python = shell_python()
    assert python.exists(), f"no {python}: `make setup` creates p4runtime-shell's virtualenv"
    done = subprocess.run(
        [str(python), "-c", script, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
