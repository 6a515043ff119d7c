"""Every reference and index of a program checked at load (switch/model/references.py), on each engine:
a program naming what does not exist, or an index outside what it names, is refused with the JSON
place before any code is generated; computed indices are checked per packet, alike in both engines,
as simple_switch does (tests/p4/index_bounds.stf runs the same packets on simple_switch)."""

import copy
from collections.abc import Callable
from pathlib import Path

import pytest
from engine_compare import engines, program, run_both

from ina.switch.engine import Switch
from ina.switch.model.errors import PipelineError, Unsupported
from ina.switch.model.program import build_layout, read_program
from ina.switch.native.codegen import CGenerator
from ina.switch.stf import run_stf

HERE = Path(__file__).parent
REFERENCES = HERE / "p4" / "references.p4"
INDEX_BOUNDS = HERE.parent / "p4" / "index_bounds.p4"
ENGINES = ["python", "native"]


def field(header: str, name: str) -> dict:
    return {"type": "field", "value": [header, name]}


def hexstr(value: int) -> dict:
    return {"type": "hexstr", "value": f"{'-' * (value < 0)}{abs(value):#x}"}


def named(kind: str, name: str) -> dict:
    return {"type": kind, "value": name}


def operation(op: str, left: dict | None, right: dict | int) -> dict:
    return {"type": "expression", "value": {"op": op, "left": left, "right": right}}


def touch(doc: dict) -> list[dict]:
    """The primitives of I.touch (actions[1]): register, counter, meter, stack, copy, varbit, log."""
    return doc["actions"][1]["primitives"]


def added(doc: dict, op: str, *params: dict) -> str:
    """Appends a primitive to I.touch; returns its JSON path."""
    touch(doc).append({"op": op, "parameters": list(params)})
    return f"actions[1].primitives[{len(touch(doc)) - 1}]"


def route(doc: dict) -> dict:
    return doc["pipelines"][0]["tables"][0]


# Each case breaks one reference of references.p4's JSON and returns the exact refusal.
def runtime_data_past_the_parameters(doc: dict) -> str:
    doc["actions"][0]["primitives"][1]["parameters"][1]["value"] = 2
    return "actions[0].primitives[1].parameters[1]: runtime_data 2: action 'I.set' has 2 parameters"


def runtime_data_65536(doc: dict) -> str:
    doc["actions"][0]["primitives"][1]["parameters"][1]["value"] = 65536
    return "actions[0].primitives[1].parameters[1]: runtime_data 65536: action 'I.set' has 2 parameters"


def runtime_data_outside_an_action(doc: dict) -> str:
    doc["pipelines"][0]["conditionals"][0]["expression"]["value"]["right"] = {
        "type": "runtime_data",
        "value": 0,
    }
    return "pipelines[0].conditionals[0].expression.value.right: runtime_data 0 outside an action"


def runtime_data_in_a_parser_primitive(doc: dict) -> str:
    ops = doc["parsers"][0]["parse_states"][3]["parser_ops"]
    ops.append(
        {
            "op": "primitive",
            "parameters": [
                {
                    "op": "assign",
                    "parameters": [field("u.a", "x"), {"type": "runtime_data", "value": 0}],
                }
            ],
        }
    )
    return "parsers[0].parse_states[3].parser_ops[1].parameters[0].parameters[1]: runtime_data 0 outside an action"


def literal_index(primitive: int, param: int, value: int, array: str) -> Callable[[dict], str]:
    def case(doc: dict) -> str:
        touch(doc)[primitive]["parameters"][param] = hexstr(value)
        return f"actions[1].primitives[{primitive}].parameters[{param}]: index {value} is outside {array} (0..3)"

    case.__name__ = f"index_{value}_of_{array.split()[0]}_{primitive}"
    return case


INDICES = [
    literal_index(p, k, value, array)
    for p, k, array in [
        (0, 2, "register array 'I.cells'"),
        (1, 1, "register array 'I.cells'"),
        (2, 1, "counter array 'I.hits'"),
        (3, 1, "meter array 'I.rate'"),
    ]
    for value in (-1, -16, 4, 2**32)
]


def unknown_register(doc: dict) -> str:
    touch(doc)[0]["parameters"][1]["value"] = "I.nope"
    return "actions[1].primitives[0].parameters[1].value: no register array is called 'I.nope'"


