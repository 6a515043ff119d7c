"""`ina sim --bits`: narrow lanes in the simulator, verified, with the bad combination refused."""

import json

import pytest

from ina.sim.cli import main


def test_sixteen_bit_lanes_carry_twice_the_values_per_packet_and_verify(tmp_path) -> None:
    out = tmp_path / "run.json"
    args = ["--workers", "4", "--size", "1024", "--dtype", "float32", "--elems", "8"]
    assert main([*args, "--bits", "16", "--quiet", "--json", str(out)]) == 0
    run = json.loads(out.read_text())
    assert run["config"]["bits"] == 16 and run["results"]["verified"]
    # 1024 values in 16 per packet: 64 chunks, one exponent-only use per slot of the window, and
    # 2 chunks of this seed's data saturate at 4 workers' headroom 2 and are redone; each packet
    # arrives twice (at the switch, then its answer at the worker)
    assert run["results"]["arrivals"] == 2 * 4 * (64 + 64 + 2)


def test_narrow_lanes_need_floats(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--bits", "8"])
    assert exit_.value.code == 2
    assert (
        "argument --bits: 8-bit lanes sum floats only: add --dtype float32"
        in capsys.readouterr().err
    )


def test_training_in_eight_bit_lanes_with_error_feedback(tmp_path) -> None:
    """`ina sim --train --bits 8 --error-feedback`: every worker ends with the same weights, and the
    run's JSON says how it trained."""
    out = tmp_path / "train.json"
    args = ["--workers", "4", "--train", "mlp:digits", "--epochs", "1", "--elems", "64"]
    assert main([*args, "--bits", "8", "--error-feedback", "--json", str(out)]) == 0
    run = json.loads(out.read_text())
    assert run["config"]["bits"] == 8 and run["config"]["error_feedback"] is True
