"""A loaded BMv2 JSON program: generated code plus the tables and externs it runs against."""

from collections.abc import Callable
from dataclasses import dataclass, field

from ina.switch.bmv2_schema import validate
from ina.switch.codegen import CodeGenerator
from ina.switch.errors import PipelineError, TableError
from ina.switch.externs import Counter, Meter, Register
from ina.switch.layout import Layout, build_layout
from ina.switch.program import Program, read_program
from ina.switch.runtime import base_namespace
from ina.switch.tables import ActionRef, KeyField, Table


@dataclass
class Pipeline:
    program: dict
    model: Program
    layout: Layout
    parse: object
    ingress: object
    egress: object
    deparse: object
    verify_checksums: object
    update_checksums: object
    tables: dict[str, Table]
    registers: dict[str, Register]
    counters: dict[str, Counter]
    meters: dict[str, Meter]
    parse_vsets: dict[str, "ValueSet"]
    field_lists: dict[int, list[int]]  # id -> slots to preserve
    learn_lists: dict[int, tuple[str, list[int]]]  # id -> (name, slots)
    source: str
    template: list[int]
    slots: dict[str, int] = field(default_factory=dict)  # standard_metadata field -> slot
    hot: "HotSlots | None" = None  # the slots the traffic manager touches for every packet


class HotSlots:
    """Slot numbers of the standard_metadata fields and hidden flags the engine uses per packet,
    as plain attributes (cheaper than a dict lookup by name on every access)."""

    SM_FIELDS = ("ingress_port", "packet_length", "instance_type", "ingress_global_timestamp",
                 "egress_global_timestamp", "parser_error", "mcast_grp", "egress_spec",
                 "egress_port", "egress_rid")
    HIDDEN = ("clone_session", "digest", "resubmit", "exit", "recirculate", "truncate")
    __slots__ = SM_FIELDS + HIDDEN

    def __init__(self, slots: dict[str, int], hidden: dict[str, int]):
        for name in self.SM_FIELDS:
            setattr(self, name, slots[name])
        for name in self.HIDDEN:
            setattr(self, name, hidden[name])


class ValueSet(set):
    """A parser value set's members (ints, 0 <= v < 2**127): a set whose changes are mirrored
    (`mirror(members)` after each one) so the native data path keeps its copy."""

    mirror: Callable[["ValueSet"], None] | None = None

    def _changed(self) -> None:
        if self.mirror is not None:
            self.mirror(self)

    @staticmethod
    def _check(value: object) -> int:
        if not isinstance(value, int) or not 0 <= value < (1 << 127):
            raise ValueError(f"value set member {value!r} is not an int in 0..2**127-1")
        return value

    def add(self, value: int) -> None:
        super().add(self._check(value))
        self._changed()

    def update(self, *others) -> None:
        super().update(self._check(v) for other in others for v in other)
        self._changed()

    def __ior__(self, other):
        self.update(other)
        return self

    def _mutate(name: str):  # builds the mirrored mutators below, then is deleted
        def method(self, *args):
            result = getattr(set, name)(self, *args)
            self._changed()
            return self if name.startswith("__i") else result
        method.__name__ = name
        return method

    discard = _mutate("discard")
    remove = _mutate("remove")
    pop = _mutate("pop")
    clear = _mutate("clear")
    difference_update = _mutate("difference_update")
    intersection_update = _mutate("intersection_update")
    __iand__ = _mutate("__iand__")
    __isub__ = _mutate("__isub__")

    def symmetric_difference_update(self, other) -> None:
        super().symmetric_difference_update({self._check(v) for v in other})
        self._changed()

    def __ixor__(self, other):
        self.symmetric_difference_update(other)
        return self
    del _mutate


def load_pipeline(program: dict, drop_port: int = 511, log: Callable[[str], None] | None = None) -> Pipeline:
    """Check and compile a BMv2 JSON document; raises PipelineError naming what is wrong.

    The document is untrusted (P4Runtime clients send it) and turns into code, so its shape is
    validated first, for this engine and the native one, which reads the same dict after this."""
    validate(program)
    try:
        return _load(program, drop_port, log)
    except PipelineError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError,
            StopIteration, TableError) as err:  # TableError: JSON entries the table refuses
        raise PipelineError(f"malformed BMv2 JSON: {type(err).__name__}: {err}") from None


