"""The vocabulary of the BMv2 JSON schema: its limits, its spec classes (Int, Str, Obj, Tagged...)
and its leaf shapes (names, ids, widths, counts). bmv2_schema.py composes them into the program's
shape; model/externs.py gives each extern kind's JSON section its shape from them.
"""

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ina.switch.model.errors import PipelineError
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
