"""`ina bench hostile`'s parts: the chained pipeline, the budget's edge, one measured push."""

import pytest

from ina.bench.hostile import Bench, chained, largest_accepted
from ina.switch.model import budget
from ina.switch.model.errors import PipelineError
from ina.switch.model.load import load_program


@pytest.fixture(scope="module")
def bench():
    b = Bench("python")
    yield b
    b.close()


def test_the_chain_leads_through_every_conditional_to_the_old_first_node(bench) -> None:
    doc = chained(bench.small.bmv2, 3)
    pipe = doc["pipelines"][0]
    chain = {c["name"]: c for c in pipe["conditionals"] if c["name"].startswith("chain_")}
    assert pipe["init_table"] == "chain_0"
    assert [(c["true_next"], c["false_next"]) for c in chain.values()] == [
        ("chain_1", "chain_1"),
        ("chain_2", "chain_2"),
        ("InaIngress.switch_config",) * 2,
    ]


def test_largest_accepted_is_the_budgets_edge(bench) -> None:
    n = largest_accepted(bench.small.bmv2)
    budget.check(*load_program(chained(bench.small.bmv2, n)))
    with pytest.raises(PipelineError, match="too large for the switch"):
        budget.check(*load_program(chained(bench.small.bmv2, n + 1)))


def test_a_case_pushes_the_chain_and_replaces_it(bench) -> None:
    assert bench.push(bench.request(bench.small.bmv2))[0] == "OK"
    row = bench.case("eight", 8)
    assert (
        row["case"],
        row["conditionals"],
        row["engine"],
        row["answer"],
        row["replaced_by_small"],
    ) == ("eight", 8, "python", "OK", "OK")
    assert bench.sw.pipeline.model.json == bench.small.bmv2