def _load(program: dict, drop_port: int, log: Callable[[str], None] | None) -> Pipeline:
    layout = build_layout(program)
    model = read_program(program, layout)
    gen = CodeGenerator(model, layout, drop_port, trace=log is not None)
    ns = gen.out.namespace
    ns.update(base_namespace())
    if log is not None:
        ns["_log"] = log
        ns["_log_msg"] = lambda text, values: log("log_msg: " + text.format(*values))
    ns["ZEROS"] = [0] * max((h.size for h in layout.headers.values()), default=1)

    registers = {r.name: Register(r.name, r.size, r.bitwidth) for r in model.registers}
    for r in model.registers:
        ns[f"REG_{r.id}"] = registers[r.name].cells
    counters = {}
    for c in model.counters:
        counters[c.name] = counter = Counter(c.name, c.size)
        ns[f"CNT_{c.id}"] = (counter.packets, counter.bytes)
    meters = {}
    for m in model.meters:
        meters[m.name] = meter = Meter(m.name, m.size, "bytes" if m.bytes else "packets")
        ns[f"MTR_{m.id}"] = meter
    vsets = {name: ValueSet() for name in model.value_sets}
    ns["VSETS"] = vsets
    ns["R"] = {name: reg.cells for name, reg in registers.items()}

    action_fns = {aid: gen.action(a) for aid, a in model.actions.items()}
    parser_fn = gen.parser(model.parsers[0])
    table_vars: dict[str, str] = {}
    pipes = {c.name: gen.pipeline(c, table_vars) for c in model.controls}
    verify_fn, update_fn = gen.checksums()
    deparse_fn = gen.deparser(program["deparsers"][0])
    source = gen.source()
    try:
        code = compile(source, "<ina-pipeline>", "exec")
    except SyntaxError as err:  # a bug in ina's code generator, reported with the JSON's names
        raise PipelineError(f"internal code generation error: {err}") from None

    tables: dict[str, Table] = {}
    for name, var in table_vars.items():
        spec = model.tables[name]
        keys = [KeyField(k.name, k.match_type, k.width) for k in spec.keys]
        refs = {}
        for aid in spec.action_ids:
            action = model.actions[aid]
            refs[action.name] = ActionRef(aid, action.name, None, action.param_widths)  # type: ignore[arg-type]
        tables[name] = ns[var] = Table(name, keys, refs, spec.max_size)
    exec(code, ns)
    nodes: dict[str, str] = {}  # node name -> its function; the first of a name wins
    for c in model.controls:
        for t in c.tables:
            nodes.setdefault(t.name, f"tbl_{c.id}_{t.id}")
        for cond in c.conditionals:
            nodes.setdefault(cond["name"], f"cond_{c.id}_{cond['id']}")
    for name in table_vars:
        spec, table = model.tables[name], tables[name]
        for ref in table.actions.values():
            ref.fn = ns[action_fns[ref.id]]
            target = spec.next_tables.get(ref.name)
            if target and target not in nodes:
                raise PipelineError(f"next node '{target}' does not exist")
            ref.next_node = ns[nodes[target]] if target else None
        if spec.default:
            table.set_default(model.actions[spec.default.action_id].name, list(spec.default.args))
            table.default_is_const = spec.default.action_const
        else:
            first = next(iter(table.actions.values()), None)
            if first is not None:
                table.set_default(first.name, [0] * len(first.param_widths))
        # LPM and exact tables: the longest prefix wins; others: BMv2's priority, smaller wins
        # (the table API's larger wins)
        lpm_only = all(k.match_type in ("exact", "lpm", "valid") for k in table.keys)
        for entry in spec.entries:
            prio = None if lpm_only else -entry.priority
            table.add(list(entry.match), model.actions[entry.action_id].name, list(entry.args), prio, const=True)
        table.is_const = bool(spec.entries)
    field_lists = {fl.id: [layout.field_slot(*ref) for ref in fl.fields] for fl in model.field_lists.values()}
    learn_lists = {ll.id: (ll.name, [layout.field_slot(*ref) for ref in ll.fields]) for ll in model.learn_lists.values()}
    sm = layout.headers.get("standard_metadata")
    slots = {name: sm.base + 1 + k for k, (name, _w, _s) in enumerate(sm.fields)} if sm else {}
    return Pipeline(
        program=program,
        model=model,
        layout=layout,
        parse=ns[parser_fn],
        ingress=ns[pipes.get("ingress", next(iter(pipes.values())))],
        egress=ns[pipes["egress"]] if "egress" in pipes else (lambda P: None),
        deparse=ns[deparse_fn],
        verify_checksums=ns[verify_fn],
        update_checksums=ns[update_fn],
        tables=tables,
        registers=registers,
        counters=counters,
        meters=meters,
        parse_vsets=vsets,
        field_lists=field_lists,
        learn_lists=learn_lists,
        source=source,
        template=layout.template(),
        slots=slots,
        hot=HotSlots(slots, layout.hidden) if sm else None,
    )

