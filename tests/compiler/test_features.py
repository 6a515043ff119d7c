"""One program per language feature (tests/p4/*.p4): the JSON and P4Info pieces that carry it."""

from compiler_helpers import action, state, table

from ina.p4rt.proto import p4info_pb2


def ops(act: dict) -> list:
    return [(p["op"], p["parameters"]) for p in act["primitives"]]


def field(header: str, name: str) -> dict:
    return {"type": "field", "value": [header, name]}


def hexv(value: str) -> dict:
    return {"type": "hexstr", "value": value}


def expr(op: str, left, right) -> dict:
    return {"type": "expression", "value": {"op": op, "left": left, "right": right}}


# ---- enums, errors, casts
def test_errors_and_verify(compile_p4):
    bmv2 = compile_p4("enum_and_error_types").bmv2
    assert bmv2["errors"][:3] == [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2]]
    assert ["BadVersion", 7] in bmv2["errors"]
    start = state(bmv2, "start")
    assert start["parser_ops"][1] == {
        "op": "verify",
        "parameters": [expr("==", field("h", "version"), hexv("0x04")), hexv("0x00000007")],
    }
    cond = bmv2["pipelines"][0]["conditionals"][0]
    assert cond["expression"] == expr(
        "==", field("standard_metadata", "parser_error"), hexv("0x00000007")
    )


def test_enums(compile_p4):
    bmv2 = compile_p4("enum_and_error_types").bmv2
    assert {"name": "Color", "entries": [["Red", 0], ["Green", 1], ["Blue", 2]]} in bmv2["enums"]
    h_t = next(t for t in bmv2["header_types"] if t["name"] == "h_t")
    assert h_t["fields"] == [
        ["kind", 8, False],
        ["version", 8, False],
        ["value", 16, False],
        ["delta", 8, True],
    ]
    start = state(bmv2, "start")
    assert [t["value"] for t in start["transitions"]] == ["0x01", "0x02", None]
    scalars = bmv2["header_types"][0]["fields"]
    assert ["meta.color", 32, False] in scalars


def test_signed_arithmetic_uses_two_comp_mod(compile_p4):
    bmv2 = compile_p4("enum_and_error_types").bmv2
    prims = [p for a in bmv2["actions"] for p in ops(a)]
    delta = next(p for p in prims if p[1][0] == field("h", "delta"))
    assert delta[1][1]["value"] == expr(
        "two_comp_mod", expr("-", field("h", "delta"), hexv("0x03")), hexv("0x08")
    )


# ---- header stacks and unions
def test_stack_extract_and_last_field(compile_p4):
    bmv2 = compile_p4("header_stacks").bmv2
    assert bmv2["header_stacks"] == [
        {"name": "labels", "id": 0, "header_type": "label_t", "size": 4, "header_ids": [3, 4, 5, 6]}
    ]
    label = state(bmv2, "parse_label")
    assert label["parser_ops"] == [
        {"op": "extract", "parameters": [{"type": "stack", "value": "labels"}]}
    ]
    assert label["transition_key"] == [{"type": "stack_field", "value": ["labels", "bos"]}]
    assert [t["type"] for t in label["transitions"]] == [
        "hexstr",
        "hexstr",
    ]  # no default: p4c adds none


def test_stack_push_pop_and_union(compile_p4):
    bmv2 = compile_p4("header_stacks").bmv2
    pushes = [p for a in bmv2["actions"] for p in ops(a) if p[0] in ("push", "pop")]
    assert pushes == [
        ("pop", [{"type": "header_stack", "value": "labels"}, hexv("0x00000001")]),
        ("push", [{"type": "header_stack", "value": "labels"}, hexv("0x00000001")]),
    ]
    assert bmv2["header_union_types"] == [
        {"name": "ip_u", "id": 0, "headers": [["v4", "v4_t"], ["v6", "v6_t"]]}
    ]
    assert bmv2["header_unions"][0]["name"] == "ip"
    cond = bmv2["pipelines"][0]["conditionals"][-1]
    assert cond["expression"] == {
        "type": "expression",
        "value": {
            "op": "valid_union",
            "left": None,
            "right": {"type": "header_union", "value": "ip"},
        },
    }
    assert bmv2["deparsers"][0]["order"] == [
        "ethernet",
        "labels[0]",
        "labels[1]",
        "labels[2]",
        "labels[3]",
        "ip.v4",
        "ip.v6",
    ]


