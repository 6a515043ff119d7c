"""Calls: argument binding against parameters, methods of headers and stacks, and dispatch to
actions, functions, v1model externs and packet methods."""

from __future__ import annotations

from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.errors import CompileError, Location
from ina.compiler.externs import call_extern_function, call_extern_method
from ina.compiler.members import valid_bit
from ina.compiler.objects import (
    ActionBinding,
    BlockInstance,
    BoundMethod,
    ExternInstance,
    FunctionBinding,
    PacketObject,
    TableApply,
    TableObject,
)
from ina.compiler.services import Expressions
from ina.compiler.values import (
    Const,
    HeaderExpression,
    HeaderInstance,
    StackInstance,
    StructValue,
    UnionInstance,
    Value,
    expr_json,
    hexstr,
    param_json,
)


def bind_args(
    params: list[n.Param], args: list[n.Arg], loc: Location, what: str
) -> list[tuple[n.Param, n.Arg | None]]:
    """Match arguments (positional or named) to parameters; defaults fill the rest."""
    named = [a for a in args if a.name is not None]
    positional = [a for a in args if a.name is None]
    if len(positional) > len(params) or (
        not named and len(args) < sum(1 for p in params if p.default is None)
    ):
        required = sum(1 for p in params if p.default is None)
        expected = str(len(params)) if required == len(params) else f"{required} to {len(params)}"
        raise CompileError(
            f"wrong number of arguments: {what} takes {expected}, got {len(args)}", loc
        )
    bound: list[tuple[n.Param, n.Arg | None]] = []
    by_name = {a.name: a for a in named}
    for i, param in enumerate(params):
        arg = positional[i] if i < len(positional) else by_name.pop(param.name, None)
        if arg is None and param.default is None:
            raise CompileError(f"missing argument '{param.name}' in call to {what}", loc)
        bound.append((param, arg))
    if by_name:
        name = next(iter(by_name))
        raise CompileError(f"{what} has no parameter named '{name}'", by_name[name].loc)
    return bound


def compile_call(ec: Expressions, call: n.Call, as_statement: bool) -> Any:
    target = ec.compile(call.func)
    if isinstance(target, BoundMethod):
        return _method(ec, target, call)
    if isinstance(target, ActionBinding):
        effects = _effects(ec, call, f"action '{target.decl.name}'")
        effects.call_action(target, call.args, call.loc, ec.scope)
        return None
    if isinstance(target, FunctionBinding):
        effects = _effects(ec, call, f"function '{target.decl.name}'")
        return effects.call_function(target, call.args, call.loc, ec.scope)
    if isinstance(target, list) and target and isinstance(target[0], n.ExternFunctionDecl):
        return call_extern_function(ec, target, call)
    raise CompileError(f"'{n.expr_text(call.func)}' cannot be called", call.loc)


def _effects(ec: Expressions, call: n.Call, what: str):
    if ec.effects is None:
        raise CompileError(
            f"{what} cannot be called here (calls with side effects are not allowed "
            "in this expression)",
            call.loc,
        )
    return ec.effects


def _method(ec: Expressions, method: BoundMethod, call: n.Call) -> Any:
    target, name = method.target, method.name
    if isinstance(target, HeaderInstance | HeaderExpression | UnionInstance | StructValue):
        return _header_method(ec, target, name, call)
    if isinstance(target, StackInstance):
        count = 1
        if call.args:
            count = int(ec.constant(call.args[0].value).value)
        elif name in ("push_front", "pop_front"):
            raise CompileError(f"wrong number of arguments: {name} takes 1, got 0", call.loc)
        effects = _effects(ec, call, name)
        prim = "push" if name == "push_front" else "pop"
        effects.emit(
            prim, [expr_json(target), {"type": "hexstr", "value": hexstr(count, 32)}], call.loc
        )
        return None
    if isinstance(target, ExternInstance):
        return call_extern_method(ec, target, name, call)
    if isinstance(target, PacketObject):
        effects = _effects(ec, call, f"{target.kind}.{name}")
        return effects.packet_call(target, name, call)
    if isinstance(target, TableObject):
        if call.args:
            raise CompileError("wrong number of arguments: apply takes 0", call.loc)
        return TableApply(target, call.loc)
    if isinstance(target, BlockInstance):
        raise CompileError(
            f"'{target.name}.apply()' can be called only as a statement of an apply "
            "block or parser state",
            call.loc,
        )
    raise CompileError(f"'{name}' cannot be called here", call.loc)


def _header_method(ec: Expressions, header: Value, name: str, call: n.Call) -> Any:
    if name in ("minSizeInBits", "minSizeInBytes"):
        bits = t.width_of(header.type)
        return Const(t.InfInt(), bits if name == "minSizeInBits" else (bits + 7) // 8)
    if call.args:
        raise CompileError(
            f"wrong number of arguments: {name} takes 0, got {len(call.args)}", call.loc
        )
    if name == "isValid":
        return valid_bit(header)
    effects = _effects(ec, call, name)
    if not header.writable:
        raise CompileError(f"cannot call {name}() on a read-only header", call.loc)
    prim = "add_header" if name == "setValid" else "remove_header"
    effects.emit(prim, [param_json(header)], call.loc)
    return None


def lookahead(ec: Expressions, e: n.Lookahead) -> Value:
    target = ec.compile(e.expr)
    if not isinstance(target, PacketObject) or target.kind != "packet_in":
        raise CompileError("lookahead is a method of packet_in", e.loc)
    vtype = ec.model.resolve(e.type, scope=ec.scope)
    if ec.effects is None or not hasattr(ec.effects, "lookahead"):
        raise CompileError("lookahead can be used only in a parser", e.loc)
    return ec.effects.lookahead(vtype, e.loc)
