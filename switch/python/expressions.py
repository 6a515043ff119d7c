"""BMv2 JSON expressions and field references turned into Python source over the packet list `P`.

Values are unbounded Python ints, as BMv2 evaluates them; truncation happens only when a value is
stored into a field (`store`). Action data is the tuple `A`; parser lookahead reads `data` at `off`.
"""

from ina.switch.model.errors import PipelineError
from ina.switch.model.layout import Layout, num
from ina.switch.model.values import field_index, hexint, unwrap

BINARY = {
    "+": "+", "-": "-", "*": "*", "<<": "<<", ">>": ">>", "&": "&", "|": "|", "^": "^",
    "==": "==", "!=": "!=", ">": ">", ">=": ">=", "<": "<", "<=": "<=",
    "and": "and", "or": "or", "/": "//", "%": "%",
}  # fmt: skip


class ExpressionCompiler:
    """Translates type/value objects; one instance per loaded program."""

    def __init__(self, layout: Layout):
        self.layout = layout

    # --- headers -------------------------------------------------------------------------
    def header_base(self, obj: dict) -> str:
        """Python source for the base slot of the header `obj` designates."""
        kind, value = obj["type"], obj["value"]
        if kind in ("header", "regular"):
            return str(self.layout.header(value).base)
        if kind == "expression":
            return self._header_expr(value)
        if kind == "stack":
            raise PipelineError("a whole header stack is not a header")
        raise PipelineError(f"expected a header, got '{kind}'")

    def _header_expr(self, expr: dict) -> str:
        expr = unwrap(expr)
        op = expr["op"]
        if op == "dereference_header_stack":
            stack = self.layout.stacks[expr["left"]["value"]]
            return f"_stack_elem({stack.base}, {stack.stride}, {len(stack.elements)}, {self.value(expr['right'])})"
        if op == "access_union_header":
            union = self.layout.unions[expr["left"]["value"]]
            return str(self.layout.header(union[expr["right"]]).base)
        if op == "dereference_union_stack":
            raise PipelineError("run-time indices into header union stacks are not supported")
        raise PipelineError(f"expression with op '{op}' is not a header")

    def header_width_fields(self, obj: dict):
        """The HeaderLayout shape of the header `obj` designates (all stack elements share one)."""
        obj = (
            {"type": obj["type"], "value": unwrap(obj["value"])}
            if obj["type"] == "expression"
            else obj
        )
        kind, value = obj["type"], obj["value"]
        if kind in ("header", "regular"):
            return self.layout.header(value)
        if kind == "expression" and value["op"] == "dereference_header_stack":
            return self.layout.header(self.layout.stacks[value["left"]["value"]].elements[0])
        if kind == "expression" and value["op"] == "access_union_header":
            union = self.layout.unions[value["left"]["value"]]
            return self.layout.header(union[value["right"]])
        raise PipelineError(f"expected a header, got '{kind}'")

    # --- fields --------------------------------------------------------------------------
    def field_ref(self, obj: dict) -> tuple[str, int, bool]:
        """(slot source, bitwidth, signed) of an assignable field reference."""
        if obj["type"] == "expression":
            obj = {"type": "expression", "value": unwrap(obj["value"])}
        kind, value = obj["type"], obj["value"]
        if kind == "field":
            header, fname = value
            hl = self.layout.header(header)
            if fname == "$valid$":
                return str(hl.base), 1, False
            return str(hl.slot(fname)), hl.width(fname), hl.signed(fname)
        if kind == "stack_field":
            stack = self.layout.stacks[value[0]]
            hl = self.layout.header(stack.elements[0])
            offset = hl.slot(value[1]) - hl.base
            return (
                f"_stack_last({stack.base}, {stack.stride}, P[{stack.next_slot}]) + {offset}",
                hl.width(value[1]),
                hl.signed(value[1]),
            )
        if kind == "expression" and value["op"] == "access_field":
            hl = self.header_width_fields(value["left"])
            index = field_index(hl, value["right"])
            _name, width, signed = hl.fields[index]
            base = self.header_base(value["left"])
            return f"{base} + {1 + index}", (width if width >= 0 else hl.varbit_max), signed
        raise PipelineError(f"'{kind}' is not an assignable field")

    def store(self, target: dict, source: str, source_obj: dict | None = None) -> str:
        """A statement storing `source` into the field `target`, truncated to its width."""
        slot, width, signed = self.field_ref(target)
        return f"P[{slot}] = {self.truncate(source, width, signed, source_obj)}"

    def truncate(
        self, source: str, width: int, signed: bool, source_obj: dict | None = None
    ) -> str:
        if signed:
            half = 1 << (width - 1)
            return f"((({source}) + {half}) & {(1 << width) - 1}) - {half}"
        if source_obj is not None and self._fits(source_obj, width):
            return source
        return f"({source}) & {(1 << width) - 1}"

    def _fits(self, obj: dict, width: int) -> bool:
        """Whether a value is known to be unsigned and at most `width` bits (no mask needed)."""
        kind, value = obj["type"], obj["value"]
        if kind == "expression":
            value = unwrap(value)
        if kind == "field":
            if value[1] == "$valid$":
                return True
            hl = self.layout.header(value[0])
            return not hl.signed(value[1]) and hl.width(value[1]) <= width
        if kind == "hexstr":
            v = hexint(value)
            return 0 <= v < (1 << width)
        if kind == "expression" and value["op"] == "&":
            for side in (value["left"], value["right"]):
                if side["type"] == "hexstr" and 0 <= hexint(side["value"]) < (1 << width):
                    return True
        return bool(kind == "expression" and value["op"] == "b2d")

    # --- values --------------------------------------------------------------------------
    def value(self, obj: dict) -> str:
        kind, value = obj["type"], obj.get("value")
        if kind == "field":
            return f"P[{self.field_ref(obj)[0]}]"
        if kind == "stack_field":
            return f"P[{self.field_ref(obj)[0]}]"
        if kind == "hexstr":
            return str(hexint(value))
        if kind == "bool":
            return "True" if value else "False"
        if kind in ("runtime_data", "local"):
            return f"A[{num(value)}]"
        if kind == "lookahead":
            offset, width = value
            return f"_lookahead(data, off, {num(offset)}, {num(width)})"
        if kind == "header":
            return self.header_base(obj)
        if kind == "expression":
            return self._expression(value)
        if kind == "string":
            return repr(value)
        raise PipelineError(f"unsupported value type '{kind}'")

    def _expression(self, expr: dict) -> str:
        if "op" not in expr:  # p4c wraps some expressions twice
            return self.value(expr)
        op = expr["op"]
        left, right = expr.get("left"), expr.get("right")
        if (
            op in ("==", "!=")
            and left is not None
            and left.get("type") == "header" == right.get("type")
        ):
            a, b = self.layout.header(left["value"]), self.layout.header(right["value"])
            n = a.size
            same = (
                f"(P[{a.base}] == P[{b.base}] and (not P[{a.base}] or "
                f"P[{a.base + 1}:{a.base + n}] == P[{b.base + 1}:{b.base + n}]))"
            )
            return same if op == "==" else f"(not {same})"
        if op in BINARY and left is not None:
            return f"({self.value(left)} {BINARY[op]} {self.value(right)})"
        if op == "-" and left is None:
            return f"(-{self.value(right)})"
        if op == "~":
            return f"(~{self.value(right)})"
        if op == "not":
            return f"(not {self.value(right)})"
        if op == "d2b":
            return f"({self.value(right)} != 0)"
        if op == "b2d":
            return f"(1 if {self.value(right)} else 0)"
        if op == "valid":
            return f"(P[{self.header_base(right)}] == 1)"
        if op == "valid_union":
            members = self.layout.unions[right["value"]]
            return "(" + " or ".join(f"P[{self.layout.header(m).base}] == 1" for m in members) + ")"
        if op == "?":
            return f"({self.value(left)} if {self.value(expr['cond'])} else {self.value(right)})"
        if op == "two_comp_mod":
            return f"_two_comp({self.value(left)}, {self.value(right)})"
        if op == "sat_cast":
            return f"_sat_signed({self.value(left)}, {self.value(right)})"
        if op == "usat_cast":
            return f"_sat_unsigned({self.value(left)}, {self.value(right)})"
        if op == "access_field":
            return f"P[{self.field_ref({'type': 'expression', 'value': expr})[0]}]"
        if op in ("dereference_header_stack", "access_union_header"):
            return self._header_expr(expr)
        if op == "last_stack_index":
            stack = self.layout.stacks[right["value"]]
            return f"(P[{stack.next_slot}] - 1)"
        if op == "size_stack":
            stack = self.layout.stacks[right["value"]]
            return f"P[{stack.next_slot}]"
        raise PipelineError(f"unsupported expression operator '{op}'")


def two_comp(value: int, width: int) -> int:
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def sat_signed(value: int, width: int) -> int:
    return max(-(1 << (width - 1)), min((1 << (width - 1)) - 1, value))


def sat_unsigned(value: int, width: int) -> int:
    return max(0, min((1 << width) - 1, value))