# ---- varbit, lookahead, advance, value sets, multi-key select
def test_lookahead_and_advance(compile_p4):
    bmv2 = compile_p4("varbit_lookahead").bmv2
    start = state(bmv2, "start")
    assert start["parser_ops"] == [
        {
            "op": "set",
            "parameters": [field("scalars", "P.lookahead"), {"type": "lookahead", "value": [0, 8]}],
        },
        {
            "op": "set",
            "parameters": [field("scalars", "meta.peek"), field("scalars", "P.lookahead")],
        },
        {
            "op": "set",
            "parameters": [
                field("scalars", "P.lookahead_0"),
                {"type": "lookahead", "value": [0, 8]},
            ],
        },
    ]
    assert start["transition_key"] == [field("scalars", "P.lookahead_0")]
    assert state(bmv2, "skip")["parser_ops"] == [
        {"op": "advance", "parameters": [hexv("0x00000010")]}
    ]


def test_varbit_extract(compile_p4):
    bmv2 = compile_p4("varbit_lookahead").bmv2
    options = next(t for t in bmv2["header_types"] if t["name"] == "options_t")
    assert options["fields"] == [["data", "*"]] and options["max_length"] == 40
    extract = state(bmv2, "parse_options")["parser_ops"][0]
    assert extract["op"] == "extract_VL"
    assert extract["parameters"][1]["value"]["value"]["op"] == "&"


def test_value_set_ranges_and_dont_care(compile_p4):
    result = compile_p4("varbit_lookahead")
    bmv2 = result.bmv2
    assert bmv2["parse_vsets"] == [{"name": "P.special_kinds", "id": 0, "compressed_bitwidth": 8}]
    assert state(bmv2, "parse_fixed")["transitions"][0] == {
        "type": "parse_vset",
        "value": "P.special_kinds",
        "mask": None,
        "next_state": None,
    }
    check = state(bmv2, "check_len")["transitions"]
    assert [(t["value"], t["mask"], t["next_state"]) for t in check] == [
        ("0x0100", None, "parse_tail"),
        ("0x0200", "0xfe00", "parse_options"),
        ("0x0000", "0x0080", "parse_options"),
        (None, None, None),
    ]
    vset = result.p4info.value_sets[0]
    assert (vset.preamble.name, vset.size, vset.match[0].bitwidth) == ("P.special_kinds", 4, 8)


def test_select_range_becomes_prefix_masks():
    from ina.compiler.parsers import range_to_masks

    assert range_to_masks(2, 3, 8) == [(2, 0xFE)]
    assert range_to_masks(1, 6, 8) == [(1, 0xFF), (2, 0xFE), (4, 0xFE), (6, 0xFF)]
    assert range_to_masks(0, 255, 8) == [(0, 0)]


# ---- externs
def test_direct_counter_and_meter(compile_p4):
    result = compile_p4("externs_misc")
    bmv2 = result.bmv2
    mac = table(bmv2, "Ingress.mac")
    assert mac["with_counters"] is True and mac["direct_meters"] == "Ingress.rate"
    assert bmv2["counter_arrays"] == [
        {
            "name": "Ingress.hits",
            "id": 0,
            "source_info": bmv2["counter_arrays"][0]["source_info"],
            "is_direct": True,
            "binding": "Ingress.mac",
        }
    ]
    rate = bmv2["meter_arrays"][0]
    assert (rate["is_direct"], rate["type"], rate["result_target"]) == (
        True,
        "bytes",
        ["scalars", "meta.color"],
    )
    info = result.p4info
    assert info.direct_counters[0].direct_table_id == info.tables[0].preamble.id
    assert info.direct_meters[0].direct_table_id == info.tables[0].preamble.id
    assert list(info.tables[0].direct_resource_ids) == [
        info.direct_counters[0].preamble.id,
        info.direct_meters[0].preamble.id,
    ]


