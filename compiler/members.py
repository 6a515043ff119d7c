"""`x.name`: fields of structs and headers, stack properties, and methods of objects."""

from __future__ import annotations

from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.errors import CompileError
from ina.compiler.objects import (
    BlockInstance,
    BoundMethod,
    ExternInstance,
    PacketObject,
    StackNext,
    TableApply,
    TableObject,
)
from ina.compiler.services import Expressions
from ina.compiler.values import (
    Computed,
    Const,
    Field,
    HeaderExpression,
    HeaderInstance,
    StackInstance,
    StructValue,
    UnionInstance,
    Value,
    expr_json,
    op,
)

HEADER_METHODS = {"isValid", "setValid", "setInvalid", "minSizeInBits", "minSizeInBytes"}
STACK_METHODS = {"push_front", "pop_front"}


def member_of(ec: Expressions, base: Any, e: n.Member) -> Any:
    name = e.name
    if isinstance(base, StructValue):
        if name in base.members:
            return base.members[name]
        if name in ("minSizeInBits", "minSizeInBytes"):
            return BoundMethod(base, name)
        raise CompileError(f"{base.type} has no field '{name}'", e.loc)
    if isinstance(base, HeaderInstance):
        if name in HEADER_METHODS:
            return BoundMethod(base, name)
        if base.header_type.field_type(name) is None:
            raise CompileError(f"header {base.header_type} has no field '{name}'", e.loc)
        return base.member(name)
    if isinstance(base, HeaderExpression):
        if name in HEADER_METHODS:
            return BoundMethod(base, name)
        names = [f for f, _ in base.type.fields]
        if name not in names:
            raise CompileError(f"header {base.type} has no field '{name}'", e.loc)
        access = {"op": "access_field", "left": expr_json(base), "right": names.index(name)}
        return Computed(base.type.field_type(name), access, writable=base.writable)
    if isinstance(base, UnionInstance):
        if name == "isValid":
            return BoundMethod(base, name)
        if name not in base.members:
            raise CompileError(f"header union {base.type} has no member '{name}'", e.loc)
        return base.members[name]
    if isinstance(base, StackInstance):
        return _stack_member(base, e)
    if isinstance(base, StackNext):
        if not base.last:
            raise CompileError("stack.next can be used only as the argument of extract", e.loc)
        return member_of(ec, last_element(base.stack), e)
    if isinstance(base, ExternInstance | PacketObject | BlockInstance):
        return BoundMethod(base, name)
    if isinstance(base, TableObject):
        if name != "apply":
            raise CompileError(f"table '{base.local_name}' has only the method apply()", e.loc)
        return BoundMethod(base, name)
    if isinstance(base, TableApply):
        if name not in ("hit", "miss", "action_run"):
            raise CompileError(
                f"a table application result has hit, miss and action_run, not '{name}'", e.loc
            )
        raise CompileError(
            f"'.{name}' of a table application is supported only directly in an if condition "
            "(`if (t.apply().hit)`) or a switch; store it first otherwise",
            e.loc,
        )
    if isinstance(base, Value):
        raise CompileError(f"a value of type {base.type} has no member '{name}'", e.loc)
    raise CompileError(f"'{name}' is not a member of this expression", e.loc)


def _stack_member(stack: StackInstance, e: n.Member) -> Any:
    name = e.name
    if name in STACK_METHODS:
        return BoundMethod(stack, name)
    if name == "size":
        return Const(t.Bits(32), len(stack.elements))
    if name == "lastIndex":
        return Computed(t.Bits(32), op("last_stack_index", None, expr_json(stack)))
    if name in ("next", "last"):
        return StackNext(stack, name == "last")
    raise CompileError(
        f"header stack has no member '{name}' (it has next, last, size, lastIndex, "
        "push_front, pop_front)",
        e.loc,
    )


def valid_bit(header: Value) -> Value:
    """isValid() as a boolean expression."""
    if isinstance(header, HeaderInstance):
        return Computed(t.Bool(), op("d2b", None, Field(t.Bits(1), header.name, "$valid$").json()))
    if isinstance(header, UnionInstance):
        return Computed(t.Bool(), op("valid_union", None, expr_json(header)))
    return Computed(t.Bool(), op("valid", None, expr_json(header)))


def last_element(stack: StackInstance) -> HeaderExpression:
    """`stack.last`: the element at the last valid index, chosen at run time."""
    index = {"type": "expression", "value": op("last_stack_index", None, expr_json(stack))}
    return HeaderExpression(
        stack.type.element,
        op("dereference_header_stack", expr_json(stack), index),
        writable=stack.writable,
    )
