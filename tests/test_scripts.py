"""The shell scripts (setup, Vagrant provisioning, CI entry) pass shellcheck; setup.sh installs it."""

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_shell_scripts_pass_shellcheck():
    scripts = [*sorted((REPO / "scripts").glob("*.sh")), REPO / ".ci" / "run"]
    done = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


@pytest.mark.netns  # setpriv drops to nobody: only root may
def test_setup_refuses_non_root_with_the_reason():
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash",
                           str(REPO / "scripts" / "setup.sh")], capture_output=True, text=True, cwd="/tmp")
    assert done.returncode == 1
    assert "please run as root" in done.stderr and "network namespaces" in done.stderr
