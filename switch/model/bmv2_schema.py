"""The shape of a BMv2 JSON program ina's switch accepts, checked before any code is generated.

The JSON is untrusted: anyone who reaches the P4Runtime port sends it, and both engines turn parts
of it into source code (Python that is exec'd, C that is compiled and loaded). So every key the
Python and native loaders read is checked here first: its JSON type (an int is an int, never a
bool, str or float), its range, the syntax of names, the length of strings and lists, the nesting
depth, hex strings parsed strictly, and the state the program would allocate against a budget.
Keys the loaders never read (source_info, pi_omit...) are not looked at.

The schema is data: a few spec classes (Int, Str, Obj, Tagged...) composed below, and one walker
(`validate`) that visits the document with an explicit stack, so no nesting can exhaust Python's.
A violation raises PipelineError naming the JSON path, e.g. `actions[3].id: expected an integer`.
"""

from dataclasses import dataclass

from ina.switch.model.externs import EXTERNS
from ina.switch.model.hashes import ALGORITHMS
from ina.switch.model.shapes import (
    BOOL,
    COUNT,
    FIELD,
    FIELD_RECORD_BUDGET,
    FORMAT,
    HEX,
    ID,
    INDEX,
    MAX_BITS,
    MAX_DEPTH,
    MAX_HEADER_BYTES,
    MAX_ID,
    MAX_NODES,
    NAME,
    OP,
    STATE_CELL_BUDGET,
    TEXT,
    WIDTH,
    ByKind,
    Enum,
    Int,
    List,
    Map,
    Obj,
    Opt,
    Path,
    Spec,
    Tagged,
    Tuple,
    refused,
)


@dataclass(frozen=True)
class Ref(Spec):
    """The spec named `name` in SPECS: how the recursive shapes (values, expressions) refer to
    themselves."""

    name: str

    def check(self, value, path):
        return iter(((value, SPECS[self.name], path),))


VALUE = Ref("value")

# --- type/value objects and expressions ----------------------------------------------------
_named = Obj({"value": NAME})
SPECS: dict[str, Spec] = {
    "value": Tagged(
        "type",
        {
            "field": Obj({"value": FIELD}),
            "stack_field": Obj({"value": FIELD}),
            "hexstr": Obj({"value": HEX}, {"bitwidth": WIDTH}),
            "bool": Obj({"value": BOOL}),
            "runtime_data": Obj({"value": INDEX}),
            "local": Obj({"value": INDEX}),
            "lookahead": Obj({"value": Tuple((Int(0, MAX_HEADER_BYTES * 8), WIDTH), 2)}),
            "register": Obj({"value": Tuple((NAME, VALUE), 2)}),
            "expression": Obj({"value": ByKind({"op": Ref("operation"), "dict": VALUE})}),
            "string": Obj({"value": FORMAT}),
            "parameters_vector": Obj({"value": List(VALUE)}),
            "union_stack": Obj({"value": FIELD}),
            "payload": Obj(),
            **{
                kind: _named
                for kind in (
                    "header",
                    "regular",
                    "stack",
                    "header_stack",
                    "header_union",
                    "header_union_stack",
                    "calculation",
                    *(k.reference for k in EXTERNS.values()),  # a parameter naming an instance
                )
            },
        },
    ),
    "operation": Tagged(
        "op",
        {
            **{
                op: Obj({"left": VALUE, "right": VALUE})
                for op in (
                    "+",
                    "*",
                    "<<",
                    ">>",
                    "&",
                    "|",
                    "^",
                    "==",
                    "!=",
                    ">",
                    ">=",
                    "<",
                    "<=",
                    "and",
                    "or",
                    "/",
                    "%",
                    "two_comp_mod",
                    "sat_cast",
                    "usat_cast",
                    "dereference_header_stack",
                    "dereference_union_stack",
                )
            },
            "-": Obj({"right": VALUE}, {"left": Opt(VALUE)}),
            **{
                op: Obj({"right": VALUE}, {"left": Opt(VALUE)})
                for op in (
                    "~",
                    "not",
                    "d2b",
                    "b2d",
                    "valid",
                    "valid_union",
                    "last_stack_index",
                    "size_stack",
                )
            },
            "?": Obj({"left": VALUE, "right": VALUE, "cond": VALUE}),
            "access_field": Obj({"left": VALUE, "right": INDEX}),
            "access_union_header": Obj({"left": VALUE, "right": INDEX}),
        },
    ),
    "primitive": Obj({"op": OP}, {"parameters": List(VALUE)}),
}
PRIMITIVE = Ref("primitive")

