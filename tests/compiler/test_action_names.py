"""BMv2 JSON action names as p4c-bm2-ss gives them (issue 22): every copy of an action keeps the
name the user wrote, so simple_switch_CLI, p4c's STF runner and P4Runtime names reach each table's
own copy. The expected tables below are p4c-bm2-ss 1.2.4.8's output for the same programs
(table -> its actions in order, and its default action; None for an action profile's table).
Hidden tables (`tbl_*`) are left out: p4c and ina group apply-block statements differently.
"""

import pytest
from compiler_helpers import P4_DIR

from ina.switch.engine import Switch
from ina.switch.stf import run_stf

PRELUDE = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { bit<8> m; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
"""

# The case: one action whose out parameter each table binds to another field.
SPECIALISED = (
    PRELUDE
    + """
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action setbyte(out bit<8> x, bit<8> v) { x = v; }
    table tbl1 { key = { hdr.h.a : exact; } actions = { setbyte(hdr.h.a); } }
    table tbl2 { key = { hdr.h.a : exact; } actions = { setbyte(hdr.h.b); } }
    table tbl3 { key = { hdr.h.a : exact; } actions = { setbyte(hdr.h.c); } }
    table tbl4 { key = { hdr.h.a : exact; } actions = { setbyte(hdr.h.d); } default_action = setbyte(hdr.h.d, 1); }
    apply { tbl1.apply(); tbl2.apply(); tbl3.apply(); tbl4.apply(); }
}
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
"""
)

# @name on actions (local and global) and on a control instance, a global action specialised,
# an action profile's table.
ANNOTATED = (
    PRELUDE
    + """
@name(".renamed_global") action rg(inout headers hdr, bit<8> v) { hdr.h.a = v; }
control Sub(inout headers hdr) {
    @name("alias") action setbyte_alias() { hdr.h.c = 3; }
    action setbyte(out bit<8> x, bit<8> v) { x = v; }
    table t { key = { hdr.h.a : exact; } actions = { setbyte(hdr.h.b); setbyte_alias; } }
    apply { t.apply(); }
}
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @name("nm") action named(inout bit<8> x) { x = x + 1; }
    @name(".dotted") action dotted(out bit<8> x, bit<9> p) { x = 1; sm.egress_spec = p; }
    table tbl1 { key = { hdr.h.a : exact; } actions = { named(hdr.h.a); dotted(hdr.h.b); rg(hdr); } }
    table tbl2 { key = { hdr.h.a : exact; } actions = { named(hdr.h.b); dotted(hdr.h.c); } }
    table tbl3 { key = { hdr.h.b : exact; } actions = { named(meta.m); } implementation = action_profile(32w16); }
    @name("other") Sub() s1;
    Sub() s2;
    apply { tbl1.apply(); tbl2.apply(); tbl3.apply(); s1.apply(hdr); s2.apply(hdr); }
}
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
"""
)

# Actions called directly from the apply block, before and after a table that lists them.
DIRECT = (
    PRELUDE
    + """
