"""Rejected programs: exact message and location (file:line:col), never a traceback."""

import pytest

from ina.compiler import CompileError

TEMPLATE = """#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<16> b; }}
struct headers {{ h_t h; }}
struct metadata {{ bit<8> m; }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{ {parser} transition accept; }}
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
control D(packet_out pkt, in headers hdr) {{ apply {{ {deparser} }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""
BODY_LINE = 13


def program(
    body: str = "",
    locals_: str = "",
    parser: str = "pkt.extract(hdr.h);",
    deparser: str = "pkt.emit(hdr.h);",
) -> str:
    return TEMPLATE.format(body=body, locals=locals_, parser=parser, deparser=deparser)


def error_of(compile_text, source: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        compile_text(source)
    return info.value


def test_valid_template_compiles(compile_text):
    assert compile_text(program("hdr.h.a = 1;")).bmv2


def test_unknown_identifier(compile_text):
    error = error_of(compile_text, program("hdr.h.a = nosuch;"))
    assert (error.line, error.col, error.message) == (BODY_LINE, 19, "unknown identifier 'nosuch'")
    assert error.file.endswith("prog.p4")


def test_formatted_error_has_source_line_and_caret(compile_text):
    error = error_of(compile_text, program("hdr.h.a = nosuch;"))
    lines = str(error).split("\n")
    assert lines[0].endswith(f"prog.p4:{BODY_LINE}:19: error: unknown identifier 'nosuch'")
    assert lines[1] == "        hdr.h.a = nosuch;"
    assert lines[2] == " " * 18 + "^"


def test_unknown_field(compile_text):
    error = error_of(compile_text, program("hdr.h.zz = 1;"))
    assert (error.line, error.col, error.message) == (BODY_LINE, 9, "header h_t has no field 'zz'")


def test_width_mismatch_in_arithmetic(compile_text):
    error = error_of(compile_text, program("hdr.h.b = hdr.h.a + hdr.h.b;"))
    assert (error.line, error.col) == (BODY_LINE, 19)
    assert error.message == (
        "width mismatch: '+' on bit<8> and bit<16>; cast one operand, e.g. (bit<8>) x"
    )


def test_width_mismatch_in_assignment(compile_text):
    error = error_of(compile_text, program("hdr.h.a = hdr.h.b;"))
    assert (error.line, error.col, error.message) == (
        BODY_LINE,
        19,
        "type mismatch: expected bit<8>, got bit<16>",
    )


def test_literal_too_wide(compile_text):
    error = error_of(compile_text, program("hdr.h.a = 8w300;"))
    assert error.message == "value 300 does not fit in bit<8>"


def test_wrong_argument_count_for_action(compile_text):
    error = error_of(compile_text, program("a(1, 2);", "action a(bit<8> x) { hdr.h.a = x; }"))
    assert (error.line, error.col) == (BODY_LINE, 9)
    assert error.message == "wrong number of arguments: action 'a' takes 1, got 2"


def test_wrong_argument_count_for_extern_method(compile_text):
    error = error_of(compile_text, program("r.read(hdr.h.a);", "register<bit<8>>(4) r;"))
    assert error.message == "wrong number of arguments: r.read takes 2, got 1"


def test_wrong_argument_count_for_extern_function(compile_text):
    error = error_of(compile_text, program("mark_to_drop();"))
    assert error.message == "wrong number of arguments: mark_to_drop takes 1, got 0"


def test_write_to_action_data(compile_text):
    error = error_of(
        compile_text,
        program("t.apply();", "action a(bit<8> x) { x = 1; } table t { actions = { a; } }"),
    )
    assert error.line == BODY_LINE - 2
    assert error.message == "cannot assign to 'x': it is read-only"


def test_write_to_in_parameter_of_deparser(compile_text):
    error = error_of(compile_text, program(deparser="hdr.h.a = 1; pkt.emit(hdr.h);"))
    assert error.message in (
        "cannot assign to 'hdr.h.a': it is read-only",
        "the deparser supports only emit calls (optionally inside if statements)",
    )


def test_write_to_constant(compile_text):
    error = error_of(compile_text, program("K = 2;", "const bit<8> K = 1;"))
    assert error.message == "cannot assign to 'K': it is read-only"


def test_unsupported_extern_is_named(compile_text):
    source = program("c.tick();", "Ticker() c;").replace(
        "header h_t", "extern Ticker { Ticker(); void tick(); }\nheader h_t"
    )
    error = error_of(compile_text, source)
    assert error.message.startswith("unknown extern 'Ticker' (declared at ")
    assert error.message.endswith(
        "prog.p4:3): BMv2's simple_switch implements only the externs of v1model.p4, so "
        "a program cannot declare its own"
    )


def test_runtime_index_into_union_stack_is_named(compile_text):
    source = program("hdr.u[hdr.h.a].x.setValid();").replace(
        "struct headers { h_t h; }",
        "header x_t { bit<8> v; }\nheader_union u_t { x_t x; }\nstruct headers { h_t h; u_t[2] u; }",
    )
    error = error_of(compile_text, source)
    assert (
        error.message
        == "run-time indices into header union stacks are not supported by ina's compiler"
    )


def test_table_apply_inside_action_is_rejected(compile_text):
    error = error_of(
        compile_text,
        program("a();", "table t { actions = { NoAction; } } action a() { t.apply(); }"),
    )
    assert error.message == (
        "tables can be applied only in a control's apply block, not in an action or function"
    )


def test_table_applied_twice(compile_text):
    error = error_of(
        compile_text, program("t.apply(); t.apply();", "table t { actions = { NoAction; } }")
    )
    assert (
        error.message
        == "table 't' is applied more than once; BMv2 allows one application per table"
    )


def test_unknown_parser_state(compile_text):
    error = error_of(
        compile_text, program(parser="pkt.extract(hdr.h); transition nowhere; } state x {")
    )
    assert error.message == "unknown parser state 'nowhere'"


def test_unknown_action_in_table(compile_text):
    error = error_of(compile_text, program("t.apply();", "table t { actions = { nosuch; } }"))
    assert error.message == "unknown action 'nosuch'"


def test_syntax_error(compile_text):
    error = error_of(compile_text, program("hdr.h.a = ;"))
    assert (error.line, error.col, error.message) == (BODY_LINE, 19, "syntax error: unexpected ';'")


def test_condition_must_be_bool(compile_text):
    error = error_of(compile_text, program("if (hdr.h.a) { hdr.h.a = 1; }"))
    assert error.message == "condition has type bit<8>, expected bool"


def test_preprocessor_error_points_at_directive(compile_text):
    error = error_of(compile_text, '#include "missing.p4"\n')
    assert error.line == 1 and "missing.p4" in error.message


def test_error_inside_macro_expansion_points_at_use(compile_text):
    source = program("SET(nosuch)", "#define SET(x) hdr.h.a = x;\n")
    error = error_of(compile_text, source)
    assert error.line == BODY_LINE + 1 and error.message == "unknown identifier 'nosuch'"


def test_syntax_error_names_the_missing_token(compile_text):
    error = error_of(compile_text, "#include <v1model.p4>\nheader h_t { bit<8> a }\n")
    assert (error.line, error.col, error.message) == (
        2,
        23,
        "syntax error: unexpected '}'; expected ';'",
    )


def test_binary_input_is_a_syntax_error_not_a_crash(tmp_path):
    from ina.compiler import compile_file

    path = tmp_path / "garbage.p4"
    path.write_bytes(bytes(range(1, 256)))
    with pytest.raises(CompileError) as info:
        compile_file(path)
    assert info.value.message.startswith("syntax error")


def test_arguments_of_an_empty_action_are_still_checked(compile_text):
    error = error_of(compile_text, program("a(nosuch);", "action a(in bit<8> x) { }"))
    assert (error.line, error.col, error.message) == (BODY_LINE, 11, "unknown identifier 'nosuch'")


HEADER_LINE = 3
LOCALS_LINE = 11


def with_header(
    fields: str, body: str = "", locals_: str = "", parser: str = "pkt.extract(hdr.h);"
) -> str:
    """The template with h_t's fields replaced (line 3 keeps h_t; a and b stay for the body)."""
    return program(body, locals_, parser).replace(
        "header h_t { bit<8> a; bit<16> b; }", f"header h_t {{ {fields} }}"
    )