# --- the program ---------------------------------------------------------------------------
_next = Opt(NAME)
_transition = {"next_state": _next}
TRANSITION = Tagged(
    "type",
    {
        "default": Obj(optional=_transition),
        "hexstr": Obj({"value": HEX}, {"mask": Opt(HEX), **_transition}),
        "parse_vset": Obj({"value": NAME}, {"mask": Opt(HEX), **_transition}),
    },
)
PARSE_STATE = Obj(
    {"name": NAME, "id": ID},
    {
        "parser_ops": List(
            Obj({"op": OP}, {"parameters": List(ByKind({"op": PRIMITIVE, "dict": VALUE}))})
        ),
        "transition_key": List(VALUE),
        "transitions": List(TRANSITION),
    },
)
_key_base = {"mask": Opt(HEX), "name": TEXT}
KEY = Tagged(
    "match_type",
    {
        "valid": Obj({"target": NAME}, _key_base),
        **{
            kind: Obj({"target": FIELD}, _key_base)
            for kind in ("exact", "lpm", "ternary", "range", "optional")
        },
    },
)
ACTION_DATA = List(HEX)
MATCH = Tagged(
    "match_type",
    {
        "exact": Obj({"key": HEX}),
        "valid": Obj({"key": HEX}),
        "optional": Obj({"key": HEX}),
        "lpm": Obj({"key": HEX, "prefix_length": Int(0, MAX_BITS)}),
        "ternary": Obj({"key": HEX, "mask": HEX}),
        "range": Obj({"start": HEX, "end": HEX}),
    },
)
TABLE = Obj(
    {"name": NAME, "id": ID},
    {
        "type": Enum(frozenset({"simple", "indirect", "indirect_ws"})),
        "key": List(KEY),
        "action_ids": List(ID),
        "actions": List(NAME),
        "next_tables": Map(NAME, _next),
        "default_entry": Opt(
            Obj(
                {"action_id": ID},
                {"action_data": ACTION_DATA, "action_const": BOOL, "action_entry_const": BOOL},
            )
        ),
        "entries": List(
            Obj(
                {
                    "match_key": List(MATCH),
                    "action_entry": Obj({"action_id": ID}, {"action_data": ACTION_DATA}),
                },
                {"priority": ID},
            )
        ),
        "max_size": COUNT,
        "with_counters": BOOL,
        "direct_meters": Opt(NAME),
    },
)
CONDITIONAL = Obj(
    {"name": NAME, "id": ID, "expression": VALUE}, {"true_next": _next, "false_next": _next}
)
PIPELINE = Obj(
    {"name": NAME, "id": ID},
    {
        "init_table": _next,
        "tables": List(TABLE, unique=("name", "id")),
        "conditionals": List(CONDITIONAL, unique=("name", "id")),
        "action_profiles": List(Obj()),
    },
)
HEADER_FIELD = Tuple((NAME, ByKind({"int": WIDTH, "str": Enum(frozenset({"*"}))}), BOOL), 2)
_list = Obj({"id": ID}, {"name": NAME, "elements": List(VALUE)})
PROGRAM = Obj(
    {
        "header_types": List(
            Obj(
                {"name": NAME, "fields": List(HEADER_FIELD)},
                {"max_length": Int(0, MAX_HEADER_BYTES)},
            ),
            unique=("name",),
        ),
        "headers": List(
            Obj({"name": NAME, "id": ID, "header_type": NAME, "metadata": BOOL}),
            unique=("name", "id"),
        ),
        "parsers": List(
            Obj(
                {"id": ID, "init_state": NAME, "parse_states": List(PARSE_STATE, 1, ("name", "id"))}
            ),
            1,
            ("id",),
        ),
        "deparsers": List(Obj({"id": ID}, {"order": List(NAME)}), 1, ("id",)),
        "actions": List(
            Obj(
                {"name": NAME, "id": ID},
                {
                    "runtime_data": List(Obj({"bitwidth": WIDTH}, {"name": NAME})),
                    "primitives": List(PRIMITIVE),
                },
            ),
            unique=("id",),
        ),
        "pipelines": List(PIPELINE, unique=("name", "id")),
    },
    {
        "header_stacks": List(Obj({"name": NAME, "header_ids": List(ID, 1)}), unique=("name",)),
        "header_unions": List(
            Obj({"name": NAME, "id": ID, "header_ids": List(ID)}), unique=("name", "id")
        ),
        "header_union_stacks": List(
            Obj({"name": NAME, "header_union_ids": List(ID)}), unique=("name",)
        ),
        "errors": List(Tuple((NAME, Int(0, MAX_ID - 1)), 2)),
        "field_lists": List(_list, unique=("id",)),
        "learn_lists": List(_list, unique=("id",)),
        **{
            kind.section: List(kind.shape, unique=("id",))  # model/externs.py, one per kind
            for kind in EXTERNS.values()
        },
        "calculations": List(
            Obj(
                {"name": NAME, "id": ID, "algo": Enum(frozenset(ALGORITHMS)), "input": List(VALUE)}
            ),
            unique=("name", "id"),
        ),
        "checksums": List(
            Obj(
                {"target": FIELD, "calculation": NAME},
                {"if_cond": Opt(VALUE), "update": BOOL, "verify": BOOL},
            )
        ),
        "parse_vsets": List(Obj({"name": NAME}), unique=("name",)),
    },
)


