"""`for` loops unrolled at compile time, as BMv2 has no loops (p4c's BMv2 back end unrolls them too).

A loop becomes one block: the init statements that run at run time, then one block per iteration
in which the loop variables are compile-time constants (`n.Bind`), then the final values of loop
variables declared outside the loop. The variables whose values drive the loop (assigned constants
in the init, updated in the update list) are computed here; everything else runs at run time.

`break` and `continue` follow P4-16 1.2.4: where a `break` or `continue` is reached whatever the
packet (directly, or under an `if` whose condition is constant in that iteration) the unroller ends
the loop or the iteration there. One under a run-time condition sets a flag instead, and what
follows it (the rest of the body, the run-time updates, later iterations) runs only while the flags
are clear.
"""

from __future__ import annotations

from dataclasses import replace
from enum import Enum

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.errors import CompileError, Location
from ina.compiler.expressions import ExpressionCompiler
from ina.compiler.program import Scope
from ina.compiler.services import Services
from ina.compiler.values import Computed, Const, ListValue, StackInstance, Value

MAX_ITERATIONS = 1024


class _Ends(Enum):
    """How a statement list ends, seen from the loop it is in."""

    NORMALLY = 0
    BREAKS = 1  # always leaves the loop
    CONTINUES = 2  # always ends the iteration
    MAYBE = 3  # a run-time condition may set a flag


def unroll(services: Services, loop: n.For | n.ForIn, scope: Scope) -> list[n.Stmt]:
    """The statements that replace `loop` in the scope it appears in."""
    return [_Unroller(services, loop, scope).block()]


def jumps(stmt: n.Stmt) -> bool:
    """Whether a `break` or `continue` of the enclosing loop is inside (nested loops own theirs)."""
    match stmt:
        case n.Break() | n.Continue():
            return True
        case n.Block(stmts=stmts):
            return any(jumps(s) for s in stmts)
        case n.If(then=then, other=other):
            return jumps(then) or (other is not None and jumps(other))
        case n.Switch(cases=cases):
            return any(c.body is not None and jumps(c.body) for c in cases)
    return False


