"""p4src/elements.p4 takes exactly ina.p4src.protocol.ELEMS_CHOICES: each width declares its values
per packet and its accumulators in order, once each, and any other width is refused by name."""

import re

import pytest

from ina.compiler.errors import CompileError
from ina.compiler.preprocess import preprocess
from ina.p4src import AGGREGATE_P4
from ina.p4src.protocol import ELEMS_CHOICES


@pytest.mark.parametrize("elems", ELEMS_CHOICES)
def test_each_width_declares_its_values_and_accumulators_in_order(elems: int) -> None:
    text = preprocess(AGGREGATE_P4, defines={"ELEMS": str(elems)}).text
    indices = [str(i) for i in range(elems)]
    assert re.findall(r"bit<32> d(\d+);", text) == indices
    assert re.findall(r"slot_acc_(\d+);", text) == indices


@pytest.mark.parametrize("elems", [0, 4, 12, 63, 96, 192, 255, 512])
def test_any_other_width_is_refused_naming_the_choices(elems: int) -> None:
    choices = ", ".join(map(str, ELEMS_CHOICES))
    with pytest.raises(CompileError, match=f"ELEMS must be one of {choices}"):
        preprocess(AGGREGATE_P4, defines={"ELEMS": str(elems)})


@pytest.mark.parametrize("bits", [0, 1, 4, 24, 64])
def test_any_other_lane_width_is_refused_naming_the_choices(bits: int) -> None:
    with pytest.raises(CompileError, match="LANE_BITS must be one of 32, 16, 8"):
        preprocess(AGGREGATE_P4, defines={"LANE_BITS": str(bits)})
