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

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ina.switch.model.errors import PipelineError
from ina.switch.model.hashes import ALGORITHMS
from ina.switch.model.values import HEXSTR, MAX_HEX_DIGITS

MAX_ID = 2**31 - 1  # ids, error codes and priorities fit a C int
MAX_BITS = 4096  # the widest field, parameter, register cell, key or lookahead
MAX_HEADER_BYTES = 65535  # a varbit header's max_length (no packet is longer)
MAX_NAME = 256  # characters of a name
MAX_TEXT = 4096  # characters of free text (key names, log_msg formats)
MAX_ITEMS = 65536  # elements of one list or members of one object
MAX_DEPTH = 128  # nesting of JSON containers; an expression level takes two
MAX_NODES = 1 << 21  # values visited in the whole document
STATE_CELL_BUDGET = 1 << 24  # register, counter and meter cells plus table entries, all arrays
FIELD_RECORD_BUDGET = (
    1 << 20
)  # fields of every header instance, plus those a calculation reads whole

Path = str
Child = tuple[object, "Spec", Path]


def _show(value: object) -> str:
    """A JSON value, briefly, for a message. Containers and huge ints are described, not printed:
    their repr may be deep (RecursionError), share subtrees (exponential) or pass Python's
    int-to-string limit (ValueError)."""
    if isinstance(value, dict):
        return f"an object of {len(value)} members"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if type(value) is int and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value[:61] if isinstance(value, str) else value)
    return text if len(text) <= 60 else text[:57] + "..."


def refused(path: Path, message: str) -> PipelineError:
    """The error refusing a program, naming the JSON place: `actions[3].id: expected an integer`."""
    return PipelineError(f"{path or 'the BMv2 JSON'}: {message}")


def _key(path: Path, key: str) -> Path:
    return f"{path}.{key}" if path else key


class Spec:
    """One shape; `check` raises for a value that does not have it and yields the children."""

    def check(self, value: object, path: Path) -> Iterator[Child]:
        raise NotImplementedError


@dataclass(frozen=True)
class Int(Spec):
    lo: int
    hi: int

    def check(self, value, path):
        if type(value) is not int:
            raise refused(path, f"expected an integer, got {_show(value)}")
        if not self.lo <= value <= self.hi:
            raise refused(path, f"{_show(value)} is out of range {self.lo}..{self.hi}")
        return iter(())


@dataclass(frozen=True)
class Bool(Spec):
    def check(self, value, path):
        if type(value) is not bool:
            raise refused(path, f"expected true or false, got {_show(value)}")
        return iter(())


@dataclass(frozen=True)
class Str(Spec):
    """A string of at most `limit` characters matching `syntax` (what it is called: `what`)."""

    syntax: re.Pattern
    limit: int
    what: str

    def check(self, value, path):
        if type(value) is not str:
            raise refused(path, f"expected {self.what}, got {_show(value)}")
        if len(value) > self.limit:
            raise refused(path, f"{self.what} longer than {self.limit} characters")
        if not self.syntax.fullmatch(value):
            raise refused(path, f"{_show(value)} is not {self.what}")
        return iter(())


@dataclass(frozen=True)
class Enum(Spec):
    values: frozenset

    def check(self, value, path):
        if type(value) is not str or value not in self.values:
            raise refused(
                path, f"expected one of {', '.join(sorted(self.values))}, got {_show(value)}"
            )
        return iter(())


@dataclass(frozen=True)
class Opt(Spec):
    """`spec`, or null."""

    spec: Spec

    def check(self, value, path):
        return iter(()) if value is None else iter(((value, self.spec, path),))


@dataclass(frozen=True)
class ByKind(Spec):
    """A value whose JSON kind picks its spec: "int", "str", "list", "dict" or "op" (an object with
    an "op" key, tried before "dict")."""

    kinds: Mapping[str, Spec]

    def check(self, value, path):
        kind = {int: "int", str: "str", list: "list", dict: "dict"}.get(type(value))
        if kind == "dict" and "op" in value and "op" in self.kinds:
            kind = "op"
        if kind not in self.kinds:
            raise refused(path, f"expected {' or '.join(self.kinds)}, got {_show(value)}")
        return iter(((value, self.kinds[kind], path),))


@dataclass(frozen=True)
class List(Spec):
    """A list of `item`s, `least`..MAX_ITEMS long; `unique` names keys no two items may share."""

    item: Spec
    least: int = 0
    unique: tuple[str, ...] = ()

    def check(self, value, path):
        if type(value) is not list:
            raise refused(path, f"expected a list, got {_show(value)}")
        if not self.least <= len(value) <= MAX_ITEMS:
            raise refused(path, f"expected {self.least}..{MAX_ITEMS} items, got {len(value)}")
        for key in self.unique:
            seen: set = set()
            for i, item in enumerate(value):
                mark = item.get(key) if isinstance(item, dict) else None
                if not isinstance(mark, (int, str)):
                    continue  # the item's own check reports it
                if (type(mark), mark) in seen:
                    raise refused(f"{path}[{i}].{key}", f"{_show(mark)} is used twice")
                seen.add((type(mark), mark))
        return ((item, self.item, f"{path}[{i}]") for i, item in enumerate(value))


