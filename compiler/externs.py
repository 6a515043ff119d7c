"""v1model externs: instances (register, counter, meter, ...) and extern functions, lowered to the
primitives simple_switch implements: one entry per extern (`EXTERNS`: constructor arity and
methods) and per extern function (`_FUNCTIONS`), as p4c registers an extern converter; ina's switch runs the primitives
its registry (switch/model/primitives.py) lists, and tests/switch/test_primitives.py checks these emit
no other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.errors import CompileError
from ina.compiler.objects import ExternInstance
from ina.compiler.services import Expressions
from ina.compiler.values import (
    Const,
    Field,
    Value,
    as_bool,
    expr_json,
    flatten_fields,
    hexstr,
    param_json,
)

INDEX_TYPE = t.Bits(32)
HASH_ALGORITHMS = {
    "crc32": "crc32",
    "crc32_custom": "crc32_custom",
    "crc16": "crc16",
    "crc16_custom": "crc16_custom",
    "random": "random",
    "identity": "identity",
    "csum16": "csum16",
    "xor16": "xor16",
}
ARCHITECTURE_FILES = {"core.p4", "v1model.p4"}


def unsupported_extern(what: str, decl: n.Decl) -> str:
    """Why an extern cannot be used: a user-declared one has no implementation in BMv2 (p4c-bm2-ss
    refuses it alike: 'unknown extern function' / 'unknown extern instance'); an architecture one
    is one ina's compiler lacks."""
    if Path(decl.loc.file).name in ARCHITECTURE_FILES:
        return f"{what} '{decl.name}' is not supported by ina's compiler"
    return (
        f"unknown {what} '{decl.name}' (declared at {decl.loc.file}:{decl.loc.line}): BMv2's simple_switch "
        "implements only the externs of v1model.p4, so a program cannot declare its own"
    )


def _emit(ec: Expressions, call: n.Call, name: str, params: list[dict]) -> None:
    if ec.effects is None:
        raise CompileError(f"'{name}' cannot be called in this expression", call.loc)
    ec.effects.emit(name, params, call.loc)


def _index(ec: Expressions, arg: n.Arg) -> Value:
    value = ec.value(arg.value)
    if isinstance(value.type, t.InfInt):
        return ec.coerce(value, INDEX_TYPE, arg.loc)
    if not isinstance(value.type, t.Bits):
        raise CompileError(f"an index must be bit<N>, not {value.type}", arg.loc)
    return value


def _out_field(ec: Expressions, arg: n.Arg, expected: t.P4Type | None, what: str) -> Value:
    target = ec.lvalue(arg.value)
    if expected is not None and not isinstance(expected, t.TypeVar) and target.type != expected:
        raise CompileError(
            f"{what} writes {expected}, but '{n.expr_text(arg.value)}' is {target.type}", arg.loc
        )
    return target


def _count_args(call: n.Call, count: int, what: str) -> None:
    if len(call.args) != count:
        raise CompileError(
            f"wrong number of arguments: {what} takes {count}, got {len(call.args)}", call.loc
        )


def call_extern_method(ec: Expressions, inst: ExternInstance, method: str, call: n.Call) -> Any:
    handler = EXTERNS[inst.kind].methods.get(method)
    if handler is None:
        raise CompileError(
            f"'{method}' of extern {inst.kind} is not supported by ina's compiler", call.loc
        )
    what = f"{inst.name.split('.')[-1]}.{method}"
    _count_args(call, handler.args, what)
    return handler.lower(ec, inst, call, what)


def _array(inst: ExternInstance) -> dict:
    """The BMv2 parameter naming an instance's array: register_array, counter_array, meter_array."""
    return {"type": f"{inst.kind}_array", "value": inst.name}


def _register_read(ec: Expressions, inst: ExternInstance, call: n.Call, what: str) -> None:
    target = _out_field(ec, call.args[0], inst.extra["value_type"], what)
    _emit(
        ec,
        call,
        "register_read",
        [param_json(target), _array(inst), param_json(_index(ec, call.args[1]))],
    )


