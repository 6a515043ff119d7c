"""The program model: a BMv2 JSON program read once, at load time, into typed records.

Both engines generate code from it, so the JSON's shape (lists to search by name, ids to resolve,
widths to look up in header types, hex strings, defaults of absent keys) is read here and nowhere
else: a table's key widths, a calculation's inputs, a parser transition's key widths and values
are decided once for both. Expressions and primitive parameters stay JSON (`dict`): each engine's
expression compiler translates them. Nothing here runs per packet.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ina.switch.model.errors import PipelineError, TableError
from ina.switch.model.externs import EXTERNS, CounterArray, MeterArray, Ref, RegisterArray
from ina.switch.model.layout import HIDDEN, HeaderLayout, Layout, StackLayout, num
from ina.switch.model.values import hexint

JUMPS = ("_jump", "_jump_if_zero")  # the primitives that move an action's program counter


@dataclass(frozen=True)
class ActionParam:
    name: str
    width: int


@dataclass(frozen=True)
class Action:
    id: int
    name: str
    params: tuple[ActionParam, ...]
    primitives: tuple[dict, ...]  # BMv2 primitive objects, for the engines' emitters

    @property
    def param_widths(self) -> tuple[int, ...]:
        return tuple(p.width for p in self.params)

    @property
    def jumps(self) -> dict[int, int]:
        """Index of each jump primitive -> the index it goes to (references.py checked each)."""
        return {
            i: jump_target(p["parameters"])
            for i, p in enumerate(self.primitives)
            if p["op"] in JUMPS
        }


@dataclass(frozen=True)
class TableKey:
    name: str  # as P4Runtime and the table API name it
    match_type: str  # exact | lpm | ternary | range | optional | valid
    target: Ref | str  # (header, field), or the header of a `valid` key
    width: int
    mask: int | None


@dataclass(frozen=True)
class DefaultEntry:
    action_id: int
    args: tuple[int, ...]
    action_const: bool
    entry_const: bool  # the data cannot change either


@dataclass(frozen=True)
class ConstEntry:
    """An entry the program declares, with its match in the table API's form (tables.py)."""

    match: tuple
    action_id: int
    args: tuple[int, ...]
    priority: int  # BMv2's: smaller wins


@dataclass(frozen=True)
class Table:
    name: str
    id: int
    keys: tuple[TableKey, ...]
    action_ids: tuple[int, ...]
    max_size: int
    default: DefaultEntry | None
    entries: tuple[ConstEntry, ...]
    next_tables: dict[str, str | None]  # action name, __HIT__ or __MISS__ -> next node
    with_counters: bool
    direct_meter: str | None
    kind: str  # simple | indirect | indirect_ws

    @property
    def exact_only(self) -> bool:
        """A dict lookup serves it: every key exact or a validity bit."""
        return all(k.match_type in ("exact", "valid") for k in self.keys)


@dataclass(frozen=True)
class Conditional:
    name: str
    id: int
    expression: dict  # BMv2 expression, for the engines' expression compilers
    true_next: str | None
    false_next: str | None


@dataclass(frozen=True)
class Control:
    """An ingress or egress pipeline: its tables and conditionals, the nodes of one graph."""

    name: str
    id: int
    init_table: str | None
    tables: tuple[Table, ...]
    conditionals: tuple[Conditional, ...]
    action_profiles: tuple[dict, ...]

    @property
    def nodes(self) -> dict[str, str]:
        """Each node's name -> an identifier no other node of the program has (t<control>_<table>,
        c<control>_<conditional>), which the engines' generated names are made of."""
        ids = {t.name: f"t{self.id}_{t.id}" for t in self.tables}
        return ids | {c.name: f"c{self.id}_{c.id}" for c in self.conditionals}


@dataclass(frozen=True)
class CalcInput:
    """One input of a calculation: a field (`ref`) or a constant (`value`), `width` bits."""

    width: int
    ref: Ref | None = None
    value: int = 0


