"""The core subset end to end: headers, parser select, tables, actions, registers, checksums."""

from compiler_helpers import action, state, table


def test_headers_and_instances(compile_p4):
    bmv2 = compile_p4("basic_forward").bmv2
    assert bmv2["__meta__"]["version"] == [2, 23]
    types = {t["name"]: t for t in bmv2["header_types"]}
    assert types["ethernet_t"]["fields"] == [
        ["dstAddr", 48, False],
        ["srcAddr", 48, False],
        ["etherType", 16, False],
    ]
    assert [h["name"] for h in bmv2["headers"]] == [
        "scalars",
        "standard_metadata",
        "ethernet",
        "ipv4",
    ]
    assert types["scalars_0"]["fields"] == [["meta.packets_seen", 32, False]]
    sm_fields = [f[0] for f in types["standard_metadata"]["fields"]]
    assert sm_fields[:3] == ["ingress_port", "egress_spec", "egress_port"]
    assert sum(f[1] for f in types["standard_metadata"]["fields"]) % 8 == 0


def test_parser_select_and_default(compile_p4):
    start = state(compile_p4("basic_forward").bmv2, "start")
    assert start["parser_ops"] == [
        {"op": "extract", "parameters": [{"type": "regular", "value": "ethernet"}]}
    ]
    assert start["transition_key"] == [{"type": "field", "value": ["ethernet", "etherType"]}]
    assert start["transitions"] == [
        {"type": "hexstr", "value": "0x0800", "mask": None, "next_state": "parse_ipv4"},
        {"type": "default", "value": None, "mask": None, "next_state": None},
    ]


def test_masked_select_and_reject(compile_p4):
    start = state(compile_p4("register_accumulate").bmv2, "start")
    assert start["transitions"][1] == {
        "type": "hexstr",
        "value": "0x8800",
        "mask": "0xff00",
        "next_state": None,
    }
    assert start["transitions"][2] == {
        "type": "default",
        "value": None,
        "mask": None,
        "next_state": None,
    }


def test_lpm_table_and_default_action(compile_p4):
    bmv2 = compile_p4("basic_forward").bmv2
    lpm = table(bmv2, "MyIngress.ipv4_lpm")
    assert lpm["key"] == [
        {
            "match_type": "lpm",
            "name": "hdr.ipv4.dstAddr",
            "target": ["ipv4", "dstAddr"],
            "mask": None,
        }
    ]
    assert lpm["match_type"] == "lpm"
    assert lpm["actions"] == ["MyIngress.ipv4_forward", "MyIngress.drop", "NoAction"]
    drop = action(bmv2, "MyIngress.drop")
    assert lpm["default_entry"] == {
        "action_id": drop["id"],
        "action_const": False,
        "action_data": [],
        "action_entry_const": False,
    }
    assert drop["primitives"][0]["op"] == "mark_to_drop"


def test_action_with_runtime_data_and_width_mask(compile_p4):
    forward = action(compile_p4("basic_forward").bmv2, "MyIngress.ipv4_forward")
    assert forward["runtime_data"] == [
        {"name": "dstAddr", "bitwidth": 48},
        {"name": "port", "bitwidth": 9},
    ]
    ops = [(p["op"], p["parameters"]) for p in forward["primitives"]]
    assert ops[0] == (
        "assign",
        [
            {"type": "field", "value": ["standard_metadata", "egress_spec"]},
            {"type": "runtime_data", "value": 1},
        ],
    )
    ttl = ops[3][1][1]["value"]["value"]
    assert ttl == {
        "op": "&",
        "left": {
            "type": "expression",
            "value": {
                "op": "-",
                "left": {"type": "field", "value": ["ipv4", "ttl"]},
                "right": {"type": "hexstr", "value": "0x01"},
            },
        },
        "right": {"type": "hexstr", "value": "0xff"},
    }


def test_apply_block_becomes_hidden_table_and_conditional(compile_p4):
    ingress = compile_p4("basic_forward").bmv2["pipelines"][0]
    assert ingress["init_table"] == "tbl_act"
    hidden = ingress["tables"][0]
    assert hidden["key"] == [] and hidden["default_entry"]["action_const"] is True
    cond = ingress["conditionals"][0]
    assert hidden["base_default_next"] == cond["name"]
    assert cond["expression"] == {
        "type": "expression",
        "value": {
            "op": "d2b",
            "left": None,
            "right": {"type": "field", "value": ["ipv4", "$valid$"]},
        },
    }
    assert cond["true_next"] == "MyIngress.ipv4_lpm" and cond["false_next"] is None


