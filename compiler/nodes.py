"""The abstract syntax tree of a P4-16 program: plain dataclasses, each carrying its source location."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ina.compiler.errors import Location


@dataclass
class Node:
    loc: Location


@dataclass
class Annotation(Node):
    name: str
    body: str | None  # raw text between the parentheses, None without parentheses

    def string(self) -> str | None:
        """The body as one string literal's value (`@name("x")` -> x), else None."""
        text = (self.body or "").strip()
        if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
            return unescape(text[1:-1])
        return None


def unescape(text: str) -> str:
    """C-style escapes of a P4 string literal (non-ASCII characters pass through)."""
    escapes = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "0": "\0"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), text)


def find_annotation(annotations: list[Annotation], name: str) -> Annotation | None:
    return next((a for a in annotations if a.name == name), None)


# ---- syntactic types


@dataclass
class TypeRef(Node):
    pass


@dataclass
class BaseTypeRef(TypeRef):
    kind: str  # bool, error, string, void, match_kind, int


@dataclass
class BitsTypeRef(TypeRef):
    width: Expr
    signed: bool
    varbit: bool = False


@dataclass
class NamedTypeRef(TypeRef):
    name: str
    args: list[TypeRef]


@dataclass
class StackTypeRef(TypeRef):
    element: TypeRef
    size: Expr


@dataclass
class TupleTypeRef(TypeRef):
    args: list[TypeRef]


@dataclass
class DontCareTypeRef(TypeRef):
    pass


# ---- expressions


@dataclass
class Expr(Node):
    pass


@dataclass
class IntLit(Expr):
    value: int
    width: int | None
    signed: bool
    base: int = 10  # as written, for printing key names like p4c


@dataclass
class BoolLit(Expr):
    value: bool


@dataclass
class StringLit(Expr):
    value: str


@dataclass
class Name(Expr):
    name: str
    top_level: bool = False


@dataclass
class Member(Expr):
    expr: Expr
    name: str


@dataclass
class TypeMember(Expr):
    type_name: str
    name: str


@dataclass
class Index(Expr):
    expr: Expr
    index: Expr


@dataclass
class Slice(Expr):
    expr: Expr
    hi: Expr
    lo: Expr


@dataclass
class Arg(Node):
    name: str | None
    value: Expr | None  # None for `_`


@dataclass
class Call(Expr):
    func: Expr
    type_args: list[TypeRef]
    args: list[Arg]


@dataclass
class CtorCall(Expr):
    type_name: str
    type_args: list[TypeRef]
    args: list[Arg]


@dataclass
class Lookahead(Expr):
    expr: Expr
    type: TypeRef


@dataclass
class Unary(Expr):
    op: str
    expr: Expr


@dataclass
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass
class Conditional(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass
class Cast(Expr):
    type: TypeRef
    expr: Expr


@dataclass
class ListExpr(Expr):
    items: list[Expr]


@dataclass
class KeyValueList(Expr):
    items: list[tuple[str, Expr]]


@dataclass
class DefaultKey(Expr):
    pass


@dataclass
class DontCareKey(Expr):
    pass


@dataclass
class MaskKey(Expr):
    value: Expr
    mask: Expr


@dataclass
class RangeKey(Expr):
    lo: Expr
    hi: Expr


@dataclass
class TupleKey(Expr):
    items: list[Expr]


@dataclass
class Range(Expr):
    """`lo .. hi` as the collection of a for-in loop (both ends included)."""

    lo: Expr
    hi: Expr


@dataclass
class Known(Expr):
    """A value the loop unroller computed at compile time (a loop variable's value in one iteration)."""

    value: Any


# ---- statements


@dataclass
class Stmt(Node):
    pass


@dataclass
class Assign(Stmt):
    target: Expr
    value: Expr
    operator: str | None = None  # compound assignment (`+=` -> "+"): the target is evaluated once


@dataclass
class CallStmt(Stmt):
    call: Call


@dataclass
class VarDecl(Stmt):
    type: TypeRef
    name: str
    init: Expr | None
    annotations: list[Annotation] = field(default_factory=list)


@dataclass
class ConstDecl(Stmt):
    type: TypeRef
    name: str
    value: Expr
    annotations: list[Annotation] = field(default_factory=list)


@dataclass
class Block(Stmt):
    stmts: list[Stmt]
    annotations: list[Annotation] = field(default_factory=list)


@dataclass
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None


@dataclass
class SwitchCase(Node):
    label: Expr | None  # None = default; an action name or a constant
    body: Block | None  # None = fall through to the next case


@dataclass
class Switch(Stmt):
    expr: Expr
    cases: list[SwitchCase]


@dataclass
class Exit(Stmt):
    pass


@dataclass
class Return(Stmt):
    value: Expr | None


@dataclass
class Empty(Stmt):
    pass


@dataclass
class Break(Stmt):
    pass


@dataclass
class Continue(Stmt):
    pass


@dataclass
class For(Stmt):
    """`for (init; cond; update) body`."""

    init: list[Stmt]
    cond: Expr
    update: list[Stmt]
    body: Stmt


@dataclass
class ForIn(Stmt):
    """`for (T name in collection) body`: a Range, a list expression or a header stack."""

    type: TypeRef
    name: str
    collection: Expr
    body: Stmt


@dataclass
class Bind(Stmt):
    """Written by the loop unroller: `name` denotes a compile-time value from here to the block's end."""

    name: str
    value: Any


# ---- declarations


@dataclass
class Decl(Node):
    name: str
    annotations: list[Annotation]


@dataclass
class TypedefDecl(Decl):
    type: TypeRef
    new_type: bool


@dataclass
class Field(Node):
    type: TypeRef
    name: str
    annotations: list[Annotation]


@dataclass
class HeaderDecl(Decl):
    fields: list[Field]


@dataclass
class StructDecl(Decl):
    fields: list[Field]


@dataclass
class UnionDecl(Decl):
    fields: list[Field]


@dataclass
class EnumDecl(Decl):
    base: TypeRef | None
    members: list[tuple[str, Expr | None]]


@dataclass
class ErrorDecl(Decl):
    members: list[str]


@dataclass
class MatchKindDecl(Decl):
    members: list[str]


@dataclass
class Param(Node):
    direction: str | None
    type: TypeRef
    name: str
    default: Expr | None
    annotations: list[Annotation]


@dataclass
class FunctionProto(Decl):
    return_type: TypeRef
    type_params: list[str]
    params: list[Param]


@dataclass
class ExternDecl(Decl):
    type_params: list[str]
    methods: list[FunctionProto]
    constructors: list[list[Param]]


@dataclass
class ExternFunctionDecl(Decl):
    proto: FunctionProto


@dataclass
class BlockTypeDecl(Decl):
    """A parser, control or package type declaration (no body)."""

    kind: str
    type_params: list[str]
    params: list[Param]


@dataclass
class FunctionDecl(Decl):
    proto: FunctionProto
    body: Block


@dataclass
class ActionDecl(Decl):
    params: list[Param]
    body: Block


@dataclass
class Instantiation(Decl):
    type_name: str
    type_args: list[TypeRef]
    args: list[Arg]


@dataclass
class ValueSetDecl(Decl):
    type: TypeRef
    size: Expr


@dataclass
class SelectCase(Node):
    keyset: Expr
    state: str


@dataclass
class Transition(Node):
    state: str | None  # direct transition
    keys: list[Expr] = field(default_factory=list)
    cases: list[SelectCase] = field(default_factory=list)


@dataclass
class ParserState(Decl):
    stmts: list[Stmt]
    transition: Transition


@dataclass
class ParserDecl(Decl):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Node]
    states: list[ParserState]


