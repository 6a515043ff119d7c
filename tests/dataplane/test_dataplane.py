"""Every STF case beside this file, run through `ina stf` on p4src/aggregate.p4 on both engines,
one pytest case each.

Cases directly in tests/dataplane/ use ELEMS=8; cases in tests/dataplane/elemsN/ use ELEMS=N.
All use POOL_SIZE=16, so set 1 of slot a is register index 16 + a.
"""

from pathlib import Path

import pytest
from stf_render import stf_files

from ina.p4src import AGGREGATE_P4
from ina.switch.stf import main

CASES = stf_files()


@pytest.mark.parametrize("engine", ["python", "native"])
@pytest.mark.parametrize(("stf", "elems"), CASES, ids=[f"E{e}-{s.stem}" for s, e in CASES])
def test_stf_case(stf: Path, elems: int, engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    defines = ["-D", f"ELEMS={elems}", "-D", "POOL_SIZE=16", "--engine", engine]
    status = main([str(AGGREGATE_P4), str(stf), *defines])
    assert status == 0, capsys.readouterr().out
