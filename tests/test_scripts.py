"""The shell scripts (setup, Vagrant provisioning, CI entry) pass shellcheck; setup.sh installs it.
scripts/p4c_corpus.py, behind README's count of p4c's STF programs, counts each kind right."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_shell_scripts_pass_shellcheck():
    scripts = [*sorted((REPO / "scripts").glob("*.sh")), REPO / ".ci" / "run"]
    done = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


@pytest.mark.netns  # setpriv drops to nobody: only root may
def test_setup_refuses_non_root_with_the_reason():
    done = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "bash",
            str(REPO / "scripts" / "setup.sh"),
        ],
        capture_output=True,
        text=True,
        cwd="/tmp",
    )
    assert done.returncode == 1
    assert "please run as root" in done.stderr and "network namespaces" in done.stderr


def test_p4c_corpus_counts_each_kind_of_program(tmp_path):
    """A small checkout: one program passing on both engines, one on the Python engine only, one
    whose STF expects the wrong port, one that does not compile; a PSA one and one without an STF
    are not v1model STF tests."""
    samples = tmp_path / "testdata" / "p4_16_samples"
    samples.mkdir(parents=True)
    p4 = REPO / "tests" / "p4"
    for name in ("basic_forward", "varbit_lookahead"):
        for ext in (".p4", ".stf"):
            shutil.copy(p4 / f"{name}{ext}", samples / f"{name}-bmv2{ext}")
    shutil.copy(p4 / "basic_forward.p4", samples / "wrong-bmv2.p4")
    (samples / "wrong-bmv2.stf").write_text(
        (p4 / "basic_forward.stf").read_text().replace("expect 3", "expect 2", 1)
    )
    shutil.copy(p4 / "basic_forward.p4", samples / "no_stf-bmv2.p4")
    (samples / "broken-bmv2.p4").write_text("#include <v1model.p4>\nnot P4\n")
    (samples / "psa-bmv2.p4").write_text("#include <psa.p4>\n")
    for name in ("broken", "psa"):
        (samples / f"{name}-bmv2.stf").write_text("")
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "p4c_corpus.py"), str(tmp_path), "--list"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:6] == [
        "4 v1model programs with an STF test",
        "compile with ina: 3",
        "run natively: 2",
        "pass on the Python engine: 2",
        "pass on the native engine: 1",
        "differ between the engines: 0",
    ]
    assert [line.split(":")[0] for line in lines[6:]] == [
        "  not compiled",
        "  Python engine only",
        "  FAIL",
    ]
    assert (
        "broken-bmv2.p4" in lines[6]
        and "varbit_lookahead-bmv2.p4" in lines[7]
        and "wrong-bmv2.p4" in lines[8]
    )