def register_of_another_type(doc: dict) -> str:
    touch(doc)[1]["parameters"][0] = field("eth", "dst")
    return "actions[1].primitives[1].parameters[0]: expected a register array, got a field"


def count_on_a_direct_counter(doc: dict) -> str:
    touch(doc)[2]["parameters"][0]["value"] = "I.per_entry"
    return "actions[1].primitives[2].parameters[0].value: 'I.per_entry' is direct: its cells are its table's entries"


def execute_meter_on_a_direct_meter(doc: dict) -> str:
    touch(doc)[3]["parameters"][0]["value"] = "I.per_key"
    return "actions[1].primitives[3].parameters[0].value: 'I.per_key' is direct: its cells are its table's entries"


def unknown_primitive(doc: dict) -> str:
    return f"{added(doc, 'frobnicate')}.op: unknown primitive 'frobnicate'"


def too_few_parameters(doc: dict) -> str:
    touch(doc)[0]["parameters"].pop()
    return "actions[1].primitives[0].parameters: 'register_read' takes 3 parameters, got 2"


def too_many_parameters(doc: dict) -> str:
    path = added(doc, "clone_ingress_pkt_to_egress", hexstr(1), hexstr(0), hexstr(0))
    return f"{path}.parameters: 'clone_ingress_pkt_to_egress' takes 1..2 parameters, got 3"


def negative_push(doc: dict) -> str:
    touch(doc)[4]["parameters"][1] = hexstr(-1)
    return "actions[1].primitives[4].parameters[1]: a negative header stack count (-1)"


def stack_index_past_the_stack(doc: dict) -> str:
    target = touch(doc)[5]["parameters"][0]["value"]["value"]
    target["left"]["value"]["right"] = hexstr(3)
    return (
        "actions[1].primitives[5].parameters[0].value.value.left.value.right: "
        "index 3 is outside a stack of 3 elements"
    )


def field_offset_past_the_header(doc: dict) -> str:
    touch(doc)[5]["parameters"][0]["value"]["value"]["right"] = 2
    return "actions[1].primitives[5].parameters[0].value.value.right: header 'tags[0]' has 2 fields, no field 2"


def union_member_past_the_union(doc: dict) -> str:
    member = {
        "type": "expression",
        "value": {"op": "access_union_header", "left": named("header_union", "u"), "right": 2},
    }
    path = added(doc, "add_header", member)
    return f"{path}.parameters[0].value.right: the union has 2 members, no member 2"


def header_copied_from_another_shape(doc: dict) -> str:
    touch(doc)[6]["parameters"][1] = named("header", "eth")
    return "actions[1].primitives[6].parameters[1]: expected a header of the shape of the one it is copied to"


def header_assigned_from_another_shape(doc: dict) -> str:
    path = added(doc, "assign", named("header", "pair[1]"), named("header", "u.b"))
    return f"{path}.parameters[1]: expected a header of the shape of the one it is copied to"


def union_copied_from_another_shape(doc: dict) -> str:
    path = added(doc, "assign_union", named("header_union", "u"), named("header_union", "u2"))
    return f"{path}.parameters[1]: expected a header union of the shape of the one it is copied to"


def stack_copied_from_another_size(doc: dict) -> str:
    path = added(
        doc, "assign_header_stack", named("header_stack", "pair"), named("header_stack", "tags")
    )
    return f"{path}.parameters[1]: expected a header stack of the shape of the one it is copied to"


def stack_copied_onto_a_header(doc: dict) -> str:
    path = added(doc, "assign_header_stack", named("header", "eth"), named("header_stack", "tags"))
    return f"{path}.parameters[0]: expected a header stack, got a header"


def varbit_copied_into_a_shorter_one(doc: dict) -> str:
    params = touch(doc)[7]["parameters"]
    params.reverse()
    return "actions[1].primitives[7].parameters[1]: a varbit field of up to 64 bits copied into one of up to 32"


def varbit_copied_into_a_fixed_field(doc: dict) -> str:
    touch(doc)[7]["parameters"][0] = field("eth", "type")
    return "actions[1].primitives[7].parameters[0]: expected a varbit field of a header"


def log_msg_with_too_few_values(doc: dict) -> str:
    touch(doc)[9]["parameters"][1]["value"] = []
    return "actions[1].primitives[9].parameters[1]: expected the 1 values of the format before it"


