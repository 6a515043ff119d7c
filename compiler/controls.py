"""Control blocks: locals, and the apply block as a BMv2 pipeline graph.

Straight-line statements become hidden keyless tables (tbl_*) whose const default action holds
them, as p4c does; `if` becomes a conditional node; table applications become table nodes whose
next_tables encode hit/miss and switch cases. Nested control instances are inlined.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.actions import ActionBody
from ina.compiler.calls import bind_args
from ina.compiler.errors import CompileError, Location
from ina.compiler.expressions import ExpressionCompiler
from ina.compiler.loops import unroll
from ina.compiler.objects import ActionBinding, BlockInstance, FunctionBinding, TableObject
from ina.compiler.program import Scope
from ina.compiler.services import Services
from ina.compiler.tables import TableLowering
from ina.compiler.values import Const, Unassigned, as_bool, read_only

Link = Callable[[str | None], None]
_RETURN = "$return$"


@dataclass
class Fragment:
    """A piece of pipeline: its first node (None if empty) and the links still to point onward."""

    entry: str | None = None
    exits: list[Link] = field(default_factory=list)


@dataclass
class Pipeline:
    name: str
    tables: list[dict] = field(default_factory=list)
    conditionals: list[dict] = field(default_factory=list)

    action_profiles: list[dict] = field(default_factory=list)

    def add_action_profile(self, profile: Any, services: Services) -> None:
        if any(p["name"] == profile.name for p in self.action_profiles):
            return
        entry = {
            "name": profile.name,
            "id": services.next_id("action_profile"),
            "max_size": profile.extra["size"],
        }
        if profile.kind == "action_selector":
            entry["selector"] = {
                "algo": profile.extra["algo"],
                "input": profile.extra["selector_input"],
            }
        self.action_profiles.append(entry)

    def json(self, pipeline_id: int, init: str | None) -> dict:
        return {
            "name": self.name,
            "id": pipeline_id,
            "init_table": init,
            "tables": self.tables,
            "action_profiles": self.action_profiles,
            "conditionals": self.conditionals,
        }


class ControlLowering:
    """Lowers one control (and the controls it instantiates) into a pipeline."""

    def __init__(self, services: Services, pipeline: Pipeline):
        self.services = services
        self.pipeline = pipeline
        self._returns: list[list[Link]] = []

    # ---- declarations
    def enter(
        self, decl: n.ControlDecl, owner: str, bindings: dict[str, Any]
    ) -> tuple[Scope, list[n.Stmt]]:
        """A scope with the parameters bound and the locals declared; returns local initializers."""
        scope = self.services.model.globals.child(owner)
        for name, value in bindings.items():
            scope.define(name, value)
        inits: list[n.Stmt] = []
        for local in decl.locals:
            self.declare_local(local, scope, owner, inits)
        return scope, inits

    def declare_local(self, local: n.Node, scope: Scope, owner: str, inits: list[n.Stmt]) -> None:
        match local:
            case n.ConstDecl():
                scope.define(local.name, local)
            case n.VarDecl():
                vtype = self.services.model.resolve(local.type, scope=scope)
                scope.define(
                    local.name, self.services.allocate(vtype, local.name, owner, local.loc)
                )
                if local.init is not None:
                    inits.append(n.Assign(local.loc, n.Name(local.loc, local.name), local.init))
            case n.Instantiation():
                scope.define(local.name, self.services.instantiate(local, scope, owner))
            case n.ActionDecl():
                scope.define(local.name, ActionBinding(local, scope, n.qualified(owner, local)))
            case n.TableDecl():
                scope.define(
                    local.name, TableObject(local, scope, local.name, n.qualified(owner, local))
                )
            case n.FunctionDecl():
                scope.define(local.name, FunctionBinding(local, scope))
            case _:
                raise CompileError(
                    f"unsupported declaration in a control ({type(local).__name__})", local.loc
                )

    def lower(self, decl: n.ControlDecl, owner: str, bindings: dict[str, Any]) -> Fragment:
        scope, inits = self.enter(decl, owner, bindings)
        self._returns.append([])
        body = self.block(inits + decl.body.stmts, scope, owner)
        returns = self._returns.pop()
        if body.entry == _RETURN:
            return Fragment(None, returns)
        return Fragment(body.entry, body.exits + returns)

    # ---- statements
    def block(self, stmts: list[n.Stmt], scope: Scope, owner: str) -> Fragment:
        result = Fragment()
        run: list[n.Stmt] = []
        for stmt in stmts:
            if self._applies_table(self._hoistable_parts(stmt, scope), scope):
                if run:  # earlier statements (and their declarations) come first
                    result = self._seq(result, self._hidden(run, scope, owner))
                    run = []
                hoisted, stmt = self._hoist_table_results(stmt, scope, owner)
                result = self._seq(result, hoisted)
            if self._straight(stmt, scope):
                run.append(stmt)
                continue
            if run:
                result = self._seq(result, self._hidden(run, scope, owner))
                run = []
            result = self._seq(result, self.statement(stmt, scope, owner))
            if result.entry == _RETURN or (result.entry is not None and not result.exits):
                return result  # the rest is unreachable
        if run:
            result = self._seq(result, self._hidden(run, scope, owner))
        return result

    def _hoist_table_results(
        self, stmt: n.Stmt, scope: Scope, owner: str
    ) -> tuple[Fragment, n.Stmt]:
        """Apply tables whose `.hit`/`.miss` is used inside a larger expression first, recording the
        result in a bool temporary the expression then reads."""
        fragment = Fragment()

        def rewrite(node: Any) -> Any:
            nonlocal fragment
            if (
                isinstance(node, n.Member)
                and node.name in ("hit", "miss")
                and isinstance(node.expr, n.Call)
            ):
                table = self._apply_target(node.expr, scope)
                if isinstance(table, TableObject):
                    flag = self._hit_flag(table, node.loc, scope, owner)
                    fragment = self._seq(fragment, flag[0])
                    ref = n.Name(node.loc, flag[1])
                    return ref if node.name == "hit" else n.Unary(node.loc, "!", ref)
            if (
                isinstance(node, n.Binary)
                and node.op in ("&&", "||")
                and self._applies_table(node.right, scope)
            ):
                # short-circuit: the right side's tables are applied only when it is evaluated
                left = rewrite(node.left)
                result = self._temporary_name(t.Bool(), "cond", scope, owner, node.loc)
                ref = n.Name(node.loc, result)
                test = ref if node.op == "&&" else n.Unary(node.loc, "!", ref)
                steps = [
                    n.Assign(node.loc, ref, left),
                    n.If(node.loc, test, n.Assign(node.loc, ref, node.right), None),
                ]
                fragment = self._seq(fragment, self.block(steps, scope, owner))
                return ref
            if isinstance(node, list):
                return [rewrite(item) for item in node]
            if isinstance(node, n.Expr | n.Arg):
                changes = {
                    f.name: rewrite(getattr(node, f.name))
                    for f in dataclasses.fields(node)
                    if f.name != "loc"
                }
                return dataclasses.replace(node, **changes)
            return node

        match stmt:
            case n.If(cond=cond) if self._table_condition(cond, scope) is None:
                stmt = dataclasses.replace(stmt, cond=rewrite(cond))
            case n.Assign(value=value):
                stmt = dataclasses.replace(stmt, value=rewrite(value))
            case n.VarDecl(init=init) if init is not None:
                stmt = dataclasses.replace(stmt, init=rewrite(init))
            case n.CallStmt(call=call):
                stmt = dataclasses.replace(
                    stmt, call=dataclasses.replace(call, args=rewrite(call.args))
                )
            case n.Switch(expr=expr) if not (
                isinstance(expr, n.Member) and expr.name == "action_run"
            ):
                stmt = dataclasses.replace(stmt, expr=rewrite(expr))
        return fragment, stmt

    def _hoistable_parts(self, stmt: n.Stmt, scope: Scope) -> list[Any]:
        """The expressions of a statement in which a table application gets hoisted."""
        match stmt:
            case n.If(cond=cond) if self._table_condition(cond, scope) is None:
                return [cond]
            case n.Assign(value=value):
                return [value]
            case n.VarDecl(init=init) if init is not None:
                return [init]
            case n.CallStmt(call=call):
                return list(call.args)
            case n.Switch(expr=expr) if not (
                isinstance(expr, n.Member) and expr.name == "action_run"
            ):
                return [expr]
        return []

    def _applies_table(self, node: Any, scope: Scope) -> bool:
        if (
            isinstance(node, n.Member)
            and node.name in ("hit", "miss")
            and isinstance(node.expr, n.Call)
            and isinstance(self._apply_target(node.expr, scope), TableObject)
        ):
            return True
        if isinstance(node, list):
            return any(self._applies_table(item, scope) for item in node)
        if isinstance(node, n.Expr | n.Arg):
            return any(
                self._applies_table(getattr(node, f.name), scope) for f in dataclasses.fields(node)
            )
        return False

    def _temporary_name(
        self, vtype: t.P4Type, hint: str, scope: Scope, owner: str, loc: Location
    ) -> str:
        name = self.services.unique_name(f"${hint}")
        scope.define(name, self.services.allocate(vtype, hint, owner, loc))
        return name

    def _hit_flag(
        self, table: TableObject, loc: Location, scope: Scope, owner: str
    ) -> tuple[Fragment, str]:
        flag = self.services.allocate(t.Bool(), f"{table.local_name}_hit", owner, loc)
        name = self.services.unique_name(f"$hit_{table.local_name}")
        scope.define(name, flag)
        ec = ExpressionCompiler(self.services, scope)
        clear = ActionBody(self.services, owner)
        clear.assign(ec, flag, Const(t.Bool(), False), loc)
        head = self.hidden_table(clear, f"{table.local_name}_clear", loc)
        applied, json_table = self.apply_table(table, loc, scope, owner)
        json_table["next_tables"] = {"__HIT__": None, "__MISS__": None}
        mark = ActionBody(self.services, owner)
        mark.assign(ec, flag, Const(t.Bool(), True), loc)
        marked = self.hidden_table(mark, f"{table.local_name}_hit", loc)
        json_table["next_tables"]["__HIT__"] = marked.entry
        miss: Link = lambda target: json_table["next_tables"].__setitem__("__MISS__", target)  # noqa: E731
        return self._seq(head, Fragment(applied.entry, [*marked.exits, miss])), name

    def _seq(self, first: Fragment, second: Fragment) -> Fragment:
        if first.entry is None:
            return second
        if first.entry == _RETURN:
            return first
        if second.entry is None:
            return first
        if second.entry == _RETURN:
            self._returns[-1].extend(first.exits)
            return Fragment(first.entry, [])
        for link in first.exits:
            link(second.entry)
        return Fragment(first.entry, second.exits)

    def _straight(self, stmt: n.Stmt, scope: Scope) -> bool:
        """Statements that can run inside one action (no tables, branches or nested controls)."""
        match stmt:
            case n.Assign() | n.VarDecl() | n.ConstDecl() | n.Empty() | n.Bind():
                return True
            case n.CallStmt(call=call):
                return self._apply_target(call, scope) is None
            case n.Block(stmts=stmts):
                return all(self._straight(s, scope) for s in stmts) and not any(
                    isinstance(s, n.If | n.Switch | n.Return | n.Exit) for s in stmts
                )
        return False

    def _apply_target(self, call: n.Call, scope: Scope) -> Any:
        func = call.func
        if isinstance(func, n.TypeMember) and func.name == "apply":
            decl = self.services.model.type_decls.get(func.type_name)
            if isinstance(decl, n.ControlDecl):
                return BlockInstance(
                    decl, f"{scope.owner}.{decl.name}" if scope.owner else decl.name, []
                )
        if isinstance(func, n.Member) and func.name == "apply":
            try:
                target = ExpressionCompiler(self.services, scope).compile(func.expr)
            except CompileError:
                return None
            if isinstance(target, TableObject | BlockInstance):
                return target
        return None

    def statement(self, stmt: n.Stmt, scope: Scope, owner: str) -> Fragment:
        match stmt:
            case n.CallStmt(call=call):
                target = self._apply_target(call, scope)
                if isinstance(target, TableObject):
                    fragment, _ = self.apply_table(target, call.loc, scope, owner)
                    return fragment
                return self.apply_control(target, call, scope, owner)
            case n.Block(stmts=stmts):
                return self.block(stmts, scope.child(), owner)
            case n.If():
                return self._if(stmt, scope, owner)
            case n.Switch():
                return self._switch(stmt, scope, owner)
            case n.Return(value=None):
                return Fragment(_RETURN)
            case n.Return():
                raise CompileError("an apply block cannot return a value", stmt.loc)
            case n.Exit():
                return self._exit(stmt, scope, owner)
            case n.For() | n.ForIn():
                return self.block(unroll(self.services, stmt, scope), scope, owner)
            case n.Break() | n.Continue():
                raise CompileError(
                    f"{type(stmt).__name__.lower()} can be used only inside a for loop", stmt.loc
                )
        raise CompileError(
            f"unsupported statement in an apply block ({type(stmt).__name__})", stmt.loc
        )

    def _hidden(self, stmts: list[n.Stmt], scope: Scope, owner: str) -> Fragment:
        body = ActionBody(self.services, owner, apply_block=True)
        body.run(stmts, scope)
        if not body.primitives:
            return Fragment()
        hint = "act"
        if (
            len(stmts) == 1
            and isinstance(stmts[0], n.CallStmt)
            and isinstance(stmts[0].call.func, n.Name)
        ):
            hint = stmts[0].call.func.name
        return self.hidden_table(body, hint, stmts[0].loc)

    def hidden_table(self, body: ActionBody, hint: str, loc: Location) -> Fragment:
        action = self.services.add_action(
            self.services.unique_name("act"), [], body.primitives, loc
        )
        name = self.services.unique_name(f"tbl_{hint}")
        table = {
            "name": name,
            "id": self.services.next_id("table"),
            "source_info": {
                "filename": loc.file,
                "line": loc.line,
                "column": loc.col,
                "source_fragment": hint,
            },
            "key": [],
            "match_type": "exact",
            "type": "simple",
            "max_size": 1024,
            "with_counters": False,
            "support_timeout": False,
            "direct_meters": None,
            "action_ids": [action["id"]],
            "actions": [action["name"]],
            "base_default_next": None,
            "next_tables": {action["name"]: None},
            "default_entry": {
                "action_id": action["id"],
                "action_const": True,
                "action_data": [],
                "action_entry_const": True,
            },
        }
        self.pipeline.tables.append(table)

        def link(target: str | None) -> None:
            table["base_default_next"] = target
            table["next_tables"][action["name"]] = target

        return Fragment(name, [link])

    # ---- tables
    def apply_table(
        self, table: TableObject, loc: Location, scope: Scope, owner: str
    ) -> tuple[Fragment, dict]:
        if table.applied:
            raise CompileError(
                f"table '{table.local_name}' is applied more than once; BMv2 allows one "
                "application per table",
                loc,
            )
        table.applied = True
        lowered = TableLowering(self.services, table)
        json_table, info = lowered.build(self.services.next_id("table"))
        self.services.artifacts.tables.append(info)
        self.pipeline.tables.append(json_table)
        if info.implementation is not None:
            self.pipeline.add_action_profile(info.implementation, self.services)
        fragment = Fragment(json_table["name"], [lambda target: self._link_all(json_table, target)])
        if lowered.key_assignments:
            body = ActionBody(self.services, owner)
            ec = ExpressionCompiler(self.services, scope, body)
            for target, value, where in lowered.key_assignments:
                body.assign(ec, target, value, where)
            fragment = self._seq(self.hidden_table(body, f"{table.local_name}_key", loc), fragment)
        return fragment, json_table

    @staticmethod
    def _link_all(table: dict, target: str | None) -> None:
        table["base_default_next"] = target
        for action in table["next_tables"]:
            table["next_tables"][action] = target

    def _table_condition(self, cond: n.Expr, scope: Scope) -> tuple[TableObject, bool] | None:
        """`t.apply().hit`, `t.apply().miss` and their negations: (table, branch-on-hit)."""
        negate = False
        while isinstance(cond, n.Unary) and cond.op == "!":
            negate = not negate
            cond = cond.expr
        if (
            isinstance(cond, n.Member)
            and cond.name in ("hit", "miss")
            and isinstance(cond.expr, n.Call)
        ):
            target = self._apply_target(cond.expr, scope)
            if isinstance(target, TableObject):
                return target, (cond.name == "hit") != negate
        return None

    def _if(self, stmt: n.If, scope: Scope, owner: str) -> Fragment:
        table_cond = self._table_condition(stmt.cond, scope)
        if table_cond is not None:
            table, on_hit = table_cond
            head, json_table = self.apply_table(table, stmt.cond.loc, scope, owner)
            json_table["next_tables"] = {"__HIT__": None, "__MISS__": None}
            then_key, else_key = ("__HIT__", "__MISS__") if on_hit else ("__MISS__", "__HIT__")
            exits = self._branches(json_table, then_key, else_key, stmt, scope, owner)
            return Fragment(head.entry, exits)
        effects = ActionBody(self.services, owner)
        ec = ExpressionCompiler(self.services, scope, effects)
        cond = ec.boolean(stmt.cond)
        prelude = self.hidden_table(effects, "cond", stmt.loc) if effects.primitives else Fragment()
        if isinstance(cond, Const):
            chosen = stmt.then if cond.value else stmt.other
            return self._seq(
                prelude, self.statement_or_block(chosen, scope, owner) if chosen else Fragment()
            )
        name = self.services.unique_name("node")
        conditional = {
            "name": name,
            "id": self.services.next_id("conditional"),
            "source_info": {
                "filename": stmt.loc.file,
                "line": stmt.loc.line,
                "column": stmt.loc.col,
                "source_fragment": n.expr_text(stmt.cond),
            },
            "expression": as_bool(cond),
            "true_next": None,
            "false_next": None,
        }
        self.pipeline.conditionals.append(conditional)
        exits = self._branches(
            conditional, "true_next", "false_next", stmt, scope, owner, direct=True
        )
        return self._seq(prelude, Fragment(name, exits))

    def _branches(
        self,
        node: dict,
        then_key: str,
        else_key: str,
        stmt: n.If,
        scope: Scope,
        owner: str,
        direct: bool = False,
    ) -> list[Link]:
        def setter(key: str) -> Link:
            if direct:
                return lambda target: node.__setitem__(key, target)
            return lambda target: node["next_tables"].__setitem__(key, target)

        exits: list[Link] = []
        for key, branch in ((then_key, stmt.then), (else_key, stmt.other)):
            fragment = (
                self.statement_or_block(branch, scope, owner) if branch is not None else Fragment()
            )
            exits += self._attach(setter(key), fragment)
        if not direct:
            node["base_default_next"] = None
        return exits

    def _attach(self, link: Link, fragment: Fragment) -> list[Link]:
        """Point `link` at a fragment; returns the links that continue after it."""
        if fragment.entry is None:
            return [link]
        if fragment.entry == _RETURN:
            self._returns[-1].append(link)
            return []
        link(fragment.entry)
        return fragment.exits

    def statement_or_block(self, stmt: n.Stmt, scope: Scope, owner: str) -> Fragment:
        stmts = stmt.stmts if isinstance(stmt, n.Block) else [stmt]
        return self.block(stmts, scope.child(), owner)

    def _switch(self, stmt: n.Switch, scope: Scope, owner: str) -> Fragment:
        expr = stmt.expr
        if (
            isinstance(expr, n.Member)
            and expr.name == "action_run"
            and isinstance(expr.expr, n.Call)
        ):
            table = self._apply_target(expr.expr, scope)
            if isinstance(table, TableObject):
                return self._switch_action_run(stmt, table, scope, owner)
        return self._switch_value(stmt, scope, owner)

    def _case_groups(self, stmt: n.Switch) -> list[tuple[list[n.Expr | None], n.Block]]:
        """Cases that share a body (labels without a body fall through to the next one)."""
        groups: list[tuple[list[n.Expr | None], n.Block]] = []
        pending: list[n.Expr | None] = []
        for case in stmt.cases:
            pending.append(case.label)
            if case.body is not None:
                groups.append((pending, case.body))
                pending = []
        if pending:
            groups.append((pending, n.Block(stmt.loc, [])))
        return groups

    def _switch_action_run(
        self, stmt: n.Switch, table: TableObject, scope: Scope, owner: str
    ) -> Fragment:
        head, json_table = self.apply_table(table, stmt.expr.loc, scope, owner)
        actions = set(json_table["actions"])
        exits: list[Link] = []
        covered: set[str] = set()
        default_body = None
        for labels, body in self._case_groups(stmt):
            names = []
            for label in labels:
                if label is None:
                    default_body = body
                    continue
                found = (
                    ExpressionCompiler(self.services, scope).compile(label)
                    if isinstance(label, n.Name)
                    else None
                )
                if isinstance(found, n.ActionDecl):
                    found = self.services.bind_global_action(found)
                if not isinstance(found, ActionBinding) or found.qualified_name not in actions:
                    raise CompileError(
                        f"'{n.expr_text(label)}' is not an action of table '{table.local_name}'",
                        label.loc,
                    )
                if found.qualified_name in covered:
                    raise CompileError(
                        f"action '{n.expr_text(label)}' appears in two cases", label.loc
                    )
                names.append(found.qualified_name)
            if not names:
                continue
            fragment = self.block(body.stmts, scope.child(), owner)
            for name in names:
                exits += self._attach(self._next_setter(json_table, name), fragment)
                covered.add(name)
        rest = [a for a in json_table["actions"] if a not in covered]
        default_fragment = (
            self.block(default_body.stmts, scope.child(), owner) if default_body else Fragment()
        )
        for name in rest:
            exits += self._attach(self._next_setter(json_table, name), default_fragment)
        exits.append(lambda target: json_table.__setitem__("base_default_next", target))
        return Fragment(head.entry, _dedupe(exits))

    @staticmethod
    def _next_setter(json_table: dict, action: str) -> Link:
        return lambda target: json_table["next_tables"].__setitem__(action, target)

    def _switch_value(self, stmt: n.Switch, scope: Scope, owner: str) -> Fragment:
        """`switch (x) { 1: {...} 2: {...} default: {...} }` as a chain of `if (x == 1) ... else ...`."""
        ec = ExpressionCompiler(self.services, scope)
        subject = ec.value(stmt.expr)
        if not isinstance(subject.type, t.Bits | t.Enum | t.ErrorType):
            raise CompileError(
                f"switch needs a bit<N>, int<N>, enum or error value (or table.apply().action_run), "
                f"not {subject.type}",
                stmt.expr.loc,
            )
        groups = self._case_groups(stmt)
        chain: n.Stmt | None = next((body for labels, body in groups if None in labels), None)
        for labels, body in reversed(groups):
            tests = [label for label in labels if label is not None]
            if not tests:
                continue
            cond: n.Expr = n.Binary(tests[0].loc, "==", stmt.expr, tests[0])
            for label in tests[1:]:
                cond = n.Binary(label.loc, "||", cond, n.Binary(label.loc, "==", stmt.expr, label))
            for label in tests:
                ec.constant(label, subject.type)
            chain = n.If(body.loc, cond, body, chain)
        return self.statement_or_block(chain, scope, owner) if chain is not None else Fragment()

    def _exit(self, stmt: n.Exit, scope: Scope, owner: str) -> Fragment:
        body = ActionBody(self.services, owner)
        body.emit("exit", [], stmt.loc)
        fragment = self.hidden_table(body, "exit", stmt.loc)
        return Fragment(fragment.entry, [])

    # ---- nested controls
    def apply_control(
        self, instance: BlockInstance, call: n.Call, scope: Scope, owner: str
    ) -> Fragment:
        decl = instance.decl
        if not isinstance(decl, n.ControlDecl):
            raise CompileError(
                f"'{instance.name}' is a parser; parsers can be applied only in parsers", call.loc
            )
        caller = ExpressionCompiler(self.services, scope)
        bindings: dict[str, Any] = {}
        for param, arg in bind_args(decl.params, call.args, call.loc, f"control '{decl.name}'"):
            expr = arg.value if arg is not None else param.default
            if param.direction in ("out", "inout"):
                bindings[param.name] = caller.lvalue(expr) if expr is not None else Unassigned(None)
            else:
                ptype = self.services.model.resolve(param.type, scope=self.services.model.globals)
                bindings[param.name] = read_only(
                    caller.value(expr, ptype if not isinstance(ptype, t.TypeVar) else None)
                )
        for param, value in zip(decl.ctor_params, instance.ctor_args, strict=False):
            bindings[param.name] = value
        return self.lower(decl, instance.name, bindings)


def _dedupe(links: list[Link]) -> list[Link]:
    seen: list[Link] = []
    for link in links:
        if link not in seen:
            seen.append(link)
    return seen