class _Unroller:
    def __init__(self, services: Services, loop: n.For | n.ForIn, scope: Scope):
        self.services = services
        self.loop = loop
        self.scope = scope
        self.known = (
            scope.child()
        )  # the loop variables' current values, for compile-time evaluation
        self.loop_vars: dict[str, t.P4Type] = {}
        self.outer: list[
            str
        ] = []  # loop variables declared outside the loop: their values are stored
        self.prelude: list[n.Stmt] = []  # init statements that run at run time
        self.break_flag = services.unique_name("$break")
        self.continue_flag = services.unique_name("$continue")
        self.flags_set: set[str] = set()  # flags a run-time condition may have set by now
        self.flags_declared: set[str] = set()

    # ---- the two forms
    def block(self) -> n.Block:
        loop = self.loop
        iterations = self._three_clause(loop) if isinstance(loop, n.For) else self._for_in(loop)
        flags = [
            n.VarDecl(loop.loc, n.BaseTypeRef(loop.loc, "bool"), name, n.BoolLit(loop.loc, False))
            for name in (self.break_flag, self.continue_flag)
            if name in self.flags_declared
        ]
        return n.Block(loop.loc, self.prelude + flags + iterations)

    def _three_clause(self, loop: n.For) -> list[n.Stmt]:
        for stmt in loop.init:
            self._init(stmt)
        iterations: list[n.Stmt] = []
        while self._condition(loop.cond):
            if len(iterations) == MAX_ITERATIONS:
                raise CompileError(
                    f"this for loop runs more than {MAX_ITERATIONS} iterations; ina unrolls "
                    "loops at compile time",
                    loop.loc,
                )
            binds = self._binds(loop.loc)
            body, ends = self._body(loop.body)
            if ends is _Ends.BREAKS:
                iterations.append(self._guarded(binds + body, loop.loc))
                return iterations
            updates = self._updates(loop.update)
            iterations.append(
                self._guarded(binds + body + self._unless_broken(updates, loop.loc), loop.loc)
            )
        return iterations + self._final_values(loop.loc)

    def _for_in(self, loop: n.ForIn) -> list[n.Stmt]:
        vtype = self.services.model.resolve(loop.type, scope=self.scope)
        elements = self._elements(loop, vtype)
        if len(elements) > MAX_ITERATIONS:
            raise CompileError(
                f"this for loop runs {len(elements)} iterations, more than the {MAX_ITERATIONS} "
                "ina unrolls",
                loop.loc,
            )
        iterations: list[n.Stmt] = []
        for element in elements:
            if isinstance(element, Const):
                head: list[n.Stmt] = [n.Bind(loop.loc, loop.name, element)]
                self.known.define(loop.name, element)
            else:
                head = [n.VarDecl(loop.loc, loop.type, loop.name, element)]
                self.known.define(loop.name, None)
            body, ends = self._body(loop.body)
            iterations.append(self._guarded(head + body, loop.loc))
            if ends is _Ends.BREAKS:
                break
        return iterations

    def _elements(self, loop: n.ForIn, vtype: t.P4Type) -> list[Const | n.Expr]:
        """Each iteration's value: a constant, or the name of a copy made before the loop (the
        collection is evaluated once, before the first iteration)."""
        ec = ExpressionCompiler(self.services, self.scope)
        collection = loop.collection
        if isinstance(collection, n.Range):
            lo, hi = (ec.value(end, vtype) for end in (collection.lo, collection.hi))
            if not isinstance(lo, Const) or not isinstance(hi, Const):
                raise CompileError(
                    "cannot unroll this for loop: the ends of its range are not known at compile "
                    "time",
                    collection.loc,
                )
            count = int(hi.value) - int(lo.value) + 1
            if count > MAX_ITERATIONS:
                raise CompileError(
                    f"this for loop runs {count} iterations, more than the {MAX_ITERATIONS} ina "
                    "unrolls",
                    loop.loc,
                )
            return [Const(vtype, v) for v in range(int(lo.value), int(hi.value) + 1)]
        if isinstance(collection, n.ListExpr):
            items: list[n.Expr] = collection.items
        else:
            found = ec.compile(collection)
            if isinstance(found, StackInstance):
                items = [
                    n.Index(collection.loc, collection, n.IntLit(collection.loc, i, None, False))
                    for i in range(len(found.elements))
                ]
            elif isinstance(found, ListValue) and isinstance(found.type, t.Tuple):
                items = [n.Known(collection.loc, item) for item in found.items]
            else:
                raise CompileError(
                    "a for-in loop iterates over a range (a .. b), a list {a, b, ...}, a tuple or a "
                    "header stack",
                    collection.loc,
                )
        result: list[Const | n.Expr] = []
        for item in items:
            value = ec.value(item, vtype)
            if isinstance(value, Const):
                result.append(value)
                continue
            copy = self.services.unique_name(f"${loop.name}")
            self.prelude.append(n.VarDecl(item.loc, loop.type, copy, item))
            result.append(n.Name(item.loc, copy))
        return result

    # ---- the loop variables
    def _init(self, stmt: n.Stmt) -> None:
        """A declaration or assignment of a constant makes a loop variable; others run at run time."""
        ec = ExpressionCompiler(self.services, self.known)
        if isinstance(stmt, n.VarDecl):
            vtype = self.services.model.resolve(stmt.type, scope=self.known)
            value = (
                ec.value(stmt.init, vtype)
                if stmt.init is not None and not n.has_calls(stmt.init)
                else None
            )
            if isinstance(value, Const):
                self._set(stmt.name, vtype, value)
                return
            self.known.define(stmt.name, Computed(vtype, {"op": "run-time value"}))
        elif (
            isinstance(stmt, n.Assign) and stmt.operator is None and isinstance(stmt.target, n.Name)
        ):
            target = ec.compile(stmt.target)
            value = (
                ec.value(stmt.value, target.type)
                if isinstance(target, Value) and not n.has_calls(stmt.value)
                else None
            )
            if isinstance(value, Const):
                self.outer.append(stmt.target.name)
                self._set(stmt.target.name, target.type, value)
                return
        self.prelude.append(stmt)

    def _set(self, name: str, vtype: t.P4Type, value: Const) -> None:
        self.loop_vars[name] = vtype
        self.known.define(name, value)

    def _condition(self, cond: n.Expr) -> bool:
        value = ExpressionCompiler(self.services, self.known).boolean(cond)
        if not isinstance(value, Const):
            raise CompileError(
                f"cannot unroll this for loop: its condition '{n.expr_text(cond)}' is not known at "
                "compile time (ina unrolls loops whose variables start at constants and change only "
                "in the update)",
                cond.loc,
            )
        return bool(value.value)

    def _binds(self, loc: Location) -> list[n.Stmt]:
        """The current loop values as the iteration sees them; loop variables declared outside the
        loop are also stored, so that they hold the value of the iteration a `break` leaves."""
        stores: list[n.Stmt] = [
            n.Assign(loc, n.Name(loc, name), n.Known(loc, self.known.names[name]))
            for name in self.outer
        ]
        return stores + [n.Bind(loc, name, self.known.names[name]) for name in self.loop_vars]

    def _updates(self, updates: list[n.Stmt]) -> list[n.Stmt]:
        """Compute the updates of loop variables; return the others, with the loop values each sees."""
        run_time: list[n.Stmt] = []
        for stmt in updates:
            if (
                isinstance(stmt, n.Assign)
                and isinstance(stmt.target, n.Name)
                and stmt.target.name in self.loop_vars
            ):
                name = stmt.target.name
                expr = (
                    stmt.value
                    if stmt.operator is None
                    else n.Binary(stmt.loc, stmt.operator, stmt.target, stmt.value)
                )
                value = ExpressionCompiler(self.services, self.known).value(
                    expr, self.loop_vars[name]
                )
                if not isinstance(value, Const):
                    raise CompileError(
                        f"cannot unroll this for loop: the update of '{name}' is not known at "
                        "compile time",
                        stmt.loc,
                    )
                self.known.define(name, value)
                run_time.append(n.Bind(stmt.loc, name, value))
            else:
                run_time.append(stmt)
        return run_time if any(not isinstance(s, n.Bind) for s in run_time) else []

    def _final_values(self, loc: Location) -> list[n.Stmt]:
        stores = [
            n.Assign(loc, n.Name(loc, name), n.Known(loc, self.known.names[name]))
            for name in self.outer
        ]
        return [self._guarded(stores, loc)] if stores else []

    # ---- one iteration's body
    def _body(self, body: n.Stmt) -> tuple[list[n.Stmt], _Ends]:
        self.flags_set.discard(self.continue_flag)
        stmts, ends = self._rewrite(_stmts(body), self.known.child(), run_time=False)
        if (
            self.continue_flag in self.flags_set
        ):  # cleared at the start of each iteration that may set it
            stmts.insert(
                0,
                n.Assign(
                    body.loc, n.Name(body.loc, self.continue_flag), n.BoolLit(body.loc, False)
                ),
            )
        return [n.Block(body.loc, stmts)], ends

    def _rewrite(
        self, stmts: list[n.Stmt], known: Scope, run_time: bool
    ) -> tuple[list[n.Stmt], _Ends]:
        """`run_time`: whether these statements run only as some run-time condition decides, so that a
        break or continue among them sets its flag."""
        out: list[n.Stmt] = []
        for i, stmt in enumerate(stmts):
            done, ends = self._statement(stmt, known, run_time)
            out += done
            if ends in (_Ends.BREAKS, _Ends.CONTINUES):
                return out, ends  # the rest is never reached
            if ends is _Ends.MAYBE:
                rest, _ = self._rewrite(stmts[i + 1 :], known, run_time=True)
                if rest:
                    out.append(
                        n.If(stmt.loc, self._running(stmt.loc), n.Block(stmt.loc, rest), None)
                    )
                return out, _Ends.MAYBE
        return out, _Ends.NORMALLY

    def _statement(self, stmt: n.Stmt, known: Scope, run_time: bool) -> tuple[list[n.Stmt], _Ends]:
        match stmt:
            case n.Break():
                return self._jump(stmt, self.break_flag, _Ends.BREAKS, run_time)
            case n.Continue():
                return self._jump(stmt, self.continue_flag, _Ends.CONTINUES, run_time)
            case n.Assign(target=target):
                self._check_not_loop_variable(target, stmt.loc, known)
            case n.VarDecl(name=name):
                known.define(name, None)  # shadows a loop variable: not known in the rest
            case n.ConstDecl(name=name):
                known.define(name, stmt)
            case n.Block(stmts=stmts) if jumps(stmt):
                inner, ends = self._rewrite(stmts, known.child(), run_time)
                return [replace(stmt, stmts=inner)], ends
            case n.If(cond=cond, then=then, other=other) if jumps(stmt):
                chosen = self._constant_condition(cond, known)
                if chosen is not None:
                    branch = then if chosen else other
                    if branch is None:
                        return [], _Ends.NORMALLY
                    return self._statement(n.Block(branch.loc, _stmts(branch)), known, run_time)
                then_out, then_ends = self._rewrite(_stmts(then), known.child(), run_time=True)
                other_out, other_ends = (
                    self._rewrite(_stmts(other), known.child(), run_time=True)
                    if other is not None
                    else ([], _Ends.NORMALLY)
                )
                rewritten = n.If(
                    stmt.loc,
                    cond,
                    n.Block(then.loc, then_out),
                    n.Block(other.loc, other_out) if other is not None else None,
                )
                return [
                    rewritten
                ], _Ends.NORMALLY if then_ends is other_ends is _Ends.NORMALLY else _Ends.MAYBE
            case n.Switch(cases=cases) if jumps(stmt):
                new_cases = [
                    replace(
                        c,
                        body=n.Block(
                            c.body.loc, self._rewrite(c.body.stmts, known.child(), True)[0]
                        ),
                    )
                    if c.body is not None
                    else c
                    for c in cases
                ]
                return [replace(stmt, cases=new_cases)], _Ends.MAYBE
        return [stmt], _Ends.NORMALLY

    def _jump(
        self, stmt: n.Stmt, flag: str, ends: _Ends, run_time: bool
    ) -> tuple[list[n.Stmt], _Ends]:
        if not run_time:
            return [], ends
        self.flags_set.add(flag)
        self.flags_declared.add(flag)
        return [n.Assign(stmt.loc, n.Name(stmt.loc, flag), n.BoolLit(stmt.loc, True))], ends

    def _constant_condition(self, cond: n.Expr, known: Scope) -> bool | None:
        """The condition's value when the loop values alone decide it, else None (decided at run time;
        an expression that does not compile here is left to the lowering to report)."""
        if n.has_calls(cond):
            return None
        try:
            value = ExpressionCompiler(self.services, known).boolean(cond)
        except CompileError:
            return None
        return bool(value.value) if isinstance(value, Const) else None

    def _check_not_loop_variable(self, target: n.Expr, loc: Location, known: Scope) -> None:
        while isinstance(target, n.Member | n.Index | n.Slice):
            target = target.expr
        if (
            isinstance(target, n.Name)
            and target.name in self.loop_vars
            and isinstance(known.lookup(target.name), Const)
        ):
            raise CompileError(
                f"'{target.name}' is this loop's variable; ina unrolls loops whose variables change "
                "only in the update, not in the body",
                loc,
            )

    # ---- flags
    def _running(self, loc: Location) -> n.Expr:
        """True while no flag set so far says to skip the rest."""
        cond: n.Expr | None = None
        for flag in (self.break_flag, self.continue_flag):
            if flag in self.flags_set:
                clear = n.Unary(loc, "!", n.Name(loc, flag))
                cond = clear if cond is None else n.Binary(loc, "&&", cond, clear)
        return cond if cond is not None else n.BoolLit(loc, True)

    def _unless_broken(self, stmts: list[n.Stmt], loc: Location) -> list[n.Stmt]:
        if not stmts or self.break_flag not in self.flags_set:
            return stmts
        return [
            n.If(loc, n.Unary(loc, "!", n.Name(loc, self.break_flag)), n.Block(loc, stmts), None)
        ]

    def _guarded(self, stmts: list[n.Stmt], loc: Location) -> n.Stmt:
        """An iteration (or the final stores) runs only if no earlier iteration may have broken out."""
        block = n.Block(loc, stmts)
        if self.break_flag not in self.flags_set:
            return block
        return n.If(loc, n.Unary(loc, "!", n.Name(loc, self.break_flag)), block, None)


def _stmts(stmt: n.Stmt) -> list[n.Stmt]:
    return stmt.stmts if isinstance(stmt, n.Block) else [stmt]
