"""BMv2 JSON compiled once, at load time, into Python source: the switch's per-packet fast path.

Every parser state, action, table, conditional, checksum and the deparser becomes a small Python
function over the packet list `P` (see layout.py). Byte-aligned headers are extracted and emitted
with precompiled `struct.Struct` objects; other headers with one big-int conversion and shifts.
Tables are looked up through the objects of tables.py; registers are plain lists.
With `trace=True` the same functions also call `_log` at each step (the switch's packet log).
"""

import re
import struct
from dataclasses import dataclass, field

from ina.switch.model.budget import INLINE_BUDGET
from ina.switch.model.errors import PipelineError
from ina.switch.model.hashes import ALGORITHMS
from ina.switch.model.layout import HeaderLayout, Layout
from ina.switch.model.primitives import PRIMITIVES
from ina.switch.model.program import (
    JUMPS,
    Action,
    Calculation,
    Control,
    Deparser,
    Parser,
    ParserState,
    Program,
    Table,
    Transition,
)
from ina.switch.model.values import ident
from ina.switch.python.expressions import ExpressionCompiler

STRUCT_CODES = {(8, False): "B", (16, False): "H", (32, False): "I", (64, False): "Q",
                (8, True): "b", (16, True): "h", (32, True): "i", (64, True): "q"}  # fmt: skip


@dataclass
class Generated:
    """Python source plus the objects its namespace needs, ready to exec."""

    lines: list[str] = field(default_factory=list)
    namespace: dict = field(default_factory=dict)

    def emit(self, line: str = "", indent: int = 0) -> None:
        self.lines.append("    " * indent + line)


SLOT = re.compile(r"P\[(\d+)\]")


def cache_slots(body: list[str]) -> list[str]:
    """Keep the packet slots a straight-line action touches in local variables.

    Reads come from locals loaded once at the top, writes go to locals stored back at the end,
    which saves a list subscript per access (the 64-element aggregation action makes hundreds).
    Only done when every access uses a constant slot, so no access can alias another.
    """
    text = "\n".join(body)
    if "P[" in SLOT.sub("", text) or "return" in text or "P)" in text or "P," in text:
        return body
    slots = sorted({int(n) for n in SLOT.findall(text)})
    written = sorted({int(n) for line in body for n in re.findall(r"^P\[(\d+)\] =", line)})
    if not slots:
        return body
    head = [f"_{n} = P[{n}]" for n in slots]
    tail = [f"P[{n}] = _{n}" for n in written]
    return head + [SLOT.sub(lambda m: "_" + m.group(1), line) for line in body] + tail


def extern_variable(kind: str, instance_id: int) -> str:
    """The generated code's name for an extern instance's state: REGISTER_3."""
    return f"{kind.upper()}_{instance_id}"


def node_function(key: str) -> str:
    """The generated function of a pipeline node, from its key in Control.nodes."""
    return f"node_{key}"


