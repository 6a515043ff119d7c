"""Every BMv2 primitive the switch runs: one entry each, its Python emitter beside its C emitter.

As p4c registers one converter per extern, a primitive is one `Primitive` in `PRIMITIVES`; both
generators (python/codegen.py, native/codegen.py) dispatch through this table alone, so the engines cannot
know different sets (tests/switch/test_primitives.py checks the names, and that the compiler emits
none outside it). An emitter takes its generator, the op (several names share one emitter) and the
JSON parameters, and returns lines: Python statements, or C statements; a C emitter raises
Unsupported for a form the native engine lacks (the switch then runs the Python engine).
Each entry also says what its parameters are (`Kind`): the program model checks every parameter
against what it names at load (references.py), so an emitter only meets parameters that exist.
The state a primitive reaches (registers, counters, meters) is the program model's (program.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from ina.switch.model.errors import Unsupported
from ina.switch.model.generator import NativeGenerator, PythonGenerator
from ina.switch.model.program import jump_target
from ina.switch.model.values import hexint, unwrap

CLONES = ("clone_ingress_pkt_to_egress", "clone_egress_pkt_to_egress")


class Kind(StrEnum):
    """What a primitive's parameter must be; references.py checks each at load."""

    VALUE = "a value"
    FIELD = "a field"
    HEADER = "a header"
    UNION = "a header union"
    STACK = "a header stack"  # or a header union stack, by name (ina's compiler copies one so)
    TARGET = "a field, header, header union or header stack"  # what assign writes
    SOURCE = "the kind and shape of the parameter before it"  # what a copy reads
    VARBIT = "a varbit field"
    REGISTER = "a register array"
    COUNTER = "a counter array"
    METER = "a meter array"
    INDEX = "a cell of the array before it"
    CALCULATION = "a calculation"
    COUNT = "a count of stack elements (not negative)"
    JUMP = "a primitive of its action to jump to"
    TEXT = "a log_msg format"
    VALUES = "the values of the format before it"


@dataclass(frozen=True)
class Primitive:
    python: Callable[[PythonGenerator, str, list[dict]], list[str]]
    c: Callable[[NativeGenerator, str, list[dict]], list[str]]
    params: tuple[Kind, ...]  # what each parameter is
    least: int | None = None  # parameters that must be given (None: all of them)


HEADER_EXPRESSIONS = (
    "dereference_header_stack",
    "access_union_header",
)  # a whole header's operators