def test_checksums(compile_p4):
    bmv2 = compile_p4("basic_forward").bmv2
    verify, update = bmv2["checksums"]
    assert (verify["verify"], verify["update"], update["verify"], update["update"]) == (
        True,
        False,
        False,
        True,
    )
    assert verify["target"] == ["ipv4", "hdrChecksum"]
    calc = next(c for c in bmv2["calculations"] if c["name"] == update["calculation"])
    assert calc["algo"] == "csum16" and len(calc["input"]) == 11
    assert bmv2["deparsers"][0]["order"] == ["ethernet", "ipv4"]


def test_registers_counters_random(compile_p4):
    bmv2 = compile_p4("register_accumulate").bmv2
    registers = {r["name"]: r for r in bmv2["register_arrays"]}
    assert (
        registers["MainIngress.acc_0"]["size"] == 16
        and registers["MainIngress.acc_0"]["bitwidth"] == 32
    )
    assert registers["MainIngress.counts"]["bitwidth"] == 8
    assert bmv2["counter_arrays"][0]["name"] == "MainIngress.seen"
    ops = [p["op"] for a in bmv2["actions"] for p in a["primitives"]]
    assert ops.count("register_read") == 9 and ops.count("register_write") == 9
    assert "modify_field_rng_uniform" in ops and "count" in ops


def test_hit_miss_and_const_entries(compile_p4):
    bmv2 = compile_p4("register_accumulate").bmv2
    forward = table(bmv2, "MainIngress.forward")
    assert forward["next_tables"]["__HIT__"] is None
    assert forward["next_tables"]["__MISS__"].startswith("tbl_drop")
    assert forward["match_type"] == "ternary"
    assert [e["match_key"] for e in forward["entries"]] == [
        [
            {"match_type": "exact", "key": "0xffffffffffff"},
            {"match_type": "ternary", "key": "0x0000", "mask": "0x0000"},
        ],
        [
            {"match_type": "exact", "key": "0x000000000001"},
            {"match_type": "ternary", "key": "0x0002", "mask": "0x01ff"},
        ],
    ]
    assert [e["priority"] for e in forward["entries"]] == [1, 2]
    multicast = action(bmv2, "MainIngress.multicast")
    assert forward["entries"][0]["action_entry"] == {
        "action_id": multicast["id"],
        "action_data": ["0x0001"],
    }


def test_defines_select_code(compile_p4):
    small = compile_p4("register_accumulate", defines={"ELEMS": "4"}).bmv2
    ops = [p["op"] for a in small["actions"] for p in a["primitives"]]
    assert ops.count("register_read") == 1


SHARED_INSTANCE = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> v; }
struct hs { h_t h; }
struct m_t { }
control Tally(inout bit<16> v) {
    counter(8, CounterType.packets) seen;
    apply { seen.count((bit<32>)v[2:0]); }
}
control Twice(inout bit<16> v)(Tally t) {
    apply { t.apply(v); v = v + 1; t.apply(v); }
}
control Ing(inout hs hdr, inout m_t m, inout standard_metadata_t sm) {
    Tally() shared;
    Twice(shared) first;
    Twice(shared) second;
    apply { first.apply(hdr.h.v); second.apply(hdr.h.v); sm.egress_spec = 1; }
}
parser P(packet_in p, out hs hdr, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control E(inout hs hdr, inout m_t m, inout standard_metadata_t sm) { apply { } }
control V(inout hs hdr, inout m_t m) { apply { } }
control C(inout hs hdr, inout m_t m) { apply { } }
control D(packet_out p, in hs hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), V(), Ing(), E(), C(), D()) main;
"""


def test_a_control_instance_shared_by_two_users_has_one_counter(compile_text):
    """Both users of `shared` count into one array, as in p4c (issue1566-like programs)."""
    from ina.switch.engine import Switch

    result = compile_text(SHARED_INSTANCE)
    assert [c["name"] for c in result.bmv2["counter_arrays"]] == ["Ing.shared.seen"]
    assert [c.preamble.name for c in result.p4info.counters] == ["Ing.shared.seen"]
    for engine in ("native", "python"):
        sw = Switch(engine=engine)
        sw.load(result.bmv2)
        sw.process(0, b"\x00\x00")  # the four count() calls see v = 0, 1 (first) and 1, 2 (second)
        assert [sw.counters["Ing.shared.seen"].read(i)[0] for i in range(8)] == [
            1,
            2,
            1,
            0,
            0,
            0,
            0,
            0,
        ]
