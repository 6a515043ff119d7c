"""Every STF case beside this file, run through `ina stf` on p4src/aggregate.p4 on both engines,
one pytest case each.

Cases directly in tests/dataplane/ use ELEMS=8; cases in tests/dataplane/elemsN/ use ELEMS=N;
cases in tests/dataplane/lanesN/ use ELEMS=8 and LANE_BITS=N.
All use POOL_SIZE=16, so set 1 of slot a is register index 16 + a.
"""

from pathlib import Path

import pytest
from stf_render import lane_stf_files, stf_files

from ina.p4src import AGGREGATE_P4
from ina.switch.stf import main

CASES = stf_files()
LANE_CASES = lane_stf_files()


@pytest.mark.parametrize("engine", ["python", "native"])
@pytest.mark.parametrize(("stf", "elems"), CASES, ids=[f"E{e}-{s.stem}" for s, e in CASES])
def test_stf_case(stf: Path, elems: int, engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    defines = ["-D", f"ELEMS={elems}", "-D", "POOL_SIZE=16", "--engine", engine]
    status = main([str(AGGREGATE_P4), str(stf), *defines])
    assert status == 0, capsys.readouterr().out


@pytest.mark.parametrize("engine", ["python", "native"])
@pytest.mark.parametrize(("stf", "bits"), LANE_CASES, ids=[f"L{b}-{s.stem}" for s, b in LANE_CASES])
def test_lane_stf_case(
    stf: Path, bits: int, engine: str, capsys: pytest.CaptureFixture[str]
) -> None:
    defines = ["-D", "ELEMS=8", "-D", "POOL_SIZE=16", "-D", f"LANE_BITS={bits}"]
    status = main([str(AGGREGATE_P4), str(stf), *defines, "--engine", engine])
    assert status == 0, capsys.readouterr().out
