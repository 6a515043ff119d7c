"""A loaded BMv2 JSON program: generated code plus the tables and externs it runs against."""

from collections.abc import Callable
from dataclasses import dataclass, field

from ina.switch.bmv2_schema import validate
from ina.switch.codegen import CodeGenerator
from ina.switch.errors import PipelineError, TableError
from ina.switch.expressions import hexint, num
from ina.switch.externs import Counter, Meter, Register
from ina.switch.layout import Layout, build_layout
from ina.switch.runtime import base_namespace
from ina.switch.tables import ActionRef, KeyField, Table


@dataclass
class Pipeline:
    program: dict
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
    gen = CodeGenerator(program, layout, drop_port, trace=log is not None)
    ns = gen.out.namespace
    ns.update(base_namespace())
    if log is not None:
        ns["_log"] = log
        ns["_log_msg"] = lambda text, values: log("log_msg: " + text.format(*values))
    ns["ZEROS"] = [0] * max((h.size for h in layout.headers.values()), default=1)

    registers = {r["name"]: Register(r["name"], r["size"], r["bitwidth"]) for r in program.get("register_arrays", [])}
    for r in program.get("register_arrays", []):
        ns[f"REG_{num(r['id'])}"] = registers[r["name"]].cells
    counters = {}
    for c in program.get("counter_arrays", []):
        counter = Counter(c["name"], c["size"] if not c.get("is_direct") else 0)
        counters[c["name"]] = counter
        ns[f"CNT_{num(c['id'])}"] = (counter.packets, counter.bytes)
    meters = {}
    for m in program.get("meter_arrays", []):
        meter = Meter(m["name"], m.get("size", 0), m.get("type", "packets"))
        meters[m["name"]] = meter
        ns[f"MTR_{num(m['id'])}"] = meter
    vsets = {v["name"]: ValueSet() for v in program.get("parse_vsets", [])}
    ns["VSETS"] = vsets
    ns["R"] = {name: reg.cells for name, reg in registers.items()}

    action_fns = {a["id"]: gen.action(a) for a in program["actions"]}
    parser_fn = gen.parser(program["parsers"][0])
    table_specs: dict[str, tuple] = {}
    pipes = {p["name"]: gen.pipeline(p, table_specs) for p in program["pipelines"]}
    verify_fn, update_fn = gen.checksums()
    deparse_fn = gen.deparser(program["deparsers"][0])
    source = gen.source()
    try:
        code = compile(source, "<ina-pipeline>", "exec")
    except SyntaxError as err:  # a bug in ina's code generator, reported with the JSON's names
        raise PipelineError(f"internal code generation error: {err}") from None

    tables: dict[str, Table] = {}
    actions_by_id = {a["id"]: a for a in program["actions"]}
    for name, (tjson, _fn, var) in table_specs.items():
        keys = []
        for k in tjson.get("key", []):
            if k["match_type"] == "valid":
                width = 1
            else:
                hl = layout.header(k["target"][0])
                width = 1 if k["target"][1] == "$valid$" else hl.width(k["target"][1])
            keys.append(KeyField(k.get("name", ".".join(k["target"]) if isinstance(k["target"], list) else k["target"]), k["match_type"], width))
        refs = {}
        for aid in tjson.get("action_ids", []):
            action = actions_by_id[aid]
            widths = tuple(p["bitwidth"] for p in action.get("runtime_data", []))
            refs[action["name"]] = ActionRef(aid, action["name"], None, widths)  # type: ignore[arg-type]
        table = Table(name, keys, refs, int(tjson.get("max_size", 1024)) or 1024)
        tables[name] = table
        ns[var] = table
    exec(code, ns)
    for name, (tjson, _fn, _var) in table_specs.items():
        table = tables[name]
        nxt = tjson.get("next_tables", {})
        for ref in table.actions.values():
            ref.fn = ns[action_fns[ref.id]]
            target = nxt.get(ref.name)
            ref.next_node = ns[_node_fn(table_specs, program, target)] if target else None
        default = tjson.get("default_entry")
        if default:
            action = actions_by_id[default["action_id"]]
            table.set_default(action["name"], [hexint(x) for x in default.get("action_data", [])])
            table.default_is_const = bool(default.get("action_const"))
        else:
            first = next(iter(table.actions.values()), None)
            if first is not None:
                table.set_default(first.name, [0] * len(first.param_widths))
        for entry in tjson.get("entries", []):
            match = []
            for key, mk in zip(table.keys, entry["match_key"], strict=True):
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
                    match.append(hexint(mk["key"]) & ((1 << key.bitwidth) - 1))
            action = actions_by_id[entry["action_entry"]["action_id"]]
            args = [hexint(x) for x in entry["action_entry"].get("action_data", [])]
            # BMv2 JSON priorities: smaller wins; the table API: larger wins.
            lpm_only = all(k.match_type in ("exact", "lpm", "valid") for k in table.keys)
            prio = None if lpm_only else -int(entry.get("priority", 0))  # LPM: the longest prefix wins
            table.add(match, action["name"], args, prio, const=True)
        table.is_const = bool(tjson.get("entries"))
    field_lists = {
        fl["id"]: [layout.field_slot(*e["value"]) for e in fl.get("elements", []) if e["type"] == "field"]
        for fl in program.get("field_lists", [])
    }
    learn_lists = {
        ll["id"]: (ll["name"], [layout.field_slot(*e["value"]) for e in ll.get("elements", []) if e["type"] == "field"])
        for ll in program.get("learn_lists", [])
    }
    sm = layout.headers.get("standard_metadata")
    slots = {name: sm.base + 1 + k for k, (name, _w, _s) in enumerate(sm.fields)} if sm else {}
    return Pipeline(
        program=program,
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


def _node_fn(specs: dict, program: dict, name: str) -> str:
    for pipe in program["pipelines"]:
        for t in pipe.get("tables", []):
            if t["name"] == name:
                return f"tbl_{pipe['id']}_{t['id']}"
        for c in pipe.get("conditionals", []):
            if c["name"] == name:
                return f"cond_{pipe['id']}_{c['id']}"
    raise PipelineError(f"next node '{name}' does not exist")

