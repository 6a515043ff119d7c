"""bmv2_schema: every rule refuses with the JSON path in the message; every repo program passes."""

import copy
import functools
import re
from pathlib import Path

import pytest

from ina.compiler import compile_file
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.model import bmv2_schema
from ina.switch.model.bmv2_schema import validate
from ina.switch.model.errors import PipelineError
from ina.switch.model.shapes import (
    FIELD_RECORD_BUDGET,
    MAX_BITS,
    MAX_DEPTH,
    MAX_ITEMS,
    STATE_CELL_BUDGET,
)
from ina.switch.model.values import hexint

P4_DIR = Path(__file__).resolve().parents[1] / "p4"
INJECTION = "1); import os #"


@functools.cache
def _aggregate() -> dict:
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"}).bmv2


@pytest.fixture
def bmv2() -> dict:
    return copy.deepcopy(_aggregate())


def refused(program: dict, path: str, message: str) -> None:
    """validate refuses `program` with `path: message...` (message a regex)."""
    with pytest.raises(PipelineError, match=f"^{re.escape(path)}: {message}"):
        validate(program)


def nested(depth: int) -> dict:
    """An expression `depth` operators deep, built without recursion."""
    expr = {"type": "field", "value": ["agg", "job_id"]}
    for _ in range(depth):
        expr = {"type": "expression", "value": {"op": "~", "left": None, "right": expr}}
    return expr


# --- the repository's programs ----------------------------------------------------------------
def test_the_aggregation_program_validates_and_loads_on_both_engines() -> None:
    program = compile_file(AGGREGATE_P4).bmv2
    validate(program)
    for engine in ("python", "native"):
        Switch(engine=engine).load(copy.deepcopy(program))


@pytest.mark.parametrize("name", sorted(p.stem for p in P4_DIR.glob("*.p4")))
def test_every_test_program_validates_and_loads(compiled, name: str) -> None:
    program = compiled(name)
    validate(program)
    sw = Switch(engine="auto")
    sw.load(program)
    Switch(engine="python").load(compiled(name))


# --- types --------------------------------------------------------------------------------------
def test_an_int_must_be_an_int_not_a_string_bool_or_float(bmv2: dict) -> None:
    bmv2["actions"][3]["id"] = INJECTION
    refused(bmv2, "actions[3].id", re.escape(f"expected an integer, got {INJECTION!r}"))
    bmv2["actions"][3]["id"] = True
    refused(bmv2, "actions[3].id", "expected an integer, got True")
    bmv2["actions"][3]["id"] = 3.0
    refused(bmv2, "actions[3].id", "expected an integer, got 3.0")


def test_strings_bools_lists_and_objects_are_what_they_claim(bmv2: dict) -> None:
    good = copy.deepcopy(bmv2)
    bmv2["headers"][2]["metadata"] = 0
    refused(bmv2, "headers[2].metadata", "expected true or false, got 0")
    bmv2 = copy.deepcopy(good)
    bmv2["headers"][2]["name"] = ["ethernet"]
    refused(bmv2, "headers[2].name", "expected a name")
    bmv2 = copy.deepcopy(good)
    bmv2["actions"] = {"0": bmv2["actions"][0]}
    refused(bmv2, "actions", "expected a list")
    bmv2 = copy.deepcopy(good)
    bmv2["pipelines"][0]["tables"][0]["default_entry"] = "NoAction"
    refused(bmv2, "pipelines[0].tables[0].default_entry", "expected an object")
    with pytest.raises(PipelineError, match=r"^the BMv2 JSON: expected an object"):
        validate([])


def test_missing_required_keys_are_named(bmv2: dict) -> None:
    with pytest.raises(PipelineError, match=r"^the BMv2 JSON: missing header_types, parsers"):
        validate({"headers": [], "actions": [], "deparsers": [], "pipelines": []})
    del bmv2["register_arrays"][1]["size"]
    refused(bmv2, "register_arrays[1]", "missing size")


# --- ranges and the state budget ----------------------------------------------------------------
def test_ids_are_not_negative_and_fit_a_c_int(bmv2: dict) -> None:
    bmv2["pipelines"][0]["tables"][1]["id"] = -1
    refused(bmv2, "pipelines[0].tables[1].id", "-1 is out of range 0..2147483647")
    bmv2["pipelines"][0]["tables"][1]["id"] = 2**31
    refused(bmv2, "pipelines[0].tables[1].id", "2147483648 is out of range")


def test_widths_are_positive_and_bounded(bmv2: dict) -> None:
    bmv2["header_types"][2]["fields"][0][1] = 0
    refused(bmv2, "header_types[2].fields[0][1]", "0 is out of range 1..4096")
    bmv2["header_types"][2]["fields"][0][1] = MAX_BITS + 1
    refused(bmv2, "header_types[2].fields[0][1]", "4097 is out of range")
    bmv2["header_types"][2]["fields"][0][1] = "48"
    refused(bmv2, "header_types[2].fields[0][1]", r"expected one of \*, got '48'")
    bmv2["header_types"][2]["fields"][0][1] = 48.0
    refused(bmv2, "header_types[2].fields[0][1]", "expected int or str, got 48.0")