# --- control flow inside an action: the model has checked each target (Action.jumps) --------
def py_jump(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    if op == "_jump":
        return [f"pc = {jump_target(p)}; continue"]
    return [f"if not ({g.expr.value(p[0])}): pc = {jump_target(p)}; continue"]


def c_jump(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    if op == "_jump":
        return [f"goto J{jump_target(p)};"]
    return [f"if (!({g.e.value(p[0])})) goto J{jump_target(p)};"]


# --- assignments: a field, or a whole header, union or stack -----------------------------
def py_assign(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    if op in ("assign_header", "copy_header"):
        return g.copy_header(p[0], p[1])
    if op == "assign_union":
        return g.copy_union(p[0]["value"], p[1]["value"])
    if op in ("assign_header_stack", "assign_union_stack"):
        return g.copy_stack(p[0]["value"], p[1]["value"])
    target = p[0]  # assign, modify_field
    if target["type"] in ("header", "regular") or (
        target["type"] == "expression" and unwrap(target["value"])["op"] in HEADER_EXPRESSIONS
    ):
        return g.copy_header(target, p[1])
    if target["type"] == "header_union":
        return g.copy_union(target["value"], p[1]["value"])
    if target["type"] == "header_stack":
        return g.copy_stack(target["value"], p[1]["value"])
    return [g.expr.store(target, g.expr.value(p[1]), p[1])]


def c_assign(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    target = p[0]
    if op in ("assign_header_stack", "assign_union_stack") or (
        target["type"] == "header_stack" and op in ("assign", "modify_field")
    ):
        return g.copy_stack(target["value"], p[1]["value"])
    if op == "assign_union" or (
        target["type"] == "header_union" and op in ("assign", "modify_field")
    ):
        return g.copy_union(target, p[1])
    if (
        op in ("assign_header", "copy_header")
        or target["type"] in ("header", "regular")
        or (
            target["type"] == "expression"
            and unwrap(target["value"]).get("op") in HEADER_EXPRESSIONS
        )
    ):
        return g.copy_header(target, p[1])
    return [g.e.store(target, p[1])]


def py_assign_vl(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    slot, _w, _s = g.expr.field_ref(p[0])
    lengths = g.layout.varbit_length_slots(p[0], p[1])
    return [
        f"P[{slot}] = {g.expr.value(p[1])}",
        *([f"P[{lengths[0]}] = P[{lengths[1]}]"] if lengths else []),
    ]


def c_assign_vl(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    # as the Python engine: the value with its header's varbit length, untruncated; exact here for an
    # unsigned source of at most 64 bits
    slot, _w, signed = g.e.field(p[0])
    if p[1]["type"] != "field":
        raise Unsupported(f"assign_VL from a '{p[1]['type']}'")
    src, _sw, src_signed = g.e.field(p[1])
    if signed or src_signed:
        raise Unsupported("assign_VL of a signed field")
    lengths = g.layout.varbit_length_slots(p[0], p[1])
    return [f"P[{slot}] = P[{src}];", *([f"P[{lengths[0]}] = P[{lengths[1]}];"] if lengths else [])]


# --- header validity and stacks ----------------------------------------------------------
def _union_siblings(g: PythonGenerator | NativeGenerator, target: dict) -> list[int]:
    """The validity slots a header named directly invalidates: the other members of its union."""
    if target["type"] != "header" or target["value"] not in g.layout.union_of:
        return []
    members = g.layout.unions[g.layout.union_of[target["value"]]]
    return [g.layout.header(m).base for m in members if m != target["value"]]


def py_add_header(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    n = g.expr.header_width_fields(p[0]).size - 1
    lines = [
        f"b = {g.expr.header_base(p[0])}",
        f"if not P[b]: P[b + 1:b + {1 + n}] = ZEROS[:{n}]",
        "P[b] = 1",
    ]
    return lines + [f"P[{base}] = 0" for base in _union_siblings(g, p[0])]


def c_add_header(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    base, hl = g.e.header_base(p[0])
    n = hl.size - 1
    zero = f"memset(&P[b + 1], 0, {n} * sizeof(uint64_t));"
    if hl.name in g.wide_of:
        words = "".join(f" P[{h}] = 0; P[{lo}] = 0;" for _s, h, lo in g.wide_of[hl.name])
        zero = "{ " + zero + words + " }"
    lines = ["{", f"size_t b = {base};", f"if (!P[b]) {zero}", "P[b] = 1;", "}"]
    return lines + [f"P[{b}] = 0;" for b in _union_siblings(g, p[0])]


def py_remove_header(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    return [f"P[{g.expr.header_base(p[0])}] = 0"]


def c_remove_header(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    return [f"P[{g.e.header_base(p[0])[0]}] = 0;"]


def py_push_pop(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    fn = "_push" if op.startswith("push") else "_pop"
    return [f"{fn}(P, {g.stack_args(p[0]['value'])}, {g.expr.value(p[1])})"]


def c_push_pop(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    st = g.e.stack(p[0]["value"])
    if p[1]["type"] != "hexstr":  # a literal count is not negative (references.py)
        raise Unsupported(f"{op} by a count that is not a constant")
    count = min(hexint(p[1]["value"]), len(st.elements))
    fn = "ina_push" if op.startswith("push") else "ina_pop"
    return [f"{fn}(P, {st.base}, {st.stride}, {len(st.elements)}, {st.next_slot}, {count});"]


# --- the packet's fate -------------------------------------------------------------------
def py_drop(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    return [f"P[{g.sm_slot('egress_spec')}] = {g.drop_port}", f"P[{g.sm_slot('mcast_grp')}] = 0"]


def c_drop(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    return [
        f"P[{g.sm['egress_spec']}] = (uint64_t)c->sw->drop_port;",
        f"P[{g.sm['mcast_grp']}] = 0;",
    ]


def py_exit(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    return [f"P[{g.layout.hidden['exit']}] = 1"]


def c_exit(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    return [f"P[{g.layout.hidden['exit']}] = 1;"]


def py_clone(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    fields = g.expr.value(p[1]) if len(p) > 1 else "0"
    hidden = g.layout.hidden
    return [
        f"P[{hidden['clone_session']}] = {g.expr.value(p[0])} + 1",
        f"P[{hidden['clone_fields']}] = {fields}",
    ]


def c_clone(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    session = g.e.value(p[0])
    fields = g.list_id(p[1] if len(p) > 1 else None, g.field_lists, 0)
    hidden = g.layout.hidden
    return [
        "{",
        f"i128 s = {session};",
        f"P[{hidden['clone_session']}] = s >= 0 && s <= 0xFFFF ? (uint64_t)s + 1 : s == -1 ? 0 : 0x10001;",
        f"P[{hidden['clone_fields']}] = {fields};",
        "}",
    ]


def _request(op: str, p: list[dict]) -> tuple[str, dict | None]:
    """The hidden value a resubmit, recirculate or digest request sets (layout.HIDDEN: list id + 1)
    and the parameter naming its field or learn list (None: no list)."""
    if op == "generate_digest":
        return "digest", p[1]
    return op, p[0] if p else None


def py_request(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    hidden, lst = _request(op, p)
    return [f"P[{g.layout.hidden[hidden]}] = {'0' if lst is None else g.expr.value(lst)} + 1"]


def c_request(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    hidden, lst = _request(op, p)
    lists = g.learn_lists if hidden == "digest" else g.field_lists
    return [f"P[{g.layout.hidden[hidden]}] = {g.list_id(lst, lists, 1)};"]


def py_truncate(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    return [f"P[{g.layout.hidden['truncate']}] = {g.expr.value(p[0])}"]


def c_truncate(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    return [
        "{",
        f"i128 keep = {g.e.value(p[0])};",
        "if (keep < 0) ina_fail(c);",
        f"P[{g.layout.hidden['truncate']}] = (uint64_t)keep;",
        "}",
    ]


# --- externs: registers, counters, meters, random numbers, hashes ------------------------
# A literal index is in its array (the model checked it); a computed one past the array skips the
# access, as simple_switch does, and a negative one (simple_switch stops on it) drops the packet:
# runtime.py `_cell` and state.h `ina_cell`, alike. The index, value and target field are always
# evaluated, in both engines, whether the cell exists or not.
def py_register_read(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    reg = g.program.instance("register", p[1]["value"])
    slot, width, signed = g.expr.field_ref(p[0])
    value = f"{g.extern('register', reg.name)}[i] if _cell(i, {reg.size}) else P[{slot}]"
    if width < reg.bitwidth or signed:
        value = g.expr.truncate(value, width, signed)
    return [f"i = {g.expr.value(p[2])}", f"P[{slot}] = {value}"]


def c_register_read(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    index = g.index("register", p[1]["value"])
    size = g.program.registers[index].size
    value = f"(ina_cell(c, i, {size}u) ? (i128){g.register_cell(index)} : {g.e.wrapped(p[0])})"
    return ["{", f"i128 i = {g.e.value(p[2])};", g.e.store_c(p[0], value), "}"]


def py_register_write(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    reg = g.program.instance("register", p[0]["value"])
    value = g.expr.truncate(g.expr.value(p[2]), reg.bitwidth, False, p[2])
    return [
        f"i = {g.expr.value(p[1])}",
        f"v = {value}",
        f"if _cell(i, {reg.size}): {g.extern('register', reg.name)}[i] = v",
    ]


def c_register_write(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    index = g.index("register", p[0]["value"])
    reg = g.program.registers[index]
    value = g.e.truncate(g.e.wrapped(p[2]), reg.bitwidth, False)
    return [
        "{",
        f"i128 i = {g.e.value(p[1])};",
        f"uint64_t v = {value};",
        f"if (ina_cell(c, i, {reg.size}u)) {g.register_cell(index)} = v;",
        "}",
    ]


def py_count(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    name = p[0]["value"]
    size, var = g.program.instance("counter", name).size, g.extern("counter", name)
    return [
        f"i = {g.expr.value(p[1])}",
        f"if _cell(i, {size}): {var}[0][i] += 1; {var}[1][i] += P[{g.sm_slot('packet_length')}]",
    ]


def c_count(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    index = g.index("counter", p[0]["value"])
    return [
        "{",
        f"ina_counter *K = &c->sw->counters[{index}];",
        f"i128 i = {g.e.value(p[1])};",
        f"if (ina_cell(c, i, K->size)) {{ K->packets[i]++; K->bytes[i] += P[{g.sm['packet_length']}]; }}",
        "}",
    ]


def py_meter(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    name = p[0]["value"]
    size, var = g.program.instance("meter", name).size, g.extern("meter", name)
    slot = g.expr.field_ref(p[2])[0]
    color = f"{var}.execute(i, P[{g.sm_slot('packet_length')}]) if _cell(i, {size}) else P[{slot}]"
    return [f"i = {g.expr.value(p[1])}", g.expr.store(p[2], color)]


def c_meter(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    index = g.index("meter", p[0]["value"])
    color = f"(i128)ina_meter_at(M, (uint64_t)i, P[{g.sm['packet_length']}])"
    value = f"(ina_cell(c, i, M->size) ? {color} : {g.e.wrapped(p[2])})"
    return [
        "{",
        f"ina_meter *M = &c->sw->meters[{index}];",
        f"i128 i = {g.e.value(p[1])};",
        g.e.store_c(p[2], value),
        "}",
    ]


def py_random(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    return [g.expr.store(p[0], f"_randint({g.expr.value(p[1])}, {g.expr.value(p[2])})")]


def c_random(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    # random.randint refuses lo > hi (ValueError: the packet is dropped)
    return [
        "{",
        f"i128 lo = {g.e.value(p[1])}, hi = {g.e.value(p[2])};",
        "if (lo > hi) ina_fail(c);",
        g.e.store_c(p[0], "lo + (i128)ina_random(c->sw, 0, (uint64_t)(hi - lo))"),
        "}",
    ]


def py_hash(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    calc = g.calculation(p[2]["value"])
    size = g.expr.value(p[3])
    return [g.expr.store(p[0], f"{g.expr.value(p[1])} + _mod({calc}(P, b''), {size})")]


def c_hash(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    calc = g.calculation(p[2]["value"], with_payload=False)
    base, size = g.e.wrapped(p[1]), g.e.value(p[3])
    return [
        "{",
        f"i128 size = {size};",
        f"i128 h = (i128){calc};",
        g.e.store_c(p[0], f"{base} + (size ? ina_mod(c, h, size) : h)"),
        "}",
    ]


# --- checks and logs ---------------------------------------------------------------------
def py_no_op(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    return ["pass"]


def c_nothing(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    return []


def py_log_msg(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    if not g.trace:  # only the packet log shows messages
        return ["pass"]
    values = p[1]["value"] if len(p) > 1 else []
    args = ", ".join(g.expr.value(v) for v in values)
    return [f"_log_msg({g.expr.value(p[0])}, ({args}{',' if values else ''}))"]


def py_assert(g: PythonGenerator, op: str, p: list[dict]) -> list[str]:
    return [f"if not ({g.expr.value(p[0])}): _assert_failed({op!r})"]


def c_assert(g: NativeGenerator, op: str, p: list[dict]) -> list[str]:
    return [f"if (!({g.e.value(p[0])})) ina_fail(c);"]


_ASSIGN = Primitive(py_assign, c_assign, (Kind.TARGET, Kind.SOURCE))
_PUSH_POP = Primitive(py_push_pop, c_push_pop, (Kind.STACK, Kind.COUNT))
_DROP = Primitive(py_drop, c_drop, (Kind.HEADER,), least=0)  # v1model passes standard_metadata
_REQUEST = Primitive(py_request, c_request, (Kind.VALUE,), least=0)
_ASSERT = Primitive(py_assert, c_assert, (Kind.VALUE,))
PRIMITIVES: dict[str, Primitive] = {
    "_jump": Primitive(py_jump, c_jump, (Kind.JUMP,)),
    "_jump_if_zero": Primitive(py_jump, c_jump, (Kind.VALUE, Kind.JUMP)),
    "assign": _ASSIGN,
    "modify_field": _ASSIGN,
    "assign_header": Primitive(py_assign, c_assign, (Kind.HEADER, Kind.SOURCE)),
    "copy_header": Primitive(py_assign, c_assign, (Kind.HEADER, Kind.SOURCE)),
    "assign_union": Primitive(py_assign, c_assign, (Kind.UNION, Kind.SOURCE)),
    "assign_header_stack": Primitive(py_assign, c_assign, (Kind.STACK, Kind.SOURCE)),
    "assign_union_stack": Primitive(py_assign, c_assign, (Kind.STACK, Kind.SOURCE)),
    "assign_VL": Primitive(py_assign_vl, c_assign_vl, (Kind.VARBIT, Kind.SOURCE)),
    "add_header": Primitive(py_add_header, c_add_header, (Kind.HEADER,)),
    "remove_header": Primitive(py_remove_header, c_remove_header, (Kind.HEADER,)),
    **dict.fromkeys(("push", "push_front", "pop", "pop_front"), _PUSH_POP),
    "mark_to_drop": _DROP,
    "drop": _DROP,
    "exit": Primitive(py_exit, c_exit, ()),
    **dict.fromkeys(CLONES, Primitive(py_clone, c_clone, (Kind.VALUE, Kind.VALUE), least=1)),
    "resubmit": _REQUEST,
    "recirculate": _REQUEST,
    "generate_digest": Primitive(py_request, c_request, (Kind.VALUE, Kind.VALUE)),
    "truncate": Primitive(py_truncate, c_truncate, (Kind.VALUE,)),
    "register_read": Primitive(
        py_register_read, c_register_read, (Kind.FIELD, Kind.REGISTER, Kind.INDEX)
    ),
    "register_write": Primitive(
        py_register_write, c_register_write, (Kind.REGISTER, Kind.INDEX, Kind.VALUE)
    ),
    "count": Primitive(py_count, c_count, (Kind.COUNTER, Kind.INDEX)),
    "execute_meter": Primitive(py_meter, c_meter, (Kind.METER, Kind.INDEX, Kind.FIELD)),
    "modify_field_rng_uniform": Primitive(
        py_random, c_random, (Kind.FIELD, Kind.VALUE, Kind.VALUE)
    ),
    "modify_field_with_hash_based_offset": Primitive(
        py_hash, c_hash, (Kind.FIELD, Kind.VALUE, Kind.CALCULATION, Kind.VALUE)
    ),
    "no_op": Primitive(py_no_op, c_nothing, ()),
    "log_msg": Primitive(py_log_msg, c_nothing, (Kind.TEXT, Kind.VALUES), least=1),
    "assert": _ASSERT,
    "assume": _ASSERT,
}