def validate(program: object) -> None:
    """Raise PipelineError, naming the JSON path, unless `program` has PROGRAM's shape and fits
    the state budget."""
    stack: list[tuple[object, Spec, Path, int]] = [(program, PROGRAM, "", 0)]
    visited = 0
    while stack:
        value, spec, path, depth = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            raise refused("", f"more than {MAX_NODES} values")
        if depth > MAX_DEPTH:
            raise refused(path, f"nested more than {MAX_DEPTH} levels deep")
        for child, child_spec, child_path in spec.check(value, path):
            nested = isinstance(child, (dict, list)) and child_path != path
            stack.append((child, child_spec, child_path, depth + nested))
    _check_budget(program)  # type: ignore[arg-type]
    for i, pipe in enumerate(program["pipelines"]):  # type: ignore[index]
        _check_acyclic(pipe, f"pipelines[{i}]")


def _check_budget(program: dict) -> None:
    """All state arrays and tables together may not hold more than STATE_CELL_BUDGET cells."""
    cells = sum(
        kind.cells(instance)
        for kind in EXTERNS.values()
        for instance in program.get(kind.section, [])
    )
    cells += sum(t.get("max_size", 0) for p in program["pipelines"] for t in p.get("tables", []))
    if cells > STATE_CELL_BUDGET:
        raise refused(
            "",
            f"{', '.join(k.attribute for k in EXTERNS.values())} and tables need {cells} cells; "
            f"the budget is {STATE_CELL_BUDGET}",
        )
    _check_field_records(program)


def _check_field_records(program: dict) -> None:
    """The layout copies a header type's fields into every instance, and a calculation reading a
    header whole expands it to its fields: a product of two lists the document bounds only one by
    one (65,536 instances of a type of 65,536 fields are 4.3e9 records from a few MB of JSON). So
    the records they make together are counted, on the JSON, before anything is built."""
    fields = {t["name"]: len(t["fields"]) for t in program.get("header_types", [])}
    per_header = {h["name"]: fields.get(h["header_type"], 0) for h in program.get("headers", [])}
    records = sum(per_header.values())
    records += sum(
        per_header.get(i["value"], 0)
        for c in program.get("calculations", [])
        for i in c["input"]
        if i["type"] == "header"
    )
    if records > FIELD_RECORD_BUDGET:
        raise refused(
            "",
            f"header instances and the headers calculations read make {records} field records; "
            f"the budget is {FIELD_RECORD_BUDGET}",
        )


def _check_acyclic(pipe: dict, path: Path) -> None:
    """A control's tables and conditionals form a DAG (P4 controls have no loops); a cycle would
    spin every packet forever in either engine. Depth-first, with an explicit stack."""
    succ = {
        t["name"]: [n for n in t.get("next_tables", {}).values() if n]
        for t in pipe.get("tables", [])
    }
    succ.update(
        {
            c["name"]: [n for n in (c.get("true_next"), c.get("false_next")) if n]
            for c in pipe.get("conditionals", [])
        }
    )
    done: set[str] = set()
    for root in succ:
        if root in done:
            continue
        on_path = {root}
        stack = [(root, iter(succ[root]))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                on_path.discard(node)
                done.add(node)
            elif child in on_path:
                raise refused(path, f"the control flow loops through '{child}'")
            elif child in succ and child not in done:
                on_path.add(child)
                stack.append((child, iter(succ[child])))
