"""The services the lowering passes call, as interfaces.

Passes depend on these protocols, never on the modules that implement them: the driver's
Lowering (lowering.py) provides Services, ExpressionCompiler (expressions.py) provides Expressions,
and each block pass brings its own Effects (an action body, a parser state, the deparser). So the
imports run one way, from the driver down to the passes, as in p4c's pipeline of passes.
"""

from __future__ import annotations

from typing import Any, Protocol

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.errors import Location
from ina.compiler.lowered import Artifacts, Sections
from ina.compiler.objects import ActionBinding, BlockInstance
from ina.compiler.program import ProgramModel, Scope
from ina.compiler.storage import Storage
from ina.compiler.values import Const, Value


class Services(Protocol):
    """What one compilation offers every pass: the program, storage, the records being built, and
    the lowering of what a name can denote (constants, instances, actions bound to tables)."""

    model: ProgramModel
    storage: Storage
    sections: Sections
    artifacts: Artifacts

    def next_id(self, kind: str) -> int: ...

    def unique_name(self, base: str) -> str: ...

    def allocate(self, vtype: t.P4Type, hint: str, owner: str, loc: Location) -> Value: ...

    def exit_flag(self) -> Value: ...

    def constant_of(self, decl: n.ConstDecl, scope: Scope) -> Const: ...

    def bind_global_action(self, decl: n.ActionDecl) -> ActionBinding: ...

    def instantiate(self, decl: n.Instantiation, scope: Scope, owner: str) -> Any: ...

    def instantiate_global(self, decl: n.Instantiation) -> Any: ...

    def construct(self, call: n.CtorCall, scope: Scope) -> BlockInstance: ...

    def add_action(
        self, name: str, runtime_data: list[dict], primitives: list[dict], loc: Location
    ) -> dict: ...

    def table_action(
        self, binding: ActionBinding, bound: tuple[list[n.Arg], Scope] | None = None
    ) -> dict: ...

    def note_direct_call(self, binding: ActionBinding) -> None: ...

    def calculation(
        self, algo: str, fields: list[Value], loc: Location, payload: bool = False
    ) -> str: ...

    def learn_list(self, data: Value, loc: Location) -> int: ...

    def field_list_of(self, fields: list[Value], loc: Location) -> int: ...

    def annotated_field_list(self, index: int, loc: Location) -> int: ...


class Effects(Protocol):
    """Where calls with side effects put their primitives (an action body, a parser state)."""

    def emit(self, name: str, params: list[dict], loc: Location) -> None: ...

    def temporary(self, vtype: t.P4Type, hint: str, loc: Location) -> Value: ...

    def call_action(
        self, binding: Any, args: list[n.Arg], loc: Location, caller: Scope
    ) -> None: ...

    def call_function(
        self, binding: Any, args: list[n.Arg], loc: Location, caller: Scope
    ) -> Value | None: ...


class Expressions(Protocol):
    """What calls, members and externs use of the expression compiler that dispatched to them."""

    services: Services
    model: ProgramModel
    scope: Scope
    effects: Effects | None

    def compile(self, expr: n.Expr, expected: t.P4Type | None = None) -> Any: ...

    def value(self, expr: n.Expr, expected: t.P4Type | None = None) -> Value: ...

    def boolean(self, expr: n.Expr) -> Value: ...

    def constant(self, expr: n.Expr, expected: t.P4Type | None = None) -> Const: ...

    def lvalue(self, expr: n.Expr) -> Value: ...

    def coerce(self, value: Value, expected: t.P4Type, loc: Location) -> Value: ...
