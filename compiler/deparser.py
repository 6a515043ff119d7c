"""The deparser: the order of `packet.emit(...)` calls becomes BMv2's deparser order (BMv2 emits
only the valid headers, so conditions around emits need no code)."""

from __future__ import annotations

from typing import Any

from ina.compiler import nodes as n
from ina.compiler.calls import compile_call
from ina.compiler.checksums import declare_locals
from ina.compiler.errors import CompileError, Location
from ina.compiler.expressions import ExpressionCompiler
from ina.compiler.objects import PacketObject
from ina.compiler.services import Services
from ina.compiler.values import HeaderInstance, StackInstance, StructValue, UnionInstance, Value


class _EmitSink:
    def __init__(self, services: Services, scope):
        self.services = services
        self.scope = scope
        self.order: list[str] = []

    def emit(self, name: str, params: list[dict], loc: Location) -> None:
        raise CompileError(
            f"'{name}' is not supported in the deparser; the deparser can only emit headers", loc
        )

    def packet_call(self, packet: PacketObject, name: str, call: n.Call) -> None:
        if packet.kind != "packet_out" or name != "emit":
            raise CompileError(f"{packet.kind}.{name} cannot be called in a deparser", call.loc)
        if len(call.args) != 1:
            raise CompileError(
                f"wrong number of arguments: emit takes 1, got {len(call.args)}", call.loc
            )
        value = ExpressionCompiler(self.services, self.scope, self).value(call.args[0].value)
        self._add(value, call.args[0].value)

    def _add(self, value: Value, expr: n.Expr) -> None:
        if isinstance(value, HeaderInstance):
            if value.name not in self.order:
                self.order.append(value.name)
        elif isinstance(value, StackInstance):
            for element in value.elements:
                self._add(element, expr)
        elif isinstance(value, (UnionInstance, StructValue)):
            for member in value.members.values():
                self._add(member, expr)
        else:
            raise CompileError(
                f"emit needs a header, stack, union or struct of headers, not '{n.expr_text(expr)}'",
                expr.loc,
            )

    def call_action(self, *args: Any) -> None:
        raise CompileError("actions cannot be called in the deparser", args[2])

    def call_function(self, *args: Any) -> None:
        raise CompileError("functions cannot be called in the deparser", args[2])


def lower_deparser(services: Services, decl: n.ControlDecl, bindings: dict[str, Any]) -> dict:
    """The deparser's emit order, from the control whose parameters are bound."""
    scope = services.model.globals.child(decl.name)
    for name, value in bindings.items():
        scope.define(name, value)
    declare_locals(services, decl, scope)
    sink = _EmitSink(services, scope)
    _walk(services, decl.body.stmts, scope, sink)
    return {
        "name": "deparser",
        "id": 0,
        "source_info": {
            "filename": decl.loc.file,
            "line": decl.loc.line,
            "column": decl.loc.col,
            "source_fragment": decl.name,
        },
        "order": sink.order,
        "primitives": [],
    }


def _walk(services: Services, stmts: list[n.Stmt], scope, sink: _EmitSink) -> None:
    for stmt in stmts:
        match stmt:
            case n.CallStmt(call=call):
                compile_call(ExpressionCompiler(services, scope, sink), call, as_statement=True)
            case n.Block(stmts=inner):
                _walk(services, inner, scope.child(), sink)
            case n.If(then=then, other=other):
                _walk(services, [then] + ([other] if other else []), scope, sink)
            case n.Empty():
                pass
            case _:
                raise CompileError(
                    "the deparser supports only emit calls (optionally inside if statements)",
                    stmt.loc,
                )
