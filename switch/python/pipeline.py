"""A loaded BMv2 JSON program: generated code plus the tables and externs it runs against."""

from collections.abc import Callable
from dataclasses import dataclass
from types import CodeType
from typing import Any

from ina.switch.model.budget import check_source
from ina.switch.model.errors import PipelineError
from ina.switch.model.externs import CounterArray, MeterArray, RegisterArray, missing
from ina.switch.model.layout import Layout
from ina.switch.model.load import load_program
from ina.switch.model.program import Program, malformed_json
from ina.switch.python.codegen import CodeGenerator, extern_variable, node_function
from ina.switch.python.runtime import base_namespace
from ina.switch.state.externs import Counter, Meter, Register, ValueSet
from ina.switch.state.tables import Table, install_program_entries, new_table

COMPILE_CHUNK = 1 << 16  # characters of generated source one compile() call takes, at least


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
    externs: dict[str, dict[str, object]]  # kind -> instances by name (STATE's objects)
    parse_vsets: dict[str, ValueSet]
    field_lists: dict[int, list[int]]  # id -> slots to preserve
    learn_lists: dict[int, tuple[str, list[int]]]  # id -> (name, slots)
    source: str
    template: list[int]
    slots: dict[str, int]  # standard_metadata field -> slot
    hot: "HotSlots"  # the slots the traffic manager touches for every packet


class HotSlots:
    """Slot numbers of the standard_metadata fields and hidden flags the engine uses per packet,
    as plain attributes (cheaper than a dict lookup by name on every access)."""

    SM_FIELDS = (
        "ingress_port",
        "packet_length",
        "instance_type",
        "ingress_global_timestamp",
        "egress_global_timestamp",
        "parser_error",
        "mcast_grp",
        "egress_spec",
        "egress_port",
        "egress_rid",
    )
    HIDDEN = ("clone_session", "digest", "resubmit", "exit", "recirculate", "truncate")
    __slots__ = SM_FIELDS + HIDDEN

    def __init__(self, slots: dict[str, int], hidden: dict[str, int]):
        for name in self.SM_FIELDS:
            setattr(self, name, slots[name])
        for name in self.HIDDEN:
            setattr(self, name, hidden[name])


def load_pipeline(
    program: dict, drop_port: int = 511, log: Callable[[str], None] | None = None
) -> Pipeline:
    """Check and compile a BMv2 JSON document; raises PipelineError naming what is wrong."""
    layout, model = load_program(program)
    return build_pipeline(layout, model, drop_port, log)


def build_pipeline(
    layout: Layout, model: Program, drop_port: int = 511, log: Callable[[str], None] | None = None
) -> Pipeline:
    """The model's program as Python code bound to its own tables and externs; PipelineError when
    the document is malformed in a way only the code generator sees."""
    with malformed_json():
        return _build(layout, model, drop_port, log)


def _register(r: RegisterArray) -> tuple[Register, list[int]]:
    state = Register(r.name, r.size, r.bitwidth)
    return state, state.cells


def _counter(c: CounterArray) -> tuple[Counter, tuple[list[int], list[int]]]:
    state = Counter(c.name, c.size)
    return state, (state.packets, state.bytes)


def _meter(m: MeterArray) -> tuple[Meter, Meter]:
    state = Meter(m.name, m.size, "bytes" if m.bytes else "packets")
    return state, state


# Each extern kind's state (model/externs.py) built from its record: the object the control plane
# reads, and what the generated code reaches as `extern_variable(kind, id)` (the emitters'
# `g.extern`). A kind without an entry is refused by name ("the Python engine has no ...").
STATE: dict[str, Callable[[Any], tuple[object, object]]] = {
    "register": _register,
    "counter": _counter,
    "meter": _meter,
}