@pytest.mark.parametrize(
    ("fields", "col", "width"),
    [
        (
            "bit<8> a; bit<1000000000000000000000000000000> b;",
            28,
            "1000000000000000000000000000000",
        ),
        ("bit<8> a; bit<100000000> b;", 28, "100000000"),
        ("int<2049> a; bit<16> b;", 18, "2049"),
        ("bit<8> a; bit<16> b; varbit<4096> v;", 42, "4096"),
    ],
)
def test_widths_above_p4cs_maximum_are_located_errors(compile_text, fields, col, width):
    error = error_of(compile_text, with_header(fields, "hdr.h.b = hdr.h.b + 1;"))
    assert (error.line, error.col) == (HEADER_LINE, col)
    assert (
        error.message == f"a width of {width} bits is more than the 2048 bits p4c and ina support"
    )


def test_widest_supported_field_compiles(compile_text):
    assert compile_text(
        with_header("bit<8> a; bit<16> b; bit<2048> c;", "hdr.h.c = hdr.h.c + 1;")
    ).bmv2


def test_wide_literal_local_and_concatenation_are_located(compile_text):
    error = error_of(compile_text, program("hdr.h.a = (bit<8>)3000w1;"))
    assert (error.line, error.col, error.message) == (
        BODY_LINE,
        27,
        "a literal's width of 3000 bits is more than the 2048 bits p4c and ina support",
    )
    error = error_of(compile_text, program(locals_="bit<4000> wide;"))
    assert (error.line, error.col) == (LOCALS_LINE, 9)
    error = error_of(compile_text, program("hdr.h.a = (bit<8>)(2048w1 ++ hdr.h.a);"))
    assert (error.line, error.message) == (
        BODY_LINE,
        "a concatenation of 2056 bits is more than the 2048 bits p4c and ina support",
    )


