"""Statements inside actions (and the straight-line parts of apply blocks) as BMv2 primitives.

Calls to actions and functions are inlined; `if` becomes _jump_if_zero/_jump; `return` jumps to
the end of the inlined body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.calls import bind_args, compile_call
from ina.compiler.errors import CompileError, Location
from ina.compiler.expressions import ExpressionCompiler
from ina.compiler.loops import unroll
from ina.compiler.members import member_of
from ina.compiler.objects import ActionBinding, FunctionBinding, TableApply
from ina.compiler.program import Scope
from ina.compiler.services import Services
from ina.compiler.values import (
    Computed,
    Const,
    Field,
    HeaderExpression,
    HeaderInstance,
    ListValue,
    RuntimeData,
    SliceTarget,
    StackInstance,
    StringValue,
    StructValue,
    Unassigned,
    UnionInstance,
    Value,
    as_data,
    expr_json,
    hexstr,
    mask_of,
    op,
    param_json,
    read_only,
)


@dataclass
class _Frame:
    """An inlined body: where `return` jumps to, and where a function's result goes."""

    jumps: list[int] = field(default_factory=list)
    result: Value | None = None
    result_type: t.P4Type | None = None
    exits: bool = False  # an `exit` inside: the caller must stop after copy-out


class ActionBody:
    """Collects the primitives of one BMv2 action."""

    def __init__(self, services: Services, owner: str, apply_block: bool = False):
        self.services = services
        self.owner = owner
        self.apply_block = apply_block  # statements written directly in an apply block
        self.primitives: list[dict] = []
        self._frames: list[_Frame] = []
        self._inlining: list[str] = []
        self._uses_exit_flag = False

    # ---- Effects protocol
    def emit(self, name: str, params: list[dict], loc: Location) -> None:
        self.primitives.append(
            {
                "op": name,
                "parameters": params,
                "source_info": {
                    "filename": loc.file,
                    "line": loc.line,
                    "column": loc.col,
                    "source_fragment": name,
                },
            }
        )

    def temporary(self, vtype: t.P4Type, hint: str, loc: Location) -> Value:
        return self.services.allocate(vtype, hint, self.owner, loc)

    def packet_call(self, packet, name: str, call: n.Call) -> Any:
        raise CompileError(
            f"{packet.kind}.{name} can be called only in a parser or deparser", call.loc
        )

    # ---- statements
    def body(self, stmts: list[n.Stmt], scope: Scope) -> None:
        for stmt in stmts:
            self.statement(stmt, scope)

    def statement(self, stmt: n.Stmt, scope: Scope) -> None:
        ec = ExpressionCompiler(self.services, scope, self)
        match stmt:
            case n.Assign(target=target, value=value, operator=None):
                lhs = ec.lvalue(target)
                if isinstance(lhs, Unassigned):
                    raise CompileError("cannot assign to '_'", target.loc)
                self.assign(ec, lhs, ec.value(value, lhs.type), stmt.loc)
            case n.Assign(target=target, value=value, operator=operator):
                lhs = ec.lvalue(target)
                combined = ec.combine(
                    n.Binary(stmt.loc, operator, target, value), lhs, ec.value(value)
                )
                self.assign(ec, lhs, ec.coerce(combined, lhs.type, stmt.loc), stmt.loc)
            case n.CallStmt(call=call):
                self.call_statement(ec, call)
            case n.VarDecl():
                self.declare(ec, stmt, scope)
            case n.ConstDecl():
                scope.define(stmt.name, stmt)
            case n.Block(stmts=stmts):
                self.body(stmts, scope.child())
            case n.If(cond=cond, then=then, other=other):
                self._if(ec, cond, then, other, scope)
            case n.Exit():
                self._exit(ec, stmt.loc)
            case n.Return(value=value):
                self._return(ec, value, stmt.loc)
            case n.Empty():
                pass
            case n.For() | n.ForIn():
                self.body(unroll(self.services, stmt, scope), scope)
            case n.Bind(name=name, value=value):
                scope.define(name, value)
            case n.Break() | n.Continue():
                raise CompileError(
                    f"{type(stmt).__name__.lower()} can be used only inside a for loop", stmt.loc
                )
            case n.Switch():
                raise CompileError(
                    "switch statements are supported only in apply blocks, not in "
                    "actions or functions",
                    stmt.loc,
                )
            case _:
                raise CompileError(f"unsupported statement ({type(stmt).__name__})", stmt.loc)

    def call_statement(self, ec: ExpressionCompiler, call: n.Call) -> None:
        result = compile_call(ec, call, as_statement=True)
        if isinstance(result, TableApply):
            raise CompileError(
                "tables can be applied only in a control's apply block, not in an action "
                "or function",
                call.loc,
            )

    def declare(self, ec: ExpressionCompiler, decl: n.VarDecl, scope: Scope) -> Value:
        vtype = self.services.model.resolve(decl.type, scope=scope)
        storage = self.services.allocate(vtype, decl.name, self.owner, decl.loc)
        if decl.init is not None:
            self.assign(ec, storage, ec.value(decl.init, vtype), decl.loc)
        elif isinstance(storage, HeaderInstance):
            self.emit("remove_header", [param_json(storage)], decl.loc)
        scope.define(decl.name, storage)
        return storage

    def _if(
        self,
        ec: ExpressionCompiler,
        cond_expr: n.Expr,
        then: n.Stmt,
        other: n.Stmt | None,
        scope: Scope,
    ) -> None:
        cond = ec.boolean(cond_expr)
        if isinstance(cond, Const):
            chosen = then if cond.value else other
            if chosen is not None:
                self.statement(chosen, scope.child())
            return
        skip = len(self.primitives)
        self.emit(
            "_jump_if_zero", [{"type": "expression", "value": as_data(cond)}, None], cond_expr.loc
        )  # type: ignore[list-item]
        self.statement(then, scope.child())
        if other is not None:
            done = len(self.primitives)
            self.emit("_jump", [None], cond_expr.loc)  # type: ignore[list-item]
            self._patch(skip, 1, len(self.primitives))
            self.statement(other, scope.child())
            self._patch(done, 0, len(self.primitives))
        else:
            self._patch(skip, 1, len(self.primitives))

    def branch_value(
        self, ec: ExpressionCompiler, cond: Value, then_fn, else_fn, loc: Location
    ) -> Value:
        """A value computed by only one of two branches (?: and short-circuit operators whose
        operands call functions), through jumps and a temporary."""
        skip = len(self.primitives)
        self.emit("_jump_if_zero", [{"type": "expression", "value": as_data(cond)}, None], loc)  # type: ignore[list-item]
        first = then_fn()
        if isinstance(first.type, t.InfInt):
            raise CompileError("the branches of '?:' need a width; write e.g. 8w1", loc)
        result = self.temporary(first.type, "tmp", loc)
        self.assign(ec, result, first, loc)
        done = len(self.primitives)
        self.emit("_jump", [None], loc)  # type: ignore[list-item]
        self._patch(skip, 1, len(self.primitives))
        self.assign(ec, result, ec.coerce(else_fn(), first.type, loc), loc)
        self._patch(done, 0, len(self.primitives))
        return read_only(result)

    def _patch(self, index: int, param: int, target: int) -> None:
        self.primitives[index]["parameters"][param] = {
            "type": "hexstr",
            "value": hexstr(target, 32),
        }

    def _exit(self, ec: ExpressionCompiler, loc: Location) -> None:
        """BMv2's exit only marks the packet, so the rest of the action is jumped over; inside an
        inlined call a flag tells each caller (after its copy-out) to stop too."""
        self.emit("exit", [], loc)
        if not self._frames:
            return
        if len(self._frames) > 1:
            self._uses_exit_flag = True
            self.assign(ec, self.services.exit_flag(), Const(t.Bool(), True), loc)
        frame = self._frames[-1]
        frame.exits = True
        frame.jumps.append(len(self.primitives))
        self.emit("_jump", [None], loc)  # type: ignore[list-item]

    def _after_call(self, inner: _Frame, loc: Location) -> None:
        if not inner.exits or not self._frames:
            return
        outer = self._frames[-1]
        outer.exits = True
        flag = self.services.exit_flag()
        running = Computed(t.Bool(), op("==", expr_json(flag), {"type": "hexstr", "value": "0x00"}))
        still_running = {"type": "expression", "value": as_data(running)}
        outer.jumps.append(len(self.primitives))
        self.emit("_jump_if_zero", [still_running, None], loc)  # type: ignore[list-item]

    def _return(self, ec: ExpressionCompiler, value: n.Expr | None, loc: Location) -> None:
        if not self._frames:
            raise CompileError("return outside of an action or function", loc)
        frame = self._frames[-1]
        if value is not None:
            if frame.result is None:
                raise CompileError("this action or void function cannot return a value", value.loc)
            self.assign(ec, frame.result, ec.value(value, frame.result_type), loc)
        elif frame.result is not None:
            raise CompileError("this function must return a value", loc)
        frame.jumps.append(len(self.primitives))
        self.emit("_jump", [None], loc)  # type: ignore[list-item]

    def _close(self, frame: _Frame) -> None:
        end = len(self.primitives)
        # a trailing `return` jumps to the very next primitive: drop it
        while frame.jumps and frame.jumps[-1] == end - 1 and self.primitives[-1]["op"] == "_jump":
            frame.jumps.pop()
            self.primitives.pop()
            end -= 1
        for index in frame.jumps:
            self._patch(index, len(self.primitives[index]["parameters"]) - 1, end)

    # ---- assignment
    def assign(self, ec: ExpressionCompiler, target: Value, value: Value, loc: Location) -> None:
        if isinstance(target, Unassigned):
            return
        if isinstance(target, SliceTarget):
            self._assign_slice(ec, target, value, loc)
        elif isinstance(target, Field) and isinstance(target.type, t.Varbit):
            if not isinstance(value.type, t.Varbit) or value.type.max_width > target.type.max_width:
                raise CompileError(f"cannot assign {value.type} to {target.type}", loc)
            self.emit(
                "assign_VL", [param_json(target), param_json(value)], loc
            )  # as p4c: the value and its length
        elif isinstance(target, Field | Computed):
            if isinstance(value.type, t.Bool) and not isinstance(value, Field):
                source = (
                    {"type": "expression", "value": as_data(value)}
                    if not isinstance(value, Const)
                    else {"type": "hexstr", "value": hexstr(int(bool(value.value)), 1)}
                )
            else:
                source = param_json(value)
            self.emit("assign", [param_json(target), source], loc)
        elif isinstance(target, HeaderInstance | HeaderExpression):
            self._assign_header(ec, target, value, loc)
        elif isinstance(target, StackInstance) and isinstance(value, StackInstance):
            self.emit("assign_header_stack", [param_json(target), param_json(value)], loc)
        elif isinstance(target, UnionInstance) and isinstance(value, UnionInstance):
            self.emit("assign_union", [param_json(target), param_json(value)], loc)
        elif isinstance(target, StructValue):
            if isinstance(value, ListValue):
                value = ec.coerce(value, target.type, loc)
            if not isinstance(value, StructValue) or value.type != target.type:
                raise CompileError(f"cannot assign {value.type} to {target.type}", loc)
            for name, member in target.members.items():
                self.assign(ec, member, value.members[name], loc)
        elif isinstance(target, ListValue) and isinstance(value, ListValue):
            value = ec.coerce(value, target.type, loc)
            for item, source in zip(target.items, value.items, strict=True):  # type: ignore[attr-defined]
                self.assign(ec, item, source, loc)
        else:
            raise CompileError(f"cannot assign {value.type} to {target.type}", loc)

    def _assign_header(
        self, ec: ExpressionCompiler, target: Value, value: Value, loc: Location
    ) -> None:
        if isinstance(value, HeaderInstance | HeaderExpression):
            if value.type != target.type:
                raise CompileError(f"cannot assign header {value.type} to {target.type}", loc)
            self.emit("assign_header", [param_json(target), param_json(value)], loc)
            return
        if isinstance(value, ListValue | StructValue):
            value = ec.coerce(value, target.type, loc) if isinstance(value, ListValue) else value
            self.emit("add_header", [param_json(target)], loc)
            for name, _ in target.type.fields:  # type: ignore[attr-defined]
                member = member_of(ec, target, n.Member(loc, n.Name(loc, "_"), name))
                self.assign(ec, member, value.members[name], loc)  # type: ignore[attr-defined]
            return
        raise CompileError(f"cannot assign {value.type} to header {target.type}", loc)

    def _assign_slice(
        self, ec: ExpressionCompiler, target: SliceTarget, value: Value, loc: Location
    ) -> None:
        base = target.base
        width = base.type.width  # type: ignore[attr-defined]
        field_mask = mask_of(target.hi - target.lo + 1) << target.lo
        keep = op(
            "&",
            expr_json(base),
            {"type": "hexstr", "value": hexstr(mask_of(width) ^ field_mask, width)},
        )
        if isinstance(value, Const):
            inserted: dict = {
                "type": "hexstr",
                "value": hexstr((int(value.value) << target.lo) & field_mask, width),
            }
        else:
            shifted = op("<<", as_data(value), {"type": "hexstr", "value": hexstr(target.lo, 8)})
            inserted = {
                "type": "expression",
                "value": op(
                    "&",
                    {"type": "expression", "value": shifted},
                    {"type": "hexstr", "value": hexstr(field_mask, width)},
                ),
            }
        combined = Computed(base.type, op("|", {"type": "expression", "value": keep}, inserted))
        self.assign(ec, base, combined, loc)

    # ---- inlining
    def call_action(
        self, binding: ActionBinding, args: list[n.Arg], loc: Location, caller: Scope
    ) -> None:
        decl = binding.decl
        if self.apply_block and len(self._frames) == 1:
            self.services.note_direct_call(binding)
        if not decl.body.stmts and not n.has_calls([a.value for a in args]):
            self._check_args(caller, binding, args, loc)  # an empty action: check, but copy nothing
            return
        scope, copy_out = self._bind_params(
            caller, binding.scope, decl.params, args, loc, f"action '{decl.name}'"
        )
        frame = _Frame()
        self._inline(decl.name, decl.body, scope, frame, loc)
        self._copy_out(copy_out, caller, loc)
        self._after_call(frame, loc)

    def _check_args(
        self, caller: Scope, binding: ActionBinding, args: list[n.Arg], loc: Location
    ) -> None:
        ec = ExpressionCompiler(self.services, caller, self)
        for param, arg in bind_args(
            binding.decl.params, args, loc, f"action '{binding.decl.name}'"
        ):
            if arg is None or arg.value is None:
                continue
            ptype = self.services.model.resolve(param.type, scope=binding.scope)
            if param.direction in ("out", "inout"):
                ec.lvalue(arg.value)
            else:
                ec.value(arg.value, ptype)

    def call_function(
        self, binding: FunctionBinding, args: list[n.Arg], loc: Location, caller: Scope
    ) -> Value | None:
        proto = binding.decl.proto
        scope, copy_out = self._bind_params(
            caller, binding.scope, proto.params, args, loc, f"function '{proto.name}'"
        )
        rtype = self.services.model.resolve(proto.return_type, scope=binding.scope)
        frame = _Frame()
        if not isinstance(rtype, t.Void):
            frame.result = self.temporary(rtype, f"{proto.name}_retval", proto.return_type.loc)
            frame.result_type = rtype
        self._inline(proto.name, binding.decl.body, scope, frame, loc)
        self._copy_out(copy_out, caller, loc)
        self._after_call(frame, loc)
        return read_only(frame.result) if frame.result is not None else None

    def _copy_out(self, copies: list[tuple[Value, Value]], caller: Scope, loc: Location) -> None:
        ec = ExpressionCompiler(self.services, caller, self)
        for target, temporary in copies:
            self.assign(ec, target, temporary, loc)

    def _inline(self, name: str, body: n.Block, scope: Scope, frame: _Frame, loc: Location) -> None:
        if name in self._inlining:
            raise CompileError(f"'{name}' calls itself; recursion is not allowed in P4", loc)
        self._inlining.append(name)
        self._frames.append(frame)
        try:
            self.body(body.stmts, scope)
        finally:
            self._frames.pop()
            self._inlining.pop()
        self._close(frame)

    def _bind_params(
        self,
        caller_scope: Scope,
        outer: Scope,
        params: list[n.Param],
        args: list[n.Arg],
        loc: Location,
        what: str,
    ) -> tuple[Scope, list[tuple[Value, Value]]]:
        """Parameters as P4 passes them: copy-in for in/inout, copy-out for out/inout (so that an
        argument aliased by the body behaves as the specification says)."""
        caller = ExpressionCompiler(self.services, caller_scope, self)
        scope = outer.child()
        copy_out: list[tuple[Value, Value]] = []
        for param, arg in bind_args(params, args, loc, what):
            ptype = self.services.model.resolve(param.type, scope=outer)
            expr = arg.value if arg is not None else param.default
            if param.direction in ("out", "inout"):
                if expr is None:
                    value: Value = Unassigned(ptype)
                else:
                    target = caller.lvalue(expr)
                    if isinstance(target, Unassigned):
                        value = target
                    else:
                        if target.type != ptype:
                            raise CompileError(
                                f"argument '{n.expr_text(expr)}' has type {target.type}, but "
                                f"parameter '{param.name}' of {what} is {ptype}",
                                expr.loc,
                            )
                        value = self.temporary(ptype, param.name, param.loc)
                        if param.direction == "inout":
                            self.assign(caller, value, target, expr.loc)
                        copy_out.append((target, value))
            else:
                value = caller.value(expr, ptype)
                if not isinstance(value, Const | RuntimeData | StringValue | ListValue):
                    # copy-in: the body must see the argument as it was at the call
                    copy = self.temporary(ptype, param.name, param.loc)
                    self.assign(caller, copy, value, expr.loc)
                    value = copy
                value = read_only(value)
            scope.define(param.name, value)
        return scope, copy_out

    def run(self, stmts: list[n.Stmt], scope: Scope) -> None:
        """Compile the statements of one action body (or one straight-line run of an apply block)."""
        self._frames.append(_Frame())
        self.body(stmts, scope)
        self._close(self._frames.pop())
        if self._uses_exit_flag:  # clear the flag first: it may still be set from an earlier exit
            self.emit(
                "assign",
                [expr_json(self.services.exit_flag()), {"type": "hexstr", "value": "0x00"}],
                Location("<ina>", 0, 0),
            )
            self.primitives.insert(0, self.primitives.pop())
            for prim in self.primitives[1:]:
                if prim["op"] in ("_jump", "_jump_if_zero"):
                    target = prim["parameters"][-1]
                    target["value"] = hexstr(int(target["value"], 16) + 1, 32)
