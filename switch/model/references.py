"""Every name, index and width a program's code uses, checked at load against what it names.

Both engines generate code from the program model, so what the code would follow outside what it
names is refused here, once for both, with the JSON place: an action parameter past the action's
count (or outside an action), a literal register, counter or meter index outside its array, a
literal stack index past its stack, a field offset past its header, a union member past its
union, a width below 1, a copy or comparison between headers, unions or stacks of other shapes, a
varbit copied into a shorter one, a lookahead outside the parser, a jump that is not forward
within its action, a primitive with the wrong number of parameters, declared entries whose action
data does not fit their action, and any header, field, stack, union, array, calculation, action,
table, node, state or value set that does not exist (or, for arrays and tables, exists twice).
What only a packet decides (a computed index) is checked per packet, alike in both engines
(primitives.py). program.py's `load_program` calls `check_references`; this module reads the
model, and the JSON of what the model keeps as JSON (expressions, primitive parameters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ina.switch.model.externs import EXTERNS
from ina.switch.model.layout import HeaderLayout, Layout, StackLayout
from ina.switch.model.primitives import HEADER_EXPRESSIONS, PRIMITIVES, Kind
from ina.switch.model.program import JUMPS, ActionParam, Control, Parser, Program, Table
from ina.switch.model.shapes import MAX_BITS, refused
from ina.switch.model.values import hexint

# Parser operations: what each parameter is, as PRIMITIVES says for primitives.
PARSER_OPS: dict[str, tuple[str, ...]] = {
    "extract": ("extract",), "extract_VL": ("extract", Kind.VALUE), "set": (Kind.FIELD, Kind.VALUE),
    "verify": (Kind.VALUE, Kind.VALUE), "shift": (Kind.VALUE,), "advance": (Kind.VALUE,),
    "primitive": ("primitive",),
}  # fmt: skip
WIDTH_OPS = ("two_comp_mod", "sat_cast", "usat_cast")  # their right operand is a width
STACK_OPS = ("last_stack_index", "size_stack")  # their right operand is a header stack
NAMES = {"header": "header", "regular": "header", "header_stack": "header stack", "stack": "header stack",
         "header_union": "header union", "header_union_stack": "header union stack",
         "calculation": "calculation", **{k.reference: k.what for k in EXTERNS.values()}}  # fmt: skip
ARRAYS = {Kind[k.name.upper()]: k.reference for k in EXTERNS.values()}  # a parameter's Kind -> type


@dataclass(frozen=True)
class Scope:
    """Where a value is read, and so what it may name there."""

    params: tuple[ActionParam, ...] | None = None  # the action's parameters; None outside actions
    action: str = ""
    parser: bool = False  # a parser state: lookahead reads the packet at the parser's offset


OUTSIDE = Scope()  # conditionals and checksums: neither action data nor the packet's bytes


def check_references(model: Program, layout: Layout) -> None:
    """Raise PipelineError at the JSON place of the first reference, index or width the generated
    code would use outside what it names."""
    _Checker(model, layout).program()


def literal(obj: dict) -> int | None:
    """The value of a hex string literal; None for anything computed (checked per packet)."""
    return hexint(obj["value"]) if obj.get("type") == "hexstr" else None


def operator(obj: dict, path: str) -> tuple[dict, str]:
    """The operator object of an `expression` value (p4c may wrap it twice) and its path."""
    expr, path = obj["value"], f"{path}.value"
    while "op" not in expr and expr.get("type") == "expression":
        expr, path = expr["value"], f"{path}.value"
    return expr, path


def header_shape(hl: HeaderLayout) -> tuple:
    """What a copy or comparison of two headers needs alike: field widths, signs, varbit size."""
    return tuple((w, s) for _n, w, s in hl.fields), hl.varbit_max


class _Checker:
    def __init__(self, model: Program, layout: Layout):
        self.model = model
        self.layout = layout
        self.things: dict[str, dict] = {  # what each JSON type of name names, by name
            "header": layout.headers, "regular": layout.headers, "header_stack": layout.stacks,
            "stack": layout.stacks, "header_union": layout.unions, "header_union_stack": layout.union_stacks,
            "calculation": model.calculations,
            **{k.reference: {x.name: x for x in model.externs[k.name]} for k in EXTERNS.values()},
        }  # fmt: skip

    # --- the program, section by section -------------------------------------------------
    def program(self) -> None:
        m, layout = self.model, self.layout
        for kind in EXTERNS.values():
            named = enumerate(m.externs[kind.name])
            unique((a.name, f"{kind.section}[{i}].name") for i, a in named)
        unique(
            (t.name, f"pipelines[{i}].tables[{j}].name")
            for i, c in enumerate(m.controls)
            for j, t in enumerate(c.tables)
        )
        for i, stack in enumerate(layout.stacks.values()):
            if len({header_shape(layout.header(h)) for h in stack.elements}) > 1:
                raise refused(
                    f"header_stacks[{i}].header_ids",
                    f"the elements of stack '{stack.name}' differ in shape",
                )
        for i, action in enumerate(m.actions.values()):
            scope = Scope(action.params, action.name)
            for j, prim in enumerate(action.primitives):
                self.primitive(prim, f"actions[{i}].primitives[{j}]", scope)
                if prim["op"] in JUMPS:
                    self.jump(
                        prim["parameters"][-1],
                        j,
                        len(action.primitives),
                        f"actions[{i}].primitives[{j}].parameters[{len(prim['parameters']) - 1}]",
                    )
        for i, control in enumerate(m.controls):
            self.control(control, f"pipelines[{i}]")
        for i, parser in enumerate(m.parsers):
            self.parser(parser, f"parsers[{i}]")
        for i, ck in enumerate(m.checksums):
            self.ref(ck.target, f"checksums[{i}].target")
            if ck.condition is not None:
                self.value(ck.condition, f"checksums[{i}].if_cond", OUTSIDE)
        for kind in EXTERNS.values():  # a direct array's table
            for i, array in enumerate(m.externs[kind.name]):
                binding = getattr(array, "binding", None)
                if binding is not None and binding not in m.tables:
                    raise refused(f"{kind.section}[{i}].binding", f"no table is called '{binding}'")
        for i, meter in enumerate(m.meters):
            if meter.result_target is not None:
                self.ref(meter.result_target, f"meter_arrays[{i}].result_target")
        for i, deparser in enumerate(m.deparsers):
            for j, name in enumerate(deparser.order):
                if (
                    name not in layout.headers
                    and name not in layout.stacks
                    and name not in layout.unions
                ):
                    raise refused(
                        f"deparsers[{i}].order[{j}]",
                        f"no header, header stack or union is called '{name}'",
                    )

    # --- actions and primitives ----------------------------------------------------------
    def primitive(self, prim: dict, path: str, scope: Scope) -> None:
        op, params = prim["op"], prim.get("parameters", [])
        entry = PRIMITIVES.get(op)
        if entry is None:
            raise refused(f"{path}.op", f"unknown primitive '{op}'")
        least = len(entry.params) if entry.least is None else entry.least
        if not least <= len(params) <= len(entry.params):
            wanted = str(least) if least == len(entry.params) else f"{least}..{len(entry.params)}"
            raise refused(
                f"{path}.parameters", f"'{op}' takes {wanted} parameters, got {len(params)}"
            )
        self.parameters(entry.params, params, f"{path}.parameters", scope)

    @staticmethod
    def jump(target: dict, at: int, count: int, path: str) -> None:
        """Where primitive `at` of an action of `count` jumps: forward, within the action (P4 actions
        have no loops; a jump back would spin the packet forever)."""
        if target.get("type") != "hexstr" or not at < hexint(target["value"]) <= count:
            raise refused(
                path,
                f"a jump from primitive {at} goes to {literal(target)}, not forward "
                f"within its action of {count}",
            )

    def parameters(
        self, kinds: tuple[str, ...], params: list[dict], path: str, scope: Scope
    ) -> None:
        """Each parameter checked as its kind says; a SOURCE, INDEX or VALUES parameter against the
        one before it (what it is copied to, the array it indexes, the format it fills)."""
        before: tuple[str, dict] | None = None
        for k, (kind, obj) in enumerate(zip(kinds, params, strict=False)):
            where = f"{path}[{k}]"
            if kind == Kind.SOURCE:
                self.source(obj, before, where, scope)
            elif kind == Kind.INDEX:
                self.index(obj, before[1], where, scope)
            elif kind == Kind.VALUES:
                self.values(obj, before[1], where, scope)
            else:
                self.check(kind, obj, where, scope)
            before = (kind, obj)

    def check(self, kind: str, obj: dict, path: str, scope: Scope) -> object:
        """One parameter of a kind that needs nothing before it; returns the shape a copy from
        it must have (None for kinds nothing is copied to)."""
        if kind == Kind.TARGET:
            kind = target_kind(obj)
        if kind in (Kind.VALUE, Kind.COUNT):
            self.value(obj, path, scope)
            if kind == Kind.COUNT and (count := literal(obj)) is not None and count < 0:
                raise refused(path, f"a negative header stack count ({count})")
            return None
        if kind == Kind.FIELD:
            self.field(obj, path, scope)
            return None
        if kind == Kind.VARBIT:
            return self.varbit(obj, path)
        if kind == Kind.HEADER:
            return header_shape(self.header(obj, path, scope))
        if kind == Kind.UNION:
            return tuple(header_shape(self.layout.header(m)) for m in self.union(obj, path))
        if kind == Kind.STACK:
            return self.stacks(obj, path)
        if kind in ARRAYS:
            return self.array(kind, obj, path)
        if kind == Kind.CALCULATION:
            self.typed(obj, "calculation", path)
        elif kind == Kind.JUMP and scope.params is None:
            raise refused(path, "a jump outside an action")
        elif kind == Kind.TEXT and obj.get("type") != "string":
            raise refused(path, f"expected a log_msg format, got a {obj.get('type')}")
        elif kind == "extract":
            self.extracted(obj, path)
        elif kind == "primitive":
            self.primitive(obj, path, scope)
        elif kind not in (Kind.JUMP, Kind.TEXT):
            raise AssertionError(
                f"parameter kind {kind!r} has no check"
            )  # a Kind added without one
        return None

    def source(self, obj: dict, before: tuple[str, dict], path: str, scope: Scope) -> None:
        """What a copy reads: a value for a field; else what it writes, in the same shape (for a
        varbit field, one no longer)."""
        kind, target = before
        if kind == Kind.TARGET:
            kind = target_kind(target)
        if kind == Kind.FIELD:
            self.value(obj, path, scope)
            return
        wanted, got = self.check(kind, target, "", scope), self.check(kind, obj, path, scope)
        if kind == Kind.VARBIT and got > wanted:
            raise refused(
                path, f"a varbit field of up to {got} bits copied into one of up to {wanted}"
            )
        if kind != Kind.VARBIT and got != wanted:
            raise refused(path, f"expected {kind.value} of the shape of the one it is copied to")

    def values(self, obj: dict, text: dict, path: str, scope: Scope) -> None:
        """The values of a log_msg format: one per `{}`."""
        placeholders = text["value"].replace("{{", "").replace("}}", "").count("{}")
        self.value(obj, path, scope)
        if obj["type"] != "parameters_vector" or len(obj["value"]) != placeholders:
            raise refused(path, f"expected the {placeholders} values of the format before it")

    def index(self, obj: dict, array: dict, path: str, scope: Scope) -> None:
        """A cell of the register, counter or meter array the parameter before names: a literal
        index must be one (a computed one is checked per packet)."""
        self.value(obj, path, scope)
        cells = self.things[array["type"]][array["value"]]
        if (i := literal(obj)) is not None and not 0 <= i < cells.size:
            raise refused(
                path,
                f"index {i} is outside {NAMES[array['type']]} '{cells.name}' (0..{cells.size - 1})",
            )

    def array(self, kind: Kind, obj: dict, path: str) -> None:
        """A register, counter or meter array a primitive indexes: an indirect one."""
        array = self.typed(obj, ARRAYS[kind], path)
        if getattr(array, "direct", False):
            raise refused(
                f"{path}.value", f"'{array.name}' is direct: its cells are its table's entries"
            )

    def varbit(self, obj: dict, path: str) -> int:
        """A header's varbit field; returns its most bits."""
        hl = self.field(obj, path, OUTSIDE) if obj.get("type") == "field" else None
        if hl is None or not any(n == obj["value"][1] and w < 0 for n, w, _s in hl.fields):
            raise refused(path, "expected a varbit field of a header")
        return hl.varbit_max

    def extracted(self, obj: dict, path: str) -> None:
        """What a parser extracts into: a header, the next element of a stack or of a union stack."""
        kind = obj.get("type")
        if kind == "regular":
            self.typed(obj, "regular", path)
        elif kind == "stack":
            self.stack(obj, path)
        elif kind == "union_stack":
            self.named("header_union_stack", obj["value"][0], f"{path}.value[0]")
        else:
            raise refused(path, f"cannot extract into a {kind}")

    # --- values --------------------------------------------------------------------------
    def value(self, obj: dict, path: str, scope: Scope) -> None:
        kind, v = obj["type"], obj.get("value")
        if kind in ("field", "stack_field"):
            self.field(obj, path, scope)
        elif kind in ("runtime_data", "local"):
            if scope.params is None:
                raise refused(path, f"{kind} {v} outside an action")
            if v >= len(scope.params):
                raise refused(
                    path, f"{kind} {v}: action '{scope.action}' has {len(scope.params)} parameters"
                )
        elif kind == "lookahead" and not scope.parser:
            raise refused(path, "a lookahead outside a parser state")
        elif kind == "register":
            raise refused(path, "register values inside expressions are not supported")
        elif kind == "expression":
            self.expression(obj, path, scope)
        elif kind == "parameters_vector":
            for k, item in enumerate(v):
                self.value(item, f"{path}.value[{k}]", scope)
        elif kind in NAMES:
            self.typed(obj, kind, path)

    def expression(self, obj: dict, path: str, scope: Scope) -> None:
        expr, epath = operator(obj, path)
        if "op" not in expr:
            self.value(expr, epath, scope)
            return
        op, left, right = expr["op"], expr.get("left"), expr.get("right")
        if op == "access_field":
            self.access_field(expr, epath, scope)
        elif op in HEADER_EXPRESSIONS:
            self.header(obj, path, scope)
        elif op == "dereference_union_stack":
            unions = self.typed(left, "header_union_stack", f"{epath}.left")
            self.element(right, len(unions), f"{epath}.right", scope)
        elif op == "valid":
            self.header(right, f"{epath}.right", scope)
        elif op == "valid_union":
            self.union(right, f"{epath}.right")
        elif op in STACK_OPS:
            self.stack(right, f"{epath}.right")
        elif (
            op in ("==", "!=")
            and left is not None
            and left.get("type") == "header" == right.get("type")
        ):
            if self.check(Kind.HEADER, left, f"{epath}.left", scope) != self.check(
                Kind.HEADER, right, f"{epath}.right", scope
            ):
                raise refused(epath, "a comparison of headers of other shapes")
        else:
            for side in ("left", "right", "cond"):
                if expr.get(side) is not None:
                    self.value(expr[side], f"{epath}.{side}", scope)
            if (
                op in WIDTH_OPS
                and (width := literal(right)) is not None
                and not 1 <= width <= MAX_BITS
            ):
                raise refused(f"{epath}.right", f"width {width} is out of range 1..{MAX_BITS}")

    def access_field(self, expr: dict, path: str, scope: Scope) -> HeaderLayout:
        """A field at an offset of a header expression; returns the header's layout."""
        hl = self.header(expr["left"], f"{path}.left", scope)
        if not 0 <= expr["right"] < len(hl.fields):
            raise refused(
                f"{path}.right",
                f"header '{hl.name}' has {len(hl.fields)} fields, no field {expr['right']}",
            )
        return hl

    def field(self, obj: dict, path: str, scope: Scope) -> HeaderLayout:
        """An assignable field (a header's, the last extracted stack element's, or one at an offset
        of a header expression); returns its header's layout."""
        kind, v = obj.get("type"), obj.get("value")
        if kind == "field":
            return self.ref(v, f"{path}.value")
        if kind == "stack_field":
            stack = self.named("header_stack", v[0], f"{path}.value[0]")
            hl = self.layout.header(stack.elements[0])
            if v[1] not in (n for n, _w, _s in hl.fields):
                raise refused(
                    f"{path}.value[1]",
                    f"the elements of stack '{stack.name}' have no field '{v[1]}'",
                )
            return hl
        if kind == "expression":
            expr, epath = operator(obj, path)
            if expr.get("op") == "access_field":
                return self.access_field(expr, epath, scope)
        raise refused(path, f"expected a field, got a {kind}")

    def ref(self, ref: Iterable[str], path: str) -> HeaderLayout:
        """A header's field, or its validity bit, as `[header, field]`; returns its layout."""
        header, name = ref
        hl = self.named("header", header, f"{path}[0]")
        if name != "$valid$" and name not in (n for n, _w, _s in hl.fields):
            raise refused(f"{path}[1]", f"header '{hl.name}' has no field '{name}'")
        return hl

    def header(self, obj: dict, path: str, scope: Scope) -> HeaderLayout:
        """A header: named, a stack element at an index, or a member of a union; its layout."""
        kind = obj.get("type")
        if kind in ("header", "regular"):
            return self.typed(obj, kind, path)
        if kind == "expression":
            expr, epath = operator(obj, path)
            if expr.get("op") == "dereference_header_stack":
                stack = self.stack(expr["left"], f"{epath}.left")
                self.element(expr["right"], len(stack.elements), f"{epath}.right", scope)
                return self.layout.header(stack.elements[0])
            if expr.get("op") == "access_union_header":
                members = self.union(expr["left"], f"{epath}.left")
                if not 0 <= expr["right"] < len(members):
                    raise refused(
                        f"{epath}.right",
                        f"the union has {len(members)} members, no member {expr['right']}",
                    )
                return self.layout.header(members[expr["right"]])
        raise refused(path, f"expected a header, got a {kind}")

    def element(self, obj: dict, size: int, path: str, scope: Scope) -> None:
        """The index of a stack element: a literal one must be in the stack (a computed one is
        checked per packet)."""
        self.value(obj, path, scope)
        if (i := literal(obj)) is not None and not 0 <= i < size:
            raise refused(path, f"index {i} is outside a stack of {size} elements")

    def stacks(self, obj: dict, path: str) -> tuple:
        """A header stack or a header union stack, named by either JSON type (the generators go by
        the name); returns its shape."""
        if obj.get("type") not in ("header_stack", "header_union_stack"):
            raise refused(path, f"expected a header stack, got a {obj.get('type')}")
        if obj["value"] in self.layout.union_stacks:
            unions = self.layout.union_stacks[obj["value"]]
            return tuple(
                tuple(header_shape(self.layout.header(m)) for m in self.layout.unions[u])
                for u in unions
            )
        stack = self.named("header_stack", obj["value"], f"{path}.value")
        return len(stack.elements), header_shape(self.layout.header(stack.elements[0]))

    def stack(self, obj: dict, path: str) -> StackLayout:
        return self.typed(obj, "header_stack" if obj.get("type") != "stack" else "stack", path)

    def union(self, obj: dict, path: str) -> tuple[str, ...]:
        return self.typed(obj, "header_union", path)

    def typed(self, obj: dict, kind: str, path: str):
        """What a `{"type": kind, "value": name}` object names; refused if it is of another type."""
        if obj.get("type") != kind:
            raise refused(path, f"expected a {NAMES.get(kind, kind)}, got a {obj.get('type')}")
        return self.named(kind, obj["value"], f"{path}.value")

    def named(self, kind: str, name: str, path: str):
        """What `name` names among the things of JSON type `kind`."""
        things = self.things[kind]
        if name not in things:
            raise refused(path, f"no {NAMES[kind]} is called '{name}'")
        return things[name]

    # --- controls and parsers ------------------------------------------------------------
    def control(self, control: Control, path: str) -> None:
        nodes = {t.name for t in control.tables} | {c.name for c in control.conditionals}

        def node(name: str | None, where: str) -> None:
            if name is not None and name not in nodes:
                raise refused(
                    where, f"'{name}' is no table or conditional of pipeline '{control.name}'"
                )

        node(control.init_table, f"{path}.init_table")
        for j, table in enumerate(control.tables):
            self.table(table, f"{path}.tables[{j}]", node)
        for j, cond in enumerate(control.conditionals):
            self.value(cond.expression, f"{path}.conditionals[{j}].expression", OUTSIDE)
            node(cond.true_next, f"{path}.conditionals[{j}].true_next")
            node(cond.false_next, f"{path}.conditionals[{j}].false_next")

    def table(self, table: Table, path: str, node: Callable[[str | None, str], None]) -> None:
        actions = self.model.actions
        if not table.action_ids:
            raise refused(f"{path}.action_ids", f"table '{table.name}' has no action")
        for k, aid in enumerate(table.action_ids):
            if aid not in actions:
                raise refused(f"{path}.action_ids[{k}]", f"no action has id {aid}")
        unique(
            (actions[aid].name, f"{path}.action_ids[{k}]") for k, aid in enumerate(table.action_ids)
        )
        names = {actions[aid].name for aid in table.action_ids}
        for name, target in table.next_tables.items():
            if name not in names and name not in ("__HIT__", "__MISS__"):
                raise refused(
                    f"{path}.next_tables", f"'{name}' is no action of table '{table.name}'"
                )
            node(target, f"{path}.next_tables.{name}")
        for k, key in enumerate(table.keys):
            if key.match_type == "valid":
                self.named("header", key.target, f"{path}.key[{k}].target")
        if table.default is not None:
            self.entry(table, table.default.action_id, table.default.args, f"{path}.default_entry")
        for k, entry in enumerate(table.entries):
            self.entry(table, entry.action_id, entry.args, f"{path}.entries[{k}].action_entry")
        if table.direct_meter is not None:
            meter = self.things["meter_array"].get(table.direct_meter)
            if meter is None or not meter.direct:
                raise refused(
                    f"{path}.direct_meters", f"no direct meter is called '{table.direct_meter}'"
                )

    def entry(self, table: Table, aid: int, args: tuple[int, ...], path: str) -> None:
        """An entry the program declares: one of the table's actions, with its parameters."""
        if aid not in table.action_ids:
            raise refused(f"{path}.action_id", f"action {aid} is no action of table '{table.name}'")
        action = self.model.actions[aid]
        if len(args) != len(action.params):
            raise refused(
                f"{path}.action_data",
                f"action '{action.name}' takes {len(action.params)} parameters, got {len(args)}",
            )
        for k, (value, param) in enumerate(zip(args, action.params, strict=True)):
            if not 0 <= value < 1 << param.width:
                raise refused(
                    f"{path}.action_data[{k}]",
                    f"{value:#x} does not fit the {param.width}-bit parameter '{param.name}'",
                )

    def parser(self, parser: Parser, path: str) -> None:
        states = {s.name for s in parser.states}
        if parser.init_state not in states:
            raise refused(f"{path}.init_state", f"no parse state is called '{parser.init_state}'")
        scope = Scope(parser=True)
        for j, state in enumerate(parser.states):
            where = f"{path}.parse_states[{j}]"
            for k, op in enumerate(state.ops):
                self.parser_op(op, f"{where}.parser_ops[{k}]", scope)
            for k, key in enumerate(state.keys):
                self.value(key.expr, f"{where}.transition_key[{k}]", scope)
            for k, t in enumerate(state.transitions):
                if t.next_state is not None and t.next_state not in states:
                    raise refused(
                        f"{where}.transitions[{k}].next_state",
                        f"no parse state is called '{t.next_state}'",
                    )
                if t.kind == "parse_vset" and t.vset not in self.model.value_sets:
                    raise refused(
                        f"{where}.transitions[{k}].value",
                        f"no parser value set is called '{t.vset}'",
                    )

    def parser_op(self, op: dict, path: str, scope: Scope) -> None:
        kinds, params = PARSER_OPS.get(op["op"]), op.get("parameters", [])
        if kinds is None:
            raise refused(f"{path}.op", f"unknown parser operation '{op['op']}'")
        if len(params) < len(kinds):
            raise refused(
                f"{path}.parameters",
                f"'{op['op']}' takes {len(kinds)} parameters, got {len(params)}",
            )
        self.parameters(kinds, params[: len(kinds)], f"{path}.parameters", scope)


def unique(named: Iterable[tuple[str, str]]) -> None:
    """(name, path of the name): control-plane requests and primitives find arrays, tables and a
    table's actions by name, so each name names one."""
    seen: set[str] = set()
    for name, path in named:
        if name in seen:
            raise refused(path, f"'{name}' is used twice")
        seen.add(name)


def target_kind(obj: dict) -> Kind:
    """What an `assign` writes, by its target's JSON type (as both generators decide)."""
    kind = obj.get("type")
    if kind == "expression":
        return Kind.HEADER if operator(obj, "")[0].get("op") in HEADER_EXPRESSIONS else Kind.FIELD
    return {
        "header": Kind.HEADER,
        "regular": Kind.HEADER,
        "header_union": Kind.UNION,
        "header_stack": Kind.STACK,
        "header_union_stack": Kind.STACK,
    }.get(kind, Kind.FIELD)
