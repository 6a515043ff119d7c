"""BMv2 JSON expressions as C over the packet array `P` (uint64_t slots, see ina.switch.model.layout).

BMv2 (and the Python engine) evaluate with unbounded integers and truncate on store. The C code
evaluates in signed 128-bit arithmetic (compiled with -fwrapv). +, -, *, &, |, ^, ~ and << give
the right value modulo 2**128 whatever their operands, so a store (which keeps at most 64 bits)
is exact. Operators that need the whole value (comparisons, /, %, >>, saturating casts, truth
tests, indices) only get operands whose magnitude a static bound proves below 2**126; anything
else raises Unsupported and the program runs on the Python engine.
"""

from ina.switch.model.errors import Unsupported
from ina.switch.model.layout import HeaderLayout, Layout, StackLayout, num
from ina.switch.model.values import field_index, hexint, unwrap

WRAPPING = {"+": "+", "-": "-", "*": "*", "&": "&", "|": "|", "^": "^"}
COMPARE = {"==": "==", "!=": "!=", ">": ">", ">=": ">=", "<": "<", "<=": "<="}
LOGIC = {"and": "&&", "or": "||"}
MAX_BITS = 64
EXACT_BITS = 126  # values proved below 2**126 in magnitude are exact in an i128
UNBOUNDED = 1 << 20


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


def _bits(value: int) -> int:
    """Magnitude bound of a constant: |value| < 2**bits."""
    return abs(value).bit_length()