def log_msg_without_a_format(doc: dict) -> str:
    touch(doc)[9]["parameters"][0] = field("eth", "type")
    return "actions[1].primitives[9].parameters[0]: expected a log_msg format, got a field"


def assigned_to_a_constant(doc: dict) -> str:
    touch(doc)[5]["parameters"][0] = hexstr(1)
    return "actions[1].primitives[5].parameters[0]: expected a field, got a hexstr"


def unknown_header(doc: dict) -> str:
    doc["actions"][0]["primitives"][0]["parameters"][0] = field("nope", "x")
    return "actions[0].primitives[0].parameters[0].value[0]: no header is called 'nope'"


def unknown_field(doc: dict) -> str:
    doc["actions"][0]["primitives"][0]["parameters"][0] = field("eth", "nope")
    return "actions[0].primitives[0].parameters[0].value[1]: header 'eth' has no field 'nope'"


def unknown_stack_field(doc: dict) -> str:
    path = added(doc, "assign", {"type": "stack_field", "value": ["tags", "nope"]}, hexstr(1))
    return f"{path}.parameters[0].value[1]: the elements of stack 'tags' have no field 'nope'"


def lookahead_in_an_action(doc: dict) -> str:
    doc["actions"][0]["primitives"][1]["parameters"][1] = {"type": "lookahead", "value": [0, 8]}
    return "actions[0].primitives[1].parameters[1]: a lookahead outside a parser state"


def register_value_in_an_expression(doc: dict) -> str:
    doc["actions"][0]["primitives"][1]["parameters"][1] = {
        "type": "register",
        "value": ["I.cells", hexstr(0)],
    }
    return "actions[0].primitives[1].parameters[1]: register values inside expressions are not supported"


def width_zero(doc: dict) -> str:
    value = operation("two_comp_mod", field("eth", "type"), hexstr(0))
    doc["actions"][0]["primitives"][1]["parameters"][1] = value
    return "actions[0].primitives[1].parameters[1].value.right: width 0 is out of range 1..4096"


def headers_of_other_shapes_compared(doc: dict) -> str:
    cond = doc["pipelines"][0]["conditionals"][0]
    cond["expression"] = operation("==", named("header", "eth"), named("header", "ip"))
    return "pipelines[0].conditionals[0].expression.value: a comparison of headers of other shapes"


def validity_of_a_field(doc: dict) -> str:
    cond = doc["pipelines"][0]["conditionals"][0]
    cond["expression"] = operation("valid", None, field("eth", "dst"))
    return "pipelines[0].conditionals[0].expression.value.right: expected a header, got a field"


def size_of_an_unknown_stack(doc: dict) -> str:
    cond = doc["pipelines"][0]["conditionals"][0]
    cond["expression"] = operation(
        "==", operation("size_stack", None, named("header_stack", "nope")), hexstr(3)
    )
    return "pipelines[0].conditionals[0].expression.value.left.value.right.value: no header stack is called 'nope'"


def register_name_twice(doc: dict) -> str:
    doc["register_arrays"].append({**doc["register_arrays"][0], "id": 7})
    return "register_arrays[1].name: 'I.cells' is used twice"


def counter_name_twice(doc: dict) -> str:
    doc["counter_arrays"].append({**doc["counter_arrays"][0], "id": 7})
    return "counter_arrays[2].name: 'I.hits' is used twice"


def meter_name_twice(doc: dict) -> str:
    doc["meter_arrays"].append({**doc["meter_arrays"][0], "id": 7})
    return "meter_arrays[2].name: 'I.rate' is used twice"


def table_name_twice(doc: dict) -> str:
    doc["pipelines"][1]["tables"].append({**route(doc), "id": 9, "next_tables": {}, "entries": []})
    return "pipelines[1].tables[0].name: 'I.route' is used twice"


def stack_of_two_shapes(doc: dict) -> str:
    doc["header_types"].append(
        {"name": "odd_t", "id": 99, "fields": [["v", 16, False], ["more", 8, False]]}
    )
    next(h for h in doc["headers"] if h["name"] == "tags[2]")["header_type"] = "odd_t"
    return "header_stacks[0].header_ids: the elements of stack 'tags' differ in shape"


def checksum_of_an_unknown_field(doc: dict) -> str:
    doc["checksums"][0]["target"] = ["ip", "nope"]
    return "checksums[0].target[1]: header 'ip' has no field 'nope'"


