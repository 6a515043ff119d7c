"""Name resolution, type checking and lowering of expressions to BMv2 expression trees.

One walk does all three for an expression: it looks names up in the scope chain, checks operand
types with P4's width rules, folds constants, and builds the JSON tree with the explicit masks and
two_comp_mod wrappers BMv2 needs (BMv2 computes with unbounded integers).
"""

from __future__ import annotations

from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.calls import compile_call, lookahead
from ina.compiler.errors import CompileError, Location
from ina.compiler.members import member_of
from ina.compiler.objects import FunctionBinding
from ina.compiler.program import Scope
from ina.compiler.services import Effects, Services
from ina.compiler.values import (
    Computed,
    Const,
    Field,
    HeaderExpression,
    HeaderInstance,
    ListValue,
    RuntimeData,
    SliceTarget,
    StackInstance,
    StringValue,
    StructValue,
    Unassigned,
    UnionInstance,
    Value,
    as_bool,
    as_data,
    expr_json,
    hexstr,
    mask_of,
    op,
    read_only,
)

ARITH = {"+", "-", "*", "/", "%", "|+|", "|-|"}
BITWISE = {"&", "|", "^"}
COMPARE = {"==", "!=", "<", ">", "<=", ">="}


def wrap_width(expr: dict, vtype: t.P4Type) -> dict:
    """Truncate an unbounded BMv2 result to the type's width (mask, or two_comp_mod if signed)."""
    if isinstance(vtype, t.Bits):
        width = {
            "type": "hexstr",
            "value": hexstr(
                vtype.width if vtype.signed else mask_of(vtype.width),
                None if vtype.signed else vtype.width,
            ),
        }
        name = "two_comp_mod" if vtype.signed else "&"
        return op(name, {"type": "expression", "value": expr}, width)
    return expr


def fold(value: int, vtype: t.P4Type) -> int:
    """Wrap a compile-time integer to the type's range (two's complement for int<N>)."""
    if isinstance(vtype, t.Bits):
        value &= mask_of(vtype.width)
        if vtype.signed and value >> (vtype.width - 1):
            value -= 1 << vtype.width
    return value


