"""Every extern kind the switch keeps state for (register, counter, meter): one `ExternKind` each.

As p4c keeps an extern in one converter object, the program model's side of an extern kind is one
record: its JSON section and that section's shape, the type of a primitive parameter that names
an instance, the cells it takes of the state budget, and its program-model record with the reader
that makes it. The schema (bmv2_schema.py), the reader (program.py), the reference checks
(references.py) and tests/compiler/bmv2_checker.py iterate `EXTERNS`, so none lists the kinds.
Each backend registers the state it builds per kind (python/pipeline.py `STATE`, native/externs.py
`STATE`); a backend without a kind's entry refuses a program that has instances of it, naming the
kind (`missing`). The control plane reaches a kind's instances by its `attribute` (`registers`)
on the backend and on `Switch`.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ina.switch.model.layout import num
from ina.switch.model.shapes import BOOL, COUNT, FIELD, ID, NAME, WIDTH, Enum, Obj, Opt, Spec

Ref = tuple[str, str]  # (header instance, field)


@dataclass(frozen=True)
class RegisterArray:
    name: str
    id: int
    size: int
    bitwidth: int


@dataclass(frozen=True)
class CounterArray:
    name: str
    id: int
    size: int  # 0 for a direct counter (its cells are the table's entries)
    direct: bool
    binding: str | None  # the table of a direct counter


@dataclass(frozen=True)
class MeterArray:
    name: str
    id: int
    size: int  # as declared (a direct meter's cells are the table's entries)
    bytes: bool  # measures bytes, not packets
    direct: bool
    binding: str | None  # the table of a direct meter
    result_target: Ref | None  # where a direct meter writes its colour


@dataclass(frozen=True)
class ExternKind:
    name: str  # how messages name the kind: "the native engine has no register"
    section: str  # its JSON section, a list of instances: "register_arrays"
    reference: str  # the JSON type of a primitive parameter naming an instance: "register_array"
    what: str  # an instance in messages: "unknown register array"
    attribute: str  # the model's, the backends' and Switch's dict or tuple of instances
    shape: Spec  # one instance in the JSON (bmv2_schema.py checks each against it)
    read: Callable[[dict], object]  # one instance's JSON -> its program-model record
    cells: Callable[[dict], int] = lambda instance: instance.get("size", 0)  # of the state budget


def _register(r: dict) -> RegisterArray:
    return RegisterArray(r["name"], num(r["id"]), r["size"], r["bitwidth"])


def _counter(c: dict) -> CounterArray:
    direct = bool(c.get("is_direct"))
    return CounterArray(
        c["name"],
        num(c["id"]),
        0 if direct else int(c["size"]),
        direct,
        c.get("binding") if direct else None,
    )


def _meter(m: dict) -> MeterArray:
    direct = bool(m.get("is_direct"))
    target = m.get("result_target")
    return MeterArray(
        m["name"],
        num(m["id"]),
        int(m.get("size", 0)),
        m.get("type") == "bytes",
        direct,
        m.get("binding") if direct else None,
        (target[0], target[1]) if target else None,
    )


_DIRECT = {"size": COUNT, "is_direct": BOOL, "binding": NAME}  # direct or indirect arrays
EXTERNS: dict[str, ExternKind] = {
    kind.name: kind
    for kind in (
        ExternKind(
            "register",
            "register_arrays",
            "register_array",
            "register array",
            "registers",
            Obj({"name": NAME, "id": ID, "size": COUNT, "bitwidth": WIDTH}),
            _register,
        ),
        ExternKind(
            "counter",
            "counter_arrays",
            "counter_array",
            "counter array",
            "counters",
            Obj({"name": NAME, "id": ID}, _DIRECT),
            _counter,
        ),
        ExternKind(
            "meter",
            "meter_arrays",
            "meter_array",
            "meter array",
            "meters",
            Obj(
                {"name": NAME, "id": ID},
                {
                    **_DIRECT,
                    "type": Enum(frozenset({"packets", "bytes"})),
                    "result_target": Opt(FIELD),
                },
            ),
            _meter,
        ),
    )
}


def missing(json: dict, engine: str, built: Iterable[str], error: type[Exception]) -> None:
    """Refuse, naming the kind, a program with instances of an extern kind the engine (`built`:
    the kinds it registered) has no state for: `the native engine has no accumulator`."""
    built = set(built)
    for kind in EXTERNS.values():
        if json.get(kind.section) and kind.name not in built:
            raise error(f"the {engine} engine has no {kind.name}")