def test_register_sizes_are_bounded_one_by_one_and_together(bmv2: dict) -> None:
    good = copy.deepcopy(bmv2)
    bmv2["register_arrays"][0]["size"] = -5
    refused(bmv2, "register_arrays[0].size", "-5 is out of range")
    bmv2["register_arrays"][0]["size"] = 10**12
    refused(bmv2, "register_arrays[0].size", "1000000000000 is out of range")
    bmv2 = copy.deepcopy(good)
    for reg in bmv2["register_arrays"][:2]:
        reg["size"] = STATE_CELL_BUDGET // 2
    with pytest.raises(
        PipelineError, match=f"^the BMv2 JSON: .* the budget is {STATE_CELL_BUDGET}"
    ):
        validate(bmv2)


def test_table_sizes_count_against_the_budget(bmv2: dict) -> None:
    bmv2["pipelines"][0]["tables"][0]["max_size"] = STATE_CELL_BUDGET
    with pytest.raises(PipelineError, match="the budget is"):
        validate(bmv2)


def many_fields(bmv2: dict, fields: int, instances: int, name: str = "wide") -> dict:
    """`bmv2` with a header type of `fields` one-byte fields and `instances` headers of it: a few MB
    of JSON that would lay out fields * instances records."""
    first = 1000 + len(bmv2["headers"])
    bmv2["header_types"].append(
        {"name": f"{name}_t", "id": first, "fields": [[f"f{i}", 8, False] for i in range(fields)]}
    )
    bmv2["headers"] += [
        {"name": f"{name}{i}", "id": first + i, "header_type": f"{name}_t", "metadata": True}
        for i in range(instances)
    ]
    return bmv2