@dataclass(frozen=True)
class Calculation:
    """A hash or checksum: `algo` (hashes.ALGORITHMS) over its inputs packed big-endian and
    padded to whole bytes, then the payload when `payload`."""

    name: str
    id: int
    algo: str
    inputs: tuple[CalcInput, ...]
    payload: bool


@dataclass(frozen=True)
class Checksum:
    target: Ref
    calculation: Calculation
    verify: bool
    update: bool
    condition: dict | None  # an expression, or None: always


@dataclass(frozen=True)
class FieldList:
    """A field list (what resubmit, recirculate and clones preserve) or a learn list (a digest)."""

    id: int
    name: str
    fields: tuple[Ref, ...]


@dataclass(frozen=True)
class TransitionKey:
    """One part of a parser state's select key. Several parts are packed into one integer, each
    padded to whole bytes, the first part highest (`shift` is where this part starts)."""

    expr: dict  # field, stack_field, lookahead or expression object
    width: int | None  # None for an expression: only a lone key may be one
    shift: int = 0

    @property
    def bits(self) -> int:
        """The bits the part takes in the packed key: its width padded to whole bytes."""
        return (self.width or 0) + 7 & ~7

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1


@dataclass(frozen=True)
class Transition:
    """One case of a select: the key masked by `mask` (all of it when None) equals `value`, or
    is in value set `vset`; a default always matches."""

    kind: str  # hexstr | parse_vset | default
    next_state: str | None  # None: accept
    value: int = 0  # hexstr: the value to match, masked already
    mask: int | None = None
    vset: str = ""  # parse_vset: the value set's name


@dataclass(frozen=True)
class ParserState:
    name: str
    id: int
    ops: tuple[dict, ...]
    keys: tuple[TransitionKey, ...]
    transitions: tuple[Transition, ...]  # tried in order; the last (only the last) is a default


@dataclass(frozen=True)
class Parser:
    name: str
    id: int
    init_state: str
    states: tuple[ParserState, ...]


@dataclass(frozen=True)
class Deparser:
    id: int
    order: tuple[str, ...]  # headers, stacks and unions, emitted in this order when valid


@dataclass(frozen=True)
class Program:
    """Everything the engines generate code from and allocate state for, in document order."""

    json: dict
    actions: dict[int, Action]
    controls: tuple[Control, ...]
    tables: dict[str, Table]  # of every control, by name
    calculations: dict[str, Calculation]
    checksums: tuple[Checksum, ...]
    field_lists: dict[int, FieldList]
    learn_lists: dict[int, FieldList]
    externs: dict[str, tuple]  # model/externs.py's kind -> its instances' records, in JSON order
    value_sets: tuple[str, ...]
    parsers: tuple[Parser, ...]
    deparsers: tuple[Deparser, ...]
    errors: dict[str, int]

    @property
    def registers(self) -> tuple[RegisterArray, ...]:
        return self.externs["register"]

    @property
    def counters(self) -> tuple[CounterArray, ...]:
        return self.externs["counter"]

    @property
    def meters(self) -> tuple[MeterArray, ...]:
        return self.externs["meter"]

    def instance(self, kind: str, name: str) -> Any:
        """The record of the `kind` instance called `name` (model/externs.py's kind)."""
        found = next((x for x in self.externs[kind] if x.name == name), None)
        if found is None:
            raise PipelineError(f"unknown {EXTERNS[kind].what} '{name}'")
        return found

    def calculation(self, name: str) -> Calculation:
        if name not in self.calculations:
            raise PipelineError(f"unknown calculation '{name}'")
        return self.calculations[name]

    def action_named(self, name: str) -> Action:
        return next(a for a in self.actions.values() if a.name == name)


def jump_target(params: list[dict]) -> int:
    """The primitive index a `_jump` or `_jump_if_zero` goes to: its last parameter."""
    return hexint(params[-1]["value"])


