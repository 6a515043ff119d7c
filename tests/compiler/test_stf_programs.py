"""Packets in, packets out: every tests/p4 program with an .stf file runs on ina's switch."""

import pytest
from compiler_helpers import P4_DIR

from ina.compiler import compile_file

stf = pytest.importorskip("ina.switch.stf", reason="the built-in switch (ina.switch) is not installed")

TESTS = sorted(p.stem for p in P4_DIR.glob("*.stf"))


@pytest.mark.parametrize("name", TESTS)
def test_stf(name):
    program = compile_file(P4_DIR / f"{name}.p4").bmv2
    result = stf.StfRunner(program).run((P4_DIR / f"{name}.stf").read_text())
    assert result.ok, result.report
