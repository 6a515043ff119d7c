"""BMv2 JSON compiled at load time into C: the native switch's whole per-packet path.

The packet lives in a uint64_t array `P` laid out exactly as the Python engine's list (layout.py),
so both engines share one notion of slots, templates and hidden values. Parser states and pipeline
nodes become labels of one C function each, joined by gotos; actions become static functions; the
traffic manager (ina_process, traffic.py) follows simple_switch's order like engine.py. Anything outside the
supported subset raises Unsupported with the reason, and the switch runs the Python engine instead.
"""

from dataclasses import dataclass, field

from ina.switch.model.errors import Unsupported
from ina.switch.model.externs import missing
from ina.switch.model.hashes import ALGORITHMS
from ina.switch.model.layout import HeaderLayout, Layout, num
from ina.switch.model.primitives import PRIMITIVES
from ina.switch.model.program import (
    Action,
    Control,
    Deparser,
    FieldList,
    Parser,
    ParserState,
    Program,
    Table,
    Transition,
    malformed_json,
    read_program,
)
from ina.switch.model.references import check_references
from ina.switch.model.values import hexint, ident
from ina.switch.native.expressions import CExpressions, const
from ina.switch.native.externs import STATE, register_places
from ina.switch.native.traffic import traffic_manager

MAX_ARGS = 64  # action parameters a table entry holds (state.h: def_args)
SM_FIELDS = ("ingress_port", "packet_length", "instance_type", "ingress_global_timestamp",
             "egress_global_timestamp", "parser_error", "mcast_grp", "egress_spec", "egress_port",
             "egress_rid")  # fmt: skip
NO_LIST = (1 << 64) - 1  # a field/learn list id no program has: preserves nothing
DIGEST_RING = 16384  # digests the C switch holds until Python reads sw.digests


@dataclass
class NativeProgram:
    """The generated C source and the indices Python uses to reach the state it declares."""

    source: str
    tables: dict[str, int] = field(default_factory=dict)  # BMv2 table name -> C table index
    vsets: dict[str, int] = field(default_factory=dict)
    learn_lists: dict[int, tuple[str, list[tuple[int, bool]]]] = field(default_factory=dict)
    digest_width: int = 0  # words per digest record (0: the program generates none)
    # tables and actions with values wider than 64 bits (C takes them as two words, high first)
    key_widths: dict[str, list[int]] = field(default_factory=dict)  # table -> key bitwidths
    param_widths: dict[int, list[int]] = field(default_factory=dict)  # action id -> bitwidths


