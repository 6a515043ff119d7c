"""What names and expressions evaluate to during lowering, and their BMv2 JSON forms.

A Value is either something BMv2 JSON can name (a field, a header instance, a constant, runtime
action data, an expression tree) or a compile-time object (an extern instance, a table, an action).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ina.compiler import types as t

Json = dict[str, Any]


def hexstr(value: int, width: int | None = None) -> str:
    """p4c's spelling of a constant: hex, zero-padded to whole bytes of `width`, '-' if negative."""
    digits = max(1, ((width or max(value.bit_length(), 1)) + 7) // 8 * 2)
    sign = "-" if value < 0 else ""
    return f"{sign}0x{abs(value):0{digits}x}"


def mask_of(width: int) -> int:
    return (1 << width) - 1


@dataclass
class Value:
    type: t.P4Type
    writable: bool = field(default=True, kw_only=True)


@dataclass
class Const(Value):
    value: int | bool


@dataclass
class Field(Value):
    header: str
    name: str

    def json(self) -> Json:
        return {"type": "field", "value": [self.header, self.name]}


@dataclass
class Computed(Value):
    """An expression tree: `expr` is the {"op", "left", "right"} object."""

    expr: Json


@dataclass
class RuntimeData(Value):
    index: int


@dataclass
class StringValue(Value):
    text: str


@dataclass
class HeaderInstance(Value):
    name: str  # BMv2 header instance name
    header_type: t.StructLike = field(kw_only=True)

    def member(self, name: str) -> Value:
        """A field; a struct-typed field is a struct of the flattened fields `name.sub`."""
        ftype = self.header_type.field_type(name)
        return _field_or_struct(ftype, self.name, name, self.writable)


def _field_or_struct(ftype: t.P4Type, header: str, name: str, writable: bool) -> Value:
    if isinstance(ftype, t.Struct):
        return StructValue(
            ftype,
            {
                sub: _field_or_struct(st, header, f"{name}.{sub}", writable)
                for sub, st in ftype.fields
            },
            writable=writable,
        )
    return Field(ftype, header, name, writable=writable)


@dataclass
class HeaderExpression(Value):
    """A header chosen at run time (stack element by a run-time index)."""

    expr: Json


@dataclass
class StackInstance(Value):
    name: str
    elements: list[HeaderInstance] = field(kw_only=True)


@dataclass
class UnionInstance(Value):
    name: str
    members: dict[str, HeaderInstance] = field(kw_only=True)


@dataclass
class StructValue(Value):
    members: dict[str, Value]


@dataclass
class ListValue(Value):
    items: list[Value]
    names: list[str] | None = None


@dataclass
class SliceTarget(Value):
    """`f[hi:lo]` of a field: assignable, and readable through `read` (shift and mask)."""

    base: Value
    hi: int
    lo: int
    read: Value | None = None


@dataclass
class Unassigned(Value):
    """`_` as an argument: a don't-care out argument."""


def read_only(value: Value) -> Value:
    if not value.writable:
        return value
    copy = replace(value, writable=False)
    if isinstance(copy, StructValue):
        copy.members = {k: read_only(v) for k, v in copy.members.items()}
    elif isinstance(copy, StackInstance):
        copy.elements = [read_only(e) for e in copy.elements]  # type: ignore[misc]
    elif isinstance(copy, UnionInstance):
        copy.members = {k: read_only(v) for k, v in copy.members.items()}  # type: ignore[misc]
    elif isinstance(copy, ListValue):
        copy.items = [read_only(i) for i in copy.items]
    return copy


def flatten_fields(value: Value) -> list[Value]:
    """The leaves of a list, struct or header value, in order (hash inputs, digests, checksums)."""
    if isinstance(value, ListValue):
        return [leaf for item in value.items for leaf in flatten_fields(item)]
    if isinstance(value, StructValue):
        return [leaf for item in value.members.values() for leaf in flatten_fields(item)]
    if isinstance(value, HeaderInstance):
        return [
            leaf for f, _ in value.header_type.fields for leaf in flatten_fields(value.member(f))
        ]
    return [value]


# ---- JSON forms


def expr_json(value: Value) -> Json:
    """The form a value takes inside an expression tree or a conditional."""
    if isinstance(value, SliceTarget) and value.read is not None:
        value = value.read
    match value:
        case Const(value=bool() as b):
            return {"type": "bool", "value": b}
        case Const(value=int() as v):
            return {"type": "hexstr", "value": hexstr(v, _const_width(value.type))}
        case Field():
            return value.json()
        case RuntimeData(index=i):
            return {"type": "local", "value": i}
        case Computed(expr=e) | HeaderExpression(expr=e):
            return {"type": "expression", "value": e}
        case HeaderInstance(name=name):
            return {"type": "header", "value": name}
        case StackInstance(name=name):
            return {"type": "header_stack", "value": name}
        case UnionInstance(name=name):
            return {"type": "header_union", "value": name}
        case StringValue(text=s):
            return {"type": "string", "value": s}
    raise TypeError(f"no JSON expression form for {type(value).__name__}")


def param_json(value: Value) -> Json:
    """The form a value takes as an action primitive parameter."""
    if isinstance(value, SliceTarget) and value.read is not None:
        value = value.read
    match value:
        case RuntimeData(index=i):
            return {"type": "runtime_data", "value": i}
        case Computed() | HeaderExpression():
            return {"type": "expression", "value": expr_json(value)}
    return expr_json(value)


def _const_width(vtype: t.P4Type) -> int | None:
    match vtype:
        case t.Bits(width=w):
            return w
        case t.ErrorType():
            return t.ERROR_WIDTH
        case t.Enum(base=t.Bits(width=w)):
            return w
        case t.Enum():
            return t.ENUM_WIDTH
    return None


def op(name: str, left: Json | None, right: Json, **extra: Json) -> Json:
    return {"op": name, "left": left, "right": right, **extra}


def as_data(value: Value) -> Json:
    """Expression JSON usable where BMv2 wants a number (booleans go through b2d)."""
    if isinstance(value.type, t.Bool) and not isinstance(value, Field):
        if isinstance(value, Const):
            return {"type": "hexstr", "value": hexstr(int(bool(value.value)), 1)}
        return {"type": "expression", "value": op("b2d", None, expr_json(value))}
    return expr_json(value)


def as_bool(value: Value) -> Json:
    """Expression JSON usable where BMv2 wants a boolean (bool fields go through d2b)."""
    if isinstance(value, Field | RuntimeData):
        return {"type": "expression", "value": op("d2b", None, expr_json(value))}
    return expr_json(value)