def test_hash_and_meter(compile_p4):
    bmv2 = compile_p4("externs_misc").bmv2
    first = ops(action(bmv2, "act"))
    assert first[0] == (
        "modify_field_with_hash_based_offset",
        [
            field("scalars", "meta.hashed"),
            hexv("0x00000000"),
            {"type": "calculation", "value": "calc_0"},
            hexv("0x00010000"),
        ],
    )
    assert bmv2["calculations"][0]["algo"] == "crc32"
    assert bmv2["calculations"][0]["input"] == [field("ethernet", "src"), field("ethernet", "dst")]
    assert first[1] == (
        "execute_meter",
        [
            {"type": "meter_array", "value": "Ingress.port_meter"},
            field("standard_metadata", "ingress_port"),
            field("scalars", "meta.color"),
        ],
    )


def test_clone_resubmit_recirculate_field_lists(compile_p4):
    bmv2 = compile_p4("externs_misc").bmv2
    prims = [p for a in bmv2["actions"] for p in ops(a)]
    assert ("clone_ingress_pkt_to_egress", [hexv("0x00000005"), hexv("0x00000000")]) in prims
    assert ("clone_ingress_pkt_to_egress", [hexv("0x00000006"), hexv("0x00000001")]) in prims
    assert ("resubmit", [hexv("0x00000002")]) in prims
    assert ("recirculate", [hexv("0x00000001")]) in prims
    assert ("truncate", [hexv("0x00000020")]) in prims
    lists = {f["name"]: f["elements"] for f in bmv2["field_lists"]}
    assert lists["field_list1"] == [field("scalars", "meta.flow"), field("scalars", "meta.color")]
    assert lists["field_list2"] == [field("scalars", "meta.color")]


def test_digest(compile_p4):
    result = compile_p4("externs_misc")
    bmv2 = result.bmv2
    assert bmv2["learn_lists"][0]["name"] == "learn_t"
    assert bmv2["learn_lists"][0]["elements"] == [
        field("ethernet", "src"),
        field("standard_metadata", "ingress_port"),
    ]
    prims = [p for a in bmv2["actions"] for p in ops(a)]
    assert ("generate_digest", [hexv("0x00000001"), hexv("0x00000001")]) in prims
    digest = result.p4info.digests[0]
    assert digest.preamble.name == "learn_t" and digest.preamble.id >> 24 == 0x17
    members = result.p4info.type_info.structs["learn_t"].members
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in members] == [
        ("src", 48),
        ("port", 9),
    ]


def test_log_msg_assert_assume(compile_p4):
    bmv2 = compile_p4("externs_misc").bmv2
    prims = {p[0]: p[1] for a in bmv2["actions"] for p in ops(a)}
    assert prims["log_msg"] == [
        {"type": "string", "value": "ingress port {} color {}"},
        {
            "type": "parameters_vector",
            "value": [field("standard_metadata", "ingress_port"), field("scalars", "meta.color")],
        },
    ]
    assert prims["assert"] == [
        {
            "type": "expression",
            "value": expr("!=", field("standard_metadata", "ingress_port"), hexv("0x01ff")),
        }
    ]
    assert prims["assume"][0]["value"]["value"]["op"] == "<="


def test_defaultonly_scope(compile_p4):
    info = compile_p4("externs_misc").p4info
    refs = info.tables[0].action_refs
    assert [r.scope for r in refs] == [0, 2]
    assert list(refs[1].annotations) == ["@defaultonly"]


# ---- control flow
def test_switch_on_action_run(compile_p4):
    bmv2 = compile_p4("control_flow").bmv2
    choose = table(bmv2, "MainIngress.choose")
    nxt = choose["next_tables"]
    assert nxt["MainIngress.to_port_one"] == nxt["MainIngress.bump"] != nxt["MainIngress.set_port"]
    assert nxt["NoAction"] not in (nxt["MainIngress.bump"], nxt["MainIngress.set_port"])
    assert ops(action(bmv2, table(bmv2, nxt["NoAction"])["actions"][0]))[0][1][1] == hexv("0x0003")


def test_exit_ends_the_pipeline(compile_p4):
    bmv2 = compile_p4("control_flow").bmv2
    exit_table = table(bmv2, "tbl_exit")
    assert exit_table["base_default_next"] is None
    assert ops(action(bmv2, exit_table["actions"][0])) == [("exit", [])]


def test_if_inside_action_uses_jumps(compile_p4):
    bump = ops(action(compile_p4("control_flow").bmv2, "MainIngress.bump"))
    assert [p[0] for p in bump[:4]] == ["_jump_if_zero", "assign", "_jump", "assign"]
    assert bump[0][1][1] == hexv("0x00000003") and bump[2][1][0] == hexv("0x00000004")


