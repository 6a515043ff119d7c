"""The primitive registry (switch/model/primitives.py): the one table both engines' generators dispatch
through, and the compiler emits nothing outside it."""

import dataclasses
from pathlib import Path

import pytest
from engine_compare import engines, program, run_both

from ina.p4src import AGGREGATE_P4
from ina.switch.model import primitives
from ina.switch.model.load import load_program
from ina.switch.model.primitives import PRIMITIVES
from ina.switch.native.codegen import generate
from ina.switch.python.codegen import CodeGenerator

TESTS = Path(__file__).parent.parent
PROGRAMS = sorted((TESTS / "p4").glob("*.p4")) + sorted((TESTS / "switch" / "p4").glob("*.p4"))


def _ops(bmv2: dict) -> set[str]:
    ops = {p["op"] for a in bmv2["actions"] for p in a["primitives"]}
    for parser in bmv2["parsers"]:
        for state in parser["parse_states"]:
            ops |= {
                op["parameters"][0]["op"] for op in state["parser_ops"] if op["op"] == "primitive"
            }
    return ops


def test_every_primitive_has_a_python_and_a_c_emitter() -> None:
    for name, entry in PRIMITIVES.items():
        assert callable(entry.python) and callable(entry.c), name
        assert entry.python.__name__.startswith("py_") and entry.c.__name__.startswith("c_"), name


def test_the_compiler_emits_only_registered_primitives() -> None:
    used = _ops(program(AGGREGATE_P4, ELEMS="8", POOL_SIZE="16"))
    for path in PROGRAMS:
        used |= _ops(program(path))
    assert used <= set(PRIMITIVES), sorted(used - set(PRIMITIVES))
    assert {"assign", "_jump", "_jump_if_zero", "count", "register_read", "register_write"} <= used


@pytest.mark.parametrize("engine", ["python", "c"])
def test_each_generator_emits_what_the_registry_entry_returns(monkeypatch, engine) -> None:
    layout, model = load_program(program(AGGREGATE_P4, ELEMS="8", POOL_SIZE="16"))
    entry = PRIMITIVES["count"]

    def marked(g, op, params) -> list[str]:
        real = getattr(entry, engine)(g, op, params)
        return [f"{'#' if engine == 'python' else '//'} counted here", *real]

    monkeypatch.setitem(
        primitives.PRIMITIVES, "count", dataclasses.replace(entry, **{engine: marked})
    )
    if engine == "python":
        gen = CodeGenerator(model, layout, 511)
        for action in model.actions.values():
            gen.action(action)
        source = gen.source()
    else:
        source = generate(model, layout).source
    assert "counted here" in source


def test_a_register_write_wider_than_its_cells_is_cut_to_them_on_both_engines() -> None:
    """BMv2 JSON from another compiler may write a wider value: each emitter cuts it (the
    compiler's own casts would hide a missing cut)."""
    bmv2 = program(TESTS / "p4" / "register_accumulate.p4")
    write = next(
        p
        for a in bmv2["actions"]
        for p in a["primitives"]
        if p["op"] == "register_write" and p["parameters"][0]["value"].endswith("counts")
    )
    write["parameters"][2] = {
        "type": "field",
        "value": ["values", "v0"],
    }  # 32 bits into bit<8> cells
    py, native = engines(bmv2)
    frame = bytes.fromhex("00000000000900000000000a88b5000300000fff" + "00000000" * 7)
    run_both(py, native, [(4, frame)])
    name = next(n for n in py.registers if n.endswith("counts"))
    assert py.registers[name].read(3) == native.registers[name].read(3) == 0xFF
