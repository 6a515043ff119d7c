"""Lowering's services: the one object each compilation hands every pass (see services.Services).

It owns what passes share (storage, ids and names, the BMv2 sections and P4Info artifacts being
built, caches of constants, instances and table actions) and lowers what a name denotes on demand
(a constant's value, an extern instance, an action bound to a table), calling the passes for that.
"""

from __future__ import annotations

from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.actions import ActionBody
from ina.compiler.errors import CompileError, Location
from ina.compiler.expressions import ExpressionCompiler
from ina.compiler.instances import make_extern
from ina.compiler.lowered import ActionInfo, Artifacts, DigestInfo, Sections
from ina.compiler.objects import ActionBinding, BlockInstance
from ina.compiler.program import ProgramModel, Scope
from ina.compiler.storage import Storage
from ina.compiler.values import (
    Const,
    Field,
    RuntimeData,
    StructValue,
    Unassigned,
    Value,
    flatten_fields,
    hexstr,
    read_only,
)


class Lowering:
    """Implements services.Services for one compilation of one program."""

    def __init__(self, model: ProgramModel):
        self.model = model
        model.const_evaluator = self._evaluate_constant
        self.storage = Storage()
        self.artifacts = Artifacts()
        self.sections = Sections()
        self._table_actions: dict[str, dict] = {}
        self._constants: dict[int, Const] = {}
        self._global_actions: dict[int, ActionBinding] = {}
        self._global_instances: dict[int, Any] = {}
        self._names: set[str] = set()
        self._ids: dict[str, int] = {}
        self.metadata_value: StructValue | None = None
        self._exit_flag: Value | None = None

    # ---- small services used by the other passes
    def next_id(self, kind: str) -> int:
        value = self._ids.get(kind, 0)
        self._ids[kind] = value + 1
        return value

    def unique_name(self, base: str) -> str:
        return self.storage.unique(base, self._names)

    def _evaluate_constant(self, expr: n.Expr, scope: Scope) -> int | bool:
        return ExpressionCompiler(self, scope).constant(expr).value

    def constant_of(self, decl: n.ConstDecl, scope: Scope) -> Const:
        key = id(decl)
        if key not in self._constants:
            vtype = self.model.resolve(decl.type, scope=scope)
            value = ExpressionCompiler(self, scope).value(decl.value, vtype)
            if not isinstance(value, Const):
                raise CompileError(
                    f"the value of constant '{decl.name}' is not known at compile time",
                    decl.value.loc,
                )
            self._constants[key] = value
        return self._constants[key]

    def bind_global_action(self, decl: n.ActionDecl) -> ActionBinding:
        key = id(decl)
        if key not in self._global_actions:
            self._global_actions[key] = ActionBinding(
                decl, self.model.globals, n.qualified("", decl)
            )
        return self._global_actions[key]

    def exit_flag(self) -> Value:
        """A bool telling inlined callers that an `exit` ran inside a call."""
        if self._exit_flag is None:
            self._exit_flag = self.storage.add_scalar("exit_flag", t.Bool())
        return self._exit_flag

    def allocate(self, vtype: t.P4Type, hint: str, owner: str, loc: Location) -> Value:
        name = f"{owner}.{hint}" if owner else hint
        if isinstance(vtype, t.Header | t.Stack | t.Union):
            name = hint
        return self.storage.allocate(vtype, name, loc)

    # ---- instances
    def instantiate_global(self, decl: n.Instantiation) -> Any:
        key = id(decl)
        if key not in self._global_instances:
            self._global_instances[key] = self.instantiate(decl, self.model.globals, "")
        return self._global_instances[key]

    def instantiate(self, decl: n.Instantiation, scope: Scope, owner: str) -> Any:
        target = self.model.type_decls.get(decl.type_name)
        name = n.qualified(owner, decl)
        if isinstance(target, n.ParserDecl | n.ControlDecl):
            args = [self.ctor_arg(a, scope) for a in decl.args]
            return BlockInstance(target, name, args)
        if not isinstance(target, n.ExternDecl):
            raise CompileError(f"'{decl.type_name}' cannot be instantiated", decl.loc)
        # A control instance passed to two others is inlined at each apply, but its externs exist
        # once: the qualified name is the instance, so a second instantiation is the same object.
        existing = next((e for e in self.artifacts.externs if e.name == name), None)
        if existing is not None:
            return existing
        instance = make_extern(ExpressionCompiler(self, scope), decl, target, name)
        self.artifacts.externs.append(instance)
        return instance

    def ctor_arg(self, arg: n.Arg, scope: Scope) -> Any:
        """A constructor argument's value (V1Switch's blocks, a control's or parser's parameters)."""
        if arg.value is None:
            raise CompileError("constructor arguments cannot be '_'", arg.loc)
        return ExpressionCompiler(self, scope).compile(arg.value)

    def construct(self, call: n.CtorCall, scope: Scope) -> BlockInstance:
        decl = self.model.type_decls.get(call.type_name)
        if not isinstance(decl, n.ParserDecl | n.ControlDecl):
            raise CompileError(
                f"'{call.type_name}(...)' can only construct a parser or control here", call.loc
            )
        return BlockInstance(decl, decl.name, [self.ctor_arg(a, scope) for a in call.args])

    # ---- actions
    def add_action(
        self, name: str, runtime_data: list[dict], primitives: list[dict], loc: Location
    ) -> dict:
        action = {
            "name": name,
            "id": self.next_id("action"),
            "runtime_data": runtime_data,
            "primitives": primitives,
            "source_info": {
                "filename": loc.file,
                "line": loc.line,
                "column": loc.col,
                "source_fragment": name.rsplit(".", 1)[-1],
            },
        }
        self.sections.actions.append(action)
        return action

    def table_action(
        self, binding: ActionBinding, bound: tuple[list[n.Arg], Scope] | None = None
    ) -> dict:
        """The BMv2 action a table invokes: arguments bound in the table's actions list fill the
        first parameters; the remaining (directionless) ones become runtime data. A table that binds
        arguments gets its own copy, named as p4c names every copy: the action's own name (tables
        refer to actions by id, and BMv2's CLI finds `table_add T setbyte` among T's actions)."""
        name = binding.qualified_name
        key = name if bound is None or not bound[0] else f"{name}@{id(bound[0])}"
        if key in self._table_actions:
            return self._table_actions[key]
        decl = binding.decl
        scope = binding.scope.child()
        bound_args = bound[0] if bound else []
        if len(bound_args) > len(decl.params):
            raise CompileError(
                f"wrong number of arguments: action '{decl.name}' takes {len(decl.params)}, "
                f"got {len(bound_args)}",
                bound_args[-1].loc,
            )
        runtime_data, params = [], []
        body = ActionBody(self, binding.scope.owner)
        for i, param in enumerate(decl.params):
            ptype = self.model.resolve(param.type, scope=binding.scope)
            if i < len(bound_args):
                arg = bound_args[i]
                caller = ExpressionCompiler(self, bound[1], body)  # type: ignore[index]
                if param.direction in ("out", "inout"):
                    value = caller.lvalue(arg.value) if arg.value is not None else Unassigned(ptype)
                else:
                    value = read_only(caller.value(arg.value, ptype))
                scope.define(param.name, value)
                continue
            if param.direction is not None:
                raise CompileError(
                    f"action '{decl.name}' has a directional parameter '{param.name}'; a table "
                    "must bind it in its actions list, e.g. actions = { a(hdr.x); }",
                    param.loc,
                )
            if not isinstance(ptype, t.Bits | t.Bool | t.Enum):
                raise CompileError(
                    f"action data '{param.name}' must be bit<N>, int<N>, bool or an enum, not {ptype}",
                    param.loc,
                )
            width = t.width_of(ptype)
            scope.define(param.name, RuntimeData(ptype, len(runtime_data), writable=False))
            runtime_data.append({"name": param.name, "bitwidth": width})
            params.append((control_plane_name(param), width, param.annotations))
        self._table_actions[key] = {}  # reserve against recursion
        body.run(decl.body.stmts, scope)
        action = self.add_action(name, runtime_data, body.primitives, decl.loc)
        self._table_actions[key] = action
        self.artifacts.actions[name] = ActionInfo(name, decl.annotations, params)
        return action

    def note_direct_call(self, binding: ActionBinding) -> None:
        """p4c lists actions called directly (not only through tables) in the P4Info too."""
        name = binding.qualified_name
        if name in self.artifacts.actions:
            return
        params = []
        for param in binding.decl.params:
            if param.direction is None:
                ptype = self.model.resolve(param.type, scope=binding.scope)
                params.append((control_plane_name(param), t.width_of(ptype), param.annotations))
        self.artifacts.actions[name] = ActionInfo(name, binding.decl.annotations, params)
        self.artifacts.direct_actions.append(name)

    # ---- hashing, digests, field lists
    def calculation(
        self, algo: str, fields: list[Value], loc: Location, payload: bool = False
    ) -> str:
        inputs = []
        for value in fields:
            inputs.append(self._calc_input(value, loc))
        if payload:
            inputs.append({"type": "payload", "value": None})
        name = f"calc_{len(self.sections.calculations)}"
        self.sections.calculations.append(
            {
                "name": name,
                "id": len(self.sections.calculations),
                "source_info": {
                    "filename": loc.file,
                    "line": loc.line,
                    "column": loc.col,
                    "source_fragment": algo,
                },
                "algo": algo,
                "input": inputs,
            }
        )
        return name

    def _calc_input(self, value: Value, loc: Location) -> dict:
        if isinstance(value, Field):
            return value.json()
        if isinstance(value, Const) and isinstance(value.type, t.Bits):
            return {
                "type": "hexstr",
                "value": hexstr(int(value.value), value.type.width),
                "bitwidth": value.type.width,
            }
        raise CompileError("hash and checksum inputs must be fields or constants with a width", loc)

    def learn_list(self, data: Value, loc: Location) -> int:
        if not isinstance(data.type, t.StructLike):
            raise CompileError(f"digest data must be a struct, not {data.type}", loc)
        name = data.type.name
        for digest in self.artifacts.digests:
            if digest.name == name:
                return digest.list_id
        elements = [self._calc_input(v, loc) for v in flatten_fields(data)]
        list_id = len(self.sections.learn_lists) + 1
        self.sections.learn_lists.append(
            {
                "id": list_id,
                "name": name,
                "source_info": {
                    "filename": loc.file,
                    "line": loc.line,
                    "column": loc.col,
                    "source_fragment": "digest",
                },
                "elements": elements,
            }
        )
        self.artifacts.digests.append(DigestInfo(name, data.type, list_id))
        return list_id

    def field_list_of(self, fields: list[Value], loc: Location) -> int:
        elements = [self._calc_input(v, loc) for v in fields]
        list_id = len(self.sections.field_lists) + 1
        self.sections.field_lists.append(
            {"id": list_id, "name": f"fl_{list_id}", "elements": elements}
        )
        return list_id

    def annotated_field_list(self, index: int, loc: Location) -> int:
        """The field list of metadata fields annotated @field_list(index)."""
        name = f"field_list{index}"
        for entry in self.sections.field_lists:
            if entry["name"] == name:
                return entry["id"]
        fields: list[Value] = []
        if self.metadata_value is not None:
            fields = _annotated_fields(self.metadata_value, index)
        list_id = len(self.sections.field_lists) + 1
        self.sections.field_lists.append(
            {"id": list_id, "name": name, "elements": [self._calc_input(f, loc) for f in fields]}
        )
        return list_id


def control_plane_name(param: n.Param) -> str:
    annotation = n.find_annotation(param.annotations, "name")
    return annotation.string() if annotation is not None and annotation.string() else param.name


def _annotated_fields(struct: StructValue, index: int) -> list[Value]:
    result: list[Value] = []
    stype = struct.type
    assert isinstance(stype, t.StructLike)
    for name, value in struct.members.items():
        if isinstance(value, StructValue):
            result += _annotated_fields(value, index)
            continue
        for annotation in stype.annotations.get(name, []):
            if (
                annotation.name == "field_list"
                and annotation.body
                and str(index) in [p.strip() for p in annotation.body.split(",")]
            ):
                result.append(value)
    return result