def test_slice_assignment(compile_p4):
    bump = ops(action(compile_p4("control_flow").bmv2, "MainIngress.bump"))
    assert bump[5] == (
        "assign",
        [
            field("h", "d"),
            {
                "type": "expression",
                "value": expr(
                    "|", expr("&", field("h", "d"), hexv("0x00ffffff")), hexv("0xab000000")
                ),
            },
        ],
    )


def test_saturating_and_concat(compile_p4):
    bmv2 = compile_p4("control_flow").bmv2
    prims = [p for a in bmv2["actions"] for p in ops(a)]
    sat = next(p for p in prims if p[1] and p[1][0] == field("scalars", "meta.sat"))
    assert sat[1][1]["value"] == expr(
        "usat_cast", expr("+", field("h", "a"), field("h", "b")), hexv("0x08")
    )
    joined = next(p for p in prims if p[1] and p[1][0] == field("scalars", "meta.joined"))
    assert joined[1][1]["value"] == expr(
        "|", expr("<<", field("h", "a"), hexv("0x08")), field("h", "b")
    )


def test_nested_control_inlined_with_return(compile_p4):
    bmv2 = compile_p4("control_flow").bmv2
    stamper = table(bmv2, "MainIngress.stamp_in.stamper")
    stamp = action(bmv2, "MainIngress.stamp_in.stamp")
    assert ops(stamp)[1] == (
        "register_write",
        [
            {"type": "register_array", "value": "MainIngress.stamp_in.last"},
            hexv("0x00000000"),
            hexv("0x2a"),
        ],
    )
    guard = next(
        c for c in bmv2["pipelines"][0]["conditionals"] if c["false_next"] == stamper["name"]
    )
    assert guard["true_next"] is None


def test_function_inlined_with_return_value(compile_p4):
    bmv2 = compile_p4("control_flow").bmv2
    prims = [p for a in bmv2["actions"] for p in ops(a)]
    assert ("assign", [field("h", "b"), field("scalars", "MainIngress.max8_retval")]) in prims


# ---- sub-parsers and lookahead of headers
def test_subparser_is_inlined_with_continuation(compile_p4):
    bmv2 = compile_p4("subparser_lookahead").bmv2
    parse_len = state(bmv2, "parse_len")
    assert parse_len["transitions"] == [
        {"type": "default", "value": None, "mask": None, "next_state": "inner_parser.start"}
    ]
    inner = state(bmv2, "inner_parser.start")
    assert [(t["value"], t["next_state"]) for t in inner["transitions"]] == [
        ("0xdead", None),
        (None, "parse_len_after_inner_parser"),
    ]
    after = state(bmv2, "parse_len_after_inner_parser")
    assert after["parser_ops"][0]["parameters"][0] == field("scalars", "meta.seen")
    assert (
        state(bmv2, "InnerParser.start")["transitions"][-1]["next_state"]
        == "skip_len_after_InnerParser"
    )


def test_lookahead_header_and_extract_skip(compile_p4):
    bmv2 = compile_p4("subparser_lookahead").bmv2
    ops_ = state(bmv2, "parse_len")["parser_ops"]
    assert ops_[0]["parameters"][0]["op"] == "add_header"
    assert ops_[1] == {
        "op": "set",
        "parameters": [field("lookahead_len_t", "words"), {"type": "lookahead", "value": [0, 4]}],
    }
    assert ops_[2]["parameters"][1] == {"type": "lookahead", "value": [4, 4]}
    assert ops_[3]["op"] == "extract_VL"
    assert state(bmv2, "skip_len")["parser_ops"] == [
        {"op": "advance", "parameters": [hexv("0x00000008")]}
    ]


# ---- expressions with table results, functions, compound assignment, value switch
def test_table_hit_inside_expression_uses_flag(compile_p4):
    bmv2 = compile_p4("expressions_misc").bmv2
    t1 = table(bmv2, "Ingress.t1")
    assert t1["next_tables"]["__HIT__"] == "tbl_t1_hit"
    hit = action(bmv2, table(bmv2, "tbl_t1_hit")["actions"][0])
    assert ops(hit) == [("assign", [field("scalars", "Ingress.t1_hit"), hexv("0x01")])]
    clear = action(bmv2, table(bmv2, "tbl_t1_clear")["actions"][0])
    assert ops(clear) == [("assign", [field("scalars", "Ingress.t1_hit"), hexv("0x00")])]