class CodeGenerator:
    """Emits the source; `source()` returns it once every part has been generated."""

    def __init__(self, program: Program, layout: Layout, drop_port: int, trace: bool = False):
        self.program = program
        self.layout = layout
        self.expr = ExpressionCompiler(layout)
        self.drop_port = drop_port
        self.trace = trace
        self.out = Generated()
        # Helpers (header codecs, calculations) are generated on first use, possibly while another
        # function is being emitted, so they go to a separate buffer placed first in the source.
        self.pre = Generated(namespace=self.out.namespace)
        self.errors = program.errors
        self.sm = (
            layout.header("standard_metadata") if "standard_metadata" in layout.headers else None
        )
        self.uses_exit = any(
            p["op"] == "exit" for a in program.actions.values() for p in a.primitives
        )
        self.header_types: dict[str, str] = {}  # header type name -> generated extractor suffix
        self.calculations: set[str] = set()  # the calc_* functions generated so far

    def source(self) -> str:
        return "\n".join(self.pre.lines + self.out.lines) + "\n"

    def sm_slot(self, name: str) -> int:
        if self.sm is None:
            raise PipelineError("the program has no standard_metadata header")
        return self.sm.slot(name)

    def error_code(self, name: str) -> int:
        return self.errors.get(name, 0)

    # --- headers -------------------------------------------------------------------------
    def _codec(self, hl: HeaderLayout) -> str:
        """Generate extract/emit functions for a header's type; returns their name suffix."""
        htype = hl.type_name
        if htype in self.header_types:
            return self.header_types[htype]
        # the index keeps two types whose names ident() maps alike (a.b, a_b) apart
        suffix = f"{ident(htype)}_{len(self.header_types)}"
        self.header_types[htype] = suffix
        o = self.pre
        nfields = len(hl.fields)
        widths = [w for _n, w, _s in hl.fields]
        if hl.varbit_max:
            o.emit(f"def ext_{suffix}(P, data, off, b, vl):")
            o.emit(f"total = {hl.fixed_bits} + vl", 1)
            o.emit(f"if vl % 8: raise ParserErr({self.error_code('ParserInvalidArgument')})", 1)
            o.emit(
                f"if vl > {hl.varbit_max}: raise ParserErr({self.error_code('HeaderTooShort')})", 1
            )
            o.emit("end = off + total // 8", 1)
            o.emit(f"if end > len(data): raise ParserErr({self.error_code('PacketTooShort')})", 1)
            o.emit("v = int.from_bytes(data[off:end], 'big')", 1)
            o.emit("shift = total", 1)
            for k, (_n, w, s) in enumerate(hl.fields):
                width = "vl" if w < 0 else str(w)
                o.emit(f"shift -= {width}", 1)
                value = f"(v >> shift) & ((1 << {width}) - 1)"
                o.emit(
                    f"P[b + {1 + k}] = {'_two_comp(' + value + ', ' + width + ')' if s else value}",
                    1,
                )
            o.emit(f"P[b + {1 + nfields}] = vl", 1)
            o.emit("P[b] = 1", 1)
            o.emit("return end", 1)
            o.emit(f"def emit_{suffix}(P, b):")
            o.emit(f"vl = P[b + {1 + nfields}]", 1)
            o.emit("v = 0", 1)
            for k, (_n, w, _s) in enumerate(hl.fields):
                width = "vl" if w < 0 else str(w)
                o.emit(f"v = (v << {width}) | (P[b + {1 + k}] & ((1 << {width}) - 1))", 1)
            o.emit(f"return v.to_bytes(({hl.fixed_bits} + vl) // 8, 'big')", 1)
            return suffix
        total = sum(widths)
        if total % 8:
            raise PipelineError(
                f"header type '{htype}' is {total} bits, not a whole number of bytes"
            )
        nbytes = total // 8
        codes = [STRUCT_CODES.get((w, s)) for _n, w, s in hl.fields]
        short = self.error_code("PacketTooShort")
        o.emit(f"def ext_{suffix}(P, data, off, b):")
        o.emit(f"end = off + {nbytes}", 1)
        o.emit(f"if end > len(data): raise ParserErr({short})", 1)
        if nfields and all(codes):
            st = f"S_{suffix}"
            o.namespace[st] = struct.Struct(">" + "".join(codes))  # type: ignore[arg-type]
            o.emit(f"P[b + 1:b + {1 + nfields}] = {st}.unpack_from(data, off)", 1)
        elif nfields:
            o.emit("v = int.from_bytes(data[off:end], 'big')", 1)
            shift = total
            for k, (_n, w, s) in enumerate(hl.fields):
                shift -= w
                value = f"(v >> {shift}) & {(1 << w) - 1}" if shift else f"v & {(1 << w) - 1}"
                o.emit(f"P[b + {1 + k}] = {'_two_comp(' + value + f', {w})' if s else value}", 1)
        o.emit("P[b] = 1", 1)
        o.emit("return end", 1)
        o.emit(f"def emit_{suffix}(P, b):")
        if nfields and all(codes):
            o.emit(f"return S_{suffix}.pack(*P[b + 1:b + {1 + nfields}])", 1)
        else:
            parts = []
            shift = total
            for k, (_n, w, _s) in enumerate(hl.fields):
                shift -= w
                term = f"(P[b + {1 + k}] & {(1 << w) - 1})"
                parts.append(f"({term} << {shift})" if shift else term)
            o.emit(f"return ({' | '.join(parts) or '0'}).to_bytes({nbytes}, 'big')", 1)
        return suffix

    def header_codec(self, name: str) -> str:
        return self._codec(self.layout.header(name))

    # --- primitives ----------------------------------------------------------------------
    def primitive(self, prim: dict) -> list[str]:
        """Python statements for one action primitive (its entry in primitives.py)."""
        op = prim["op"]
        entry = PRIMITIVES.get(op)
        if entry is None:
            raise PipelineError(f"unsupported primitive '{op}'")
        lines = entry.python(self, op, prim.get("parameters", []))
        if self.trace and op not in JUMPS:
            return [f"_log('    primitive ' + {op!r})", *lines]
        return lines

    def copy_header(self, dst: dict, src: dict) -> list[str]:
        size = self.expr.header_width_fields(dst).size
        d, s = self.expr.header_base(dst), self.expr.header_base(src)
        return [f"d = {d}", f"s = {s}", f"P[d:d + {size}] = P[s:s + {size}]"]

    def copy_union(self, dst: str, src: str) -> list[str]:
        lines = []
        for dm, sm in zip(self.layout.unions[dst], self.layout.unions[src], strict=True):
            lines += self.copy_header(
                {"type": "header", "value": dm}, {"type": "header", "value": sm}
            )
        return lines

    def copy_stack(self, dst: str, src: str) -> list[str]:
        if dst in self.layout.union_stacks:
            lines = []
            for du, su in zip(
                self.layout.union_stacks[dst], self.layout.union_stacks[src], strict=True
            ):
                lines += self.copy_union(du, su)
            return lines
        d, s = self.layout.stacks[dst], self.layout.stacks[src]
        n = d.stride * len(d.elements)
        return [
            f"P[{d.base}:{d.base + n}] = P[{s.base}:{s.base + n}]",
            f"P[{d.next_slot}] = P[{s.next_slot}]",
        ]

    def stack_args(self, name: str) -> str:
        stack = self.layout.stacks.get(name)
        if stack is None:
            raise PipelineError(f"push/pop on header union stack '{name}' is not supported")
        return f"{stack.base}, {stack.stride}, {len(stack.elements)}, {stack.next_slot}"

    def extern(self, kind: str, name: str) -> str:
        """The namespace variable of an extern instance's state (python/pipeline.py `STATE`)."""
        return extern_variable(kind, self.program.instance(kind, name).id)

    # --- calculations (hashes and checksums) -------------------------------------------
    def calculation(self, name: str) -> str:
        """The name of a generated function (P, payload) -> int computing the named calculation."""
        calc = self.program.calculation(name)
        fn = f"calc_{calc.id}"
        if fn in self.calculations:
            return fn
        self.calculations.add(fn)
        o = self.pre
        o.namespace[f"ALGO_{calc.id}"] = ALGORITHMS[calc.algo].python
        o.emit(f"def {fn}(P, payload):")
        o.emit(
            f"return ALGO_{calc.id}({self._packed(calc)}{' + payload' if calc.payload else ''})", 1
        )
        return fn

    def _packed(self, calc: Calculation) -> str:
        """An expression for the calculation's inputs as bytes: one big integer with every shift
        known now, padded to whole bytes like BMv2's field list."""
        items = [
            (f"P[{self.layout.field_slot(*i.ref)}]" if i.ref else str(i.value), i.width)
            for i in calc.inputs
        ]
        bits = sum(width for _source, width in items)
        shift = bits + (-bits % 8)
        parts = []
        for source, width in items:
            shift -= width
            parts.append(f"(({source} & {(1 << width) - 1}) << {shift})")
        return f"({' | '.join(parts) or '0'}).to_bytes({(bits + 7) // 8}, 'big')"

    # --- actions -------------------------------------------------------------------------
    def action(self, action: Action) -> str:
        fn = f"act_{action.id}"
        o = self.out
        prims = list(action.primitives)
        o.emit(f"def {fn}(P, A):")
        if self.trace:
            o.emit(f"_log('  action ' + {action.name!r} + (' ' + repr(A) if A else ''))", 1)
        if not prims:
            o.emit("pass", 1)
            return fn
        if not action.jumps:
            body = [line for prim in prims for line in self.primitive(prim)]
            for line in cache_slots(body):
                o.emit(line, 1)
            return fn
        # Jumps: a small program-counter loop over basic blocks.
        o.emit("pc = 0", 1)
        o.emit("while True:", 1)
        for i, prim in enumerate(prims):
            o.emit(f"if pc == {i}:", 2)
            for line in self.primitive(prim):
                o.emit(line, 3)
            if prim["op"] != "_jump":  # a jump sets pc and continues; a taken _jump_if_zero too
                o.emit(f"pc = {i + 1}", 3)
        o.emit(f"if pc >= {len(prims)}: return", 2)
        return fn

    # --- parser --------------------------------------------------------------------------
    def parser(self, parser: Parser) -> str:
        o = self.out
        names = {s.name: f"ps_{parser.id}_{s.id}" for s in parser.states}
        for state in parser.states:
            o.emit(f"def {names[state.name]}(P, data, off):")
            start = len(o.lines)
            if self.trace:
                o.emit(f"_log('parser state ' + {state.name!r})", 1)
            for op in state.ops:
                for line in self._parser_op(op):
                    o.emit(line, 1)
            self._transitions(state, names)
            # On an error, the headers this state already extracted stay consumed (not payload).
            body = o.lines[start:]
            o.lines[start:] = [
                "    try:",
                *("    " + line for line in body),
                "    except ParserErr as err:",
                "        err.offset = off",
                "        raise",
            ]
        entry = f"parse_{parser.id}"
        o.emit(f"def {entry}(P, data):")
        o.emit("off = 0", 1)
        o.emit(f"fn = {names[parser.init_state]}", 1)
        o.emit("try:", 1)
        o.emit("while fn is not None:", 2)
        o.emit("fn, off = fn(P, data, off)", 3)
        o.emit("except ParserErr as err:", 1)
        o.emit("if err.offset is not None: off = err.offset", 2)
        if self.sm is not None:
            o.emit(f"P[{self.sm_slot('parser_error')}] = err.code", 2)
        if self.trace:
            o.emit("_log('parser error ' + str(err.code))", 2)
        o.emit("return off", 1)
        return entry

    def _extract_target(self, param: dict) -> tuple[str, HeaderLayout, list[str]]:
        """(base source, layout, prelude) for the header an extract writes."""
        if param["type"] == "regular":
            hl = self.layout.header(param["value"])
            return str(hl.base), hl, []
        if param["type"] == "stack":
            stack = self.layout.stacks[param["value"]]
            hl = self.layout.header(stack.elements[0])
            err = self.error_code("StackOutOfBounds")
            prelude = [
                f"i = P[{stack.next_slot}]",
                f"if i >= {len(stack.elements)}: raise ParserErr({err})",
                f"P[{stack.next_slot}] = i + 1",
            ]
            return f"{stack.base} + i * {stack.stride}", hl, prelude
        if param["type"] == "union_stack":
            ustack, member = param["value"]
            unions = self.layout.union_stacks[ustack]
            raise PipelineError(
                f"extract into header union stack '{ustack}' ({len(unions)} unions, member {member}) is not supported"
            )
        raise PipelineError(f"cannot extract into '{param['type']}'")

    def _parser_op(self, op: dict) -> list[str]:
        kind, params = op["op"], op.get("parameters", [])
        e = self.expr
        if kind in ("extract", "extract_VL"):
            base, hl, lines = self._extract_target(params[0])
            suffix = self._codec(hl)
            lines = list(lines)
            if kind == "extract_VL":
                lines.append(f"off = ext_{suffix}(P, data, off, {base}, {e.value(params[1])})")
            elif hl.varbit_max:
                lines.append(f"off = ext_{suffix}(P, data, off, {base}, 0)")
            else:
                lines.append(f"off = ext_{suffix}(P, data, off, {base})")
            if self.trace:
                lines.append(f"_log('  extract ' + {hl.name!r})")
            return lines
        if kind == "set":
            return [e.store(params[0], e.value(params[1]), params[1])]
        if kind == "verify":
            return [f"if not ({e.value(params[0])}): raise ParserErr({e.value(params[1])})"]
        if kind == "shift":
            return [f"off += {e.value(params[0])}"]
        if kind == "advance":
            short = self.error_code("PacketTooShort")
            return [
                f"off += ({e.value(params[0])}) // 8",
                f"if off > len(data): raise ParserErr({short})",
            ]
        if kind == "primitive":
            return self.primitive(params[0]) if params else []
        raise PipelineError(f"unsupported parser operation '{kind}'")

    def _transitions(self, state: ParserState, names: dict[str, str]) -> None:
        o = self.out
        keys = state.keys
        if len(keys) == 1:
            o.emit(f"k = {self.expr.value(keys[0].expr)}", 1)
        elif keys:
            parts = [
                f"(({self.expr.value(k.expr)} & {k.mask}) << {k.shift})"
                if k.shift
                else f"({self.expr.value(k.expr)} & {k.mask})"
                for k in keys
            ]
            o.emit(f"k = {' | '.join(parts)}", 1)
        for t in state.transitions:
            target = names[t.next_state] if t.next_state else "None"
            o.emit(f"{self._select_case(t)}return {target}, off", 1)

    @staticmethod
    def _select_case(t: Transition) -> str:
        """`if ...: ` testing the select key `k` against one case; nothing for the default."""
        if t.kind == "default":
            return ""
        if t.kind == "parse_vset":
            return f"if _vset_match(VSETS[{t.vset!r}], k, {-1 if t.mask is None else t.mask}): "
        return f"if k == {t.value}: " if t.mask is None else f"if k & {t.mask} == {t.value}: "

    # --- pipelines -----------------------------------------------------------------------
    def pipeline(self, pipe: Control, tables: dict[str, str]) -> str:
        """Generate the pipeline's nodes; `tables` receives table name -> its namespace variable."""
        o = self.out
        pid = pipe.id
        node_names = {name: node_function(key) for name, key in pipe.nodes.items()}
        if pipe.action_profiles:
            raise PipelineError(
                "action profiles and selectors are not supported by ina's switch yet"
            )

        def ref(name: str | None) -> str:
            return node_names[name] if name else "None"

        exit_check = f"if P[{self.layout.hidden['exit']}]: return None" if self.uses_exit else None
        by_name = {t.name: t for t in pipe.tables}
        merge = not self.trace
        fixed = {
            name: step for name, t in by_name.items() if merge and (step := self._fixed_step(t))
        }
        conds = {
            c.name: (self.expr.value(c.expression), c.true_next, c.false_next)
            for c in pipe.conditionals
        }

        def lookup(t: Table, indent: int) -> None:
            """Emit a table's lookup and action call; leaves `hit` and the entry `e` set."""
            var = f"TABLE_{pid}_{t.id}"
            if t.keys:
                parts = []
                for k in t.keys:
                    if k.match_type == "valid":
                        source = f"P[{self.layout.header(k.target).base}]"
                    else:
                        source = (
                            f"P[{self.expr.field_ref({'type': 'field', 'value': k.target})[0]}]"
                        )
                        if k.mask is not None:
                            source = f"({source} & {k.mask})"
                    parts.append(source)
                find = f"{var}.exact.get" if t.exact_only else f"{var}.lookup"
                o.emit(f"e = {find}(({', '.join(parts)},))", indent)
                o.emit("hit = e is not None", indent)
                o.emit(f"if not hit: e = {var}.default", indent)
                if t.with_counters:
                    o.emit(
                        f"else: e.packets += 1; e.bytes += P[{self.sm_slot('packet_length')}]",
                        indent,
                    )
                if t.direct_meter:
                    meter = self.extern("meter", t.direct_meter)
                    target = self.program.instance("meter", t.direct_meter).result_target
                    if target:
                        field_obj = {"type": "field", "value": target}
                        length = f"P[{self.sm_slot('packet_length')}]"
                        color = self.expr.store(field_obj, f"{meter}.execute_entry(e, {length})")
                        o.emit(f"if hit: {color}", indent)
            else:
                o.emit(f"e = {var}.default", indent)
                o.emit("hit = False", indent)
            if self.trace:
                o.emit(
                    f"_log('table ' + {t.name!r} + (' hit ' + repr(e.match) if hit else ' miss') + ' -> ' + e.action.name)",
                    indent,
                )
            o.emit("e.fn(P, e.args)", indent)
            if exit_check:
                o.emit(exit_check, indent)

        def inline(name: str | None, indent: int, budget: list[int]) -> None:
            """Emit a node and the nodes after it as straight code, up to a dynamic next node.

            Fixed tables become plain action calls, conditionals nested ifs, looked-up tables
            their lookup; a table whose next node depends on the action returns `e.next_node` to
            the pipeline loop. Shared successors are duplicated, so the budget of emitted nodes
            bounds the code size; when it runs out the next node is returned to the loop.
            """
            while name is not None:
                budget[0] -= 1
                if budget[0] < 0:
                    break
                if name in conds:
                    cond, true_next, name = conds[name]
                    o.emit(f"if {cond}:", indent)
                    inline(true_next, indent + 1, budget)
                    continue
                if name in fixed:
                    call, name = fixed[name]
                    o.emit(call, indent)
                    if exit_check:
                        o.emit(exit_check, indent)
                    continue
                t = by_name[name]
                lookup(t, indent)
                nxt = t.next_tables
                if "__HIT__" in nxt or "__MISS__" in nxt:
                    o.emit("if hit:", indent)
                    inline(nxt.get("__HIT__"), indent + 1, budget)
                    name = nxt.get("__MISS__")
                elif (
                    len(after := {nxt.get(self.program.actions[a].name) for a in t.action_ids}) == 1
                ):
                    name = after.pop()  # every action continues with the same node
                else:
                    o.emit("return e.next_node", indent)
                    return
            o.emit(f"return {ref(name)}", indent)

        for t in pipe.tables:
            fn = node_names[t.name]
            tables[t.name] = f"TABLE_{pid}_{t.id}"
            o.emit(f"def {fn}(P):")
            if merge:
                inline(t.name, 1, [INLINE_BUDGET])
                continue
            lookup(t, 1)
            nxt = t.next_tables
            if "__HIT__" in nxt or "__MISS__" in nxt:
                o.emit(
                    f"return {ref(nxt.get('__HIT__'))} if hit else {ref(nxt.get('__MISS__'))}", 1
                )
            else:
                o.emit("return e.next_node", 1)
        for c in pipe.conditionals:
            o.emit(f"def {node_names[c.name]}(P):")
            if merge:
                inline(c.name, 1, [INLINE_BUDGET])
                continue
            cond, true_next, false_next = conds[c.name]
            o.emit(f"r = bool({cond})", 1)
            o.emit(f"_log('condition ' + {c.name!r} + ' is ' + str(r))", 1)
            o.emit(f"return {ref(true_next)} if r else {ref(false_next)}", 1)
        entry = f"pipe_{pid}"
        o.emit(f"def {entry}(P):")
        o.emit(f"n = {ref(pipe.init_table)}", 1)
        o.emit("while n is not None:", 1)
        o.emit("n = n(P)", 2)
        return entry

    def _fixed_step(self, table: Table) -> tuple[str, str | None] | None:
        """(action call, next table) of a table that always runs the same action with the same data.

        That is a keyless table whose default entry and its data are const (the compiler's hidden
        `tbl_*` tables for plain statements): no lookup and no control-plane change can alter it,
        so a chain of them runs as straight calls in one node instead of one node each.
        """
        default = table.default
        if table.keys or not default or not default.action_const:
            return None
        if not default.entry_const or table.with_counters or table.direct_meter:
            return None
        action = self.program.actions[default.action_id]
        nxt = table.next_tables
        target = (
            nxt.get("__MISS__") if "__MISS__" in nxt or "__HIT__" in nxt else nxt.get(action.name)
        )
        return f"act_{action.id}(P, {default.args!r})", target

    # --- checksums and deparser ----------------------------------------------------------
    def checksums(self, payload_var: str = "payload") -> tuple[str, str]:
        o = self.out
        verify, update = "verify_checksums", "update_checksums"
        for name, flag in ((verify, "verify"), (update, "update")):
            o.emit(f"def {name}(P, {payload_var}):")
            o.emit("pass", 1)
            for ck in self.program.checksums:
                if not (ck.verify if flag == "verify" else ck.update):
                    continue
                calc = self.calculation(ck.calculation.name)
                slot, width, _s = self.expr.field_ref({"type": "field", "value": ck.target})
                cond = self.expr.value(ck.condition) if ck.condition else "True"
                o.emit(f"if {cond}:", 1)
                value = f"{calc}(P, {payload_var}) & {(1 << width) - 1}"
                if flag == "verify":
                    o.emit(f"if {value} != P[{slot}]: P[{self.sm_slot('checksum_error')}] = 1", 2)
                else:
                    o.emit(f"P[{slot}] = {value}", 2)
        return verify, update

    def deparser(self, deparser: Deparser) -> str:
        o = self.out
        fn = f"deparse_{deparser.id}"
        o.emit(f"def {fn}(P):")
        o.emit("out = []", 1)
        for name in deparser.order:
            if name in self.layout.stacks:
                stack = self.layout.stacks[name]
                hl = self.layout.header(stack.elements[0])
                suffix = self._codec(hl)
                for i in range(len(stack.elements)):
                    base = stack.base + i * stack.stride
                    o.emit(f"if P[{base}]: out.append(emit_{suffix}(P, {base}))", 1)
                continue
            members = self.layout.unions.get(name, (name,))
            for member in members:
                hl = self.layout.header(member)
                suffix = self._codec(hl)
                o.emit(f"if P[{hl.base}]: out.append(emit_{suffix}(P, {hl.base}))", 1)
        o.emit("return b''.join(out)", 1)
        return fn
