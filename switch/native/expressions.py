"""BMv2 JSON expressions as C over the packet array `P` (uint64_t slots, see ina.switch.layout).

BMv2 evaluates with unbounded integers and truncates on store. The C code evaluates in signed
128-bit arithmetic (compiled with -fwrapv), which gives the same low bits for every operator as
long as operands fit 64 bits, which the native backend requires of every field, parameter and
register. Programs outside that range raise Unsupported and run on the Python engine.
"""

from ina.switch.expressions import hexint, unwrap
from ina.switch.layout import HeaderLayout, Layout

BINARY = {
    "+": "+", "-": "-", "*": "*", "&": "&", "|": "|", "^": "^",
    "==": "==", "!=": "!=", ">": ">", ">=": ">=", "<": "<", "<=": "<=",
    "and": "&&", "or": "||",
}  # fmt: skip
HELPERS = {"<<": "ina_shl", ">>": "ina_shr", "/": "ina_div", "%": "ina_mod"}
MAX_BITS = 64


class Unsupported(Exception):
    """A program feature the native backend does not compile; the Python engine runs it."""


def const(value: int) -> str:
    """A C constant of type i128 for any value that fits in 127 bits."""
    if not -(1 << 127) < value < (1 << 127):
        raise Unsupported(f"constant {value:#x} is wider than 127 bits")
    if value < 0:
        return f"(-{const(-value)})"
    if value < (1 << 63):
        return f"((i128){value}LL)"
    if value < (1 << 64):
        return f"((i128){value}ULL)"
    return f"((i128)(((u128){value >> 64}ULL << 64) | {value & ((1 << 64) - 1)}ULL))"


def mask(width: int) -> str:
    return f"{(1 << width) - 1}ULL"


class CExpressions:
    """Translates type/value objects to C; one instance per program."""

    def __init__(self, layout: Layout):
        self.layout = layout

    def header(self, obj: dict) -> HeaderLayout:
        """The layout of a header named directly (stacks and unions are not supported)."""
        kind, value = obj["type"], obj["value"]
        if kind == "expression":
            value = unwrap(value)
            raise Unsupported(f"header expression '{value.get('op')}'")
        if kind not in ("header", "regular"):
            raise Unsupported(f"header reference of type '{kind}'")
        if value in self.layout.union_of:
            raise Unsupported(f"header union member '{value}'")
        return self.layout.header(value)

    def field(self, obj: dict) -> tuple[int, int, bool]:
        """(slot, bitwidth, signed) of an assignable field."""
        if obj["type"] != "field":
            raise Unsupported(f"field reference of type '{obj['type']}'")
        header, name = obj["value"]
        hl = self.layout.header(header)
        if header in self.layout.union_of:
            raise Unsupported(f"header union member '{header}'")
        if hl.varbit_max:
            raise Unsupported(f"varbit header '{header}'")
        if name == "$valid$":
            return hl.base, 1, False
        width = hl.width(name)
        if width > MAX_BITS:
            raise Unsupported(f"field {header}.{name} is {width} bits wide (more than {MAX_BITS})")
        return hl.slot(name), width, hl.signed(name)

    def load(self, slot: int, signed: bool) -> str:
        return f"((i128)(int64_t)P[{slot}])" if signed else f"((i128)P[{slot}])"

    def store(self, target: dict, source: str) -> str:
        slot, width, signed = self.field(target)
        return f"P[{slot}] = {self.truncate(source, width, signed)};"

    @staticmethod
    def truncate(source: str, width: int, signed: bool) -> str:
        """`source` (an i128) cut to a field of `width` bits, as a uint64_t slot value."""
        if signed:
            half = 1 << (width - 1)
            return f"(uint64_t)(int64_t)((((u128)({source}) + {half}ULL) & {mask(width)}) - {half}ULL)"
        return f"((uint64_t)({source}) & {mask(width)})"

    def value(self, obj: dict) -> str:
        kind, value = obj["type"], obj.get("value")
        if kind == "field":
            slot, _width, signed = self.field(obj)
            return self.load(slot, signed)
        if kind == "hexstr":
            return const(hexint(value))
        if kind == "bool":
            return "((i128)1)" if value else "((i128)0)"
        if kind in ("runtime_data", "local"):
            return f"((i128)A[{value}])"
        if kind == "lookahead":
            offset, width = value
            if width > MAX_BITS:
                raise Unsupported(f"lookahead of {width} bits")
            return f"((i128)ina_lookahead(c, {offset}, {width}))"
        if kind == "expression":
            return self._expression(value)
        raise Unsupported(f"value of type '{kind}'")

    def _expression(self, expr: dict) -> str:
        if "op" not in expr:
            return self.value(expr)
        op = expr["op"]
        left, right = expr.get("left"), expr.get("right")
        if op in ("==", "!=") and left is not None and left.get("type") == "header" == right.get("type"):
            a, b = self.header(left), self.header(right)
            fields = " && ".join(f"P[{a.base + k}] == P[{b.base + k}]" for k in range(1, a.size))
            same = f"(P[{a.base}] == P[{b.base}] && (!P[{a.base}] || ({fields or '1'})))"
            return f"((i128){same})" if op == "==" else f"((i128)!{same})"
        if op in BINARY and left is not None:
            return f"((i128)({self.value(left)} {BINARY[op]} {self.value(right)}))"
        if op in HELPERS:
            return f"{HELPERS[op]}(c, {self.value(left)}, {self.value(right)})"
        if op == "-" and left is None:
            return f"(-{self.value(right)})"
        if op == "~":
            return f"(~{self.value(right)})"
        if op == "not":
            return f"((i128)!{self.value(right)})"
        if op in ("d2b", "b2d"):
            return f"((i128)({self.value(right)} != 0))"
        if op == "valid":
            return f"((i128)(P[{self.header(right).base}] == 1))"
        if op == "?":
            return f"({self.value(expr['cond'])} ? {self.value(left)} : {self.value(right)})"
        if op == "access_field":
            hl = self.header(left)
            name, width, signed = hl.fields[right]
            if not 0 <= width <= MAX_BITS:
                raise Unsupported(f"field {hl.name}.{name} of {width} bits")
            return self.load(hl.base + 1 + right, signed)
        if op == "two_comp_mod":
            return f"ina_two_comp({self.value(left)}, {self.value(right)})"
        if op == "sat_cast":
            return f"ina_sat_signed({self.value(left)}, {self.value(right)})"
        if op == "usat_cast":
            return f"ina_sat_unsigned({self.value(left)}, {self.value(right)})"
        raise Unsupported(f"expression operator '{op}'")
