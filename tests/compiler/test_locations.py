"""Every refusal is located: no CompileError is built without a location, and each error the loop,
tuple, varbit and extern support added points at its construct (file:line:col, never <unknown>)."""

import ast
from pathlib import Path

import pytest

from ina.compiler import CompileError

COMPILER = Path(__file__).resolve().parents[2] / "compiler"


def _error_sites() -> list[tuple[str, int, ast.Call]]:
    """Every `CompileError(...)` call in the compiler's sources."""
    sites = []
    for path in sorted(COMPILER.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "CompileError"
            ):
                sites.append((path.name, node.lineno, node))
    return sites


def _location_arg(call: ast.Call) -> ast.expr | None:
    if len(call.args) >= 2:
        return call.args[1]
    return next((k.value for k in call.keywords if k.arg == "location"), None)


def test_the_walk_finds_the_raise_sites():
    assert len(_error_sites()) > 200


def test_no_error_is_built_without_a_location():
    unlocated = [
        f"{name}:{line}: {ast.unparse(call)[:80]}"
        for name, line, call in _error_sites()
        if _location_arg(call) is None or isinstance(_location_arg(call), ast.Constant)
    ]
    assert unlocated == []


def test_a_location_is_required_by_the_error_type():
    with pytest.raises(TypeError):
        CompileError("no location")  # type: ignore[call-arg]


TEMPLATE = """#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<8> b; }}
header v_t {{ varbit<16> v; }}
struct headers {{ h_t h; h_t[2] s; v_t v; }}
struct metadata {{ }}
{globals}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); {parser}
        transition accept; }}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    {locals}
    apply {{
        {body}
    }}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr.h); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
PARSER_LINE, LOCALS_LINE, BODY_LINE = 9, 14, 16


def _program(body: str = "", locals_: str = "", parser: str = "", globals_: str = "") -> str:
    return TEMPLATE.format(body=body, locals=locals_, parser=parser, globals=globals_)


# (name, program, line, the text the column points at, message start)
NEW_ERRORS = [
    (
        "for in a parser",
        _program(parser="for (bit<8> i = 0; i < 2; i = i + 1) { }"),
        PARSER_LINE,
        "for (bit<8> i = 0",
        "for loops are not allowed in parser states",
    ),
    (
        "break outside a loop",
        _program("break;"),
        BODY_LINE,
        "break;",
        "break can be used only inside a for loop",
    ),
    (
        "continue in an action",
        _program("a();", locals_="action a() { continue; }"),
        LOCALS_LINE,
        "continue;",
        "continue can be used only inside a for loop",
    ),
    (
        "run-time condition",
        _program("for (bit<8> i = 0; i < hdr.h.a; i = i + 1) { }"),
        BODY_LINE,
        "i < hdr.h.a",
        "cannot unroll this for loop: its condition 'i < hdr.h.a' is not known at compile time",
    ),
    (
        "run-time update",
        _program("for (bit<8> i = 0; i < 4; i = i + hdr.h.a) { }"),
        BODY_LINE,
        "i = i + hdr.h.a",
        "cannot unroll this for loop: the update of 'i' is not known at compile time",
    ),
    (
        "endless",
        _program("for (bit<8> i = 0; i < 10; i = i) { }"),
        BODY_LINE,
        "for (",
        "this for loop runs more than 1024 iterations",
    ),
    (
        "run-time range",
        _program("for (bit<8> i in 0 .. hdr.h.a) { }"),
        BODY_LINE,
        "0 .. hdr.h.a",
        "cannot unroll this for loop: the ends of its range are not known at compile time",
    ),
    (
        "huge range",
        _program("for (bit<16> i in 0 .. 5000) { }"),
        BODY_LINE,
        "for (",
        "this for loop runs 5001 iterations, more than the 1024 ina unrolls",
    ),
    (
        "range of the wrong width",
        _program("for (bit<8> i in 16w0 .. 16w15) { }"),
        BODY_LINE,
        "16w0",
        "type mismatch: expected bit<8>, got bit<16>",
    ),
    (
        "not a collection",
        _program("for (bit<8> i in hdr.h.a) { }"),
        BODY_LINE,
        "hdr.h.a",
        "a for-in loop iterates over a range",
    ),
    (
        "loop variable assigned in the body",
        _program("for (bit<8> i = 0; i < 4; i = i + 1) { i = 3; }"),
        BODY_LINE,
        "i = 3;",
        "'i' is this loop's variable",
    ),
    (
        "varbit of part bytes",
        _program("varbit<12> x;"),
        BODY_LINE,
        "varbit<12> x;",
        "a varbit variable needs a maximum width of whole bytes",
    ),
    (
        "varbit to bits",
        _program("varbit<16> x = hdr.v.v; hdr.h.a = x;"),
        BODY_LINE,
        "x;",
        "type mismatch: expected bit<8>, got varbit<16>",
    ),
    (
        "tuple index",
        _program("tuple<bit<8>, bit<8>> t = { 1, 2 }; hdr.h.a = t[2];"),
        BODY_LINE,
        "2]",
        "index 2 is out of bounds for tuple<bit<8>, bit<8>>",
    ),
    (
        "tuple size",
        _program("tuple<bit<8>, bit<8>> t = { 1, 2, 3 };"),
        BODY_LINE,
        "{ 1, 2, 3 }",
        "3 values given for tuple<bit<8>, bit<8>>",
    ),
    (
        "int variable",
        _program("int x = 1;"),
        BODY_LINE,
        "int x",
        "cannot declare a variable of type int",
    ),
    (
        "user extern function",
        _program("my_fn(hdr.h.a);", globals_="extern void my_fn(in bit<8> x);"),
        BODY_LINE,
        "my_fn(",
        "unknown extern function 'my_fn' (declared at ",
    ),
    (
        "user extern object",
        _program(locals_="MyExt() e;", globals_="extern MyExt { MyExt(); void go(); }"),
        LOCALS_LINE,
        "MyExt() e;",
        "unknown extern 'MyExt' (declared at ",
    ),
]


@pytest.mark.parametrize(
    ("source", "line", "points_at", "message"),
    [case[1:] for case in NEW_ERRORS],
    ids=[case[0] for case in NEW_ERRORS],
)
def test_new_errors_point_at_their_construct(compile_text, source, line, points_at, message):
    with pytest.raises(CompileError) as info:
        compile_text(source)
    error = info.value
    assert error.message.startswith(message), error.message
    assert error.file.endswith("prog.p4") and error.line == line
    assert source.splitlines()[line - 1][error.col - 1 :].startswith(points_at), str(error)
