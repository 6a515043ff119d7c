"""The extern kinds (switch/model/externs.py): one record each, which the schema, the model, the
reference checks and both backends read; a backend without a kind's state refuses a program that
has instances of it, naming the kind, never with "malformed BMv2 JSON"."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import pytest

from ina.compiler import compile_file
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.model.errors import PipelineError
from ina.switch.model.externs import EXTERNS, ExternKind, RegisterArray
from ina.switch.model.load import load_program
from ina.switch.model.shapes import COUNT, ID, NAME, Obj
from ina.switch.native import externs as native
from ina.switch.python import pipeline

P4 = Path(__file__).parent / "p4" / "references.p4"  # registers, counters and meters
# A kind neither engine has state for, as a new extern is before its backends' entries exist.
TALLY = ExternKind(
    "tally",
    "tally_arrays",
    "tally_array",
    "tally array",
    "tallies",
    Obj({"name": NAME, "id": ID, "size": COUNT}),
    lambda a: RegisterArray(a["name"], a["id"], a["size"], 32),
)


@functools.cache
def compiled() -> dict:
    return compile_file(P4).bmv2


def with_tallies(monkeypatch) -> dict:
    monkeypatch.setitem(EXTERNS, "tally", TALLY)
    program = copy.deepcopy(compiled())
    program["tally_arrays"] = [{"name": "acc", "id": 0, "size": 4}]
    return program


def test_every_kind_is_read_into_the_model_and_built_by_both_engines():
    _layout, model = load_program(compiled())
    used = [kind for kind in EXTERNS.values() if model.externs[kind.name]]
    assert {"register", "counter", "meter"} <= {kind.name for kind in used}
    # the Python engine has every kind; the native one may lack some (refused by name, below)
    assert set(pipeline.STATE) == set(EXTERNS) >= set(native.STATE)
    for engine in ("python", "native"):
        sw = Switch(engine=engine)
        sw.load(compiled())
        for kind in used:
            names = sorted(x.name for x in model.externs[kind.name])
            assert sorted(getattr(sw, kind.attribute)) == names, (engine, kind.name)
            assert sw.externs[kind.name] is getattr(sw.pipeline, kind.attribute)


def test_a_kind_the_native_engine_lacks_is_named_and_python_runs_it(monkeypatch):
    program = with_tallies(monkeypatch)
    monkeypatch.setitem(pipeline.STATE, "tally", lambda a: ([0] * a.size,) * 2)
    with pytest.raises(PipelineError) as refused:
        Switch(engine="native").load(program)
    assert str(refused.value) == (
        "the native engine cannot run this program: the native engine has no tally"
    )
    sw = Switch(engine="auto")
    sw.load(program)
    assert (sw.engine_name, sw.engine_note) == (
        "python",
        "the native engine cannot run this program: the native engine has no tally",
    )
    assert sw.externs["tally"] == {"acc": [0, 0, 0, 0]}  # read without a property of its own


def test_a_kind_the_python_engine_lacks_is_named(monkeypatch):
    program = with_tallies(monkeypatch)
    with pytest.raises(PipelineError) as refused:
        Switch(engine="python").load(program)
    assert str(refused.value) == "the Python engine has no tally"


def test_the_state_budget_counts_every_kind(monkeypatch):
    program = with_tallies(monkeypatch)
    program["tally_arrays"][0]["size"] = 1 << 24
    with pytest.raises(PipelineError, match="cells; the budget is 16777216"):
        load_program(program)


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_range_read_is_the_cells_read_one_by_one_and_refuses_past_the_array(engine):
    sw = Switch(engine=engine)
    sw.load(compiled())
    cells, hits = sw.registers["I.cells"], sw.counters["I.hits"]
    for i in range(4):
        cells.write(i, 0x11 * (i + 1))
        hits.write(i, 10 + i, 100 * (i + 1))
    assert cells.read_range(0, 4) == [0x11, 0x22, 0x33, 0x44]
    assert cells.read_range(1, 2) == [0x22, 0x33]
    assert hits.read_range(0, 4) == [(10, 100), (11, 200), (12, 300), (13, 400)]
    assert hits.read_range(3, 1) == [(13, 400)] == [hits.read(3)]
    assert cells.read_range(4, 0) == [] == hits.read_range(4, 0)
    for read, start, count, refused in (
        (cells.read_range, 3, 2, "register 'I.cells' has 4 cells; index 4 is out of range"),
        (hits.read_range, 1, 4, "counter 'I.hits' has 4 cells; index 4 is out of range"),
        (hits.read_range, -1, 2, "counter 'I.hits' has 4 cells; index -1 is out of range"),
    ):
        with pytest.raises(IndexError) as err:
            read(start, count)
        assert str(err.value) == refused


@pytest.mark.parametrize("engine", ["python", "native"])
def test_registers_of_one_size_keep_their_own_cells(engine):
    """The native engine keeps registers of one size in one allocation, interleaved (native/
    externs.py `register_places`); each register's cells stay its own, written, read and reset."""
    bmv2 = compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "4"}).bmv2
    names = [f"InaIngress.slot_acc_{k}" for k in range(3)]
    _layout, model = load_program(bmv2)
    index = {r.name: i for i, r in enumerate(model.registers)}
    places = native.register_places(model.registers)
    assert len({places[index[n]].bank for n in names}) == 1 < places[index[names[0]]].stride
    sw = Switch(engine=engine)
    sw.load(bmv2)
    regs = [sw.registers[n] for n in names]
    size = regs[0].size
    for k, reg in enumerate(regs):
        for i in range(size):
            reg.write(i, (k + 1) << 8 | i)
    regs[1].reset()
    regs[2].write(3, 0xFFFFFFFF)
    assert [reg.read_range(0, size) for reg in regs] == [
        [0x100 | i for i in range(size)],
        [0] * size,
        [0x300 | i if i != 3 else 0xFFFFFFFF for i in range(size)],
    ]