@contextmanager
def malformed_json() -> Iterator[None]:
    """Turns what a program's code generation or state set-up trips over into PipelineError.

    The document is untrusted (P4Runtime clients send it) and the schema cannot say everything
    (which ids refer to what); TableError: const entries the table refuses."""
    try:
        yield
    except PipelineError:
        raise
    except (
        KeyError,
        IndexError,
        TypeError,
        ValueError,
        AttributeError,
        OverflowError,
        StopIteration,
        TableError,
    ) as err:
        raise PipelineError(f"malformed BMv2 JSON: {type(err).__name__}: {err}") from None


def build_layout(program: dict) -> Layout:
    """Assign slots to every header instance of a BMv2 JSON program (layout.py says how)."""
    types = {t["name"]: t for t in program.get("header_types", [])}
    layout = Layout()
    stack_members: dict[str, list[str]] = {}
    for stack in program.get("header_stacks", []):
        stack_members[stack["name"]] = [_header_name(program, i) for i in stack["header_ids"]]
    next_slot = 0
    for header in program.get("headers", []):
        name = header["name"]
        htype = types.get(header["header_type"])
        if htype is None:
            raise PipelineError(
                f"header '{name}' uses unknown header type '{header['header_type']}'"
            )
        fields = []
        varbit_max = 0
        for spec in htype["fields"]:
            fname, width = spec[0], spec[1]
            signed = bool(spec[2]) if len(spec) > 2 else False
            if width == "*":
                varbit_max = num(htype.get("max_length", 0)) * 8 - sum(
                    f[1] for f in htype["fields"] if f[1] != "*"
                )
                fields.append((fname, -1, False))
            else:
                fields.append((fname, num(width), signed))
        hl = HeaderLayout(
            name,
            next_slot,
            tuple(fields),
            max(varbit_max, 0),
            bool(header["metadata"]),
            htype["name"],
        )
        layout.headers[name] = hl
        layout.by_id[header["id"]] = name
        next_slot += hl.size
    for stack_name, members in stack_members.items():
        first = layout.headers[members[0]]
        stride = first.size
        contiguous = all(
            layout.headers[m].base == first.base + i * stride for i, m in enumerate(members)
        )
        if not contiguous:
            raise PipelineError(f"header stack '{stack_name}': elements are not declared in order")
        layout.stacks[stack_name] = StackLayout(
            stack_name, tuple(members), first.base, stride, next_slot
        )
        next_slot += 1
    for union in program.get("header_unions", []):
        members = tuple(_header_name(program, i) for i in union["header_ids"])
        layout.unions[union["name"]] = members
        for m in members:
            layout.union_of[m] = union["name"]
    union_names = {u["id"]: u["name"] for u in program.get("header_unions", [])}
    for ustack in program.get("header_union_stacks", []):
        layout.union_stacks[ustack["name"]] = tuple(
            union_names[i] for i in ustack["header_union_ids"]
        )
    for hidden in HIDDEN:
        layout.hidden[hidden] = next_slot
        next_slot += 1
    layout.size = next_slot
    return layout


def _header_name(program: dict, header_id: int) -> str:
    for header in program["headers"]:
        if header["id"] == header_id:
            return header["name"]
    raise PipelineError(f"no header with id {header_id}")