def test_bound_action_argument(compile_p4):
    result = compile_p4("expressions_misc")
    copy_to = action(result.bmv2, "Ingress.copy_to")
    assert copy_to["runtime_data"] == [{"name": "value", "bitwidth": 8}]
    assert ops(copy_to) == [("assign", [field("h", "b"), {"type": "runtime_data", "value": 0}])]
    info = next(a for a in result.p4info.actions if a.preamble.name == "Ingress.copy_to")
    assert [(p.id, p.name) for p in info.params] == [(1, "value")]


def test_function_in_condition_runs_before_the_conditional(compile_p4):
    bmv2 = compile_p4("expressions_misc").bmv2
    ingress = bmv2["pipelines"][0]
    cond = next(c for c in ingress["conditionals"] if "Ingress.bump_retval" in str(c["expression"]))
    before = next(t for t in ingress["tables"] if t["base_default_next"] == cond["name"])
    steps = ops(action(bmv2, before["actions"][0]))
    # copy-in of the inout argument, the body, the return value, copy-out
    assert [p[0] for p in steps] == ["assign", "assign", "assign", "assign"]
    assert steps[0][1][1] == field("scalars", "meta.x")
    assert steps[3][1][0] == field("scalars", "meta.x")


def test_switch_on_value_and_header_equality(compile_p4):
    conditionals = compile_p4("expressions_misc").bmv2["pipelines"][0]["conditionals"]
    tests = [c["expression"]["value"] for c in conditionals]
    assert expr("==", field("h", "b"), hexv("0x01"))["value"] in tests
    assert {
        "op": "==",
        "left": {"type": "header", "value": "h"},
        "right": {"type": "header", "value": "g"},
    } in tests


def test_union_stack_with_constant_indices(compile_p4):
    bmv2 = compile_p4("union_stack").bmv2
    stack = bmv2["header_union_stacks"][0]
    assert (stack["name"], stack["union_type"], stack["size"]) == ("u", "u_t", 2)
    unions = {u["id"]: u["name"] for u in bmv2["header_unions"]}
    assert [unions[i] for i in stack["header_union_ids"]] == ["u[0]", "u[1]"]
    assert state(bmv2, "byte_short")["parser_ops"] == [
        {"op": "extract", "parameters": [{"type": "regular", "value": "u[0].byte"}]},
        {"op": "extract", "parameters": [{"type": "regular", "value": "u[1].short"}]},
    ]
    assert bmv2["deparsers"][0]["order"] == [
        "kind",
        "u[0].byte",
        "u[0].short",
        "u[1].byte",
        "u[1].short",
    ]


# ---- calling conventions (tests/p4/call_semantics.p4)
def _hidden_action_assigning(bmv2: dict, value: str) -> list:
    return next(
        ops(a)
        for a in bmv2["actions"]
        if any(p[0] == "assign" and p[1][1] == hexv(value) for p in ops(a))
    )


def test_inout_argument_copied_in_and_out(compile_p4):
    steps = _hidden_action_assigning(compile_p4("call_semantics").bmv2, "0x18")
    c = field("scalars", "meta.c")
    copies = [p for p in steps if p[0] == "assign" and c in p[1]]
    # c = 12; then per call: copy-in (temp = c), c = 24, copy-out (c = temp)
    assert [p[1].index(c) for p in copies] == [0, 1, 0, 0, 1, 0, 0]


def test_exit_inside_called_action_skips_the_rest(compile_p4):
    steps = _hidden_action_assigning(compile_p4("call_semantics").bmv2, "0xdd")
    names = [p[0] for p in steps]
    assert names[0] == "assign" and steps[0][1][0] == field("scalars", "exit_flag")  # cleared first
    exit_at = names.index("exit")
    assert steps[exit_at + 1] == ("assign", [field("scalars", "exit_flag"), hexv("0x01")])
    dead = next(i for i, p in enumerate(steps) if p[0] == "assign" and p[1][1] == hexv("0xee"))
    assert names[exit_at + 2] == "_jump" and int(steps[exit_at + 2][1][0]["value"], 16) == dead + 1
    guard = names.index("_jump_if_zero")
    assert steps[guard - 1][1][0] == field("h", "a")  # the copy-out runs before the guard
    assert steps[guard + 1] == ("assign", [field("h", "b"), hexv("0xdd")])