class CGenerator:
    def __init__(self, program: Program, layout: Layout):
        missing(program.json, "native", STATE, Unsupported)  # by name, before any emitter needs it
        self.program = program
        self.layout = layout
        self.e = CExpressions(layout)
        self.lines: list[str] = []
        self.actions = program.actions
        self.errors = program.errors
        if "standard_metadata" not in layout.headers:
            raise Unsupported("no standard_metadata header")
        sm = layout.header("standard_metadata")
        self.sm = {name: sm.slot(name) for name in SM_FIELDS}
        self.register_places = register_places(program.registers)  # where each one's cells lie
        self.indices = {  # an instance's C index is its place in the model (datapath.py's too)
            kind: {x.name: i for i, x in enumerate(xs)} for kind, xs in program.externs.items()
        }
        self.vsets = {
            name: i for i, name in enumerate(program.value_sets)
        }  # names are unique (references.py)
        self.field_lists = {
            num(fl.id): self._list_fields(fl, "field list") for fl in program.field_lists.values()
        }
        self.learn_lists = {
            num(ll.id): (ll.name, self._list_fields(ll, "learn list"))
            for ll in program.learn_lists.values()
        }
        ops = {p["op"] for a in self.actions.values() for p in a.primitives}
        for parser in program.parsers:
            for state in parser.states:
                for op in state.ops:
                    if op["op"] == "primitive":
                        ops |= {prim["op"] for prim in op.get("parameters", [])[:1]}
        self.ops = ops
        self.tables: dict[str, int] = {}
        self.generated: list[Table] = []  # every table, by C index (the state arrays' sizes come
        # from the model's lists, never from name maps: a name twice cannot index past them)
        self.pre: list[str] = []  # calculation helpers, generated on first use, placed first
        self.defined: set[str] = set()
        self.uses_exit = "exit" in {p["op"] for a in self.actions.values() for p in a.primitives}
        for hl in layout.headers.values():
            if hl.varbit_max > 64:  # its value would not fit a slot
                raise Unsupported(
                    f"varbit header '{hl.name}' of up to {hl.varbit_max} bits (more than 64)"
                )
            if hl.varbit_max and hl.fixed_bits % 8:
                raise Unsupported(
                    f"varbit header '{hl.name}' whose fixed fields are not whole bytes"
                )
        self._wide_fields()
        self.key_widths: dict[str, list[int]] = {}
        self.param_widths: dict[int, list[int]] = {}
        for r in program.registers:
            if r.bitwidth > 64:
                raise Unsupported(f"register '{r.name}' is {r.bitwidth} bits wide")
        for a in self.actions.values():
            widths = list(a.param_widths)
            if sum(1 + (w > 64) for w in widths) > MAX_ARGS:
                raise Unsupported(f"action '{a.name}' has more than {MAX_ARGS} parameter words")
            for w in widths:
                if w > 128:
                    raise Unsupported(f"action '{a.name}' has a {w}-bit parameter")
            if any(w > 64 for w in widths):
                self.param_widths[a.id] = widths

    def _wide_fields(self) -> None:
        """Two hidden words (high, low) after the layout's slots for each unsigned field of 65..128
        bits of a fixed-size header outside stacks and unions; other wide fields stay refused."""
        in_stacks = {h for st in self.layout.stacks.values() for h in st.elements}
        self.nslots = self.layout.size
        self.wide_of: dict[str, list[tuple[int, int, int]]] = {}  # header -> (slot, hi, lo)
        for hl in self.layout.headers.values():
            for name, width, signed in hl.fields:
                if (
                    width <= 64
                    or hl.varbit_max
                    or hl.name in in_stacks
                    or hl.name in self.layout.union_of
                ):
                    continue
                if signed or width > 128:
                    raise Unsupported(
                        f"field {hl.name}.{name} is {'signed and ' * signed}{width} bits wide"
                    )
                self.e.wide_slots[(hl.name, name)] = (self.nslots, self.nslots + 1)
                self.wide_of.setdefault(hl.name, []).append(
                    (hl.slot(name), self.nslots, self.nslots + 1)
                )
                self.nslots += 2

    def _split_args(self, aid: int, values: list[int]) -> list[int]:
        """Action arguments as C words (a wide one as two, high first)."""
        widths = self.param_widths.get(aid)
        if widths is None:
            return values
        out = []
        for v, w in zip(values, widths, strict=True):
            out += [v >> 64, v & ((1 << 64) - 1)] if w > 64 else [v]
        return out

    def _list_fields(self, spec: FieldList, what: str) -> list[tuple[int, bool]]:
        """(slot, signed) of the fields of a field or learn list, as pipeline.py lists them."""
        out = []
        for header, name in spec.fields:
            hl = self.layout.header(header)
            if name != "$valid$" and hl.width(name) > 64:
                raise Unsupported(f"{what} '{spec.name}' has a field wider than 64 bits")
            out.append(
                (self.layout.field_slot(header, name), name != "$valid$" and hl.signed(name))
            )
        return out

    def list_id(self, param: dict | None, known, offset: int) -> str:
        """The C value the Python engine stores for a constant list id (+ offset), with ids of no
        list mapped to one sentinel (both preserve nothing); 0 stays 0 (no request)."""
        if param is None:
            value = 0
        elif param["type"] != "hexstr":
            raise Unsupported(f"a field or learn list id of type '{param['type']}'")
        else:
            value = hexint(param["value"])
        if value + offset == 0:
            return "0"
        return f"{value + offset}ULL" if value in known else f"{NO_LIST}ULL"

    def emit(self, line: str, indent: int = 0) -> None:
        self.lines.append("    " * indent + line)

    # --- the whole program ---------------------------------------------------------------
    def generate(self) -> NativeProgram:
        p = self.program
        if len(p.parsers) != 1 or len(p.deparsers) != 1:
            raise Unsupported("programs with other than one parser and one deparser")
        pipes = {pipe.name: pipe for pipe in p.controls}
        if set(pipes) != {"ingress", "egress"}:
            raise Unsupported(f"pipelines {sorted(pipes)} (expected ingress and egress)")
        values = list(self.layout.template())
        values += [0] * (self.nslots - len(values))
        for fields in self.wide_of.values():
            for slot, hi, lo in fields:
                v, values[slot] = values[slot] & ((1 << 128) - 1), 0
                values[hi], values[lo] = v >> 64, v & ((1 << 64) - 1)
        template = ", ".join(f"{v}u" for v in values)
        head = [
            '#include "state.h"',
            f"#define NSLOTS {self.nslots}",
            f"static const uint64_t TEMPLATE[NSLOTS] = {{{template}}};",
        ]
        for a in p.actions.values():
            self.action(a)
        self.parser(p.parsers[0])
        for name in ("ingress", "egress"):
            self.pipeline(pipes[name])
        self.checksums()
        max_header = self.deparser(p.deparsers[0])
        traffic_manager(self, max_header)
        self.constructor()
        source = "\n".join(head + self.pre + self.lines) + "\n"
        return NativeProgram(
            source,
            dict(self.tables),
            dict(self.vsets),
            dict(self.learn_lists),
            self._digest_width(),
            dict(self.key_widths),
            dict(self.param_widths),
        )

    def _digest_width(self) -> int:
        if "generate_digest" not in self.ops:
            return 0
        return 2 + max((len(fields) for _n, fields in self.learn_lists.values()), default=0)

    # --- headers -------------------------------------------------------------------------
    def _fields(self, hl: HeaderLayout) -> list[tuple[int, int, int, bool]]:
        """(slot, bit offset, width, signed) of each field of a fixed-size header; a wide field
        gives its two words (its high width - 64 bits, then its low 64 bits)."""
        if hl.varbit_max:
            raise Unsupported(f"varbit header '{hl.name}'")
        out, bit = [], 0
        for k, (name, width, signed) in enumerate(hl.fields):
            if (hl.name, name) in self.e.wide_slots:
                hi, lo = self.e.wide_slots[(hl.name, name)]
                out += [(hi, bit, width - 64, False), (lo, bit + width - 64, 64, False)]
                bit += width
                continue
            if width > 64:
                raise Unsupported(f"field {hl.name}.{name} is {width} bits wide")
            out.append((hl.base + 1 + k, bit, width, signed))
            bit += width
        if bit % 8:
            raise Unsupported(f"header '{hl.name}' is not a whole number of bytes")
        return out

    def extract(self, hl: HeaderLayout, indent: int, base: str | None = None) -> None:
        """Extracts a header at its own slots, or (stack element) at slot `base`, a C variable."""
        fields = self._fields(hl)
        if base is not None:
            if hl.name in self.wide_of:
                raise Unsupported(f"header '{hl.name}' with a wide field at a run-time place")
            fields = [
                (f"{base} + {slot - hl.base}", bit, width, sg) for slot, bit, width, sg in fields
            ]
        nbytes = sum(w for _s, _b, w, _g in fields) // 8
        short = self.errors.get("PacketTooShort", 0)
        self.emit(f"if (c->off + {nbytes} > c->len) PARSE_ERROR({short});", indent)
        self.emit("{", indent)
        self.emit("const uint8_t *d = c->data + c->off;", indent + 1)
        for slot, bit, width, signed in fields:
            value = f"ina_get_bits(d, {bit}, {width})"
            if bit % 8 == 0 and width in (8, 16, 32, 64):
                value = f"ina_ld{width}(d + {bit // 8})"
            if signed and width < 64:
                half = 1 << (width - 1)
                value = f"(uint64_t)(((int64_t){value} ^ {half}LL) - {half}LL)"
            self.emit(f"P[{slot}] = {value};", indent + 1)
        self.emit(f"P[{hl.base if base is None else base}] = 1;", indent + 1)
        self.emit(f"c->off += {nbytes};", indent + 1)
        self.emit("}", indent)

    def _varbit_fields(self, hl: HeaderLayout) -> list[tuple[int, int]]:
        """(slot, width or -1 for the varbit field) of each field of a varbit header."""
        out = []
        for k, (name, width, _signed) in enumerate(hl.fields):
            if width > 64:
                raise Unsupported(f"field {hl.name}.{name} is {width} bits wide")
            out.append((hl.base + 1 + k, width))
        return out

    def extract_varbit(
        self, hl: HeaderLayout, length: str, indent: int, base: str | None = None
    ) -> None:
        """Extracts a header with a varbit field of `length` bits (a C i128 expression), with the
        Python engine's checks in its order: not whole bytes, above the maximum, packet too short;
        a negative length that passes them is a run-time error there (ValueError), so here too."""
        fields = self._varbit_fields(hl)
        b = str(hl.base) if base is None else base
        err = self.errors.get
        self.emit("{", indent)
        i = indent + 1
        self.emit(f"i128 vl = {length};", i)
        self.emit(f"if (vl % 8) PARSE_ERROR({err('ParserInvalidArgument', 0)});", i)
        self.emit(f"if (vl > {hl.varbit_max}) PARSE_ERROR({err('HeaderTooShort', 0)});", i)
        self.emit(f"i128 end = (i128)c->off + ({hl.fixed_bits} + vl) / 8;", i)
        self.emit(f"if (end > (i128)c->len) PARSE_ERROR({err('PacketTooShort', 0)});", i)
        self.emit("if (vl < 0) ina_fail(c);", i)
        self.emit("const uint8_t *d = c->data + c->off;", i)
        self.emit("uint32_t bit = 0;", i)
        for k, (slot, width) in enumerate(fields):
            w = "(int)vl" if width < 0 else str(width)
            value = f"ina_get_bits(d, bit, {w})"
            if hl.fields[k][2] and 0 < width < 64:
                half = 1 << (width - 1)
                value = f"(uint64_t)(((int64_t){value} ^ {half}LL) - {half}LL)"
            self.emit(f"P[{b} + {slot - hl.base}] = {value};", i)
            self.emit(f"bit += {'(uint32_t)vl' if width < 0 else width};", i)
        self.emit(f"P[{b} + {hl.vl_slot - hl.base}] = (uint64_t)vl;", i)
        self.emit(f"P[{b}] = 1;", i)
        self.emit("c->off = (uint32_t)end;", i)
        self.emit("}", indent)

    # --- actions -------------------------------------------------------------------------
    def action(self, action: Action) -> None:
        prims = list(action.primitives)
        self.e.params, word = [], 0
        for w in action.param_widths:  # a parameter wider than 64 bits takes two words
            self.e.params.append((word, w))
            word += 1 + (w > 64)
        self.emit(
            f"static inline void act_{action.id}(ina_ctx *c, uint64_t *restrict P, const uint64_t *A) {{"
        )
        self.emit("(void)c; (void)P; (void)A;", 1)
        targets = set(action.jumps.values())
        for i, prim in enumerate(prims):
            if i in targets:  # only jump targets get labels (-Wall warns of unused ones)
                self.emit(f"J{i}:;", 0)
            for line in self.primitive(prim):
                self.emit(line, 1)
        if len(prims) in targets:
            self.emit(f"J{len(prims)}:;", 0)
        self.emit("}")
        self.e.params = None

    def primitive(self, prim: dict) -> list[str]:
        """C statements for one action primitive (its entry in primitives.py)."""
        op = prim["op"]
        entry = PRIMITIVES.get(op)
        if entry is None:
            raise Unsupported(f"primitive '{op}'")
        return entry.c(self, op, prim.get("parameters", []))

    def copy_header(self, dst: dict, src: dict) -> list[str]:
        """Header `src` copied onto header `dst`, wide fields' hidden words included."""
        (d, hl), (s, shl) = self.e.header_base(dst), self.e.header_base(src)
        lines = [
            "{",
            f"size_t d = {d};",
            f"size_t s = {s};",
            f"memmove(&P[d], &P[s], {hl.size} * sizeof(uint64_t));",
            "}",
        ]
        if hl.name in self.wide_of or shl.name in self.wide_of:
            if (
                hl.name not in self.wide_of
                or shl.name not in self.wide_of
                or [f[1:] for f in hl.fields] != [f[1:] for f in shl.fields]
            ):
                raise Unsupported("a copy between headers of different shapes with wide fields")
            for (_s, dh, dl), (_t, sh, sl) in zip(
                self.wide_of[hl.name], self.wide_of[shl.name], strict=True
            ):
                lines.append(f"P[{dh}] = P[{sh}]; P[{dl}] = P[{sl}];")
        return lines

    def copy_union(self, dst: dict, src: dict) -> list[str]:
        """Each member header of union `src` copied onto the same member of `dst`."""
        return self._copy_unions(self.e.union(dst), self.e.union(src))

    def _copy_unions(self, dst: tuple[str, ...], src: tuple[str, ...]) -> list[str]:
        if len(dst) != len(src):
            raise Unsupported("a copy between header unions of different shapes")
        lines = []
        for dm, sm in zip(dst, src, strict=True):
            d, s = self.layout.header(dm), self.layout.header(sm)
            if d.size != s.size:
                raise Unsupported("a copy between header union members of different sizes")
            lines.append(f"memmove(&P[{d.base}], &P[{s.base}], {d.size} * sizeof(uint64_t));")
        return lines

    def copy_stack(self, dst: str, src: str) -> list[str]:
        stacks = self.layout.union_stacks
        if dst in stacks:
            if src not in stacks or len(stacks[dst]) != len(stacks[src]):
                raise Unsupported("a copy between header union stacks of different shapes")
            lines = []
            for du, su in zip(stacks[dst], stacks[src], strict=True):
                lines += self._copy_unions(self.layout.unions[du], self.layout.unions[su])
            return lines
        d, s = self.e.stack(dst), self.e.stack(src)
        n = d.stride * len(d.elements)
        return [
            f"memmove(&P[{d.base}], &P[{s.base}], {n} * sizeof(uint64_t));",
            f"P[{d.next_slot}] = P[{s.next_slot}];",
        ]

    # --- calculations --------------------------------------------------------------------
    def calculation(self, name: str, with_payload: bool) -> str:
        """A C expression computing the named hash/checksum over its field list (and payload)."""
        if name not in self.program.calculations:
            raise Unsupported(f"unknown calculation '{name}'")
        calc = self.program.calculations[name]
        items: list[tuple[str, int]] = []
        uses_payload = calc.payload
        for item in calc.inputs:
            field = {"type": "field", "value": item.ref}
            if item.ref is None:
                value, width = item.value & ((1 << item.width) - 1), item.width
                while width > 64:  # as 64-bit pieces, the most significant first
                    items.append((f"{value >> (width - 64)}ULL", 64))
                    width -= 64
                    value &= (1 << width) - 1
                items.append((f"{value}ULL", width))
            elif (wide := self.e.wide(field)) is not None:
                hi, lo, width = wide
                items += [(f"P[{hi}]", width - 64), (f"P[{lo}]", 64)]
            else:
                slot, width, _s = self.e.field(field)
                if width > 64:
                    raise Unsupported(f"calculation '{name}' reads a {width}-bit field")
                items.append((f"P[{slot}]", width))
        bits = sum(w for _s, w in items)
        nbytes = (bits + 7) // 8
        fn = f"calc_{calc.id}_{int(uses_payload and with_payload)}"
        if fn not in self.defined:
            self.defined.add(fn)
            algo = calc.algo
            body = [
                f"static inline uint64_t {fn}(ina_ctx *c, const uint64_t *P, const uint8_t *pl, uint32_t npl) {{",
                "    (void)c; (void)pl; (void)npl;",
                f"    uint8_t b[{max(nbytes, 1)}] = {{0}};",
            ]
            bit = 0
            for source, width in items:
                body.append(f"    ina_put_bits(b, {bit}, {width}, {source});")
                bit += width
            payload = "pl, npl" if uses_payload and with_payload else "b, 0"
            if algo == "identity":
                if nbytes > 8 or uses_payload:
                    raise Unsupported("identity hash wider than 64 bits or over the payload")
                body.append(f"    return (uint64_t)ina_load_be(b, {nbytes});")
            elif ALGORITHMS[algo].c:
                body.append(f"    return {ALGORITHMS[algo].c}(b, {nbytes}, {payload});")
            else:
                raise Unsupported(f"hash algorithm '{algo}'")
            body.append("}")
            self.pre.extend(body)
        return f"{fn}(c, P, c->data + c->off, c->len - c->off)"

    # --- parser --------------------------------------------------------------------------
    def parser(self, parser: Parser) -> None:
        label = {s.name: f"S_{ident(s.name)}_{s.id}" for s in parser.states}
        self.emit("#define PARSE_ERROR(code) do { c->perr = (code); goto parse_error; } while (0)")
        self.emit("static void parse(ina_ctx *c, uint64_t *P) {")
        self.emit("if (setjmp(c->parse_abort)) goto parse_error;", 1)
        self.emit(f"goto {label[parser.init_state]};", 1)
        for state in parser.states:
            self.emit(f"{label[state.name]}:;")
            for op in state.ops:
                self._parser_op(op)
            self._transitions(state, label)
        self.emit("parse_done: return;")
        self.emit("parse_error:")
        self.emit(f"P[{self.sm['parser_error']}] = (uint64_t)c->perr;", 1)
        self.emit("}")

    def _parser_op(self, op: dict) -> None:
        kind, params = op["op"], op.get("parameters", [])
        if kind == "extract_VL" or (kind == "extract" and self._extracts_varbit(params[0])):
            self._extract_varbit_op(kind, params)
        elif kind == "extract" and params[0]["type"] == "stack":
            st = self.e.stack(params[0]["value"])
            err = self.errors.get("StackOutOfBounds", 0)
            self.emit("{", 1)
            self.emit(f"uint64_t i = P[{st.next_slot}];", 2)
            self.emit(f"if (i >= {len(st.elements)}) PARSE_ERROR({err});", 2)
            self.emit(f"P[{st.next_slot}] = i + 1;", 2)
            self.emit(f"size_t b = {st.base} + i * {st.stride};", 2)
            self.extract(self.layout.header(st.elements[0]), 2, "b")
            self.emit("}", 1)
        elif kind == "extract":
            if params[0]["type"] != "regular":
                raise Unsupported(f"extract into a {params[0]['type']}")
            self.extract(self.e.header(params[0]), 1)
        elif kind == "set":
            self.emit(self.e.store(params[0], params[1]), 1)
        elif kind == "verify":
            self.emit(
                f"if (!({self.e.value(params[0])})) PARSE_ERROR((int){self.e.value(params[1])});", 1
            )
        elif kind == "advance":
            short = self.errors.get("PacketTooShort", 0)
            # as the Python engine: bytes past the end leave an empty payload; a negative advance
            # moves back (below 0, Python's slice would count from the end: not modelled)
            self.emit("{", 1)
            self.emit(f"i128 off = (i128)c->off + ina_div(c, {self.e.value(params[0])}, 8);", 2)
            self.emit("if (off < 0) ina_fail(c);", 2)
            self.emit(f"if (off > c->len) {{ c->off = c->len; PARSE_ERROR({short}); }}", 2)
            self.emit("c->off = (uint32_t)off;", 2)
            self.emit("}", 1)
        elif kind == "primitive":
            for prim in params[:1]:  # the Python engine runs the first only
                for line in self.primitive(prim):
                    self.emit(line, 1)
        else:
            raise Unsupported(f"parser operation '{kind}'")

    def _extracts_varbit(self, target: dict) -> bool:
        if target["type"] == "stack":
            return bool(self.layout.header(self.e.stack(target["value"]).elements[0]).varbit_max)
        return target["type"] == "regular" and bool(self.layout.header(target["value"]).varbit_max)

    def _extract_varbit_op(self, kind: str, params: list) -> None:
        """extract_VL, or extract of a varbit header (its length 0, as the Python engine)."""
        target = params[0]
        length = self.e.value(params[1]) if kind == "extract_VL" else "((i128)0)"
        if target["type"] == "stack":
            st = self.e.stack(target["value"])
            hl = self.layout.header(st.elements[0])
        elif target["type"] == "regular":
            hl = self.layout.header(target["value"])
        else:
            raise Unsupported(f"{kind} into a {target['type']}")
        if not hl.varbit_max:
            raise Unsupported(f"{kind} of header '{hl.name}' without a varbit field")
        if target["type"] == "regular":
            self.extract_varbit(hl, length, 1)
            return
        err = self.errors.get("StackOutOfBounds", 0)
        self.emit("{", 1)
        self.emit(f"uint64_t i = P[{st.next_slot}];", 2)
        self.emit(f"if (i >= {len(st.elements)}) PARSE_ERROR({err});", 2)
        self.emit(f"P[{st.next_slot}] = i + 1;", 2)
        self.emit(f"i128 len = {length};", 2)  # as the Python engine: after the index moved
        self.emit(f"size_t b = {st.base} + i * {st.stride};", 2)
        self.extract_varbit(hl, "len", 2, "b")
        self.emit("}", 1)

    def _transitions(self, state: ParserState, label: dict[str, str]) -> None:
        keys = state.keys
        if keys:
            if len(keys) == 1:
                key = self.e.value(keys[0].expr)
            else:
                parts = [
                    f"((u128)({self.e.value(k.expr)} & {const(k.mask)}) << {k.shift})"
                    for k in reversed(keys)
                ]
                if keys[0].shift + keys[0].bits > 120:
                    raise Unsupported(f"a {keys[0].shift + keys[0].bits}-bit parser transition key")
                key = f"(i128)({' | '.join(parts)})"
            self.emit("{", 1)
            self.emit(f"i128 k = {key}; (void)k;", 2)
        for t in state.transitions:
            target = label[t.next_state] if t.next_state else "parse_done"
            self.emit(f"{self._select_case(t)}goto {target};", 2)
        if keys:
            self.emit("}", 1)

    def _select_case(self, t: Transition) -> str:
        """`if (...) ` testing the select key `k` against one case; nothing for the default."""
        if t.kind == "default":
            return ""
        if t.kind == "parse_vset":
            if t.vset not in self.vsets:
                raise Unsupported(f"unknown value set '{t.vset}'")
            mask = const(-1 if t.mask is None else t.mask)
            return f"if (ina_vset_match(&c->sw->vsets[{self.vsets[t.vset]}], k, {mask})) "
        return (
            f"if (k == {const(t.value)}) "
            if t.mask is None
            else f"if ((k & {const(t.mask)}) == {const(t.value)}) "
        )

    # --- pipelines -----------------------------------------------------------------------
    def pipeline(self, pipe: Control) -> None:
        if pipe.action_profiles:
            raise Unsupported("action profiles")
        labels = {name: f"{key}_{ident(name)}" for name, key in pipe.nodes.items()}

        def goto(name: str | None) -> str:
            return f"goto {labels[name]};" if name else "return;"

        exit_check = f"if (P[{self.layout.hidden['exit']}]) return;" if self.uses_exit else ""
        self.emit(f"static void pipe_{pipe.name}(ina_ctx *c, uint64_t *P) {{")
        self.emit(goto(pipe.init_table), 1)
        for t in pipe.tables:
            self.table(t, labels[t.name], goto, exit_check)
        for cnd in pipe.conditionals:
            self.emit(f"{labels[cnd.name]}:")
            self.emit(f"if ({self.e.value(cnd.expression)}) {goto(cnd.true_next)}", 1)
            self.emit(goto(cnd.false_next), 1)
        self.emit("}")

    def table(self, t: Table, label: str, goto, exit_check: str) -> None:
        if t.kind != "simple":
            raise Unsupported(f"table '{t.name}' of type {t.kind}")
        index = len(self.generated)
        self.tables[t.name] = index
        self.generated.append(t)
        keys = t.keys
        nxt = t.next_tables
        by_hit = "__HIT__" in nxt or "__MISS__" in nxt
        self.emit(f"{label}: {{")
        default = t.default
        if (
            not keys
            and default
            and default.action_const
            and default.entry_const
            and not t.with_counters
        ):
            aid = default.action_id
            args = [a & ((1 << 128) - 1) for a in default.args]
            args = [a & ((1 << 64) - 1) for a in self._split_args(aid, args)]
            self.emit(
                f"static const uint64_t args[{max(len(args), 1)}] = {{{', '.join(f'{a}ULL' for a in args) or '0'}}};",
                1,
            )
            self.emit("INA_MARK(c, INA_PROF_CONTROL);", 1)
            self.emit(f"act_{aid}(c, P, args);", 1)
            self.emit("INA_MARK(c, INA_PROF_ACTIONS);", 1)
            if exit_check:
                self.emit(exit_check, 1)
            name = self.actions[aid].name
            self.emit(goto(nxt.get("__MISS__") if by_hit else nxt.get(name)), 1)
            self.emit("}")
            return
        self.emit(f"ina_table *tb = &c->sw->tables[{index}];", 1)
        self.emit("INA_MARK(c, INA_PROF_CONTROL);", 1)
        if keys:
            parts = []
            for k in keys:
                if k.match_type == "valid":
                    hl = self.layout.header(k.target)
                    parts.append(f"P[{hl.base}]")
                    continue
                wide = self.e.wide({"type": "field", "value": k.target})
                if wide is not None:
                    if k.match_type == "range":
                        raise Unsupported(f"range key wider than 64 bits in table '{t.name}'")
                    hi, lo, width = wide
                    self.key_widths[t.name] = [x.width for x in keys]
                    m = k.mask if k.mask is not None else (1 << width) - 1
                    parts += [f"(P[{hi}] & {m >> 64}ULL)", f"(P[{lo}] & {m & ((1 << 64) - 1)}ULL)"]
                    continue
                slot, _w, _s = self.e.field({"type": "field", "value": k.target})
                parts.append(f"(P[{slot}] & {k.mask}ULL)" if k.mask is not None else f"P[{slot}]")
            self.emit(f"uint64_t key[{len(parts)}] = {{{', '.join(parts)}}};", 1)
            self.emit(
                f"ina_entry *e = ina_{'exact' if t.exact_only else 'ternary'}_lookup(tb, key);", 1
            )
        else:
            self.emit("ina_entry *e = NULL;", 1)
        self.emit("int act; const uint64_t *A;", 1)
        counters = (
            f" e->packets++; e->bytes += P[{self.sm['packet_length']}];" if t.with_counters else ""
        )
        if t.direct_meter:
            spec = self.program.meters[self.index("meter", t.direct_meter)]
            if spec.result_target and keys:  # as the Python engine: a hit runs the meter
                plen = f"P[{self.sm['packet_length']}]"
                color = (
                    f"(i128)(e->meter ? ina_meter_execute(e->meter, {int(spec.bytes)}, {plen}) : 0)"
                )
                counters += " " + self.e.store_c(
                    {"type": "field", "value": spec.result_target}, color
                )
        self.emit(f"if (e) {{ act = e->action; A = e->args;{counters} }}", 1)
        self.emit("else { act = tb->def_action; A = tb->def_args; }", 1)
        self.emit("INA_MARK(c, INA_PROF_LOOKUP);", 1)
        self.emit("switch (act) {", 1)
        for aid in t.action_ids:
            self.emit(f"case {aid}: act_{aid}(c, P, A); break;", 1)
        self.emit("default: break;", 1)
        self.emit("}", 1)
        self.emit("INA_MARK(c, INA_PROF_ACTIONS);", 1)
        if exit_check:
            self.emit(exit_check, 1)
        if by_hit:
            self.emit(f"if (e) {goto(nxt.get('__HIT__'))}", 1)
            self.emit(goto(nxt.get("__MISS__")), 1)
        else:
            targets = {nxt.get(self.actions[aid].name) for aid in t.action_ids}
            if len(targets) == 1:
                self.emit(goto(targets.pop()), 1)
            else:
                self.emit("switch (act) {", 1)
                for aid in t.action_ids:
                    self.emit(f"case {aid}: {goto(nxt.get(self.actions[aid].name))}", 1)
                self.emit("default: return;", 1)
                self.emit("}", 1)
        self.emit("}")

    # --- checksums, deparser, traffic manager ------------------------------------------
    def checksums(self) -> None:
        for flag in ("verify", "update"):
            self.emit(f"static void {flag}_checksums(ina_ctx *c, uint64_t *P) {{")
            self.emit("(void)c; (void)P;", 1)
            for ck in self.program.checksums:
                if not (ck.verify if flag == "verify" else ck.update):
                    continue
                calc = self.calculation(ck.calculation.name, with_payload=True)
                slot, width, _s = self.e.field({"type": "field", "value": ck.target})
                cond = self.e.value(ck.condition) if ck.condition else "1"
                value = f"({calc} & {(1 << width) - 1}ULL)"
                if flag == "verify":
                    self.emit(
                        f"if (({cond}) && {value} != P[{slot}]) P[{self._sm_slot('checksum_error')}] = 1;",
                        1,
                    )
                else:
                    self.emit(f"if ({cond}) P[{slot}] = {value};", 1)
            self.emit("}")

    def _sm_slot(self, name: str) -> int:
        return self.layout.header("standard_metadata").slot(name)

    def deparser(self, deparser: Deparser) -> int:
        """Emits deparse(); returns the most bytes it can write."""
        self.emit("static uint32_t deparse(const uint64_t *P, uint8_t *d) {")
        self.emit("uint32_t n = 0;", 1)
        total = 0
        order = []
        for name in deparser.order:
            if name in self.layout.stacks:
                order += self.layout.stacks[name].elements
            elif name in self.layout.unions:  # its members, each if valid, in declaration order
                order += self.layout.unions[name]
            elif name in self.layout.headers:
                order.append(name)
            else:
                raise Unsupported(f"deparsing '{name}'")
        for name in order:
            hl = self.layout.header(name)
            if hl.varbit_max:
                total += self._deparse_varbit(hl)
                continue
            fields = self._fields(hl)
            nbytes = sum(w for _s, _b, w, _g in fields) // 8
            total += nbytes
            self.emit(f"if (P[{hl.base}]) {{", 1)
            if any(not (b % 8 == 0 and w in (8, 16, 32, 64)) for _s, b, w, _g in fields):
                self.emit(f"memset(d + n, 0, {nbytes});", 2)
            for slot, bit, width, _g in fields:
                if bit % 8 == 0 and width in (8, 16, 32, 64):
                    self.emit(f"ina_st{width}(d + n + {bit // 8}, P[{slot}]);", 2)
                else:
                    self.emit(f"ina_put_bits(d + n, {bit}, {width}, P[{slot}]);", 2)
            self.emit(f"n += {nbytes};", 2)
            self.emit("}", 1)
        self.emit("return n;", 1)
        self.emit("}")
        return total

    def _deparse_varbit(self, hl: HeaderLayout) -> int:
        """Emits a valid varbit header with its current length; returns its most bytes."""
        self.emit(f"if (P[{hl.base}]) {{", 1)
        self.emit(
            f"uint32_t vl = (uint32_t)P[{hl.vl_slot}], nb = ({hl.fixed_bits} + vl) / 8, bit = 0;", 2
        )
        self.emit("memset(d + n, 0, nb);", 2)
        for slot, width in self._varbit_fields(hl):
            w = "(int)vl" if width < 0 else str(width)
            self.emit(f"ina_put_bits(d + n, bit, {w}, P[{slot}]);", 2)
            self.emit(f"bit += {'vl' if width < 0 else width};", 2)
        self.emit("n += nb;", 2)
        self.emit("}", 1)
        return (hl.fixed_bits + hl.varbit_max) // 8

    def index(self, kind: str, name: str) -> int:
        """The C index of an extern instance (an array of its kind's state in state.h)."""
        return self.indices[kind][name]

    def register_cell(self, index: int) -> str:
        """The C lvalue of cell `i` (an i128 in range) of register `index`."""
        stride = self.register_places[index].stride
        return f"c->sw->registers[{index}].cells[(size_t)i * {stride}]"

    def constructor(self) -> None:
        p = self.program
        self.emit(f"""
int ina_ntables = {len(self.generated)};

ina_switch *ina_new(int drop_port) {{
    ina_switch *sw = ina_alloc(ina_ntables, drop_port);
    if (!sw) return NULL;""")
        for index, t in enumerate(self.generated):
            words = len(t.keys) + sum(w > 64 for w in self.key_widths.get(t.name, []))
            self.emit(
                f"ina_table_init(sw, {index}, {words}, {int(t.exact_only)}, {t.max_size}u);", 1
            )
        for kind, state in STATE.items():
            self.emit(f"{state.alloc}(sw, {len(p.externs[kind])});", 1)
            for index, x in enumerate(p.externs[kind]):
                self.emit(state.init(index, x, self.register_places), 1)
        self.emit(f"ina_vsets_init(sw, {len(p.value_sets)});", 1)
        if self._digest_width():
            self.emit(f"ina_digest_init(sw, {self._digest_width()}u, {DIGEST_RING}u);", 1)
        self.emit(f"ina_scratch_init(sw, 65536u + (INA_MAX_REENTRY + 2) * {self.max_header}u);", 1)
        self.emit("return sw;", 1)
        self.emit("}")


def generate(program: Program | dict, layout: Layout) -> NativeProgram:
    """C source for a program (its model, or BMv2 JSON read into one and checked); raises
    Unsupported naming the first feature it lacks, PipelineError for JSON no model holds.

    This generator reads parts of the JSON the Python engine does not; a lookup that fails there
    is a program this engine cannot run, not a crash."""
    if not isinstance(program, Program):
        with malformed_json():
            program = read_program(program, layout)
            check_references(program, layout)  # as load_program does: the code indexes what exists
    try:
        return CGenerator(program, layout).generate()
    except (
        KeyError,
        IndexError,
        TypeError,
        ValueError,
        AttributeError,
        OverflowError,
        StopIteration,
    ) as err:
        raise Unsupported(f"malformed BMv2 JSON: {type(err).__name__}: {err}") from None