def _build(
    layout: Layout, model: Program, drop_port: int, log: Callable[[str], None] | None
) -> Pipeline:
    gen = CodeGenerator(model, layout, drop_port, trace=log is not None)
    ns = gen.out.namespace
    ns.update(base_namespace())
    if log is not None:
        ns["_log"] = log
        ns["_log_msg"] = lambda text, values: log("log_msg: " + text.format(*values))
    ns["ZEROS"] = [0] * max((h.size for h in layout.headers.values()), default=1)

    missing(model.json, "Python", STATE, PipelineError)
    state: dict[str, dict[str, object]] = {kind: {} for kind in STATE}
    for kind, make in STATE.items():
        for x in model.externs[kind]:  # names are unique per kind (references.py)
            state[kind][x.name], ns[extern_variable(kind, x.id)] = make(x)
    vsets = {name: ValueSet() for name in model.value_sets}
    ns["VSETS"] = vsets

    action_fns = {aid: gen.action(a) for aid, a in model.actions.items()}
    parser_fn = gen.parser(model.parsers[0])
    table_vars: dict[str, str] = {}
    pipes = {c.name: gen.pipeline(c, table_vars) for c in model.controls}
    verify_fn, update_fn = gen.checksums()
    deparse_fn = gen.deparser(model.deparsers[0])
    source = gen.source()
    check_source(source, "python")
    try:
        code = _compiled(source)
    except SyntaxError as err:  # a bug in ina's code generator, reported with the JSON's names
        raise PipelineError(f"internal code generation error: {err}") from None

    tables: dict[str, Table] = {}
    for name, var in table_vars.items():
        tables[name] = ns[var] = new_table(Table, model.tables[name], model)
    for piece in code:
        exec(piece, ns)
    nodes: dict[str, str] = {}  # node name -> its function; the first of a name wins
    for c in model.controls:
        nodes = {name: node_function(key) for name, key in c.nodes.items()} | nodes
    for name in table_vars:
        spec, table = model.tables[name], tables[name]
        for ref in table.actions.values():
            ref.fn = ns[action_fns[ref.id]]
            target = spec.next_tables.get(ref.name)
            if target and target not in nodes:
                raise PipelineError(f"next node '{target}' does not exist")
            ref.next_node = ns[nodes[target]] if target else None
        install_program_entries(table, spec, model)
    field_lists = {
        fl.id: [layout.field_slot(*ref) for ref in fl.fields] for fl in model.field_lists.values()
    }
    learn_lists = {
        ll.id: (ll.name, [layout.field_slot(*ref) for ref in ll.fields])
        for ll in model.learn_lists.values()
    }
    sm = layout.header("standard_metadata")  # load_program refuses programs without it
    slots = {name: sm.base + 1 + k for k, (name, _w, _s) in enumerate(sm.fields)}
    return Pipeline(
        program=model.json,
        model=model,
        layout=layout,
        parse=ns[parser_fn],
        ingress=ns[pipes.get("ingress", next(iter(pipes.values())))],
        egress=ns[pipes["egress"]] if "egress" in pipes else (lambda P: None),
        deparse=ns[deparse_fn],
        verify_checksums=ns[verify_fn],
        update_checksums=ns[update_fn],
        tables=tables,
        registers=state["register"],
        counters=state["counter"],
        meters=state["meter"],
        externs=state,
        parse_vsets=vsets,
        field_lists=field_lists,
        learn_lists=learn_lists,
        source=source,
        template=layout.template(),
        slots=slots,
        hot=HotSlots(slots, layout.hidden),
    )


def _compiled(source: str) -> list[CodeType]:
    """The generated source compiled a few top-level functions at a time (it holds nothing else).

    One compile() of the whole source holds the GIL throughout and its syntax tree at once: for a
    big program, seconds in which no other thread (the P4Runtime server's Reads) runs, and several
    times the source's size in memory. Pieces of COMPILE_CHUNK characters keep both small. A
    piece's line numbers count from its first line, which its file name gives."""
    pieces, start, line = [], 0, 1
    while start < len(source):
        end = source.find("\ndef ", start + COMPILE_CHUNK)
        end = len(source) if end < 0 else end + 1
        pieces.append(compile(source[start:end], f"<ina-pipeline:{line}>", "exec"))
        line += source.count("\n", start, end)
        start = end
    return pieces