def test_header_of_partial_bytes_is_refused_at_its_declaration(compile_text):
    error = error_of(compile_text, with_header("bit<8> a; bit<12> b;"))
    assert (error.line, error.col, error.message) == (
        HEADER_LINE,
        1,
        "header h_t has fields totaling 20 bits; BMv2 supports only headers of whole bytes (a multiple of 8 bits)",
    )
    error = error_of(compile_text, with_header("bit<8> a; bit<16> b; bit<4> n; varbit<16> v;"))
    assert "totaling 44 bits" in error.message  # a varbit counts at its maximum width, as in p4c


def test_whole_byte_headers_with_varbits_and_unused_partial_headers_compile(compile_text):
    source = with_header(
        "bit<8> a; bit<16> b; bit<4> n; varbit<12> v;", parser="pkt.extract(hdr.h, 8);"
    )
    source = source.replace("struct headers", "header unused_t { bit<3> x; }\nstruct headers")
    assert compile_text(source).bmv2


def test_header_stack_above_p4cs_maximum_is_a_located_error(compile_text):
    source = program().replace(
        "struct headers { h_t h; }", "struct headers { h_t h; h_t[100000000] s; }"
    )
    error = error_of(compile_text, source)
    assert (error.line, error.message) == (4, "a header stack has 1..256 elements, not 100000000")


def test_serializable_enum_casts_only_to_its_underlying_type(compile_text):
    source = "enum bit<8> Kind { Data = 1 }\n" + program("hdr.h.b = (bit<16>) Kind.Data;")
    error = error_of(compile_text, source)
    assert (error.line, error.col) == (BODY_LINE + 1, 19)
    assert error.message == (
        "cannot cast Kind to bit<16>: a serializable enum casts only to its "
        "underlying type bit<8> (cast that to bit<16>)"
    )
    assert compile_text(
        "enum bit<8> Kind { Data = 1 }\n" + program("hdr.h.b = (bit<16>) (bit<8>) Kind.Data;")
    ).bmv2
