"""Where every header, field and hidden value of a packet lives in the flat per-packet list.

The engine keeps a packet's whole state (the PHV) in one Python list, so generated code reads and
writes `P[17]` instead of walking dictionaries. A header instance occupies a contiguous run:
`base` holds its validity, `base + 1 + k` its k-th field, and for a header with a varbit field one
more slot after the fields holds the varbit's current length in bits. Stack elements share a layout,
so a run-time index turns into `stack_base + index * stride`. program.py's `build_layout` assigns
the slots, reading the JSON where the rest of the program model is read.
"""

from dataclasses import dataclass, field

from ina.switch.model.errors import PipelineError


def num(value: object) -> int:
    """A JSON integer that sizes the layout (and so the generated code): an int, never a bool,
    str or float. bmv2_schema has checked it already; the generators format JSON ints into code
    only through this, so no JSON text reaches the code even if a caller skipped validation."""
    if type(value) is not int:
        raise PipelineError(f"expected an integer, got a {type(value).__name__}")
    return value


# Hidden per-packet values the traffic manager needs, kept in the same list.
HIDDEN = (
    "exit",  # set by the exit primitive: stop the current pipeline
    "clone_session",  # session id + 1 of a pending clone (0 = none)
    "clone_fields",  # field list id to preserve in the clone
    "resubmit",  # field list id + 1 of a pending resubmit
    "recirculate",  # field list id + 1 of a pending recirculate
    "digest",  # learn list id + 1 of a pending digest
    "truncate",  # bytes to keep on output (0 = all)
)


@dataclass(frozen=True)
class HeaderLayout:
    name: str
    base: int
    fields: tuple[tuple[str, int, bool], ...]  # (name, bitwidth or -1 for varbit, signed)
    varbit_max: int  # max bits of the varbit field, 0 when the header has none
    metadata: bool
    type_name: str  # the header type's: instances of one type share their generated codec

    @property
    def size(self) -> int:
        return 1 + len(self.fields) + (1 if self.varbit_max else 0)

    @property
    def vl_slot(self) -> int:
        return self.base + 1 + len(self.fields)

    def slot(self, field_name: str) -> int:
        for k, (name, _w, _s) in enumerate(self.fields):
            if name == field_name:
                return self.base + 1 + k
        raise PipelineError(f"header '{self.name}' has no field '{field_name}'")

    def width(self, field_name: str) -> int:
        for name, w, _s in self.fields:
            if name == field_name:
                return w if w >= 0 else self.varbit_max
        raise PipelineError(f"header '{self.name}' has no field '{field_name}'")

    def signed(self, field_name: str) -> bool:
        return any(name == field_name and s for name, _w, s in self.fields)

    @property
    def fixed_bits(self) -> int:
        return sum(w for _n, w, _s in self.fields if w >= 0)


@dataclass(frozen=True)
class StackLayout:
    name: str
    elements: tuple[str, ...]  # header instance names, in index order
    base: int  # slot of element 0
    stride: int
    next_slot: int  # slot holding the stack's next index


@dataclass
class Layout:
    headers: dict[str, HeaderLayout] = field(default_factory=dict)
    by_id: dict[int, str] = field(default_factory=dict)
    stacks: dict[str, StackLayout] = field(default_factory=dict)
    unions: dict[str, tuple[str, ...]] = field(default_factory=dict)  # union -> member headers
    union_of: dict[str, str] = field(default_factory=dict)  # member header -> union
    union_stacks: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hidden: dict[str, int] = field(default_factory=dict)
    size: int = 0

    def header(self, name: str) -> HeaderLayout:
        try:
            return self.headers[name]
        except KeyError:
            raise PipelineError(f"unknown header instance '{name}'") from None

    def field_slot(self, header: str, field_name: str) -> int:
        return self.header(header).slot(field_name)

    def varbit_length_slots(self, dst: dict, src: dict) -> tuple[int, int] | None:
        """The (destination, source) length slots an assign_VL copies with the value, as BMv2 copies
        a varbit's length; None unless both operands are varbit fields of plain headers."""
        if dst["type"] != "field" or src["type"] != "field":
            return None
        to, fro = self.header(dst["value"][0]), self.header(src["value"][0])
        return (to.vl_slot, fro.vl_slot) if to.varbit_max and fro.varbit_max else None

    def template(self) -> list[int]:
        """The state of a fresh packet: metadata valid, everything else zero and invalid."""
        slots = [0] * self.size
        for h in self.headers.values():
            if h.metadata:
                slots[h.base] = 1
        return slots