@dataclass(frozen=True)
class Tuple(Spec):
    """A fixed-position list: `items`, of which the first `least` are required."""

    items: tuple[Spec, ...]
    least: int

    def check(self, value, path):
        if type(value) is not list or not self.least <= len(value) <= len(self.items):
            raise refused(
                path,
                f"expected a list of {self.least}..{len(self.items)} items, got {_show(value)}",
            )
        return (
            (item, spec, f"{path}[{i}]")
            for i, (item, spec) in enumerate(zip(value, self.items, strict=False))
        )


@dataclass(frozen=True)
class Map(Spec):
    """An object with arbitrary keys of syntax `key` and values `value`."""

    key: Spec
    value: Spec

    def check(self, value, path):
        if type(value) is not dict or len(value) > MAX_ITEMS:
            raise refused(
                path, f"expected an object of at most {MAX_ITEMS} members, got {_show(value)}"
            )
        for k in value:
            yield k, self.key, _key(path, "<key>")
        for k, v in value.items():
            yield v, self.value, _key(path, str(k))


@dataclass(frozen=True)
class Obj(Spec):
    """An object with `required` and `optional` keys; keys the loaders never read are ignored."""

    required: Mapping[str, Spec] = field(default_factory=dict)
    optional: Mapping[str, Spec] = field(default_factory=dict)

    def check(self, value, path):
        if type(value) is not dict:
            raise refused(path, f"expected an object, got {_show(value)}")
        missing = [k for k in self.required if k not in value]
        if missing:
            raise refused(path, f"missing {', '.join(missing)}")
        for specs in (self.required, self.optional):
            for k, spec in specs.items():
                if k in value:
                    yield value[k], spec, _key(path, k)


@dataclass(frozen=True)
class Tagged(Spec):
    """An object whose `tag` key picks the Obj describing the rest (`cases`)."""

    tag: str
    cases: Mapping[str, Spec]

    def check(self, value, path):
        if type(value) is not dict:
            raise refused(path, f"expected an object, got {_show(value)}")
        tag = value.get(self.tag)
        if type(tag) is not str or tag not in self.cases:
            raise refused(
                _key(path, self.tag),
                f"expected one of {', '.join(sorted(self.cases))}, got {_show(tag)}",
            )
        return iter(((value, self.cases[tag], path),))


@dataclass(frozen=True)
class Ref(Spec):
    """The spec named `name` in SPECS: how the recursive shapes (values, expressions) refer to
    themselves."""

    name: str

    def check(self, value, path):
        return iter(((value, SPECS[self.name], path),))


# --- leaves ------------------------------------------------------------------------------
# Names reach generated code only through the generators' ident() or repr(), but they are held to
# P4 name syntax anyway: letters, digits, _ $ . [ ] (stack elements are `h[0]`).
NAME = Str(re.compile(r"[A-Za-z0-9_$.\[\]]+"), MAX_NAME, "a name")
OP = Str(re.compile(r"[A-Za-z_][A-Za-z0-9_]*"), MAX_NAME, "an operation name")
TEXT = Str(re.compile(r"[ -~]*"), MAX_TEXT, "printable text")
# log_msg formats go through str.format: only the `{}` placeholders P4 has, no field access or
# padding specs (`{:999999999}` would allocate a gigabyte per packet).
FORMAT = Str(
    re.compile(r"(?:[ -z|~]|\{\}|\{\{|\}\})*"), MAX_TEXT, "a log_msg format with {} placeholders"
)
HEX = Str(HEXSTR, MAX_HEX_DIGITS + 3, "a hex string (0x... or -0x...)")
ID = Int(0, MAX_ID)
WIDTH = Int(1, MAX_BITS)
COUNT = Int(0, STATE_CELL_BUDGET)
INDEX = Int(0, MAX_ITEMS)
BOOL = Bool()
FIELD = Tuple((NAME, NAME), 2)
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
                    "register_array",
                    "counter_array",
                    "meter_array",
                    "calculation",
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
        "register_arrays": List(
            Obj({"name": NAME, "id": ID, "size": COUNT, "bitwidth": WIDTH}), unique=("id",)
        ),
        "counter_arrays": List(
            Obj({"name": NAME, "id": ID}, {"size": COUNT, "is_direct": BOOL, "binding": NAME}),
            unique=("id",),
        ),
        "meter_arrays": List(
            Obj(
                {"name": NAME, "id": ID},
                {
                    "size": COUNT,
                    "is_direct": BOOL,
                    "binding": NAME,
                    "type": Enum(frozenset({"packets", "bytes"})),
                    "result_target": Opt(FIELD),
                },
            ),
            unique=("id",),
        ),
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
        a.get("size", 0)
        for kind in ("register_arrays", "counter_arrays", "meter_arrays")
        for a in program.get(kind, [])
    )
    cells += sum(t.get("max_size", 0) for p in program["pipelines"] for t in p.get("tables", []))
    if cells > STATE_CELL_BUDGET:
        raise refused(
            "",
            f"registers, counters, meters and tables need {cells} cells; "
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