def _register_write(ec: Expressions, inst: ExternInstance, call: n.Call, what: str) -> None:
    index = _index(ec, call.args[0])
    value = ec.value(call.args[1].value, inst.extra["value_type"])
    _emit(ec, call, "register_write", [_array(inst), param_json(index), param_json(value)])


def _count(ec: Expressions, inst: ExternInstance, call: n.Call, what: str) -> None:
    _emit(ec, call, "count", [_array(inst), param_json(_index(ec, call.args[0]))])


def _direct_count(ec: Expressions, inst: ExternInstance, call: n.Call, what: str) -> None:
    """Nothing: BMv2 counts direct counters when their table hits."""


def _execute_meter(ec: Expressions, inst: ExternInstance, call: n.Call, what: str) -> None:
    index = _index(ec, call.args[0])
    target = _out_field(ec, call.args[1], None, what)
    _emit(ec, call, "execute_meter", [_array(inst), param_json(index), param_json(target)])


def _direct_meter_read(ec: Expressions, inst: ExternInstance, call: n.Call, what: str) -> None:
    target = _out_field(ec, call.args[0], None, what)
    if not isinstance(target, Field):
        raise CompileError(
            "direct_meter.read needs a field or variable to write the color to", call.loc
        )
    inst.extra["result_target"] = [target.header, target.name]


@dataclass(frozen=True)
class Method:
    """How one method of a v1model extern lowers: its argument count and the lowering."""

    args: int
    lower: Callable[[Expressions, ExternInstance, n.Call, str], None]


def _size(ec: Expressions, arg: n.Arg) -> int:
    value = ec.constant(arg.value, t.Bits(32))
    if int(value.value) <= 0:
        raise CompileError(f"size must be positive, not {value.value}", arg.loc)
    return int(value.value)


def _enum_member(ec: Expressions, arg: n.Arg, enum: str) -> str:
    value = ec.constant(arg.value)
    if not isinstance(value.type, t.Enum) or value.type.name != enum:
        raise CompileError(f"expected a {enum} value, e.g. {enum}.packets", arg.loc)
    return next(k for k, v in value.type.members.items() if v == value.value)


def _value_type(inst: ExternInstance, decl: n.Instantiation, kind: str) -> t.P4Type:
    """A register-like extern's cell type (its first type argument), bit<N> or int<N>."""
    if not inst.type_args:
        raise CompileError(f"{kind} needs its value type, e.g. {kind}<bit<32>>(1024)", decl.loc)
    value_type = inst.type_args[0]
    if isinstance(value_type, t.Enum) and value_type.base is not None:
        value_type = value_type.base
    if not isinstance(value_type, t.Bits | t.Bool):
        raise CompileError(f"{kind} values must be bit<N> or int<N>, not {value_type}", decl.loc)
    return value_type


def _new_register(ec: Expressions, decl: n.Instantiation, inst: ExternInstance) -> None:
    value_type = _value_type(inst, decl, "register")
    inst.extra.update(
        value_type=value_type, bitwidth=t.width_of(value_type), size=_size(ec, decl.args[0])
    )


def _new_profile(ec: Expressions, decl: n.Instantiation, inst: ExternInstance) -> None:
    inst.extra["size"] = _size(ec, decl.args[0])


def _new_selector(ec: Expressions, decl: n.Instantiation, inst: ExternInstance) -> None:
    inst.extra["algo"] = HASH_ALGORITHMS[_enum_member(ec, decl.args[0], "HashAlgorithm")]
    inst.extra["size"] = _size(ec, decl.args[1])


def _new_array(unit: str):
    """An indirect counter or meter: (size, unit)."""

    def construct(ec: Expressions, decl: n.Instantiation, inst: ExternInstance) -> None:
        inst.extra["size"] = _size(ec, decl.args[0])
        inst.extra["unit"] = _enum_member(ec, decl.args[1], unit)

    return construct


