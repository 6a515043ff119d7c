"""P4's semantic types, after typedefs are resolved: what the checker and the lowering agree on."""

from __future__ import annotations

from dataclasses import dataclass, field

from ina.compiler.errors import CompileError, Location

# p4c's maximumWidthSupported: the widest bit<W>, int<W> or varbit<W> p4c (and so BMv2 JSON) accepts.
# Checked before any value of the type exists, so bit<10^30> is an error, not an allocation.
MAX_WIDTH = 2048
# p4c's maximumArraySize: the most elements a header stack may have.
MAX_STACK_SIZE = 256


def check_width(width: object, loc: Location, what: str = "a width") -> int:
    """`width` if it is an integer in 1..MAX_WIDTH; else a CompileError at `loc`."""
    if not isinstance(width, int) or isinstance(width, bool) or width <= 0:
        raise CompileError(f"{what} must be a positive integer, not {width}", loc)
    if width > MAX_WIDTH:
        raise CompileError(
            f"{what} of {width} bits is more than the {MAX_WIDTH} bits p4c and ina support", loc
        )
    return width


class P4Type:
    """Base of all semantic types; str() is how error messages spell the type."""

    def __str__(self) -> str:
        return type(self).__name__.lower()


@dataclass(frozen=True)
class Bits(P4Type):
    width: int
    signed: bool = False

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"


@dataclass(frozen=True)
class Varbit(P4Type):
    max_width: int

    def __str__(self) -> str:
        return f"varbit<{self.max_width}>"


@dataclass(frozen=True)
class InfInt(P4Type):
    """The type of an integer literal without a width (`int`): adapts to the other operand."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class Bool(P4Type):
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class String(P4Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True)
class Void(P4Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class MatchKind(P4Type):
    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True)
class ErrorType(P4Type):
    """P4's `error`; simple_switch stores errors in 32-bit fields (standard_metadata.parser_error)."""

    def __str__(self) -> str:
        return "error"


ERROR_WIDTH = 32
ENUM_WIDTH = 32


@dataclass(eq=False)
class Enum(P4Type):
    name: str
    members: dict[str, int]
    base: Bits | None  # serializable enums have an underlying bit<N>/int<N>

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class StructLike(P4Type):
    name: str
    fields: list[tuple[str, P4Type]] = field(default_factory=list)
    annotations: dict[str, list] = field(default_factory=dict)  # field name -> annotations
    loc: Location | None = None  # the declaration, for errors found where the type is used

    def field_type(self, name: str) -> P4Type | None:
        return next((t for n, t in self.fields if n == name), None)

    def __str__(self) -> str:
        return self.name


@dataclass(eq=False)
class Header(StructLike):
    pass


@dataclass(eq=False)
class Struct(StructLike):
    pass


@dataclass(eq=False)
class Union(StructLike):
    pass


@dataclass(frozen=True)
class Stack(P4Type):
    element: P4Type
    size: int

    def __str__(self) -> str:
        return f"{self.element}[{self.size}]"


@dataclass(frozen=True)
class Tuple(P4Type):
    elements: tuple[P4Type, ...]

    def __str__(self) -> str:
        return f"tuple<{', '.join(map(str, self.elements))}>"


@dataclass(frozen=True)
class TypeVar(P4Type):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ExternType(P4Type):
    name: str
    args: tuple[P4Type, ...] = ()

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class BlockType(P4Type):
    """A parser, control or package (their instances are not values)."""

    name: str

    def __str__(self) -> str:
        return self.name


def width_of(t: P4Type) -> int:
    """Bits a value of this type occupies in a BMv2 field."""
    match t:
        case Bits(width=w):
            return w
        case Bool():
            return 1
        case ErrorType():
            return ERROR_WIDTH
        case Enum(base=Bits(width=w)):
            return w
        case Enum():
            return ENUM_WIDTH
        case Varbit(max_width=w):
            return w
        case StructLike(fields=fields):
            return sum(width_of(ft) for _, ft in fields)
        case Stack(element=e, size=s):
            return width_of(e) * s
    raise ValueError(f"type {t} has no width")


def is_scalar(t: P4Type) -> bool:
    """Values that live in one BMv2 field."""
    return isinstance(t, Bits | Bool | ErrorType | Enum | Varbit)


def flat_fields(fields: list[tuple[str, P4Type]], prefix: str = "") -> list[tuple[str, P4Type]]:
    """Header fields with struct-typed ones spelled out as `outer.inner`, in declaration order."""
    flat: list[tuple[str, P4Type]] = []
    for name, ftype in fields:
        if isinstance(ftype, Struct):
            flat += flat_fields(ftype.fields, f"{prefix}{name}.")
        else:
            flat.append((prefix + name, ftype))
    return flat
