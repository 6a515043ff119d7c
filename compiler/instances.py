"""Instantiating v1model externs: check constructor arguments and record what BMv2 and P4Info need."""

from __future__ import annotations

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.errors import CompileError
from ina.compiler.externs import EXTERNS, HASH_ALGORITHMS, unsupported_extern
from ina.compiler.objects import ExternInstance
from ina.compiler.services import Expressions


def make_extern(
    ec: Expressions, decl: n.Instantiation, ext: n.ExternDecl, name: str
) -> ExternInstance:
    """`ec` evaluates the constructor arguments in the scope of the instantiation."""
    kind = ext.name
    if kind not in EXTERNS:
        raise CompileError(unsupported_extern("extern", ext), decl.loc)
    if len(decl.args) not in EXTERNS[kind].ctor_args:
        expected = " or ".join(map(str, EXTERNS[kind].ctor_args))
        raise CompileError(
            f"wrong number of arguments: {kind} takes {expected}, got {len(decl.args)}", decl.loc
        )
    type_args = tuple(ec.model.resolve(a, scope=ec.scope) for a in decl.type_args)
    instance = ExternInstance(kind, name, type_args, [], decl.annotations, decl)
    if kind == "register":
        if not type_args:
            raise CompileError(
                "register needs its value type, e.g. register<bit<32>>(1024)", decl.loc
            )
        value_type = type_args[0]
        if isinstance(value_type, t.Enum) and value_type.base is not None:
            value_type = value_type.base
        if not isinstance(value_type, t.Bits | t.Bool):
            raise CompileError(
                f"register values must be bit<N> or int<N>, not {value_type}", decl.loc
            )
        instance.extra["value_type"] = value_type
        instance.extra["bitwidth"] = t.width_of(value_type)
        instance.extra["size"] = _size(ec, decl.args[0])
    elif kind == "action_profile":
        instance.extra["size"] = _size(ec, decl.args[0])
    elif kind == "action_selector":
        algo = _enum_member(ec, decl.args[0], "HashAlgorithm")
        instance.extra["algo"] = HASH_ALGORITHMS[algo]
        instance.extra["size"] = _size(ec, decl.args[1])
    elif kind in ("counter", "meter"):
        instance.extra["size"] = _size(ec, decl.args[0])
        instance.extra["unit"] = _enum_member(
            ec, decl.args[1], "CounterType" if kind == "counter" else "MeterType"
        )
    else:
        instance.extra["unit"] = _enum_member(
            ec, decl.args[0], "CounterType" if kind == "direct_counter" else "MeterType"
        )
    return instance


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
