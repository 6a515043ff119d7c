"""`ina run --target bmv2` on the real simple_switch_grpc and p4c-bm2-ss, when they are installed
(tests/toolchain.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from toolchain import P4C, SIMPLE_SWITCH_GRPC_BIN, missing

REPO = Path(__file__).resolve().parents[2]


def run_on_bmv2(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """`ina run --target bmv2` with the real binaries first on PATH (skips without them), its logs in
    tmp_path; it must succeed."""
    switch = SIMPLE_SWITCH_GRPC_BIN
    reason = missing(switch, P4C)
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "PATH": f"{switch.parent}:{P4C.parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ina",
            "run",
            "--target",
            "bmv2",
            "--elems",
            "16",
            "--pool-size",
            "256",
            "--slots",
            "32",
            "--keep-logs",
            str(tmp_path),
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_run_on_real_bmv2_is_verified_and_names_its_binaries(tmp_path):
    done = run_on_bmv2(tmp_path, "--workers", "2", "--size", "2048")
    switch = SIMPLE_SWITCH_GRPC_BIN
    printed = {
        name: subprocess.run([str(path), "--version"], capture_output=True, text=True)
        for name, path in (("simple_switch_grpc", switch), ("p4c-bm2-ss", P4C))
    }
    versions = {
        name: done.stdout + done.stderr for name, done in printed.items()
    }  # p4c prints on stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert {name: t["path"] for name, t in result["toolchain"].items()} == {
        "simple_switch_grpc": str(switch),
        "p4c-bm2-ss": str(P4C),
    }
    for name, t in result["toolchain"].items():
        assert t["version"] and t["version"] in versions[name], (name, t, versions[name])
        assert f"{name} {t['version']} ({t['path']})" in done.stdout
    assert "BMv2 cannot show slot state" in done.stdout
    assert [(w["verified"], w["elements"]) for w in result["workers"]] == [
        (True, 2048),
        (True, 2048),
    ]


def test_loss_recovery_on_real_bmv2_is_exact(tmp_path):
    # The switch's drop simulator on real simple_switch_grpc, 5% both ways on every host port: the
    # multicast STATUS and the RESULTs answered from completed sets go through BMv2's replication
    # and egress rewrite, and every sum is still exact.
    run_on_bmv2(
        tmp_path, "--workers", "3", "--size", "4096", "--loss", "0.05", "--loss-mode", "switch"
    )
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["loss_mode"] == "switch"
    assert [(w["verified"], w["elements"]) for w in result["workers"]] == [(True, 4096)] * 3
    ports = result["switch_stats"]["s1"]["ports"].values()
    lost = sum(p.get("drop_sim_in", 0) + p.get("drop_sim_out", 0) for p in ports)
    assert (
        lost > 0 and sum(w["retransmissions"] for w in result["workers"]) >= lost // 2
    )  # ~77 lost expected
