"""`ina train` for real: three Mininet hosts (the default batch of 64 split 22, 21, 21) train the MLP
on digits with every gradient summed by the switch, reach the single-process reference's accuracy
within 1 point, and write their outputs."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_mlp_on_digits_through_the_switch_matches_the_reference(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ina",
            "train",
            "--model",
            "mlp",
            "--dataset",
            "digits",
            "--workers",
            "3",
            "--epochs",
            "5",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((tmp_path / "train.json").read_text())
    assert summary["workers"] == 3 and summary["aggregation"] == "switch"
    assert summary["weights_identical"]
    assert len(summary["ranks"]) == 3
    assert (
        summary["contributions_entered"] == [1.0] * 3
    )  # sync: every rank's gradients in every sum
    assert "gradients in sums  rank 0 100.0%, rank 1 100.0%, rank 2 100.0%" in done.stdout
    assert [e["epoch"] for e in summary["epochs"]] == [1, 2, 3, 4, 5]
    assert abs(summary["test_accuracy"] - summary["reference_test_accuracy"]) <= 0.01
    assert summary["iterations"] == 5 * (1437 // 64)
    assert summary["iteration_ms"]["comm"] > 0
    assert (tmp_path / "train.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "network torn down" in done.stdout