def checksum_condition_looking_ahead(doc: dict) -> str:
    doc["checksums"][0]["if_cond"] = {"type": "lookahead", "value": [0, 8]}
    return "checksums[0].if_cond: a lookahead outside a parser state"


def counter_bound_to_no_table(doc: dict) -> str:
    doc["counter_arrays"][1]["binding"] = "I.nope"
    return "counter_arrays[1].binding: no table is called 'I.nope'"


def meter_bound_to_no_table(doc: dict) -> str:
    doc["meter_arrays"][1]["binding"] = "I.nope"
    return "meter_arrays[1].binding: no table is called 'I.nope'"


def meter_colour_into_no_field(doc: dict) -> str:
    doc["meter_arrays"][1]["result_target"] = ["scalars", "nope"]
    return "meter_arrays[1].result_target[1]: header 'scalars' has no field 'nope'"


def deparsing_an_unknown_header(doc: dict) -> str:
    doc["deparsers"][0]["order"][0] = "nope"
    return "deparsers[0].order[0]: no header, header stack or union is called 'nope'"


def unknown_first_table(doc: dict) -> str:
    doc["pipelines"][0]["init_table"] = "nope"
    return "pipelines[0].init_table: 'nope' is no table or conditional of pipeline 'ingress'"


def conditional_to_an_unknown_node(doc: dict) -> str:
    doc["pipelines"][0]["conditionals"][0]["false_next"] = "nope"
    return "pipelines[0].conditionals[0].false_next: 'nope' is no table or conditional of pipeline 'ingress'"


def next_table_in_another_pipeline(doc: dict) -> str:
    doc["pipelines"][1]["tables"].append(
        {
            **doc["pipelines"][0]["tables"][2],
            "id": 9,
            "name": "E.t",
            "next_tables": {"act": "I.keyed"},
        }
    )
    return "pipelines[1].tables[0].next_tables.act: 'I.keyed' is no table or conditional of pipeline 'egress'"


def next_table_of_no_action(doc: dict) -> str:
    route(doc)["next_tables"]["I.bogus"] = "I.keyed"
    return "pipelines[0].tables[0].next_tables: 'I.bogus' is no action of table 'I.route'"


def table_without_actions(doc: dict) -> str:
    doc["pipelines"][0]["tables"][2]["action_ids"] = []
    return "pipelines[0].tables[2].action_ids: table 'tbl_act' has no action"


def unknown_action_id(doc: dict) -> str:
    route(doc)["action_ids"] = [0, 99]
    return "pipelines[0].tables[0].action_ids[1]: no action has id 99"


def two_actions_of_one_name(doc: dict) -> str:
    next(a for a in doc["actions"] if a["name"] == "NoAction")["name"] = "I.metered"
    return "pipelines[0].tables[1].action_ids[1]: 'I.metered' is used twice"


def validity_key_of_an_unknown_header(doc: dict) -> str:
    doc["pipelines"][0]["tables"][1]["key"].append({"match_type": "valid", "target": "nope"})
    return "pipelines[0].tables[1].key[1].target: no header is called 'nope'"


def default_action_of_another_table(doc: dict) -> str:
    route(doc)["default_entry"]["action_id"] = 3
    return (
        "pipelines[0].tables[0].default_entry.action_id: action 3 is no action of table 'I.route'"
    )


def default_action_data_too_short(doc: dict) -> str:
    route(doc)["default_entry"]["action_data"] = ["0x1"]
    return (
        "pipelines[0].tables[0].default_entry.action_data: action 'I.set' takes 2 parameters, got 1"
    )


def default_action_data_too_wide(doc: dict) -> str:
    route(doc)["default_entry"]["action_data"] = ["0x200", "0x0"]
    return "pipelines[0].tables[0].default_entry.action_data[0]: 0x200 does not fit the 9-bit parameter 'port'"


def entry_action_data_too_long(doc: dict) -> str:
    route(doc)["entries"][0]["action_entry"]["action_data"].append("0x0")
    return "pipelines[0].tables[0].entries[0].action_entry.action_data: action 'I.set' takes 2 parameters, got 3"


def indirect_meter_as_a_direct_one(doc: dict) -> str:
    route(doc)["direct_meters"] = "I.rate"
    return "pipelines[0].tables[0].direct_meters: no direct meter is called 'I.rate'"