def read_program(json: dict, layout: Layout) -> Program:
    """The model of a validated BMv2 JSON document whose slots `layout` assigned; PipelineError
    (or, for a document that skipped validation, KeyError and the like) names what is wrong."""
    reader = _Reader(layout)
    actions = {num(a["id"]): reader.action(a) for a in json.get("actions", [])}
    calculations = {c["name"]: reader.calculation(c) for c in json.get("calculations", [])}
    controls = tuple(
        Control(
            p["name"],
            num(p["id"]),
            p.get("init_table"),
            tuple(reader.table(t, actions) for t in p.get("tables", [])),
            tuple(
                Conditional(
                    c["name"],
                    num(c["id"]),
                    c["expression"],
                    c.get("true_next"),
                    c.get("false_next"),
                )
                for c in p.get("conditionals", [])
            ),
            tuple(p.get("action_profiles", [])),
        )
        for p in json.get("pipelines", [])
    )
    return Program(
        json=json,
        actions=actions,
        controls=controls,
        tables={t.name: t for c in controls for t in c.tables},
        calculations=calculations,
        checksums=tuple(reader.checksum(ck, calculations) for ck in json.get("checksums", [])),
        field_lists={fl["id"]: reader.field_list(fl) for fl in json.get("field_lists", [])},
        learn_lists={ll["id"]: reader.field_list(ll) for ll in json.get("learn_lists", [])},
        externs={
            kind.name: tuple(kind.read(x) for x in json.get(kind.section, []))
            for kind in EXTERNS.values()
        },
        value_sets=tuple(v["name"] for v in json.get("parse_vsets", [])),
        parsers=tuple(reader.parser(p) for p in json.get("parsers", [])),
        deparsers=tuple(
            Deparser(num(d["id"]), tuple(d.get("order", []))) for d in json.get("deparsers", [])
        ),
        errors={name: num(code) for name, code in json.get("errors", [])},
    )