def at_records(bmv2: dict, records: int) -> dict:
    """`bmv2` grown to exactly `records` field records by headers of 1,024 fields and one of the rest."""
    existing = sum(
        len({t["name"]: t for t in bmv2["header_types"]}[h["header_type"]]["fields"])
        for h in bmv2["headers"]
    )
    many_fields(bmv2, 1024, (records - existing) // 1024)
    return many_fields(bmv2, (records - existing) % 1024, 1, "rest")


def test_field_records_are_bounded_across_instances_before_anything_is_laid_out(bmv2: dict) -> None:
    validate(at_records(copy.deepcopy(bmv2), FIELD_RECORD_BUDGET))
    with pytest.raises(
        PipelineError,
        match=f"^the BMv2 JSON: header instances and the headers calculations read "
        f"make {FIELD_RECORD_BUDGET + 1} field records; the budget "
        f"is {FIELD_RECORD_BUDGET}$",
    ):
        validate(at_records(copy.deepcopy(bmv2), FIELD_RECORD_BUDGET + 1))
    huge = many_fields(copy.deepcopy(bmv2), MAX_ITEMS, 32768)  # the shape, 2.1e9 records
    with pytest.raises(PipelineError, match="field records; the budget"):
        Switch(engine="python").load(huge)


def test_a_calculation_reading_a_header_whole_counts_its_fields(bmv2: dict) -> None:
    at_records(bmv2, FIELD_RECORD_BUDGET - 1024)
    bmv2["calculations"].append(
        {
            "name": "whole",
            "id": 1000,
            "algo": "crc32",
            "input": [{"type": "header", "value": "wide0"}],
        }
    )
    validate(bmv2)  # exactly at the budget
    bmv2["header_types"][-1]["fields"].append(["one_more", 8, False])
    with pytest.raises(
        PipelineError, match=f"make {FIELD_RECORD_BUDGET + 1} field records; the budget"
    ):
        validate(bmv2)


# --- names, text and hex strings ----------------------------------------------------------------
@pytest.mark.parametrize("name", ["ethernet_t'); import os #", "a b", "x\n", "", "é"])
def test_names_have_p4_name_syntax(bmv2: dict, name: str) -> None:
    bmv2["header_types"][2]["name"] = name
    refused(bmv2, "header_types[2].name", ".* is not a name")


def test_names_and_text_have_bounded_length(bmv2: dict) -> None:
    bmv2["pipelines"][0]["tables"][1]["name"] = "t" * 257
    refused(bmv2, "pipelines[0].tables[1].name", "a name longer than 256 characters")
    bmv2 = copy.deepcopy(_aggregate())
    bmv2["pipelines"][0]["tables"][1]["key"][0]["name"] = "k" * 4097
    refused(bmv2, "pipelines[0].tables[1].key[0].name", "printable text longer than 4096")


def test_log_msg_formats_have_only_empty_placeholders(bmv2: dict) -> None:
    log = {
        "op": "log_msg",
        "parameters": [
            {"type": "string", "value": "x={}, {{literal}}"},
            {"type": "parameters_vector", "value": []},
        ],
    }
    prims = bmv2["actions"][0]["primitives"]
    prims.append(log)
    validate(bmv2)
    for text in ("{0.__class__}", "{:999999999}", "{x}"):
        log["parameters"][0]["value"] = text
        refused(
            bmv2,
            f"actions[0].primitives[{len(prims) - 1}].parameters[0].value",
            "'.*' is not a log_msg format",
        )


@pytest.mark.parametrize(
    "text", ["0x1_0", " 0x10", "10", "0x", "0b101", "--0x1", "0x10 ", "0x" + "f" * 1025]
)
def test_hex_strings_are_parsed_strictly(bmv2: dict, text: str) -> None:
    with pytest.raises(PipelineError, match="expected a hex string"):
        hexint(text)
    bmv2["pipelines"][0]["tables"][0]["default_entry"]["action_data"][0] = text
    refused(bmv2, "pipelines[0].tables[0].default_entry.action_data[0]", "")


def test_hex_strings_bmv2_writes_are_read() -> None:
    assert [hexint(t) for t in ("0x0", "0xFF", "-0x80", "0x" + "f" * 1024)] == [
        0,
        255,
        -128,
        (1 << 4096) - 1,
    ]
    with pytest.raises(PipelineError, match="expected a hex string"):
        hexint(5)  # type: ignore[arg-type]


# --- lists, objects, nesting --------------------------------------------------------------------
def test_lists_have_bounded_length(bmv2: dict) -> None:
    bmv2["deparsers"][0]["order"] = ["ethernet"] * (MAX_ITEMS + 1)
    refused(bmv2, "deparsers[0].order", f"expected 0..{MAX_ITEMS} items, got {MAX_ITEMS + 1}")
    bmv2["deparsers"] = []
    refused(bmv2, "deparsers", "expected 1..")


def test_ids_and_names_that_must_be_unique_are(bmv2: dict) -> None:
    bmv2["actions"][1]["id"] = bmv2["actions"][0]["id"]
    refused(bmv2, "actions[1].id", "0 is used twice")
    bmv2 = copy.deepcopy(_aggregate())
    states = bmv2["parsers"][0]["parse_states"]
    states[1]["name"] = states[0]["name"]
    refused(bmv2, "parsers[0].parse_states[1].name", "'start' is used twice")


def test_tagged_objects_name_the_tag(bmv2: dict) -> None:
    cond = bmv2["pipelines"][0]["conditionals"][0]
    cond["expression"]["value"]["op"] = "__import__"
    refused(
        bmv2,
        "pipelines[0].conditionals[0].expression.value.op",
        "expected one of .*got '__import__'",
    )
    cond["expression"] = {"type": "python", "value": "1"}
    refused(bmv2, "pipelines[0].conditionals[0].expression.type", "expected one of")
    bmv2["calculations"][0]["algo"] = "md5"
    bmv2["pipelines"] = _aggregate()["pipelines"]
    refused(bmv2, "calculations[0].algo", "expected one of .*got 'md5'")


def test_nesting_is_bounded_without_recursion(bmv2: dict) -> None:
    cond = bmv2["pipelines"][0]["conditionals"][0]
    cond["expression"] = nested(MAX_DEPTH // 2 - 8)
    validate(bmv2)
    cond["expression"] = nested(MAX_DEPTH)
    with pytest.raises(
        PipelineError,
        match=r"^pipelines\[0\]\.conditionals\[0\]\.expression(\.value\.right)+: "
        f"nested more than {MAX_DEPTH} levels deep",
    ):
        validate(bmv2)
    cond["expression"] = nested(100_000)
    with pytest.raises(PipelineError, match="nested more than"):
        validate(bmv2)


def test_the_whole_document_has_a_bounded_number_of_values(bmv2: dict, monkeypatch) -> None:
    monkeypatch.setattr(bmv2_schema, "MAX_NODES", 1000)
    with pytest.raises(PipelineError, match=r"^the BMv2 JSON: more than 1000 values"):
        validate(bmv2)


def test_control_flow_has_no_loops(bmv2: dict) -> None:
    """A next table pointing back would spin every packet forever."""
    tables = bmv2["pipelines"][0]["tables"]
    first = bmv2["pipelines"][0]["init_table"]
    action = next(iter(tables[1]["next_tables"]))
    tables[1]["next_tables"][action] = first
    refused(bmv2, "pipelines[0]", f"the control flow loops through '{first}'")
    tables[1]["next_tables"][action] = tables[1]["name"]
    refused(bmv2, "pipelines[0]", "the control flow loops through")


def test_keys_the_loaders_never_read_are_left_alone(bmv2: dict) -> None:
    bmv2["actions"][0]["source_info"] = {"anything": [1.5, None, "'); import os #"]}
    bmv2["x_vendor"] = nested(10_000)
    validate(bmv2)


def test_switch_load_refuses_before_generating_anything(bmv2: dict, monkeypatch) -> None:
    """The validator runs first: no code generator sees a refused document."""
    from ina.switch.model import program

    def never(*_args):
        raise AssertionError("generated code for a refused program")

    monkeypatch.setattr(program, "build_layout", never)
    bmv2["register_arrays"][0]["bitwidth"] = "32"
    with pytest.raises(
        PipelineError, match=r"^register_arrays\[0\]\.bitwidth: expected an integer"
    ):
        Switch(engine="python").load(bmv2)
