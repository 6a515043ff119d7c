"""V1Switch's checksum controls: verify_checksum/update_checksum calls become BMv2 checksums
(verified at the end of parsing, updated at the start of deparsing)."""

from __future__ import annotations

from typing import Any

from ina.compiler import nodes as n
from ina.compiler.calls import compile_call
from ina.compiler.errors import CompileError, Location
from ina.compiler.expressions import ExpressionCompiler
from ina.compiler.services import Services
from ina.compiler.values import Const, Field, Value, as_bool


class _ChecksumSink:
    """Accepts only checksum calls; everything else in these controls is unsupported."""

    def __init__(self, services: Services, verify: bool):
        self.services = services
        self.verify_block = verify

    def emit(self, name: str, params: list[dict], loc: Location) -> None:
        raise CompileError(
            f"only {'verify' if self.verify_block else 'update'}_checksum calls are supported "
            "in this checksum control",
            loc,
        )

    def checksum(
        self,
        cond: Value,
        data: list[Value],
        target: Value,
        algo: str,
        verify: bool,
        payload: bool,
        loc: Location,
    ) -> None:
        if verify != self.verify_block:
            raise CompileError(
                f"{'verify' if verify else 'update'}_checksum belongs in the "
                f"{'VerifyChecksum' if verify else 'ComputeChecksum'} control",
                loc,
            )
        if not isinstance(target, Field):
            raise CompileError("the checksum argument must be a header field", loc)
        if isinstance(cond, Const) and not cond.value:
            return
        calc = self.services.calculation(algo, data, loc, payload)
        checksums = self.services.sections.checksums
        checksums.append(
            {
                "name": f"cksum_{len(checksums)}",
                "id": len(checksums),
                "source_info": {
                    "filename": loc.file,
                    "line": loc.line,
                    "column": loc.col,
                    "source_fragment": "verify_checksum" if verify else "update_checksum",
                },
                "target": [target.header, target.name],
                "type": "generic",
                "calculation": calc,
                "verify": verify,
                "update": not verify,
                "if_cond": None if isinstance(cond, Const) else as_bool(cond),
            }
        )

    def call_action(self, *args: Any) -> None:
        raise CompileError("actions cannot be called in a checksum control", args[2])

    def call_function(self, *args: Any) -> None:
        raise CompileError("functions cannot be called in a checksum control", args[2])

    def packet_call(self, packet, name: str, call: n.Call) -> None:
        raise CompileError(f"{packet.kind}.{name} cannot be called in a checksum control", call.loc)


def lower_checksums(
    services: Services, decl: n.ControlDecl, bindings: dict[str, Any], verify: bool
) -> None:
    """Lower a VerifyChecksum (`verify`) or ComputeChecksum control whose parameters are bound."""
    scope = services.model.globals.child(decl.name)
    for name, value in bindings.items():
        scope.define(name, value)
    declare_locals(services, decl, scope)
    sink = _ChecksumSink(services, verify)
    _statements(services, decl.body.stmts, scope, sink)


def declare_locals(services: Services, decl: n.ControlDecl, scope) -> None:
    """Constants and variables of a checksum control or deparser (unused actions and tables are
    allowed and ignored; these blocks run no tables)."""
    for local in decl.locals:
        if isinstance(local, n.ConstDecl):
            scope.define(local.name, local)
        elif isinstance(local, n.VarDecl):
            vtype = services.model.resolve(local.type, scope=scope)
            scope.define(local.name, services.allocate(vtype, local.name, decl.name, local.loc))
        elif not isinstance(local, n.ActionDecl | n.TableDecl | n.FunctionDecl):
            raise CompileError(
                f"unsupported declaration in '{decl.name}' ({type(local).__name__})", local.loc
            )


def _statements(services: Services, stmts: list[n.Stmt], scope, sink: _ChecksumSink) -> None:
    for stmt in stmts:
        if isinstance(stmt, n.CallStmt):
            compile_call(ExpressionCompiler(services, scope, sink), stmt.call, as_statement=True)
        elif isinstance(stmt, n.Block):
            _statements(services, stmt.stmts, scope.child(), sink)
        elif not isinstance(stmt, n.Empty):
            raise CompileError(
                "only verify_checksum/update_checksum calls are supported in checksum controls",
                stmt.loc,
            )