def unknown_first_state(doc: dict) -> str:
    doc["parsers"][0]["init_state"] = "nope"
    return "parsers[0].init_state: no parse state is called 'nope'"


def unknown_next_state(doc: dict) -> str:
    doc["parsers"][0]["parse_states"][0]["transitions"][1]["next_state"] = "nope"
    return "parsers[0].parse_states[0].transitions[1].next_state: no parse state is called 'nope'"


def unknown_value_set(doc: dict) -> str:
    doc["parsers"][0]["parse_states"][0]["transitions"][0]["value"] = "P.nope"
    return "parsers[0].parse_states[0].transitions[0].value: no parser value set is called 'P.nope'"


def unknown_parser_operation(doc: dict) -> str:
    doc["parsers"][0]["parse_states"][0]["parser_ops"][0]["op"] = "nope"
    return "parsers[0].parse_states[0].parser_ops[0].op: unknown parser operation 'nope'"


def parser_set_without_a_value(doc: dict) -> str:
    doc["parsers"][0]["parse_states"][2]["parser_ops"][3]["parameters"].pop()
    return "parsers[0].parse_states[2].parser_ops[3].parameters: 'set' takes 2 parameters, got 1"


def extract_into_an_unknown_header(doc: dict) -> str:
    doc["parsers"][0]["parse_states"][0]["parser_ops"][0]["parameters"][0]["value"] = "nope"
    return (
        "parsers[0].parse_states[0].parser_ops[0].parameters[0].value: no header is called 'nope'"
    )


def extract_into_a_field(doc: dict) -> str:
    doc["parsers"][0]["parse_states"][0]["parser_ops"][0]["parameters"][0] = field("eth", "dst")
    return "parsers[0].parse_states[0].parser_ops[0].parameters[0]: cannot extract into a field"


def jump_backwards(doc: dict) -> str:
    path = added(doc, "_jump", hexstr(3))
    return f"{path}.parameters[0]: a jump from primitive 10 goes to 3, not forward within its action of 11"


def jump_past_the_action(doc: dict) -> str:
    path = added(doc, "_jump_if_zero", hexstr(1), hexstr(12))
    return f"{path}.parameters[1]: a jump from primitive 10 goes to 12, not forward within its action of 11"


def jump_in_a_parser(doc: dict) -> str:
    ops = doc["parsers"][0]["parse_states"][3]["parser_ops"]
    ops.append({"op": "primitive", "parameters": [{"op": "_jump", "parameters": [hexstr(0)]}]})
    return "parsers[0].parse_states[3].parser_ops[1].parameters[0].parameters[0]: a jump outside an action"