def _new_direct(unit: str):
    """A direct counter or meter: (unit); its table binds it."""

    def construct(ec: Expressions, decl: n.Instantiation, inst: ExternInstance) -> None:
        inst.extra["unit"] = _enum_member(ec, decl.args[0], unit)

    return construct


Tables = dict[str, dict]  # the pipelines' BMv2 tables by name


def _register_json(inst: ExternInstance, tables: Tables) -> dict:
    return {"size": inst.extra["size"], "bitwidth": inst.extra["bitwidth"]}


def _counter_json(inst: ExternInstance, tables: Tables) -> dict:
    return {"is_direct": False, "size": inst.extra["size"]}


def _direct_counter_json(inst: ExternInstance, tables: Tables) -> dict | None:
    if inst.bound_table is None:  # no table uses it: BMv2 has nothing to count
        return None
    return {"is_direct": True, "binding": inst.bound_table}


def _meter_json(inst: ExternInstance, tables: Tables) -> dict:
    return {
        "is_direct": False,
        "rate_count": 2,
        "type": inst.extra["unit"],
        "size": inst.extra["size"],
    }


def _direct_meter_json(inst: ExternInstance, tables: Tables) -> dict | None:
    if inst.bound_table is None:
        return None
    table = tables.get(inst.bound_table)
    return {
        "is_direct": True,
        "rate_count": 2,
        "type": inst.extra["unit"],
        "binding": inst.bound_table,
        "size": table["max_size"] if table is not None else 1024,
        "result_target": inst.extra.get("result_target"),
    }


@dataclass(frozen=True)
class Extern:
    """A v1model extern ina's compiler instantiates, as p4c keeps one in one converter: the
    argument counts its constructors take, what its constructor's arguments record (`construct`,
    called by instances.py), its methods, and its BMv2 JSON: the section its instances go to and
    each instance's entry beyond name, id and source_info (`json`: None leaves it out; bmv2.py
    numbers each section's entries). An extern without a section is a table property."""

    ctor_args: tuple[int, ...]
    construct: Callable[[Expressions, n.Instantiation, ExternInstance], None]
    methods: dict[str, Method]
    section: str | None = None
    json: Callable[[ExternInstance, Tables], dict | None] | None = None


EXTERNS = {  # in BMv2 JSON order of their sections
    "meter": Extern(
        (2,),
        _new_array("MeterType"),
        {"execute_meter": Method(2, _execute_meter)},
        "meter_arrays",
        _meter_json,
    ),
    "direct_meter": Extern(
        (1,),
        _new_direct("MeterType"),
        {"read": Method(1, _direct_meter_read)},
        "meter_arrays",
        _direct_meter_json,
    ),
    "counter": Extern(
        (2,),
        _new_array("CounterType"),
        {"count": Method(1, _count)},
        "counter_arrays",
        _counter_json,
    ),
    "direct_counter": Extern(
        (1,),
        _new_direct("CounterType"),
        {"count": Method(0, _direct_count)},
        "counter_arrays",
        _direct_counter_json,
    ),
    "register": Extern(
        (1,),
        _new_register,
        {"read": Method(2, _register_read), "write": Method(2, _register_write)},
        "register_arrays",
        _register_json,
    ),
    "action_profile": Extern((1,), _new_profile, {}),  # a table property: no methods
    "action_selector": Extern((3,), _new_selector, {}),
}


def call_extern_function(
    ec: Expressions, overloads: list[n.ExternFunctionDecl], call: n.Call
) -> Any:
    name = overloads[0].name
    handler = _FUNCTIONS.get(name)
    if handler is None:
        raise CompileError(unsupported_extern("extern function", overloads[0]), call.loc)
    counts = {len(o.proto.params) for o in overloads}
    if len(call.args) not in counts:
        expected = " or ".join(str(c) for c in sorted(counts))
        raise CompileError(
            f"wrong number of arguments: {name} takes {expected}, got {len(call.args)}", call.loc
        )
    return handler(ec, call)