@dataclass
class KeyElement(Node):
    expr: Expr
    match_kind: str
    annotations: list[Annotation]


@dataclass
class ActionRef(Node):
    name: str
    args: list[Arg] | None
    annotations: list[Annotation]
    top_level: bool = False


@dataclass
class Entry(Node):
    keyset: Expr
    action: ActionRef
    priority: Expr | None
    annotations: list[Annotation]


@dataclass
class TableProperty(Node):
    name: str
    value: Expr
    const: bool
    annotations: list[Annotation]


@dataclass
class TableDecl(Decl):
    keys: list[KeyElement] | None
    actions: list[ActionRef]
    entries: list[Entry] | None
    const_entries: bool
    properties: list[TableProperty]


@dataclass
class ControlDecl(Decl):
    type_params: list[str]
    params: list[Param]
    ctor_params: list[Param]
    locals: list[Node]
    body: Block


@dataclass
class Program(Node):
    decls: list[Node]


# ---- queries on the tree


def expr_text(expr: Expr) -> str:
    """Source-like text of a key expression; p4c uses it to name match fields."""
    match expr:
        case Name(name=name):
            return name
        case Member(expr=e, name=name):
            return f"{expr_text(e)}.{name}"
        case Index(expr=e, index=i):
            return f"{expr_text(e)}[{expr_text(i)}]"
        case Slice(expr=e, hi=hi, lo=lo):
            return f"{expr_text(e)}[{expr_text(hi)}:{expr_text(lo)}]"
        case Call(func=f, args=args):
            return f"{expr_text(f)}({', '.join(expr_text(a.value) for a in args if a.value)})"
        case IntLit(value=v, width=w, signed=signed, base=base):
            digits = {16: f"0x{v:x}", 2: f"0b{v:b}", 8: f"0o{v:o}"}.get(base, str(v))
            return f"{w}{'s' if signed else 'w'}{digits}" if w is not None else digits
        case Binary(op=o, left=left, right=right):
            return f"{expr_text(left)} {o} {expr_text(right)}"
        case TypeMember(type_name=tn, name=name):
            return f"{tn}.{name}"
    return "expr"


def has_calls(expr: Any) -> bool:
    """Whether an expression calls anything but the pure header methods."""
    if isinstance(expr, Call):
        pure = isinstance(expr.func, Member) and expr.func.name in (
            "isValid",
            "minSizeInBits",
            "minSizeInBytes",
        )
        if not pure:
            return True
    if isinstance(expr, list):
        return any(has_calls(item) for item in expr)
    if isinstance(expr, Expr | Arg):
        return any(has_calls(getattr(expr, f)) for f in expr.__dataclass_fields__ if f != "loc")
    return False


def qualified(owner: str, decl: Decl) -> str:
    """p4c's fully qualified name: @name(".x") is global, @name("x") replaces the local name."""
    annotation = find_annotation(decl.annotations, "name")
    local = annotation.string() if annotation and annotation.string() else decl.name
    if local.startswith("."):
        return local[1:]
    return f"{owner}.{local}" if owner else local