CASES = [
    runtime_data_past_the_parameters,
    runtime_data_65536,
    runtime_data_outside_an_action,
    runtime_data_in_a_parser_primitive,
    *INDICES,
    unknown_register,
    register_of_another_type,
    count_on_a_direct_counter,
    execute_meter_on_a_direct_meter,
    unknown_primitive,
    too_few_parameters,
    too_many_parameters,
    negative_push,
    stack_index_past_the_stack,
    field_offset_past_the_header,
    union_member_past_the_union,
    header_copied_from_another_shape,
    header_assigned_from_another_shape,
    union_copied_from_another_shape,
    stack_copied_from_another_size,
    stack_copied_onto_a_header,
    varbit_copied_into_a_shorter_one,
    varbit_copied_into_a_fixed_field,
    log_msg_with_too_few_values,
    log_msg_without_a_format,
    assigned_to_a_constant,
    unknown_header,
    unknown_field,
    unknown_stack_field,
    lookahead_in_an_action,
    register_value_in_an_expression,
    width_zero,
    headers_of_other_shapes_compared,
    validity_of_a_field,
    size_of_an_unknown_stack,
    register_name_twice,
    counter_name_twice,
    meter_name_twice,
    table_name_twice,
    stack_of_two_shapes,
    checksum_of_an_unknown_field,
    checksum_condition_looking_ahead,
    counter_bound_to_no_table,
    meter_bound_to_no_table,
    meter_colour_into_no_field,
    deparsing_an_unknown_header,
    unknown_first_table,
    conditional_to_an_unknown_node,
    next_table_in_another_pipeline,
    next_table_of_no_action,
    table_without_actions,
    unknown_action_id,
    two_actions_of_one_name,
    validity_key_of_an_unknown_header,
    default_action_of_another_table,
    default_action_data_too_short,
    default_action_data_too_wide,
    entry_action_data_too_long,
    indirect_meter_as_a_direct_one,
    unknown_first_state,
    unknown_next_state,
    unknown_value_set,
    unknown_parser_operation,
    parser_set_without_a_value,
    extract_into_an_unknown_header,
    extract_into_a_field,
    jump_backwards,
    jump_past_the_action,
    jump_in_a_parser,
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_a_reference_outside_what_it_names_is_refused_at_its_place(case, engine: str) -> None:
    doc = program(REFERENCES)
    expected = case(doc)
    sw = Switch(engine=engine)
    with pytest.raises(PipelineError) as refusal:
        sw.load(doc)
    assert str(refusal.value) == expected
    assert sw.pipeline is None


@pytest.mark.parametrize("engine", ENGINES)
def test_the_last_parameter_cell_element_and_member_are_accepted(engine: str) -> None:
    """The boundaries the cases above cross, one short of crossing: loaded and run."""
    doc = program(REFERENCES)
    doc["actions"][0]["primitives"][1]["parameters"][1]["value"] = 1  # the last parameter
    for primitive, param in ((0, 2), (1, 1), (2, 1), (3, 1)):
        touch(doc)[primitive]["parameters"][param] = hexstr(3)  # the last cell
    touch(doc)[5]["parameters"][0]["value"]["value"]["left"]["value"]["right"] = hexstr(
        2
    )  # last element
    touch(doc)[5]["parameters"][0]["value"]["value"]["right"] = 1  # last field
    added(
        doc,
        "add_header",
        {
            "type": "expression",
            "value": {"op": "access_union_header", "left": named("header_union", "u"), "right": 1},
        },
    )  # last member
    sw = Switch(engine=engine)
    sw.load(doc)
    assert sw.engine_name == engine
    sw.tables["I.route"].set_default("I.touch", [])
    assert sw.process(0, bytes(14)) == [(0, bytes(14 + 2))]  # no port set; u.b (16 bits) added
    assert [sw.registers["I.cells"].read(i) for i in range(4)] == [0, 0, 0, 0]
    assert sw.counters["I.hits"].read(3) == (1, 14)


# --- computed indices, per packet -----------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_index_bounds_stf_passes_on_each_engine(engine: str) -> None:
    """Past the array nothing is read, written, counted or metered, and the packet goes on, as on
    simple_switch (test_p4c_runner.py runs the same file there)."""
    stf = INDEX_BOUNDS.with_suffix(".stf")
    result = run_stf(program(INDEX_BOUNDS), stf.read_text(), engine)
    assert result.switch.engine_name == engine
    assert result.ok, result.report


def probe(index: int, value: int, read: int = 0xAAAAAAAA, color: int = 0x77) -> bytes:
    return (
        index.to_bytes(4, "big")
        + value.to_bytes(4, "big")
        + read.to_bytes(4, "big")
        + bytes([color])
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_a_negative_computed_index_drops_the_packet(engine: str) -> None:
    """index - 16, unmasked (only a hand-written JSON computes it; p4c masks): below 0 for indices
    under 16. simple_switch stops on a negative index (an uncaught range_error); both engines drop
    the packet and count it, having touched nothing."""
    doc = program(INDEX_BOUNDS)
    minus16 = operation("-", field("probe", "index"), hexstr(16))
    for prim in doc["actions"][0]["primitives"][:4]:
        params = prim["parameters"]
        params[[p.get("value") for p in params].index(["probe", "index"])] = copy.deepcopy(minus16)
    sw = Switch(engine=engine)
    sw.load(doc)
    assert sw.engine_name == engine
    outs = [sw.process(0, probe(i, 0x11)) for i in (15, 0, 19, 20)]
    assert outs == [[], [], [(1, probe(19, 0x11, 0, 0))], [(1, probe(20, 0x11))]]
    assert sw.stats["dropped_error"] == 2 and sw.stats["tx"] == 2
    assert [sw.registers["I.cells"].read(i) for i in range(4)] == [0, 0, 0, 0x11]
    assert [sw.counters["I.hits"].read(i)[0] for i in range(4)] == [0, 0, 0, 1]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_issue_s_program_is_refused_and_the_old_one_keeps_running(engine: str) -> None:
    """Issue 28: an action reading parameter 65536 of two was loaded everywhere, and the native
    engine sent heap bits as an ARP reply's source MAC; a register written at index -1 wrote the
    last cell. Both are refused now, and the program loaded before stays."""
    sw = Switch(engine=engine)
    sw.load(program(INDEX_BOUNDS))
    before = sw.pipeline
    doc = program(INDEX_BOUNDS)
    doc["actions"][0]["primitives"][1]["parameters"][2] = {"type": "runtime_data", "value": 65536}
    with pytest.raises(
        PipelineError, match=r"^actions\[0\]\.primitives\[1\]\.parameters\[2\]: runtime_data 65536"
    ):
        sw.load(doc)
    doc = program(INDEX_BOUNDS)
    doc["actions"][0]["primitives"][1]["parameters"][1] = hexstr(-1)
    with pytest.raises(
        PipelineError, match=r"index -1 is outside register array 'I\.cells' \(0\.\.3\)$"
    ):
        sw.load(doc)
    assert sw.pipeline is before
    assert sw.process(0, probe(3, 5)) == [(1, probe(3, 5, 0, 0))]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_computed_negative_stack_count_drops_the_packet(engine: str) -> None:
    """push by p - 1, unmasked: -1 for a packet carrying 0. simple_switch stops on it; the Python
    engine drops the packet. The native engine takes literal counts only (a literal one cannot be
    negative: refused at load) and leaves the program to the Python engine."""
    doc = program(REFERENCES)
    touch(doc)[4]["parameters"][1] = operation("-", field("eth", "type"), hexstr(1))
    sw = Switch(engine=engine)
    if engine == "native":
        with pytest.raises(PipelineError, match="push by a count that is not a constant"):
            sw.load(doc)
        return
    sw.load(doc)
    sw.tables["I.route"].set_default("I.touch", [])
    assert sw.process(0, bytes(14)) == []
    assert sw.process(0, bytes(12) + b"\x00\x01") == [(0, bytes(12) + b"\x00\x01")]
    assert sw.stats["dropped_error"] == 1


def test_the_c_generator_refuses_action_data_past_the_parameters_on_its_own() -> None:
    """Defence in depth: given a model the load checks never saw, the C generator still emits no
    read of action data past the action's parameters."""
    doc = program(REFERENCES)
    doc["actions"][0]["primitives"][1]["parameters"][1]["value"] = 2
    layout = build_layout(doc)
    with pytest.raises(Unsupported, match="'runtime_data' 2 names no parameter of the action"):
        CGenerator(read_program(doc, layout), layout).generate()


def test_each_action_goes_to_its_own_next_node_on_both_engines() -> None:
    """I.route's next_tables name only I.set's next node (and no `actions` list says which actions
    there are): after I.touch the packet leaves the control, skipping I.keyed, on both engines."""
    doc = program(REFERENCES)
    del route(doc)["next_tables"]["I.touch"], route(doc)["actions"]
    py, native = engines(doc)
    for sw in (py, native):
        sw.tables["I.keyed"].add([0], "I.metered", [])
        sw.tables["I.route"].add([2], "I.touch", [])
    run_both(py, native, [(0, bytes(14)), (0, bytes(5) + b"\x02" + bytes(8))])
    [handle] = [e.handle for e in py.tables["I.keyed"].entries()]
    assert py.direct_counters["I.keyed"].read(handle) == (1, 14)  # only after I.set


def test_the_c_state_arrays_are_sized_by_the_model_not_by_names() -> None:
    """Defence in depth: two register arrays of one name (refused at load) still give the C switch
    room for both, so no init or access runs past its arrays."""
    doc = program(REFERENCES)
    doc["register_arrays"].append({**doc["register_arrays"][0], "id": 7})
    doc["pipelines"][1]["tables"].append({**route(doc), "id": 9, "next_tables": {}, "entries": []})
    layout = build_layout(doc)
    source = CGenerator(read_program(doc, layout), layout).generate().source
    assert "int ina_ntables = 4;" in source
    assert "ina_registers_alloc(sw, 2);" in source and "ina_counters_alloc(sw, 2);" in source
    assert (
        "ina_register_init(sw, 1, 4u, 0, 1u, 2u);" in source  # one bank, room for both
        and "ina_table_init(sw, 3, 1, 1, 1024u);" in source
    )
