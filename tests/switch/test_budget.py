"""The code budget (switch/model/budget.py): the repository's programs fit it with room to spare and
their estimates lie above the code they generate; a program over it is refused, before any code
is generated, with the count and the limit; a program at it is accepted."""

import dataclasses
import functools
from pathlib import Path

import pytest

from ina.bench.hostile import chained
from ina.compiler import compile_file
from ina.p4src import AGGREGATE_P4
from ina.switch import engine as engine_module
from ina.switch.engine import Switch
from ina.switch.model import budget
from ina.switch.model.errors import PipelineError, Unsupported
from ina.switch.model.load import load_program
from ina.switch.native.codegen import generate
from ina.switch.native.datapath import NativeBackend
from ina.switch.python.pipeline import build_pipeline

TESTS = Path(__file__).resolve().parents[1]
HEADROOM = 6  # the ELEMS=64 program's estimate fits every limit this many times over


@functools.cache
def aggregate(elems: int = 8, pool: int = 16) -> dict:
    return compile_file(AGGREGATE_P4, defines={"ELEMS": str(elems), "POOL_SIZE": str(pool)}).bmv2


def programs() -> list[tuple[str, dict]]:
    """The largest aggregation program and every test program of the repository."""
    files = sorted([*(TESTS / "p4").glob("*.p4"), *(TESTS / "switch" / "p4").glob("*.p4")])
    return [("aggregate ELEMS=64 POOL_SIZE=65536", aggregate(64, 65536))] + [
        (f.name, compile_file(f).bmv2) for f in files
    ]


def test_every_program_fits_and_its_estimate_is_above_its_code() -> None:
    for name, doc in programs():
        layout, model = load_program(doc)
        size = budget.check(layout, model)
        python = build_pipeline(layout, model).source
        try:
            c = generate(model, layout).source
        except Unsupported:  # the Python engine runs it
            c = ""
        assert len(python) <= size.python_bytes, name
        assert len(c) <= size.c_bytes, name
        assert python.count("\ndef ") + 1 <= size.functions, name


def test_the_elems64_program_fits_every_limit_six_times_over() -> None:
    size = budget.check(*load_program(aggregate(64, 65536)))
    for limit in dataclasses.fields(budget.CodeSize):
        assert HEADROOM * getattr(size, limit.name) <= getattr(budget.LIMITS, limit.name), (
            limit.name
        )


def test_the_issues_pipeline_is_refused_before_any_code_is_generated(monkeypatch) -> None:
    def generated(*args, **kwargs):
        raise AssertionError("code generated for a program over the budget")

    monkeypatch.setattr(engine_module, "PythonBackend", generated)
    monkeypatch.setattr(engine_module, "NativeBackend", generated)
    sw = Switch()
    with pytest.raises(PipelineError) as err:
        sw.build(chained(aggregate(), 16384))
    assert str(err.value) == (
        "the program is too large for the switch: it makes 16,513 pipeline nodes "
        "and parser states, over the limit of 4,096"
    )
    assert sw.pipeline is None


def test_a_program_at_every_limit_is_accepted_and_one_over_any_is_refused(monkeypatch) -> None:
    doc = chained(aggregate(), 40)
    size = budget.estimate(*load_program(doc))
    monkeypatch.setattr(budget, "LIMITS", size)
    assert budget.check(*load_program(doc)) == size
    Switch(engine="python").build(doc)
    for name, what in budget.WHAT.items():
        count = getattr(size, name)
        monkeypatch.setattr(budget, "LIMITS", dataclasses.replace(size, **{name: count - 1}))
        with pytest.raises(PipelineError) as err:
            Switch(engine="python").build(doc)
        assert str(err.value) == (
            f"the program is too large for the switch: it makes {count:,} {what}, "
            f"over the limit of {count - 1:,}"
        )


def test_generated_source_over_the_limit_is_refused_before_compiling(monkeypatch) -> None:
    """The backstop of an estimate that fell short: each backend measures what it generated."""
    layout, model = load_program(aggregate())
    python = len(build_pipeline(layout, model).source)
    c = len(generate(model, layout).source)
    for limits in (
        dataclasses.replace(budget.LIMITS, python_bytes=python),
        dataclasses.replace(budget.LIMITS, c_bytes=c),
    ):
        monkeypatch.setattr(budget, "LIMITS", limits)
        build_pipeline(layout, model)
        NativeBackend(layout, model, 511)
    monkeypatch.setattr(
        budget, "LIMITS", dataclasses.replace(budget.LIMITS, python_bytes=python - 1)
    )
    with pytest.raises(
        PipelineError,
        match=f"it makes {python:,} bytes of Python, over the limit of {python - 1:,}",
    ):
        build_pipeline(layout, model)
    monkeypatch.setattr(budget, "LIMITS", dataclasses.replace(budget.LIMITS, c_bytes=c - 1))
    with pytest.raises(
        PipelineError, match=f"it makes {c:,} bytes of C, over the limit of {c - 1:,}"
    ):
        NativeBackend(layout, model, 511)