def _mark_to_drop(ec: Expressions, call: n.Call) -> None:
    ec.value(call.args[0].value)
    _emit(ec, call, "mark_to_drop", [{"type": "header", "value": "standard_metadata"}])


def _random(ec: Expressions, call: n.Call) -> None:
    target = ec.lvalue(call.args[0].value)
    if not isinstance(target.type, t.Bits):
        raise CompileError(f"random writes bit<N>, not {target.type}", call.args[0].loc)
    lo = ec.value(call.args[1].value, target.type)
    hi = ec.value(call.args[2].value, target.type)
    _emit(
        ec, call, "modify_field_rng_uniform", [param_json(target), param_json(lo), param_json(hi)]
    )


def _algorithm(ec: Expressions, arg: n.Arg) -> str:
    value = ec.value(arg.value)
    if (
        not isinstance(value, Const)
        or not isinstance(value.type, t.Enum)
        or value.type.name != "HashAlgorithm"
    ):
        raise CompileError("expected a HashAlgorithm constant such as HashAlgorithm.crc32", arg.loc)
    names = {v: k for k, v in value.type.members.items()}
    return HASH_ALGORITHMS[names[int(value.value)]]


def _hash(ec: Expressions, call: n.Call) -> None:
    target = ec.lvalue(call.args[0].value)
    algo = _algorithm(ec, call.args[1])
    base = ec.value(call.args[2].value)
    data = flatten_fields(ec.value(call.args[3].value))
    limit = ec.value(call.args[4].value)
    if isinstance(base.type, t.InfInt):
        base = ec.coerce(base, t.Bits(16), call.args[2].loc)
    if isinstance(limit.type, t.InfInt):
        limit = ec.coerce(limit, t.Bits(32), call.args[4].loc)
    calc = ec.services.calculation(algo, data, call.loc)
    _emit(
        ec,
        call,
        "modify_field_with_hash_based_offset",
        [
            param_json(target),
            param_json(base),
            {"type": "calculation", "value": calc},
            param_json(limit),
        ],
    )


def _digest(ec: Expressions, call: n.Call) -> None:
    receiver = ec.constant(call.args[0].value, t.Bits(32))
    data = ec.value(call.args[1].value)
    type_args = call.type_args
    if type_args:
        dtype = ec.model.resolve(type_args[0], scope=ec.scope)
        data = ec.coerce(data, dtype, call.args[1].loc)
    list_id = ec.services.learn_list(data, call.loc)
    _emit(
        ec,
        call,
        "generate_digest",
        [
            {"type": "hexstr", "value": hexstr(int(receiver.value), 32)},
            {"type": "hexstr", "value": hexstr(list_id, 32)},
        ],
    )


def _clone_kind(ec: Expressions, arg: n.Arg) -> str:
    value = ec.constant(arg.value)
    if not isinstance(value.type, t.Enum) or value.type.name != "CloneType":
        raise CompileError("expected CloneType.I2E or CloneType.E2E", arg.loc)
    names = {v: k for k, v in value.type.members.items()}
    return (
        "clone_ingress_pkt_to_egress"
        if names[int(value.value)] == "I2E"
        else "clone_egress_pkt_to_egress"
    )


def _session(ec: Expressions, arg: n.Arg) -> dict:
    return param_json(ec.value(arg.value, t.Bits(32)))


def _clone(ec: Expressions, call: n.Call) -> None:
    _emit(ec, call, _clone_kind(ec, call.args[0]), [_session(ec, call.args[1]), _hex(0)])


def _hex(v: int) -> dict:
    return {"type": "hexstr", "value": hexstr(v, 32)}


def _clone3(ec: Expressions, call: n.Call) -> None:
    fields = flatten_fields(ec.value(call.args[2].value))
    list_id = ec.services.field_list_of(fields, call.loc)
    _emit(ec, call, _clone_kind(ec, call.args[0]), [_session(ec, call.args[1]), _hex(list_id)])


