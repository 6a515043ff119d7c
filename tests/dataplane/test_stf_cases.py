"""The STF cases beside this file, run through `ina stf` on p4src/aggregate.p4 (ELEMS=8, POOL_SIZE=16)."""

from pathlib import Path

import pytest

from ina.p4src import AGGREGATE_P4
from ina.switch.stf import main

CASES = sorted(Path(__file__).parent.glob("*.stf"))


@pytest.mark.parametrize("stf", CASES, ids=[c.stem for c in CASES])
def test_stf_case(stf, capsys):
    assert main([str(AGGREGATE_P4), str(stf), "-D", "ELEMS=8", "-D", "POOL_SIZE=16"]) == 0, capsys.readouterr().out
