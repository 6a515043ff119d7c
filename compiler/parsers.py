"""Parsers: states with extract/lookahead/advance/verify and assignments as BMv2 parser_ops, and
select transitions as byte-padded value/mask transitions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.actions import ActionBody
from ina.compiler.calls import bind_args
from ina.compiler.errors import CompileError, Location
from ina.compiler.expressions import ExpressionCompiler
from ina.compiler.objects import BlockInstance, PacketObject, StackNext
from ina.compiler.program import Scope
from ina.compiler.services import Services
from ina.compiler.values import (
    Computed,
    Field,
    HeaderInstance,
    StackInstance,
    StructValue,
    Value,
    as_bool,
    as_data,
    expr_json,
    hexstr,
    mask_of,
    param_json,
    read_only,
)

MAX_RANGE_EXPANSION = 256


@dataclass
class ValueSet:
    name: str
    type: t.P4Type
    width: int
    size: int


def range_to_masks(lo: int, hi: int, width: int) -> list[tuple[int, int]]:
    """The fewest value/mask pairs (aligned power-of-two blocks) that cover lo..hi exactly."""
    pairs = []
    while lo <= hi:
        size = lo & -lo if lo else 1 << width
        while size > hi - lo + 1:
            size >>= 1
        pairs.append((lo, mask_of(width) ^ (size - 1)))
        lo += size
    return pairs


class StateBody(ActionBody):
    """The operations of one parser state (reuses action statement lowering for assignments)."""

    def __init__(self, services: Services, owner: str):
        super().__init__(services, owner)
        self.ops: list[dict] = []

    def emit(self, name: str, params: list[dict], loc: Location) -> None:
        if name == "assign" and params[0].get("type") == "field":
            self.ops.append({"op": "set", "parameters": params})
        elif name.startswith("_jump"):
            raise CompileError(
                "if statements inside parser states are not supported by ina's compiler; "
                "branch with transition select instead",
                loc,
            )
        else:
            self.ops.append({"op": "primitive", "parameters": [{"op": name, "parameters": params}]})

    def statement(self, stmt: n.Stmt, scope: Scope) -> None:
        if isinstance(stmt, n.For | n.ForIn):
            raise CompileError(
                "for loops are not allowed in parser states (P4-16 allows them in control apply "
                "blocks, actions and functions); loop with transitions between states",
                stmt.loc,
            )
        if isinstance(stmt, n.If):
            raise CompileError(
                "if statements inside parser states are not supported by ina's compiler; "
                "branch with transition select instead",
                stmt.loc,
            )
        super().statement(stmt, scope)

    def packet_call(self, packet: PacketObject, name: str, call: n.Call) -> Any:
        ec = ExpressionCompiler(self.services, self._scope, self)
        if packet.kind == "packet_in" and name == "lookahead":
            # the value is unused, but the packet must still be long enough (else PacketTooShort)
            if not call.type_args:
                raise CompileError("lookahead needs a type, e.g. lookahead<bit<8>>()", call.loc)
            vtype = self.services.model.resolve(call.type_args[0], scope=self._scope)
            width = t.width_of(vtype)
            return self.lookahead(
                t.Bits(width) if not isinstance(vtype, t.Header) else vtype, call.loc
            )
        if packet.kind != "packet_in" or name not in ("extract", "advance", "length"):
            raise CompileError(f"{packet.kind}.{name} cannot be called in a parser", call.loc)
        if name == "length":
            raise CompileError("packet_in.length() is not supported by BMv2", call.loc)
        if name == "advance":
            if len(call.args) != 1:
                raise CompileError(
                    f"wrong number of arguments: advance takes 1, got {len(call.args)}", call.loc
                )
            amount = ec.value(call.args[0].value, t.Bits(32))
            self.ops.append({"op": "advance", "parameters": [param_json(amount)]})
            return None
        if len(call.args) not in (1, 2):
            raise CompileError(
                f"wrong number of arguments: extract takes 1 or 2, got {len(call.args)}", call.loc
            )
        if call.args[0].value is None:
            if not call.type_args:
                raise CompileError(
                    "extract(_) needs the header type, e.g. extract<ethernet_t>(_)", call.loc
                )
            skipped = self.services.model.resolve(call.type_args[0], scope=self._scope)
            bits = t.width_of(skipped)
            self.ops.append(
                {"op": "advance", "parameters": [{"type": "hexstr", "value": hexstr(bits, 32)}]}
            )
            return None
        target = ec.compile(call.args[0].value)
        if isinstance(target, StackNext):
            if target.last:
                raise CompileError(
                    "extract into stack.last is not allowed; use stack.next", call.loc
                )
            if isinstance(target.stack.type.element, t.Union):
                raise CompileError(
                    "extract into .next of a header union stack is not supported by ina's "
                    "compiler; use constant indices",
                    call.loc,
                )
            header = {"type": "stack", "value": target.stack.name}
            htype = target.stack.type.element
        elif isinstance(target, HeaderInstance):
            if not target.writable:
                raise CompileError(
                    f"cannot extract into read-only '{n.expr_text(call.args[0].value)}'", call.loc
                )
            header = {"type": "regular", "value": target.name}
            htype = target.header_type
        else:
            raise CompileError(
                f"extract needs a header, not '{n.expr_text(call.args[0].value)}'", call.loc
            )
        has_varbit = any(isinstance(ft, t.Varbit) for _, ft in htype.fields)
        if len(call.args) == 2:
            if not has_varbit:
                raise CompileError(
                    f"header {htype} has no varbit field; call extract with one argument", call.loc
                )
            length = ec.value(call.args[1].value, t.Bits(32))
            self.ops.append(
                {
                    "op": "extract_VL",
                    "parameters": [header, {"type": "expression", "value": expr_json(length)}],
                }
            )
        else:
            if has_varbit:
                raise CompileError(
                    f"header {htype} has a varbit field; pass its length in bits as the second "
                    "argument of extract",
                    call.loc,
                )
            self.ops.append({"op": "extract", "parameters": [header]})
        return None

    def lookahead(self, vtype: t.P4Type, loc: Location) -> Value:
        """BMv2 reads lookahead bits only in `set` ops and select keys, so the bits are copied
        into a temporary (a scalar, or a header for header types) that expressions can use."""
        if isinstance(vtype, t.Header):
            temp = self.services.allocate(vtype, f"lookahead_{vtype.name}", self.owner, loc)
            assert isinstance(temp, HeaderInstance)
            # valid first: add_header on an invalid header zeroes its fields
            self.ops.append(
                {
                    "op": "primitive",
                    "parameters": [{"op": "add_header", "parameters": [expr_json(temp)]}],
                }
            )
            offset = 0
            for name, ftype in vtype.fields:
                width = t.width_of(ftype)
                self.ops.append(
                    {
                        "op": "set",
                        "parameters": [
                            temp.member(name).json(),
                            {"type": "lookahead", "value": [offset, width]},
                        ],
                    }
                )
                offset += width
            return temp
        if not isinstance(vtype, t.Bits | t.Bool):
            raise CompileError(
                f"lookahead of {vtype} is not supported; look ahead at bit<N> values or headers",
                loc,
            )
        temp = self.services.allocate(vtype, "lookahead", self.owner, loc)
        self.ops.append(
            {
                "op": "set",
                "parameters": [
                    expr_json(temp),
                    {"type": "lookahead", "value": [0, t.width_of(vtype)]},
                ],
            }
        )
        return read_only(temp)

    def verify(self, cond: Value, error: Value) -> None:
        self.ops.append({"op": "verify", "parameters": [as_bool(cond), as_data(error)]})

    def run_state(self, stmts: list[n.Stmt], scope: Scope) -> None:
        self._scope = scope
        for stmt in stmts:
            self.statement(stmt, scope)


@dataclass
class _ParserFrame:
    """One parser being inlined: its scope, state-name prefix, and where its accept leads."""

    decl: n.ParserDecl
    scope: Scope
    owner: str
    prefix: str
    accept: str | None
    names: set[str]


class ParserLowering:
    def __init__(self, services: Services, instance: BlockInstance, bindings: dict[str, Any]):
        self.services = services
        self.decl = instance.decl
        assert isinstance(self.decl, n.ParserDecl)
        self.owner = self.decl.name
        self.scope = services.model.globals.child(self.owner)
        for name, value in bindings.items():
            self.scope.define(name, value)
        self.states: list[dict] = []
        self._state_names: set[str] = set()

    def lower(self) -> dict:
        self._parser(self.decl, self.scope, self.owner, "", None)
        return {"name": "parser", "id": 0, "init_state": "start", "parse_states": self.states}

    def _parser(
        self, decl: n.ParserDecl, scope: Scope, owner: str, prefix: str, accept: str | None
    ) -> None:
        for local in decl.locals:
            self._declare(local, scope, owner)
        inits = [
            n.Assign(v.loc, n.Name(v.loc, v.name), v.init)
            for v in decl.locals
            if isinstance(v, n.VarDecl) and v.init is not None
        ]
        names = {s.name for s in decl.states}
        if "start" not in names:
            raise CompileError(f"parser '{decl.name}' has no start state", decl.loc)
        frame = _ParserFrame(decl, scope, owner, prefix, accept, names)
        for state in decl.states:
            if state.name in ("accept", "reject"):
                raise CompileError(
                    f"state '{state.name}' is predefined and cannot be declared", state.loc
                )
            first = len(self.states)
            self._state(state, frame)
            if state.name == "start" and inits:
                body = StateBody(self.services, owner)
                body.run_state(inits, scope)
                self.states[first]["parser_ops"][:0] = body.ops

    def _declare(self, local: n.Node, scope: Scope, owner: str) -> None:
        match local:
            case n.ConstDecl():
                scope.define(local.name, local)
            case n.VarDecl():
                vtype = self.services.model.resolve(local.type, scope=scope)
                scope.define(
                    local.name, self.services.allocate(vtype, local.name, owner, local.loc)
                )
            case n.ValueSetDecl():
                scope.define(local.name, self._value_set(local, scope, owner))
            case n.Instantiation():
                instance = self.services.instantiate(local, scope, owner)
                if not isinstance(instance, BlockInstance) or not isinstance(
                    instance.decl, n.ParserDecl
                ):
                    raise CompileError(
                        "only sub-parsers can be instantiated inside a parser", local.loc
                    )
                scope.define(local.name, instance)
            case _:
                raise CompileError(
                    f"unsupported declaration in a parser ({type(local).__name__})", local.loc
                )

    def _value_set(self, decl: n.ValueSetDecl, scope: Scope, owner: str) -> ValueSet:
        vtype = self.services.model.resolve(decl.type, scope=scope)
        size = int(ExpressionCompiler(self.services, scope).constant(decl.size).value)
        if isinstance(vtype, t.StructLike):
            width = sum(t.width_of(ft) for _, ft in vtype.fields)
        else:
            width = t.width_of(vtype)
        name = n.qualified(owner, decl)
        self.services.sections.parse_vsets.append(
            {
                "name": name,
                "id": len(self.services.sections.parse_vsets),
                "compressed_bitwidth": width,
            }
        )
        self.services.artifacts.value_sets.append((name, width, size, decl.annotations))
        return ValueSet(name, vtype, width, size)

    def _new_state(self, name: str) -> dict:
        name = self.services.storage.unique(name, self._state_names)
        state = {
            "name": name,
            "id": self.services.next_id("parse_state"),
            "parser_ops": [],
            "transition_key": [],
            "transitions": [],
        }
        self.states.append(state)
        return state

    def _subparser_call(self, stmt: n.Stmt, scope: Scope) -> tuple[BlockInstance, n.Call] | None:
        if not isinstance(stmt, n.CallStmt):
            return None
        func = stmt.call.func
        if isinstance(func, n.TypeMember) and func.name == "apply":
            decl = self.services.model.type_decls.get(func.type_name)
            if isinstance(decl, n.ParserDecl):
                return BlockInstance(decl, decl.name, []), stmt.call
        if isinstance(func, n.Member) and func.name == "apply" and isinstance(func.expr, n.Name):
            target = scope.lookup(func.expr.name)
            if isinstance(target, BlockInstance):
                if not isinstance(target.decl, n.ParserDecl):
                    raise CompileError("only parsers can be applied inside a parser", stmt.loc)
                return target, stmt.call
        return None

    def _state(self, state: n.ParserState, frame: _ParserFrame) -> None:
        scope = frame.scope.child()
        current = self._new_state(frame.prefix + state.name)
        body = StateBody(self.services, frame.owner)
        body.run_state([], scope)
        for stmt in state.stmts:
            sub = self._subparser_call(stmt, scope)
            if sub is None:
                body.statement(stmt, scope)
                continue
            instance, call = sub
            current["parser_ops"] = body.ops
            after = f"{frame.prefix}{state.name}_after_{instance.name.rsplit('.', 1)[-1]}"
            sub_prefix = self.services.storage.unique(
                f"{frame.prefix}{instance.name.rsplit('.', 1)[-1]}.", self._state_names
            )
            current["transitions"] = [self._default(sub_prefix + "start")]
            continuation = self._new_state(after)
            sub_scope = self._bind_subparser(instance, call, scope)
            self._parser(
                instance.decl,
                sub_scope,
                f"{frame.owner}.{instance.name.rsplit('.', 1)[-1]}",
                sub_prefix,
                continuation["name"],
            )
            current = continuation
            body = StateBody(self.services, frame.owner)
            body.run_state([], scope)
        current["parser_ops"] = body.ops
        self._transition(state.transition, current, body, scope, frame)

    def _bind_subparser(self, instance: BlockInstance, call: n.Call, scope: Scope) -> Scope:
        decl = instance.decl
        caller = ExpressionCompiler(self.services, scope)
        sub_scope = self.services.model.globals.child(decl.name)
        for param, arg in bind_args(decl.params, call.args, call.loc, f"parser '{decl.name}'"):
            expr = arg.value if arg is not None else param.default
            if expr is None:
                raise CompileError(f"missing argument '{param.name}'", call.loc)
            if param.direction in ("out", "inout"):
                value = caller.lvalue(expr)
            else:
                found = caller.compile(expr)
                value = found if isinstance(found, PacketObject) else read_only(caller.value(expr))
            sub_scope.define(param.name, value)
        for param, value in zip(decl.ctor_params, instance.ctor_args, strict=False):
            sub_scope.define(param.name, value)
        return sub_scope

    def _transition(
        self, trans: n.Transition, result: dict, body: StateBody, scope: Scope, frame: _ParserFrame
    ) -> None:
        if trans.state is not None:
            result["transitions"] = [self._default(self._target(trans.state, frame, trans.loc))]
            return
        ec = ExpressionCompiler(self.services, scope, body)
        keys = []
        for key in trans.keys:
            value = ec.value(key)
            keys.append(self._transition_key(value, key, body))
        result["parser_ops"] = body.ops
        result["transition_key"] = [k[0] for k in keys]
        widths = [k[1] for k in keys]
        transitions = []
        for case in trans.cases:
            target = self._target(case.state, frame, case.loc)
            keyset = case.keyset.items if isinstance(case.keyset, n.TupleKey) else [case.keyset]
            if len(keyset) == 1 and isinstance(keyset[0], n.DefaultKey | n.DontCareKey):
                transitions.append(self._default(target))
                break
            if len(keyset) != len(widths) and not (
                len(keyset) == 1 and self._is_value_set(ec, keyset[0])
            ):
                raise CompileError(
                    f"select has {len(widths)} keys but this case has {len(keyset)} values",
                    case.loc,
                )
            transitions += self._case(ec, keyset, widths, keys, target, case.loc)
        # like p4c: without a default, a key that matches no case ends parsing (BMv2 has no reject)
        result["transitions"] = transitions

    def _is_value_set(self, ec: ExpressionCompiler, expr: n.Expr) -> bool:
        return isinstance(expr, n.Name) and isinstance(ec.scope.lookup(expr.name), ValueSet)

    def _transition_key(
        self, value: Value, key: n.Expr, body: StateBody
    ) -> tuple[dict, int, t.P4Type]:
        width = t.width_of(value.type) if not isinstance(value.type, t.InfInt) else 0
        if isinstance(value, Field):
            return value.json(), width, value.type
        if isinstance(value, Computed) and value.expr.get("op") == "access_field":
            left = value.expr["left"]["value"]
            if left.get("op") == "dereference_header_stack":
                stack = left["left"]["value"]
                fields = self._stack_fields(stack, key.loc)
                return (
                    {"type": "stack_field", "value": [stack, fields[value.expr["right"]]]},
                    width,
                    value.type,
                )
        if isinstance(value.type, t.Bits | t.Bool | t.Enum | t.ErrorType):
            temp = self.services.allocate(value.type, "select_key", self.owner, key.loc)
            ec = ExpressionCompiler(self.services, self.scope, body)
            body.assign(ec, temp, value, key.loc)
            assert isinstance(temp, Field)
            return temp.json(), width, value.type
        raise CompileError(f"cannot select on a value of type {value.type}", key.loc)

    def _stack_fields(self, stack_name: str, loc: Location) -> list[str]:
        for value in self.scope.names.values():
            if isinstance(value, StackInstance) and value.name == stack_name:
                return [f for f, _ in value.type.element.fields]  # type: ignore[attr-defined]
        for value in self.scope.names.values():
            if isinstance(value, StructValue):
                for member in value.members.values():
                    if isinstance(member, StackInstance) and member.name == stack_name:
                        return [f for f, _ in member.type.element.fields]  # type: ignore[attr-defined]
        raise CompileError(f"unknown header stack '{stack_name}'", loc)

    def _case(
        self,
        ec: ExpressionCompiler,
        keyset: list[n.Expr],
        widths: list[int],
        keys,
        target: str | None,
        loc: Location,
    ) -> list[dict]:
        if len(keyset) == 1 and self._is_value_set(ec, keyset[0]):
            vset = ec.scope.lookup(keyset[0].name)  # type: ignore[attr-defined]
            return [{"type": "parse_vset", "value": vset.name, "mask": None, "next_state": target}]
        alternatives: list[list[tuple[int, int]]] = [[]]
        for element, width, (_, _, ktype) in zip(keyset, widths, keys, strict=True):
            options = self._key_options(ec, element, width, ktype)
            alternatives = [[*alt, o] for alt in alternatives for o in options]
            if len(alternatives) > MAX_RANGE_EXPANSION:
                raise CompileError(
                    f"select case expands to more than {MAX_RANGE_EXPANSION} value/mask pairs", loc
                )
        result = []
        for alternative in alternatives:
            value = "".join(
                f"{v:0{(w + 7) // 8 * 2}x}" for (v, _), w in zip(alternative, widths, strict=True)
            )
            mask = "".join(
                f"{m:0{(w + 7) // 8 * 2}x}" for (_, m), w in zip(alternative, widths, strict=True)
            )
            full = all(m == mask_of(w) for (_, m), w in zip(alternative, widths, strict=True))
            result.append(
                {
                    "type": "hexstr",
                    "value": "0x" + value,
                    "mask": None if full else "0x" + mask,
                    "next_state": target,
                }
            )
        return result

    def _key_options(
        self, ec: ExpressionCompiler, element: n.Expr, width: int, ktype: t.P4Type
    ) -> list[tuple[int, int]]:
        full = mask_of(width)

        def const(e: n.Expr) -> int:
            value = ec.constant(e, ktype if not isinstance(ktype, t.Bool) else None)
            return (
                int(bool(value.value)) if isinstance(value.value, bool) else int(value.value) & full
            )

        if isinstance(element, n.DefaultKey | n.DontCareKey):
            return [(0, 0)]
        if isinstance(element, n.MaskKey):
            mask = const(element.mask)
            return [(const(element.value) & mask, mask)]
        if isinstance(element, n.RangeKey):
            return range_to_masks(const(element.lo), const(element.hi), width)
        return [(const(element), full)]

    @staticmethod
    def _default(target: str | None) -> dict:
        return {"type": "default", "value": None, "mask": None, "next_state": target}

    def _target(self, name: str, frame: _ParserFrame, loc: Location) -> str | None:
        if name == "accept":
            return frame.accept
        if name == "reject":
            return None  # as p4c does for BMv2, which has no reject state: parsing simply ends
        if name not in frame.names:
            raise CompileError(f"unknown parser state '{name}'", loc)
        return frame.prefix + name