def _clone_preserving(ec: Expressions, call: n.Call) -> None:
    index = int(ec.constant(call.args[2].value).value)
    list_id = ec.services.annotated_field_list(index, call.loc)
    _emit(ec, call, _clone_kind(ec, call.args[0]), [_session(ec, call.args[1]), _hex(list_id)])


def _resubmit_like(primitive: str, preserving: bool):
    def handler(ec: Expressions, call: n.Call) -> None:
        if preserving:
            index = int(ec.constant(call.args[0].value).value)
            list_id = ec.services.annotated_field_list(index, call.loc)
        else:
            fields = flatten_fields(ec.value(call.args[0].value))
            list_id = ec.services.field_list_of(fields, call.loc)
        _emit(ec, call, primitive, [_hex(list_id)])

    return handler


def _truncate(ec: Expressions, call: n.Call) -> None:
    _emit(ec, call, "truncate", [param_json(ec.value(call.args[0].value, t.Bits(32)))])


def _assertion(name: str):
    def handler(ec: Expressions, call: n.Call) -> None:
        cond = ec.boolean(call.args[0].value)
        _emit(ec, call, name, [{"type": "expression", "value": as_bool(cond)}])

    return handler


def _log_msg(ec: Expressions, call: n.Call) -> None:
    message = ec.value(call.args[0].value)
    if not isinstance(message.type, t.String):
        raise CompileError("log_msg needs a string literal as its first argument", call.args[0].loc)
    values: list[Value] = []
    if len(call.args) == 2:
        values = flatten_fields(ec.value(call.args[1].value))
    vector = [
        expr_json(v)
        if not isinstance(v.type, t.InfInt)
        else expr_json(ec.coerce(v, t.Bits(32), call.loc))
        for v in values
    ]
    _emit(
        ec,
        call,
        "log_msg",
        [
            {"type": "string", "value": message.text},  # type: ignore[attr-defined]
            {"type": "parameters_vector", "value": vector},
        ],
    )


def _parser_verify(ec: Expressions, call: n.Call) -> None:
    if ec.effects is None or not hasattr(ec.effects, "verify"):
        raise CompileError("verify() can be called only in a parser state", call.loc)
    cond = ec.boolean(call.args[0].value)
    error = ec.value(call.args[1].value)
    if not isinstance(error.type, t.ErrorType):
        raise CompileError(
            f"verify's second argument must be an error, not {error.type}", call.args[1].loc
        )
    ec.effects.verify(cond, error)


def _checksum(verify: bool, payload: bool):
    def handler(ec: Expressions, call: n.Call) -> None:
        if ec.effects is None or not hasattr(ec.effects, "checksum"):
            raise CompileError(
                f"{'verify' if verify else 'update'}_checksum can be called only in the "
                "checksum controls of V1Switch",
                call.loc,
            )
        cond = ec.boolean(call.args[0].value)
        data = flatten_fields(ec.value(call.args[1].value))
        target = ec.lvalue(call.args[2].value) if not verify else ec.value(call.args[2].value)
        algo = _algorithm(ec, call.args[3])
        ec.effects.checksum(cond, data, target, algo, verify, payload, call.loc)

    return handler


_FUNCTIONS = {
    "mark_to_drop": _mark_to_drop,
    "random": _random,
    "hash": _hash,
    "digest": _digest,
    "clone": _clone,
    "clone3": _clone3,
    "clone_preserving_field_list": _clone_preserving,
    "resubmit": _resubmit_like("resubmit", False),
    "resubmit_preserving_field_list": _resubmit_like("resubmit", True),
    "recirculate": _resubmit_like("recirculate", False),
    "recirculate_preserving_field_list": _resubmit_like("recirculate", True),
    "truncate": _truncate,
    "assert": _assertion("assert"),
    "assume": _assertion("assume"),
    "log_msg": _log_msg,
    "verify": _parser_verify,
    "verify_checksum": _checksum(True, False),
    "update_checksum": _checksum(False, False),
    "verify_checksum_with_payload": _checksum(True, True),
    "update_checksum_with_payload": _checksum(False, True),
}