class _Reader:
    """The JSON-to-model conversions that need the layout (field widths)."""

    def __init__(self, layout: Layout):
        self.layout = layout

    def width(self, ref: Ref) -> int:
        header, name = ref
        return 1 if name == "$valid$" else self.layout.header(header).width(name)

    def action(self, a: dict) -> Action:
        params = tuple(ActionParam(p["name"], p["bitwidth"]) for p in a.get("runtime_data", []))
        return Action(num(a["id"]), a["name"], params, tuple(a.get("primitives", [])))

    def table(self, t: dict, actions: dict[int, Action]) -> Table:
        keys = tuple(self.key(k) for k in t.get("key", []))
        default = t.get("default_entry")
        return Table(
            name=t["name"],
            id=num(t["id"]),
            keys=keys,
            action_ids=tuple(num(a) for a in t.get("action_ids", [])),
            max_size=int(t.get("max_size", 1024)) or 1024,
            default=DefaultEntry(
                num(default["action_id"]),
                tuple(hexint(x) for x in default.get("action_data", [])),
                bool(default.get("action_const")),
                bool(default.get("action_entry_const")),
            )
            if default
            else None,
            entries=tuple(self.entry(e, keys, actions) for e in t.get("entries", [])),
            next_tables=dict(t.get("next_tables", {})),
            with_counters=bool(t.get("with_counters")),
            direct_meter=t.get("direct_meters") or None,
            kind=t.get("type", "simple"),
        )

    def key(self, k: dict) -> TableKey:
        target = k["target"]
        name = k.get("name", ".".join(target) if isinstance(target, list) else target)
        if k["match_type"] == "valid":
            return TableKey(name, "valid", target, 1, None)
        ref = (target[0], target[1])
        return TableKey(
            name,
            k["match_type"],
            ref,
            self.width(ref),
            hexint(k["mask"]) if k.get("mask") else None,
        )

    @staticmethod
    def entry(e: dict, keys: tuple[TableKey, ...], actions: dict[int, Action]) -> ConstEntry:
        match: list = []
        for key, mk in zip(keys, e["match_key"], strict=True):
            kind = mk["match_type"]
            if kind == "lpm":
                match.append(("lpm", hexint(mk["key"]), mk["prefix_length"]))
            elif kind == "ternary":
                match.append(("ternary", hexint(mk["key"]), hexint(mk["mask"])))
            elif kind == "range":
                match.append(("range", hexint(mk["start"]), hexint(mk["end"])))
            elif kind == "optional":
                match.append(("optional", hexint(mk["key"])))
            else:
                match.append(hexint(mk["key"]) & ((1 << key.width) - 1))
        action = actions[e["action_entry"]["action_id"]]
        args = tuple(hexint(x) for x in e["action_entry"].get("action_data", []))
        return ConstEntry(tuple(match), action.id, args, int(e.get("priority", 0)))

    def calculation(self, c: dict) -> Calculation:
        inputs: list[CalcInput] = []
        payload = False
        for item in c["input"]:
            if item["type"] == "payload":
                payload = True
            elif item["type"] == "header":
                hl = self.layout.header(item["value"])
                if hl.varbit_max:
                    raise PipelineError(
                        f"calculation '{c['name']}' reads varbit header '{hl.name}' whole"
                    )
                inputs += [CalcInput(w, (hl.name, name)) for name, w, _s in hl.fields]
            elif item["type"] == "field":
                ref = (item["value"][0], item["value"][1])
                inputs.append(CalcInput(self.width(ref), ref))
            else:  # a constant: its bitwidth, or its hex digits' (at least a byte)
                width = item.get("bitwidth") or max(
                    8, len(str(item["value"]).removeprefix("0x")) * 4
                )
                inputs.append(CalcInput(width, value=hexint(item["value"])))
        return Calculation(c["name"], num(c["id"]), c["algo"], tuple(inputs), payload)

    def checksum(self, ck: dict, calculations: dict[str, Calculation]) -> Checksum:
        if ck["calculation"] not in calculations:
            raise PipelineError(f"unknown calculation '{ck['calculation']}'")
        target = (ck["target"][0], ck["target"][1])
        verify, update = (
            bool(ck.get("verify", False)),
            bool(ck.get("update", True)),
        )  # BMv2's defaults
        return Checksum(
            target, calculations[ck["calculation"]], verify, update, ck.get("if_cond") or None
        )

    def field_list(self, fl: dict) -> FieldList:
        fields = tuple(
            (e["value"][0], e["value"][1]) for e in fl.get("elements", []) if e["type"] == "field"
        )
        for ref in fields:
            self.layout.field_slot(*ref)
        return FieldList(fl["id"], fl["name"], fields)

    def parser(self, p: dict) -> Parser:
        states = tuple(
            ParserState(
                s["name"],
                num(s["id"]),
                tuple(s.get("parser_ops", [])),
                self.transition_keys(s.get("transition_key", [])),
                self.transitions(s.get("transitions", [])),
            )
            for s in p["parse_states"]
        )
        return Parser(p["name"], num(p["id"]), p["init_state"], states)

    def transitions(self, cases: list[dict]) -> tuple[Transition, ...]:
        """The cases up to the first default, which ends them (a select that matches nothing
        accepts, as p4c's BMv2 backend does: a default to accept when the JSON has none)."""
        out: list[Transition] = []
        for case in cases:
            out.append(self.transition(case))
            if out[-1].kind == "default":
                return tuple(out)
        return (*out, Transition("default", None))

    def transition_keys(self, keys: list[dict]) -> tuple[TransitionKey, ...]:
        if len(keys) == 1:
            return (TransitionKey(keys[0], self.key_width(keys[0])),)
        out: list[TransitionKey] = []
        shift = 0
        for k in reversed(keys):
            key = TransitionKey(k, self.key_width(k), shift)
            if key.width is None:
                raise PipelineError(f"unsupported parser transition key '{k['type']}'")
            out.insert(0, key)
            shift += key.bits
        return tuple(out)

    def key_width(self, key: dict) -> int | None:
        if key["type"] == "lookahead":
            return key["value"][1]
        if key["type"] == "field":
            return self.width((key["value"][0], key["value"][1]))
        if key["type"] == "stack_field":
            stack = self.layout.stacks[key["value"][0]]
            return self.width((stack.elements[0], key["value"][1]))
        return None

    @staticmethod
    def transition(t: dict) -> Transition:
        kind, target = t["type"], t.get("next_state") or None
        mask = hexint(t["mask"]) if t.get("mask") else None
        if kind == "hexstr":
            value = hexint(t["value"])
            return Transition(kind, target, value if mask is None else value & mask, mask)
        if kind == "parse_vset":
            return Transition(kind, target, mask=mask, vset=t["value"])
        return Transition(kind, target)
