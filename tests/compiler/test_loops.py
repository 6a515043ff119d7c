"""for loops unrolled at compile time: what the unrolled code does on the switch, and that break and
continue decided at compile time leave no run-time flag behind."""

import pytest

from ina.switch.engine import Switch

PROGRAM = """#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<8> b; bit<8> c; }}
struct headers {{ h_t h; }}
struct metadata {{ }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    action run() {{ {body} }}
    apply {{ run(); }}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr.h); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

# (body, packet in, packet out): a, b, c
CASES = {
    "count up": (
        "for (bit<8> i = 0; i < 5; i = i + 1) { hdr.h.b = hdr.h.b + 1; }",
        "000000",
        "000500",
    ),
    "range ends included": (
        "for (bit<8> i in 2 .. 4) { hdr.h.b = hdr.h.b + i; }",
        "000000",
        "000900",
    ),
    "empty range": ("for (bit<8> i in 4 .. 2) { hdr.h.b = 1; }", "000000", "000000"),
    "compile-time break": (
        "for (bit<8> i = 0; i < 8; i = i + 1) { if (i == 3) { break; } hdr.h.b = hdr.h.b + 1; }",
        "000000",
        "000300",
    ),
    "compile-time continue": (
        "for (bit<8> i in 0 .. 3) { if (i == 1) { continue; } hdr.h.b = hdr.h.b + i; }",
        "000000",
        "000500",
    ),
    "run-time break": (
        "for (bit<8> i in 0 .. 7) { if (i == hdr.h.a) { break; } hdr.h.b = hdr.h.b + 1; }",
        "030000",
        "030300",
    ),
    "run-time break never taken": (
        "for (bit<8> i in 0 .. 7) { if (i == hdr.h.a) { break; } hdr.h.b = hdr.h.b + 1; }",
        "090000",
        "090800",
    ),
    "run-time continue in every iteration": (
        "for (bit<8> i in 0 .. 3) { if (hdr.h.a == i) { continue; } hdr.h.b = hdr.h.b + 1; hdr.h.c = i; }",
        "000000",
        "000303",
    ),
    "continue then break": (
        "for (bit<8> i in 0 .. 7) { if (hdr.h.a == i) { continue; } if (i == 5) { break; } "
        "hdr.h.b = hdr.h.b + 1; }",
        "020000",
        "020400",
    ),
    "update runs after continue": (
        "bit<8> j = 0; for (bit<8> i = 0; i < 4; i = i + 1, j = j + 2) { "
        "if (hdr.h.a == i) { continue; } hdr.h.b = j; } hdr.h.c = j;",
        "030000",
        "030408",
    ),
    "outer variable keeps the value break leaves": (
        "bit<8> k; for (k = 0; k < 6; k = k + 1) { if (k == hdr.h.a) { break; } } hdr.h.c = k;",
        "020000",
        "020002",
    ),
    "outer variable after the last iteration": (
        "bit<8> k; for (k = 0; k < 6; k = k + 1) { if (k == hdr.h.a) { break; } } hdr.h.c = k;",
        "090000",
        "090006",
    ),
    "list read once, before the loop": (
        "for (bit<8> x in { hdr.h.a, hdr.h.b }) { hdr.h.b = hdr.h.b + x; }",
        "010200",
        "010500",
    ),
    "tuple elements": (
        "tuple<bit<8>, bit<8>> t = { hdr.h.a, 7 }; for (bit<8> x in t) { hdr.h.c = hdr.h.c + x; }",
        "010000",
        "010008",
    ),
    "nested, inner bound from the outer variable": (
        "for (bit<8> i in 0 .. 3) { for (bit<8> j = 0; j < i; j = j + 1) { hdr.h.b = hdr.h.b + 1; } }",
        "000000",
        "000600",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_unrolled_loop_on_the_switch(compile_text, case):
    body, packet, expected = CASES[case]
    sw = Switch(engine="python")
    sw.load(compile_text(PROGRAM.format(body=body)).bmv2)
    [(_, data)] = sw.process(0, bytes.fromhex(packet))
    assert data.hex() == expected


def _scalars(compile_text, body: str) -> list[str]:
    return [f[0] for f in compile_text(PROGRAM.format(body=body)).bmv2["header_types"][0]["fields"]]


def test_compile_time_break_needs_no_flag(compile_text):
    assert not any(
        "$break" in name
        for name in _scalars(
            compile_text,
            "for (bit<8> i = 0; i < 8; i = i + 1) { if (i == 3) { break; } hdr.h.b = i; }",
        )
    )


def test_run_time_break_uses_one_flag(compile_text):
    names = _scalars(compile_text, "for (bit<8> i in 0 .. 7) { if (i == hdr.h.a) { break; } }")
    assert [name for name in names if "$" in name] == ["I.$break"]