def test_optional_and_range_keys(compile_text):
    from test_errors import program

    result = compile_text(
        program(
            "t.apply();",
            """
        action a(bit<8> v) { hdr.h.a = v; }
        table t {
            key = { hdr.h.a: optional; hdr.h.b: range; }
            actions = { a; }
            const entries = {
                (1, 10 .. 20): a(1);
                (_, _): a(2);
            }
        }""",
        )
    )
    t = table(result.bmv2, "I.t")
    assert [k["match_type"] for k in t["key"]] == ["ternary", "range"]  # BMv2 has no optional
    assert t["match_type"] == "range"
    assert [e["match_key"] for e in t["entries"]] == [
        [
            {"match_type": "ternary", "key": "0x01", "mask": "0xff"},
            {"match_type": "range", "start": "0x000a", "end": "0x0014"},
        ],
        [
            {"match_type": "ternary", "key": "0x00", "mask": "0x00"},
            {"match_type": "range", "start": "0x0000", "end": "0xffff"},
        ],
    ]
    fields = result.p4info.tables[0].match_fields
    assert [f.match_type for f in fields] == [
        p4info_pb2.MatchField.OPTIONAL,
        p4info_pb2.MatchField.RANGE,
    ]


def test_action_profile_and_selector(compile_text):
    from test_errors import program

    result = compile_text(
        program(
            "t1.apply(); t2.apply();",
            """
        action a(bit<9> port) { sm.egress_spec = port; }
        action_selector(HashAlgorithm.crc16, 32w64, 32w14) sel;
        table t1 {
            key = { hdr.h.a: exact; }
            actions = { a; NoAction; }
            implementation = action_profile(32w128);
        }
        table t2 {
            key = { hdr.h.a: exact; hdr.h.b: selector; }
            actions = { a; NoAction; }
            implementation = sel;
        }""",
        )
    )
    ingress = result.bmv2["pipelines"][0]
    assert ingress["action_profiles"] == [
        {"name": "I.t1_profile", "id": 0, "max_size": 128},
        {
            "name": "I.sel",
            "id": 1,
            "max_size": 64,
            "selector": {"algo": "crc16", "input": [field("h", "b")]},
        },
    ]
    t1, t2 = table(result.bmv2, "I.t1"), table(result.bmv2, "I.t2")
    assert (t1["type"], t1["action_profile"], "default_entry" in t1) == (
        "indirect",
        "I.t1_profile",
        False,
    )
    assert (t2["type"], [k["name"] for k in t2["key"]]) == ("indirect_ws", ["hdr.h.a"])
    profiles = {p.preamble.name: p for p in result.p4info.action_profiles}
    tables = {t.preamble.name: t for t in result.p4info.tables}
    assert profiles["I.sel"].with_selector and profiles["I.sel"].size == 64
    assert list(profiles["I.sel"].table_ids) == [tables["I.t2"].preamble.id]
    assert tables["I.t2"].implementation_id == profiles["I.sel"].preamble.id
    assert profiles["I.sel"].preamble.id >> 24 == 0x11
    assert [f.name for f in tables["I.t2"].match_fields] == ["hdr.h.a"]


def test_struct_typed_header_field_is_flattened(compile_text):
    from test_errors import program

    source = program("hdr.p.pair.lo = hdr.p.pair.hi;").replace(
        "struct headers { h_t h; }",
        "struct pair_t { bit<4> hi; bit<4> lo; }\nheader p_t { pair_t pair; bit<8> x; }\nstruct headers { h_t h; p_t p; }",
    )
    bmv2 = compile_text(source).bmv2
    p_t = next(t for t in bmv2["header_types"] if t["name"] == "p_t")
    assert p_t["fields"] == [["pair.hi", 4, False], ["pair.lo", 4, False], ["x", 8, False]]
    prims = [p for a in bmv2["actions"] for p in ops(a)]
    assert ("assign", [field("p", "pair.lo"), field("p", "pair.hi")]) in prims
