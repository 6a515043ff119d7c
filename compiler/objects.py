"""Compile-time objects names can denote besides values: actions, tables, extern and block
instances, methods bound to a target, a table application."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.errors import Location
from ina.compiler.program import Scope


@dataclass
class ActionBinding:
    """An action declaration and the scope its body sees (control locals or globals)."""

    decl: n.ActionDecl
    scope: Scope
    qualified_name: str


@dataclass
class FunctionBinding:
    decl: n.FunctionDecl
    scope: Scope


@dataclass
class ExternInstance:
    """An instantiated extern (register, counter, meter, ...), named as in BMv2 JSON and P4Info."""

    kind: str
    name: str
    type_args: tuple[t.P4Type, ...]
    args: list[Any]
    annotations: list[n.Annotation]
    decl: n.Node
    bound_table: str | None = None  # direct counters/meters: the table that owns them
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class PacketObject:
    """The packet_in / packet_out parameter of a parser or deparser."""

    kind: str  # packet_in or packet_out


@dataclass
class BlockInstance:
    """A parser or control instantiated with constructor arguments (e.g. `MyCtl() c;`)."""

    decl: n.ParserDecl | n.ControlDecl
    name: str
    ctor_args: list[Any]


@dataclass
class BoundMethod:
    target: Any
    name: str


@dataclass
class StackNext:
    """`stack.next` / `stack.last` in a parser: the element extract writes or last wrote."""

    stack: Any
    last: bool


@dataclass
class TableObject:
    decl: n.TableDecl
    scope: Scope
    local_name: str
    name: str  # fully qualified, as in BMv2 JSON and P4Info
    applied: bool = False


@dataclass
class TableApply:
    """`t.apply()` used as an expression (only hit/miss/action_run of it are meaningful)."""

    table: TableObject
    loc: Location