class CExpressions:
    """Translates type/value objects to C; one instance per program."""

    def __init__(self, layout: Layout):
        self.layout = layout
        # (header, field) -> (hi word slot, lo word slot) of unsigned fields of 65..128 bits, kept
        # in two hidden words after the layout's slots (their Python slot is unused in C)
        self.wide_slots: dict[tuple[str, str], tuple[int, int]] = {}
        # id(obj) -> (obj, term(obj)): comparisons, shifts, / and % ask for both the term and the
        # value of an operand, which without a memo costs 2**depth calls for nested operators
        self._terms: dict[int, tuple[dict, tuple[str, int]]] = {}
        self.params = None

    @property
    def params(self) -> list[tuple[int, int]] | None:
        """Word offset in A and bitwidth of each parameter of the action being generated (None
        outside actions)."""
        return self._params

    @params.setter
    def params(self, params: list[tuple[int, int]] | None) -> None:
        self._params = params
        self._terms.clear()  # runtime_data terms depend on the action

    def wide(self, obj: dict) -> tuple[int, int, int] | None:
        """(hi slot, lo slot, width) of a field kept in two words, else None."""
        if obj.get("type") != "field" or tuple(obj["value"]) not in self.wide_slots:
            return None
        header, name = obj["value"]
        hi, lo = self.wide_slots[(header, name)]
        return hi, lo, self.layout.header(header).width(name)

    # --- headers -------------------------------------------------------------------------
    def stack(self, name: str) -> StackLayout:
        if name not in self.layout.stacks:
            raise Unsupported(f"header union stack '{name}'")
        return self.layout.stacks[name]

    def header(self, obj: dict) -> HeaderLayout:
        """The layout of a header named directly or as a member of a union (see header_base for
        stack elements)."""
        kind, value = obj["type"], obj["value"]
        if kind == "expression":
            value = unwrap(value)
            if value.get("op") == "access_union_header":
                return self.layout.header(self.union_member(value))
            raise Unsupported(f"header expression '{value.get('op')}'")
        if kind not in ("header", "regular"):
            raise Unsupported(f"header reference of type '{kind}'")
        return self.layout.header(value)

    def union(self, obj: dict) -> tuple[str, ...]:
        """The member headers of a header union named directly."""
        if obj.get("type") != "header_union" or obj.get("value") not in self.layout.unions:
            raise Unsupported(f"header union reference of type '{obj.get('type')}'")
        return self.layout.unions[obj["value"]]

    def union_member(self, expr: dict) -> str:
        """The header an `access_union_header` expression names (a constant member index)."""
        members = self.union(expr["left"])
        index = expr["right"]
        if not isinstance(index, int) or not 0 <= index < len(members):
            raise Unsupported(f"union member index {index!r}")
        return members[index]

    def header_base(self, obj: dict) -> tuple[str, HeaderLayout]:
        """(C expression of the base slot, shape) of a header, a stack element at a run-time index
        included (an index out of range is a run-time error, as IndexError on the Python engine)."""
        if obj["type"] == "expression":
            expr = unwrap(obj["value"])
            if expr.get("op") == "dereference_header_stack":
                st = self.stack(expr["left"]["value"])
                index = self.value(expr["right"])
                base = f"ina_stack_elem(c, {st.base}, {st.stride}, {len(st.elements)}, {index})"
                return base, self.layout.header(st.elements[0])
        hl = self.header(obj)
        return str(hl.base), hl

    def _check_header(self, hl: HeaderLayout, name: str) -> None:
        if hl.varbit_max > MAX_BITS:
            raise Unsupported(f"varbit header '{name}' of more than {MAX_BITS} bits")

    def field(self, obj: dict) -> tuple[str, int, bool]:
        """(slot as C, bitwidth, signed) of an assignable field."""
        kind = obj["type"]
        if kind == "field":
            header, name = obj["value"]
            hl = self.layout.header(header)
            self._check_header(hl, header)
            if name == "$valid$":
                return str(hl.base), 1, False
            slot, width, signed = str(hl.slot(name)), hl.width(name), hl.signed(name)
        elif kind == "stack_field":
            st = self.stack(obj["value"][0])
            hl = self.layout.header(st.elements[0])
            self._check_header(hl, st.name)
            name = obj["value"][1]
            offset = hl.slot(name) - hl.base
            slot = f"ina_stack_last(c, {st.base}, {st.stride}, P[{st.next_slot}]) + {offset}"
            width, signed = hl.width(name), hl.signed(name)
        elif kind == "expression" and unwrap(obj["value"]).get("op") == "access_field":
            expr = unwrap(obj["value"])
            base, hl = self.header_base(expr["left"])
            self._check_header(hl, hl.name)
            index = field_index(hl, expr["right"])
            name, width, signed = hl.fields[index]
            slot = f"{base} + {1 + index}"
        else:
            raise Unsupported(f"field reference of type '{kind}'")
        if not 0 < width <= MAX_BITS:
            raise Unsupported(f"field {hl.name}.{name} is {width} bits wide (more than {MAX_BITS})")
        return slot, width, signed

    @staticmethod
    def load(slot: str, signed: bool) -> str:
        return f"((i128)(int64_t)P[{slot}])" if signed else f"((i128)P[{slot}])"

    def store(self, target: dict, source: dict) -> str:
        """A statement storing the value `source` into the field `target` (modulo its width)."""
        return self.store_c(target, self.wrapped(source))

    def store_c(self, target: dict, source: str) -> str:
        """Like store, for a C expression already computed."""
        wide = self.wide(target)
        if wide is not None:
            hi, lo, width = wide
            return (
                f"{{ u128 t_ = (u128)({source}); P[{lo}] = (uint64_t)t_; "
                f"P[{hi}] = (uint64_t)(t_ >> 64) & {mask(width - 64)}; }}"
            )
        slot, width, signed = self.field(target)
        return f"P[{slot}] = {self.truncate(source, width, signed)};"

    @staticmethod
    def truncate(source: str, width: int, signed: bool) -> str:
        """`source` (an i128) cut to a field of `width` bits, as a uint64_t slot value."""
        if signed:
            half = 1 << (width - 1)
            return (
                f"(uint64_t)(int64_t)((((u128)({source}) + {half}ULL) & {mask(width)}) - {half}ULL)"
            )
        return f"((uint64_t)({source}) & {mask(width)})"

    # --- values --------------------------------------------------------------------------
    def value(self, obj: dict) -> str:
        """C for a value needed exactly (compared, divided, used as an index or a truth value)."""
        code, bits = self.term(obj)
        if bits > EXACT_BITS:
            raise Unsupported("an intermediate value that may not fit 126 bits")
        return code

    def wrapped(self, obj: dict) -> str:
        """C for a value needed only modulo 2**128 (stored into a field of at most 64 bits)."""
        return self.term(obj)[0]

    def term(self, obj: dict) -> tuple[str, int]:
        """(C code, bound): the code's value is right modulo 2**128, and exact when the true
        value's magnitude is below 2**bound."""
        cached = self._terms.get(id(obj))
        if cached is None or cached[0] is not obj:
            cached = (obj, self._term(obj))
            self._terms[id(obj)] = cached
        return cached[1]

    def _term(self, obj: dict) -> tuple[str, int]:
        kind, value = obj["type"], obj.get("value")
        wide = self.wide(obj)
        if wide is not None:
            hi, lo, width = wide
            return f"((i128)(((u128)P[{hi}] << 64) | P[{lo}]))", width
        if kind in ("field", "stack_field"):
            slot, width, signed = self.field(obj)
            return self.load(slot, signed), width
        if kind == "hexstr":
            v = hexint(value)
            if (1 << 127) <= v < (1 << 128):  # right modulo 2**128 (as a u128: exact)
                return f"((i128)(((u128){v >> 64}ULL << 64) | {v & ((1 << 64) - 1)}ULL))", 128
            return const(v), _bits(v)
        if kind == "bool":
            return ("((i128)1)" if value else "((i128)0)"), 1
        if kind in ("runtime_data", "local"):  # A holds the action's parameters, no more
            if self.params is None or not 0 <= num(value) < len(self.params):
                raise Unsupported(f"'{kind}' {value} names no parameter of the action")
            word, width = self.params[value]
            if width > MAX_BITS:
                return f"((i128)(((u128)A[{word}] << 64) | A[{word + 1}]))", width
            return f"((i128)A[{word}])", MAX_BITS
        if kind == "lookahead":
            offset, width = num(value[0]), num(value[1])
            if width > MAX_BITS:
                raise Unsupported(f"lookahead of {width} bits")
            return f"((i128)ina_lookahead(c, {offset}, {width}))", width
        if kind == "expression":
            return self._expression(value)
        raise Unsupported(f"value of type '{kind}'")

    def _expression(self, expr: dict) -> tuple[str, int]:
        if "op" not in expr:
            return self.term(expr)
        op = expr["op"]
        left, right = expr.get("left"), expr.get("right")
        if (
            op in ("==", "!=")
            and left is not None
            and left.get("type") == "header" == right.get("type")
        ):
            a, b = self.header(left), self.header(right)
            fields = " && ".join(f"P[{a.base + k}] == P[{b.base + k}]" for k in range(1, a.size))
            wide = {h for h, _n in self.wide_slots}
            if (a.name in wide or b.name in wide) and a.name != b.name:
                raise Unsupported("== between two headers with fields wider than 64 bits")
            same = f"(P[{a.base}] == P[{b.base}] && (!P[{a.base}] || ({fields or '1'})))"
            return (f"((i128){same})" if op == "==" else f"((i128)!{same})"), 1
        if op in WRAPPING and left is not None:
            (lc, lb), (rc, rb) = self.term(left), self.term(right)
            if op in ("+", "-"):
                bits = max(lb, rb) + 1
            elif op == "*":
                bits = lb + rb
            elif op == "&":
                # x & m with a non-negative m is at most m whatever x is
                sides = [b for side, b in ((left, lb), (right, rb)) if self._non_negative(side)]
                bits = min(sides) if sides else max(lb, rb)
            else:
                bits = max(lb, rb)
            return f"((i128)({lc} {WRAPPING[op]} {rc}))", min(bits, UNBOUNDED)
        if op in COMPARE and left is not None:
            (lc, lb), (rc, rb) = self.term(left), self.term(right)
            if lb > EXACT_BITS or rb > EXACT_BITS:
                # exact in u128 when both sides are certainly in [0, 2**128)
                if max(lb, rb) > 128 or not (
                    self._non_negative(left) and self._non_negative(right)
                ):
                    raise Unsupported("a comparison of values that may not fit 126 bits")
                return f"((i128)((u128){lc} {COMPARE[op]} (u128){rc}))", 1
            return f"((i128)({self.value(left)} {COMPARE[op]} {self.value(right)}))", 1
        if op in LOGIC:
            return f"((i128)({self.value(left)} {LOGIC[op]} {self.value(right)}))", 1
        if op == "<<":
            lc, lb = self.term(left)
            amount = hexint(right["value"]) if right["type"] == "hexstr" else None
            bits = lb + amount if amount is not None else UNBOUNDED
            return f"ina_shl(c, {lc}, {self.value(right)})", min(bits, UNBOUNDED)
        if op == ">>":
            lc, lb = self.term(left)
            if EXACT_BITS < lb <= 128 and right["type"] == "hexstr" and self._non_negative(left):
                # a value in [0, 2**128) (a wide field, say) shifted by a constant: exact in u128
                amount = hexint(right["value"])
                if amount >= 0:
                    code = f"((i128)((u128){lc} >> {amount}))" if amount < 128 else "((i128)0)"
                    return code, max(lb - amount, 1)
            return f"ina_shr(c, {self.value(left)}, {self.value(right)})", lb
        if op == "/":
            return f"ina_div(c, {self.value(left)}, {self.value(right)})", self.term(left)[1]
        if op == "%":
            return f"ina_mod(c, {self.value(left)}, {self.value(right)})", self.term(right)[1]
        if op == "-" and left is None:
            rc, rb = self.term(right)
            return f"(-{rc})", rb
        if op == "~":
            rc, rb = self.term(right)
            return f"(~{rc})", rb + 1
        if op == "not":
            return f"((i128)!{self.value(right)})", 1
        if op in ("d2b", "b2d"):
            return f"((i128)({self.value(right)} != 0))", 1
        if op == "valid":
            base, _hl = self.header_base(right)
            return f"((i128)(P[{base}] == 1))", 1
        if op == "valid_union":
            members = self.union(right)
            valid = " || ".join(f"P[{self.layout.header(m).base}] == 1" for m in members)
            return f"((i128)({valid or '0'}))", 1
        if op == "?":
            (lc, lb), (rc, rb) = self.term(left), self.term(right)
            return f"({self.value(expr['cond'])} ? {lc} : {rc})", max(lb, rb)
        if op == "access_field":
            slot, width, signed = self.field({"type": "expression", "value": expr})
            return self.load(slot, signed), width
        if op in ("two_comp_mod", "sat_cast", "usat_cast"):
            if right.get("type") != "hexstr" or not 0 < hexint(right["value"]) <= 120:
                raise Unsupported(f"'{op}' to a width other than a constant of 1..120 bits")
            width = hexint(right["value"])
            if op == "two_comp_mod":
                return f"ina_two_comp({self.wrapped(left)}, {width})", width
            fn = "ina_sat_signed" if op == "sat_cast" else "ina_sat_unsigned"
            return f"{fn}({self.value(left)}, {width})", width + 1
        if op == "last_stack_index":
            st = self.stack(right["value"])
            return f"((i128)P[{st.next_slot}] - 1)", 32
        if op == "size_stack":
            st = self.stack(right["value"])
            return f"((i128)P[{st.next_slot}])", 32
        raise Unsupported(f"expression operator '{op}'")

    def _non_negative(self, obj: dict) -> bool:
        """Whether a value is certainly >= 0 (a non-negative constant or an unsigned field)."""
        if obj["type"] == "hexstr":
            return hexint(obj["value"]) >= 0
        if obj["type"] in ("field", "stack_field"):
            return self.wide(obj) is not None or not self.field(obj)[2]
        if obj["type"] == "expression":
            expr = unwrap(obj["value"])
            if expr.get("op") == "&":
                return self._non_negative(expr["left"]) or self._non_negative(expr["right"])
            if expr.get("op") in ("|", "^") and expr.get("left") is not None:
                return self._non_negative(expr["left"]) and self._non_negative(expr["right"])
            return expr.get("op") in COMPARE or expr.get("op") in ("valid", "d2b", "b2d", "not")
        return obj["type"] in ("runtime_data", "local", "lookahead", "bool")