class ExpressionCompiler:
    """Compiles expressions in one scope; `effects` receives primitives of calls with side effects.

    It is the services.Expressions that calls, members and externs get back when it dispatches to them.
    """

    def __init__(self, services: Services, scope: Scope, effects: Effects | None = None):
        self.services = services
        self.model = services.model
        self.scope = scope
        self.effects = effects

    # ---- entry points
    def value(self, expr: n.Expr, expected: t.P4Type | None = None) -> Value:
        """An expression that must produce a value (not a table, an extern, ...)."""
        result = self.compile(expr, expected)
        if not isinstance(result, Value) or isinstance(result, Unassigned):
            raise CompileError(f"'{n.expr_text(expr)}' is not a value", expr.loc)
        if expected is not None:
            result = self.coerce(result, expected, expr.loc)
        return result

    def boolean(self, expr: n.Expr) -> Value:
        result = self.value(expr)
        if not isinstance(result.type, t.Bool):
            raise CompileError(f"condition has type {result.type}, expected bool", expr.loc)
        return result

    def constant(self, expr: n.Expr, expected: t.P4Type | None = None) -> Const:
        result = self.value(expr, expected)
        if not isinstance(result, Const):
            raise CompileError(f"'{n.expr_text(expr)}' must be a compile-time constant", expr.loc)
        return result

    def lvalue(self, expr: n.Expr) -> Value:
        """The target of an assignment or out argument; rejects read-only values."""
        result = self.compile(expr)
        if isinstance(result, Unassigned):
            return result
        if isinstance(result, Const | RuntimeData | StringValue) or (
            isinstance(result, Value) and not result.writable
        ):
            raise CompileError(f"cannot assign to '{n.expr_text(expr)}': it is read-only", expr.loc)
        assignable = (
            Field,
            HeaderInstance,
            StackInstance,
            UnionInstance,
            StructValue,
            SliceTarget,
            ListValue,
        )
        is_access = isinstance(result, Computed | HeaderExpression) and result.expr.get("op") in (
            "access_field",
            "dereference_header_stack",
        )
        if not isinstance(result, assignable) and not is_access:
            raise CompileError(
                f"cannot assign to '{n.expr_text(expr)}': it is not a variable, field or header",
                expr.loc,
            )
        if not result.writable:
            raise CompileError(f"cannot assign to '{n.expr_text(expr)}': it is read-only", expr.loc)
        return result

    # ---- dispatch
    def compile(self, expr: n.Expr, expected: t.P4Type | None = None) -> Any:
        method = getattr(self, "_" + type(expr).__name__, None)
        if method is None:
            raise CompileError(f"unsupported expression ({type(expr).__name__})", expr.loc)
        return method(expr, expected)

    def _IntLit(self, e: n.IntLit, expected) -> Value:
        if e.width is None:
            return Const(t.InfInt(), e.value)
        vtype = t.Bits(t.check_width(e.width, e.loc, "a literal's width"), e.signed)
        if e.value > mask_of(e.width) or (e.signed and e.value >> (e.width - 1)):
            raise CompileError(f"value {e.value} does not fit in {vtype}", e.loc)
        return Const(vtype, fold(e.value, vtype))

    def _BoolLit(self, e: n.BoolLit, expected) -> Value:
        return Const(t.Bool(), e.value)

    def _StringLit(self, e: n.StringLit, expected) -> Value:
        return StringValue(t.String(), e.value)

    def _Name(self, e: n.Name, expected) -> Any:
        scope = self.model.globals if e.top_level else self.scope
        found = scope.lookup(e.name)
        if found is None:
            raise CompileError(f"unknown identifier '{e.name}'", e.loc)
        if isinstance(found, n.ConstDecl):
            found = self.services.constant_of(found, scope)
        elif isinstance(found, n.Instantiation):
            found = self.services.instantiate_global(found)
        elif isinstance(found, n.ActionDecl):
            found = self.services.bind_global_action(found)
        elif isinstance(found, n.FunctionDecl):
            found = FunctionBinding(found, self.model.globals)
        return found

    def _TypeMember(self, e: n.TypeMember, expected) -> Value:
        if e.type_name == "error":
            value = self.model.error_value(e.name)
            if value is None:
                raise CompileError(f"unknown error 'error.{e.name}'", e.loc)
            return Const(t.ErrorType(), value)
        etype = self.model.named_type(e.type_name, e.loc)
        if isinstance(etype, t.Enum):
            if e.name not in etype.members:
                raise CompileError(f"enum '{etype.name}' has no member '{e.name}'", e.loc)
            return Const(etype, etype.members[e.name])
        raise CompileError(f"type '{e.type_name}' has no member '{e.name}'", e.loc)

    def _Member(self, e: n.Member, expected) -> Any:
        base = self.compile(e.expr)
        return member_of(self, base, e)

    def _Index(self, e: n.Index, expected) -> Value:
        base = self.compile(e.expr)
        if isinstance(base, ListValue):
            index = int(self.constant(e.index, t.Bits(32)).value)
            if not 0 <= index < len(base.items):
                raise CompileError(f"index {index} is out of bounds for {base.type}", e.index.loc)
            return base.items[index]
        if not isinstance(base, StackInstance):
            raise CompileError(
                f"'{n.expr_text(e.expr)}' is not a header stack; only stacks can be indexed", e.loc
            )
        index = self.value(e.index)
        if isinstance(index, Const):
            if not 0 <= int(index.value) < len(base.elements):
                raise CompileError(
                    f"index {index.value} is out of bounds for {base.type}", e.index.loc
                )
            return base.elements[int(index.value)]
        if isinstance(base.type.element, t.Union):
            raise CompileError(
                "run-time indices into header union stacks are not supported by ina's compiler",
                e.index.loc,
            )
        return HeaderExpression(
            base.type.element,
            op("dereference_header_stack", expr_json(base), as_data(index)),
            writable=base.writable,
        )

    def _Slice(self, e: n.Slice, expected) -> Value:
        base = self.compile(e.expr)
        if not isinstance(base, Value) or not isinstance(base.type, t.Bits):
            raise CompileError(
                f"only bit<N> and int<N> values can be sliced, not '{n.expr_text(e.expr)}'", e.loc
            )
        hi = int(self.constant(e.hi).value)
        lo = int(self.constant(e.lo).value)
        if not base.type.width > hi >= lo >= 0:
            raise CompileError(f"slice [{hi}:{lo}] is out of range for {base.type}", e.loc)
        width = hi - lo + 1
        if isinstance(base, Field | SliceTarget):
            target = SliceTarget(t.Bits(width), base, hi, lo, writable=base.writable)
        else:
            target = None
        if isinstance(base, Const):
            return Const(t.Bits(width), (int(base.value) >> lo) & mask_of(width))
        shifted = (
            op(">>", self._unsigned(base), {"type": "hexstr", "value": hexstr(lo, 8)})
            if lo
            else None
        )
        source = {"type": "expression", "value": shifted} if shifted else self._unsigned(base)
        result = Computed(
            t.Bits(width),
            op("&", source, {"type": "hexstr", "value": hexstr(mask_of(width), width)}),
        )
        if target is not None:
            target.read = result
            return target
        return result

    def _unsigned(self, value: Value) -> dict:
        """JSON of a value as an unsigned number of its width (int<N> fields read as negative)."""
        if isinstance(value.type, t.Bits) and value.type.signed:
            return {
                "type": "expression",
                "value": op(
                    "&",
                    expr_json(value),
                    {
                        "type": "hexstr",
                        "value": hexstr(mask_of(value.type.width), value.type.width),
                    },
                ),
            }
        return as_data(value)

    def _Unary(self, e: n.Unary, expected) -> Value:
        value = self.value(e.expr)
        if e.op == "!":
            if not isinstance(value.type, t.Bool):
                raise CompileError(f"'!' needs a bool operand, not {value.type}", e.loc)
            if isinstance(value, Const):
                return Const(t.Bool(), not value.value)
            return Computed(t.Bool(), op("not", None, as_bool(value)))
        if not isinstance(value.type, t.Bits | t.InfInt):
            raise CompileError(f"'{e.op}' needs an integer operand, not {value.type}", e.loc)
        if isinstance(value, Const):
            if e.op == "-":
                return Const(value.type, fold(-int(value.value), value.type))
            if isinstance(value.type, t.InfInt):
                raise CompileError("'~' needs an operand with a width; write e.g. ~8w5", e.loc)
            return Const(value.type, fold(~int(value.value), value.type))
        if e.op == "-":
            expr = op("-", {"type": "hexstr", "value": "0x00"}, expr_json(value))
        else:
            expr = op("~", None, expr_json(value))
        return Computed(value.type, wrap_width(expr, value.type))

    def _Cast(self, e: n.Cast, expected) -> Value:
        target = self.model.resolve(e.type, scope=self.scope)
        value = self.value(e.expr)
        return self.cast(value, target, e.loc)

    def cast(self, value: Value, target: t.P4Type, loc: Location) -> Value:
        source = value.type
        if source == target:
            return value
        if isinstance(target, t.Bool):
            if isinstance(source, t.Bits) and source.width == 1:
                if isinstance(value, Const):
                    return Const(target, bool(value.value))
                return Computed(target, op("d2b", None, expr_json(value)))
        elif isinstance(target, t.Bits):
            if isinstance(source, t.Bool):
                if target.width != 1:
                    raise CompileError(f"cannot cast bool to {target}; only to bit<1>", loc)
                if isinstance(value, Const):
                    return Const(target, int(bool(value.value)))
                if isinstance(value, Field):
                    return Field(target, value.header, value.name, writable=False)
                return Computed(target, op("b2d", None, expr_json(value)))
            if isinstance(source, t.Enum) and source.base is not None:
                if target != source.base:  # P4-16 8.3; p4c refuses the rest too
                    raise CompileError(
                        f"cannot cast {source} to {target}: a serializable enum casts only to "
                        f"its underlying type {source.base} (cast that to {target})",
                        loc,
                    )
                value = self._retype(value, source.base)
                source = source.base
            if isinstance(source, t.InfInt | t.Bits):
                if isinstance(value, Const):
                    return Const(target, fold(int(value.value), target))
                return self._bits_cast(value, source, target)
        elif isinstance(target, t.Enum) and target.base is not None:
            if isinstance(source, t.Bits | t.InfInt):
                return self._retype(self.cast(value, target.base, loc), target)
        elif isinstance(target, t.InfInt) and isinstance(value, Const):
            return Const(target, value.value)
        elif isinstance(target, t.StructLike) and isinstance(value, ListValue):
            return self.coerce(value, target, loc)
        raise CompileError(f"cannot cast {source} to {target}", loc)

    def _retype(self, value: Value, vtype: t.P4Type) -> Value:
        if isinstance(value, Const):
            return Const(vtype, value.value)
        if isinstance(value, Field):
            return Field(vtype, value.header, value.name, writable=value.writable)
        if isinstance(value, RuntimeData):
            return RuntimeData(vtype, value.index)
        return Computed(vtype, expr_json(value)["value"])

    def _bits_cast(self, value: Value, source: t.Bits, target: t.Bits) -> Value:
        data = expr_json(value)
        if source.signed and not target.signed:
            expr = op(
                "&", data, {"type": "hexstr", "value": hexstr(mask_of(target.width), target.width)}
            )
        elif target.signed:
            expr = op("two_comp_mod", data, {"type": "hexstr", "value": hexstr(target.width, None)})
        elif target.width < source.width:
            expr = op(
                "&", data, {"type": "hexstr", "value": hexstr(mask_of(target.width), target.width)}
            )
        else:
            return self._retype(value, target)
        return Computed(target, expr)

    def coerce(self, value: Value, expected: t.P4Type, loc: Location) -> Value:
        """Implicit conversions P4 allows: int literals to bit<N>/int<N>, lists to structs/headers."""
        if value.type == expected or isinstance(expected, t.TypeVar):
            return value
        if isinstance(value, Const) and isinstance(value.type, t.InfInt):
            if isinstance(expected, t.Bits):
                return Const(expected, fold(int(value.value), expected))
            if isinstance(expected, t.InfInt):
                return value
            if isinstance(expected, t.Enum) and expected.base is not None:
                return Const(expected, fold(int(value.value), expected.base))
        if isinstance(value, ListValue) and isinstance(expected, t.StructLike):
            if len(value.items) != len(expected.fields):
                raise CompileError(
                    f"{len(value.items)} values given for {expected}, which has {len(expected.fields)} fields",
                    loc,
                )
            if value.names is not None:
                order = {name: i for i, name in enumerate(value.names)}
                missing = [f for f, _ in expected.fields if f not in order]
                if missing:
                    raise CompileError(
                        f"no value given for field '{missing[0]}' of {expected}", loc
                    )
                items = [value.items[order[f]] for f, _ in expected.fields]
            else:
                items = value.items
            members = {
                f: self.coerce(v, ft, loc)
                for (f, ft), v in zip(expected.fields, items, strict=True)
            }
            return StructValue(expected, members, writable=False)
        if (
            isinstance(expected, t.Bits)
            and isinstance(value.type, t.Enum)
            and value.type.base == expected
        ):
            return self._retype(value, expected)
        if isinstance(expected, t.Varbit) and isinstance(value.type, t.Varbit):
            return value
        if isinstance(value, ListValue) and isinstance(expected, t.Tuple):
            if len(value.items) != len(expected.elements):
                raise CompileError(f"{len(value.items)} values given for {expected}", loc)
            items = [
                self.coerce(v, et, loc)
                for v, et in zip(value.items, expected.elements, strict=True)
            ]
            return ListValue(expected, items, writable=False)
        raise CompileError(f"type mismatch: expected {expected}, got {value.type}", loc)

    # ---- binary operators
    def _Binary(self, e: n.Binary, expected) -> Value:
        if e.op in ("&&", "||"):
            return self._logical(e)
        left = self.value(e.left)
        if n.has_calls(e.right) and hasattr(self.effects, "assign") and not isinstance(left, Const):
            # left to right: the left operand is read before the right side's call can change it
            snapshot = self.effects.temporary(left.type, "tmp", e.loc)  # type: ignore[union-attr]
            self.effects.assign(self, snapshot, left, e.loc)  # type: ignore[union-attr]
            left = read_only(snapshot)
        return self.combine(e, left, self.value(e.right))

    def combine(self, e: n.Binary, left: Value, right: Value) -> Value:
        """`left op right` on already evaluated operands (also used by compound assignment)."""
        if e.op in ("==", "!=") and isinstance(left.type, t.StructLike | t.Stack | t.Tuple):
            equal = self._aggregate_equal(left, right, e)
            if e.op == "==":
                return equal
            return (
                Const(t.Bool(), not equal.value)
                if isinstance(equal, Const)
                else Computed(t.Bool(), op("not", None, as_bool(equal)))
            )
        if e.op == "++":
            return self._concat(left, right, e)
        if e.op in ("<<", ">>"):
            return self._shift(e.op, left, right, e)
        left, right = self._unify(left, right, e)
        vtype = left.type
        if isinstance(left, Const) and isinstance(right, Const):
            return self._fold_binary(e, left, right)
        if e.op in COMPARE:
            if e.op not in ("==", "!=") and not isinstance(vtype, t.Bits):
                raise CompileError(f"'{e.op}' needs bit<N> or int<N> operands, not {vtype}", e.loc)
            if isinstance(vtype, t.Bool):
                return Computed(t.Bool(), op(e.op, as_data(left), as_data(right)))
            return Computed(t.Bool(), op(e.op, expr_json(left), expr_json(right)))
        if not isinstance(vtype, t.Bits):
            raise CompileError(f"'{e.op}' needs bit<N> or int<N> operands, not {vtype}", e.loc)
        if e.op in BITWISE:
            return Computed(vtype, op(e.op, expr_json(left), expr_json(right)))
        if e.op in ("|+|", "|-|"):
            inner = op("+" if e.op == "|+|" else "-", expr_json(left), expr_json(right))
            name = "sat_cast" if vtype.signed else "usat_cast"
            return Computed(
                vtype,
                op(
                    name,
                    {"type": "expression", "value": inner},
                    {"type": "hexstr", "value": hexstr(vtype.width, None)},
                ),
            )
        if e.op in ("/", "%") and vtype.signed:
            raise CompileError(f"'{e.op}' is not defined on {vtype}; use bit<N> operands", e.loc)
        inner = op(e.op, expr_json(left), expr_json(right))
        return Computed(vtype, wrap_width(inner, vtype) if e.op in ("+", "-", "*") else inner)

    def _aggregate_equal(self, left: Value, right: Value, e: n.Binary) -> Value:
        """== on headers (BMv2 compares validity and fields), unions, stacks and structs (memberwise)."""
        if isinstance(right, ListValue):
            right = self.coerce(right, left.type, e.loc)
        if left.type != right.type:
            raise CompileError(f"cannot compare {left.type} with {right.type}", e.loc)
        if isinstance(left, HeaderInstance | HeaderExpression | UnionInstance) and isinstance(
            right, HeaderInstance | HeaderExpression | UnionInstance
        ):
            return Computed(t.Bool(), op("==", expr_json(left), expr_json(right)))
        pairs: list[tuple[Value, Value]] = []
        if isinstance(left, StackInstance) and isinstance(right, StackInstance):
            pairs = list(zip(left.elements, right.elements, strict=True))
        elif isinstance(left, StructValue) and isinstance(right, StructValue):
            pairs = [(left.members[k], right.members[k]) for k in left.members]
        elif isinstance(left, ListValue) and isinstance(right, ListValue):
            pairs = list(zip(left.items, right.items, strict=True))
        else:
            raise CompileError(f"comparing {left.type} values is not supported", e.loc)
        result: Value = Const(t.Bool(), True)
        for a, b in pairs:
            if isinstance(a.type, t.StructLike | t.Stack | t.Tuple):
                same = self._aggregate_equal(a, b, e)
            else:
                a2, b2 = self._unify(a, b, e)
                same = (
                    self._fold_binary(n.Binary(e.loc, "==", e.left, e.right), a2, b2)
                    if isinstance(a2, Const) and isinstance(b2, Const)
                    else Computed(t.Bool(), op("==", as_data(a2), as_data(b2)))
                )
            if isinstance(result, Const):
                result = same if result.value else result
            elif not (isinstance(same, Const) and same.value):
                result = Computed(t.Bool(), op("and", as_bool(result), as_bool(same)))
        return result

    def _branches(self, *exprs: n.Expr) -> bool:
        """Whether evaluating only one side matters (it calls something) and the context can branch."""
        return hasattr(self.effects, "branch_value") and any(n.has_calls(x) for x in exprs)

    def _logical(self, e: n.Binary) -> Value:
        left = self.boolean(e.left)
        if isinstance(left, Const):
            if bool(left.value) == (e.op == "||"):
                return left
            return self.boolean(e.right)
        if self._branches(e.right):  # short-circuit: the right side runs only when needed

            def right() -> Value:
                return self.boolean(e.right)

            def constant() -> Value:
                return Const(t.Bool(), e.op == "||")

            then_fn, else_fn = (right, constant) if e.op == "&&" else (constant, right)
            return self.effects.branch_value(self, left, then_fn, else_fn, e.loc)  # type: ignore[union-attr]
        right = self.boolean(e.right)
        name = "and" if e.op == "&&" else "or"
        return Computed(t.Bool(), op(name, as_bool(left), as_bool(right)))

    def _unify(self, left: Value, right: Value, e: n.Binary) -> tuple[Value, Value]:
        lt, rt = left.type, right.type
        if isinstance(lt, t.InfInt) and not isinstance(rt, t.InfInt):
            left = self.coerce(left, rt, e.left.loc) if isinstance(left, Const) else left
        elif isinstance(rt, t.InfInt) and not isinstance(lt, t.InfInt):
            right = self.coerce(right, lt, e.right.loc) if isinstance(right, Const) else right
        for side in ("left", "right"):
            value = left if side == "left" else right
            if (
                isinstance(value.type, t.Enum)
                and value.type.base is not None
                and e.op not in ("==", "!=")
            ):
                value = self._retype(value, value.type.base)
                if side == "left":
                    left = value
                else:
                    right = value
        if left.type != right.type:
            if isinstance(left.type, t.Bits) and isinstance(right.type, t.Bits):
                raise CompileError(
                    f"width mismatch: '{e.op}' on {left.type} and {right.type}; cast one operand, "
                    f"e.g. ({left.type}) x",
                    e.loc,
                )
            raise CompileError(f"cannot apply '{e.op}' to {left.type} and {right.type}", e.loc)
        return left, right

    def _fold_binary(self, e: n.Binary, left: Const, right: Const) -> Const:
        a, b = left.value, right.value
        vtype = left.type
        if e.op in COMPARE:
            result = {
                "==": a == b,
                "!=": a != b,
                "<": a < b,
                ">": a > b,
                "<=": a <= b,
                ">=": a >= b,
            }[e.op]
            return Const(t.Bool(), result)
        a, b = int(a), int(b)
        if e.op in ("/", "%") and b == 0:
            raise CompileError("division by zero", e.loc)
        if e.op in ("|+|", "|-|") and isinstance(vtype, t.Bits):
            raw = a + b if e.op == "|+|" else a - b
            lo, hi = (
                (-(1 << (vtype.width - 1)), (1 << (vtype.width - 1)) - 1)
                if vtype.signed
                else (0, mask_of(vtype.width))
            )
            return Const(vtype, min(max(raw, lo), hi))
        raw = {
            "+": lambda: a + b,
            "-": lambda: a - b,
            "*": lambda: a * b,
            "/": lambda: a // b,
            "%": lambda: a % b,
            "&": lambda: a & b,
            "|": lambda: a | b,
            "^": lambda: a ^ b,
            "|+|": lambda: a + b,
            "|-|": lambda: a - b,
        }[e.op]()
        return Const(vtype, fold(raw, vtype))

    def _shift(self, name: str, left: Value, right: Value, e: n.Binary) -> Value:
        if not isinstance(right.type, t.Bits | t.InfInt) or (
            isinstance(right.type, t.Bits) and right.type.signed
        ):
            raise CompileError(
                f"shift amount must be an unsigned integer, not {right.type}", e.right.loc
            )
        if not isinstance(left.type, t.Bits | t.InfInt):
            raise CompileError(f"'{name}' needs an integer left operand, not {left.type}", e.loc)
        if isinstance(left, Const) and isinstance(right, Const):
            raw = (
                int(left.value) << int(right.value)
                if name == "<<"
                else int(left.value) >> int(right.value)
            )
            return Const(left.type, fold(raw, left.type))
        if isinstance(left.type, t.InfInt):
            raise CompileError(
                "the left operand of a shift by a run-time amount needs a width", e.left.loc
            )
        inner = op(
            name,
            expr_json(left),
            expr_json(right)
            if not isinstance(right, Const)
            else {"type": "hexstr", "value": hexstr(int(right.value), 8)},
        )
        return Computed(left.type, wrap_width(inner, left.type) if name == "<<" else inner)

    def _concat(self, left: Value, right: Value, e: n.Binary) -> Value:
        if not isinstance(left.type, t.Bits) or not isinstance(right.type, t.Bits):
            raise CompileError(
                f"'++' needs bit<N> or int<N> operands, not {left.type} and {right.type}", e.loc
            )
        vtype = t.Bits(
            t.check_width(left.type.width + right.type.width, e.loc, "a concatenation"),
            left.type.signed,
        )
        rw = right.type.width
        if isinstance(left, Const) and isinstance(right, Const):
            raw = ((int(left.value) & mask_of(left.type.width)) << rw) | (
                int(right.value) & mask_of(rw)
            )
            return Const(vtype, fold(raw, vtype))
        shifted = op("<<", self._unsigned(left), {"type": "hexstr", "value": hexstr(rw, 8)})
        inner = op("|", {"type": "expression", "value": shifted}, self._unsigned(right))
        return Computed(vtype, wrap_width(inner, vtype) if vtype.signed else inner)

    def _Conditional(self, e: n.Conditional, expected) -> Value:
        cond = self.boolean(e.cond)
        if isinstance(cond, Const):
            return self.value(e.then if cond.value else e.other, expected)
        if self._branches(e.then, e.other):  # only the chosen branch runs
            return self.effects.branch_value(  # type: ignore[union-attr]
                self,
                cond,
                lambda: self.value(e.then, expected),
                lambda: self.value(e.other, expected),
                e.loc,
            )
        then = self.value(e.then, expected)
        other = self.value(e.other, expected)
        if isinstance(then.type, t.InfInt) and not isinstance(other.type, t.InfInt):
            then = self.coerce(then, other.type, e.then.loc)
        if isinstance(other.type, t.InfInt) and not isinstance(then.type, t.InfInt):
            other = self.coerce(other, then.type, e.other.loc)
        if then.type != other.type:
            raise CompileError(
                f"the branches of '?:' have different types: {then.type} and {other.type}", e.loc
            )
        if isinstance(cond, Const):
            return then if cond.value else other
        if isinstance(then.type, t.InfInt):
            raise CompileError("the branches of '?:' need a width; write e.g. 8w1", e.loc)
        return Computed(then.type, op("?", expr_json(then), expr_json(other), cond=as_bool(cond)))

    def _ListExpr(self, e: n.ListExpr, expected) -> Value:
        items = [self.value(i) for i in e.items]
        return ListValue(t.Tuple(tuple(i.type for i in items)), items, writable=False)

    def _KeyValueList(self, e: n.KeyValueList, expected) -> Value:
        items = [self.value(v) for _, v in e.items]
        return ListValue(
            t.Tuple(tuple(i.type for i in items)), items, [k for k, _ in e.items], writable=False
        )

    def _Call(self, e: n.Call, expected) -> Any:
        return compile_call(self, e, as_statement=False)

    def _Lookahead(self, e: n.Lookahead, expected) -> Value:
        return lookahead(self, e)

    def _Known(self, e: n.Known, expected) -> Any:
        return e.value

    def _CtorCall(self, e: n.CtorCall, expected) -> Any:
        return self.services.construct(e, self.scope)