action gl(inout headers hdr) { hdr.h.c = 7; }
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action two(inout bit<8> x) { x = x + 1; }
    table tbl1 { key = { hdr.h.a : exact; } actions = { fwd; two(hdr.h.b); gl(hdr); } }
    apply { fwd(2); two(hdr.h.a); tbl1.apply(); gl(hdr); fwd(3); }
}
V1Switch(P(), VC(), ingress(), E(), CC(), D()) main;
"""
)

P4C_TABLES = {
    "specialised": (
        SPECIALISED,
        {
            "ingress.tbl1": (["ingress.setbyte", "NoAction"], "NoAction"),
            "ingress.tbl2": (["ingress.setbyte", "NoAction"], "NoAction"),
            "ingress.tbl3": (["ingress.setbyte", "NoAction"], "NoAction"),
            "ingress.tbl4": (["ingress.setbyte"], "ingress.setbyte"),
        },
    ),
    "annotated": (
        ANNOTATED,
        {
            "ingress.tbl1": (["ingress.nm", "dotted", "renamed_global", "NoAction"], "NoAction"),
            "ingress.tbl2": (["ingress.nm", "dotted", "NoAction"], "NoAction"),
            "ingress.tbl3": (["ingress.nm", "NoAction"], None),
            "ingress.other.t": (
                ["ingress.other.setbyte", "ingress.other.alias", "NoAction"],
                "NoAction",
            ),
            "ingress.s2.t": (["ingress.s2.setbyte", "ingress.s2.alias", "NoAction"], "NoAction"),
        },
    ),
    "direct": (
        DIRECT,
        {
            "ingress.tbl1": (["ingress.fwd", "ingress.two", "gl", "NoAction"], "NoAction"),
        },
    ),
}

# tests/p4/action_copies.p4: shared, global, nested, same local name in two controls, NoAction.
ACTION_COPIES_TABLES = {
    "MyIngress.tbl1": (["MyIngress.setbyte", "MyIngress.fwd", "NoAction"], "NoAction"),
    "MyIngress.tbl2": (["MyIngress.setbyte", "gset", "MyIngress.fwd"], "MyIngress.fwd"),
    "MyIngress.tbl3": (["MyIngress.setbyte", "gset", "NoAction"], "NoAction"),
    "MyIngress.s1.sub_tbl": (["MyIngress.s1.setbyte", "NoAction"], "NoAction"),
    "MyIngress.s2.sub_tbl": (["MyIngress.s2.setbyte", "NoAction"], "NoAction"),
    "MyEgress.etbl": (["MyEgress.setbyte", "NoAction"], "NoAction"),
}


def user_tables(bmv2: dict) -> dict[str, tuple[list[str], str | None]]:
    """Each non-hidden table's action names (read through its action_ids) and default action."""
    names = {a["id"]: a["name"] for a in bmv2["actions"]}
    tables = {}
    for pipeline in bmv2["pipelines"]:
        for table in pipeline["tables"]:
            listed = [names[i] for i in table["action_ids"]]
            assert listed == table["actions"], table["name"]
            default = table.get("default_entry")
            if not table["name"].startswith("tbl_"):
                tables[table["name"]] = (listed, names[default["action_id"]] if default else None)
    return tables


@pytest.mark.parametrize("case", list(P4C_TABLES))
def test_tables_name_actions_as_p4c(case, compile_text):
    source, expected = P4C_TABLES[case]
    assert user_tables(compile_text(source).bmv2) == expected


def test_action_copies_name_actions_as_p4c(compile_p4):
    assert user_tables(compile_p4("action_copies").bmv2) == ACTION_COPIES_TABLES


def test_specialised_copies_share_the_name_not_the_id(compile_text):
    """Like p4c: four actions named ingress.setbyte, one per table; P4Info lists the action once."""
    result = compile_text(SPECIALISED)
    ids = [a["id"] for a in result.bmv2["actions"]]
    assert len(ids) == len(set(ids))
    copies = {a["id"] for a in result.bmv2["actions"] if a["name"] == "ingress.setbyte"}
    per_table = {
        t["name"]: t["action_ids"][0] for p in result.bmv2["pipelines"] for t in p["tables"]
    }
    assert copies == set(per_table.values()) and len(copies) == 4
    assert [a.preamble.name for a in result.p4info.actions].count("ingress.setbyte") == 1


@pytest.mark.parametrize("engine", ["python", "native"])
def test_p4info_names_reach_every_copy(engine, compile_text):
    """The P4Runtime server installs entries by the P4Info name; each table runs its own copy."""
    sw = Switch(engine=engine)
    sw.load(compile_text(SPECIALISED).bmv2)
    assert sw.engine_name == engine
    sw.tables["ingress.tbl1"].add(
        [0x05], "ingress.setbyte", [0x11]
    )  # tbl1's copy writes h.a, the key
    for value, table in enumerate(("ingress.tbl2", "ingress.tbl3", "ingress.tbl4"), start=0x12):
        sw.tables[table].add([0x11], "ingress.setbyte", [value])
    [(port, data)] = sw.process(0, bytes([0x05, 0, 0, 0]))
    assert (port, data) == (0, bytes([0x11, 0x12, 0x13, 0x14]))


@pytest.mark.parametrize("engine", ["python", "native"])
def test_stf_adds_entries_by_the_written_names(engine, compile_p4):
    result = run_stf(
        compile_p4("action_copies").bmv2, (P4_DIR / "action_copies.stf").read_text(), engine
    )
    assert result.switch.engine_name == engine
    assert result.ok, result.report
