"""Parse preprocessed P4-16 text into the AST (ina.compiler.nodes) with an LALR parser.

P4 needs to know which identifiers name types to parse `(T) x`, `T<U> v;` and `a < b` without
backtracking, as p4c's lexer does. A pre-scan collects every declared type name, and a post-lexer
turns those identifiers into TYPE_IDENT tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import lark
from lark import Token, Transformer

from ina.compiler import nodes as n
from ina.compiler.errors import CompileError, Location
from ina.compiler.preprocess import Preprocessed

_GRAMMAR = Path(__file__).resolve().parent / "grammar.lark"
_BASE_TYPE_WORDS = {"bit", "int", "varbit", "void", "bool", "error", "string", "match_kind"}
_TYPE_DECL = re.compile(
    r"\b(?:header_union|header|struct|enum|extern|parser|control|package)\s+"
    r"(?:(?:bit|int)\s*<[^>]*>\s*)?([A-Za-z_]\w*)\s*(?=[<{(])"
)
_TYPEDEF = re.compile(r"\b(?:typedef|type)\s[^;{}]*?([A-Za-z_]\w*)\s*;")


def declared_type_names(text: str) -> set[str]:
    """Every identifier the program declares as a type (header, struct, typedef, extern, ...)."""
    names = {m.group(1) for m in _TYPE_DECL.finditer(text)}
    names |= {m.group(1) for m in _TYPEDEF.finditer(text)}
    return names - _BASE_TYPE_WORDS


class _TypeNamePostLexer:
    """Turns identifiers that name declared types into TYPE_IDENT tokens."""

    always_accept = ("IDENT",)

    def __init__(self) -> None:
        self.type_names: set[str] = set()

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        names = self.type_names
        for token in stream:
            if token.type == "IDENT" and token.value in names:
                token.type = "TYPE_IDENT"
            yield token


_post_lexer = _TypeNamePostLexer()
_parser: lark.Lark | None = None


def _lark() -> lark.Lark:
    global _parser
    if _parser is None:
        _parser = lark.Lark(
            _GRAMMAR.read_text(),
            parser="lalr",
            lexer="contextual",
            postlex=_post_lexer,
            propagate_positions=True,
            maybe_placeholders=True,
            cache=True,
        )
    return _parser


def parse_program(source: Preprocessed) -> n.Program:
    """Parse expanded text; syntax errors become CompileErrors at the original location."""
    parser = _lark()
    _post_lexer.type_names = declared_type_names(source.text)
    try:
        tree = parser.parse(source.text)
    except lark.exceptions.UnexpectedInput as error:
        raise _syntax_error(error, source) from None
    return _ToAst(source).transform(tree)


def _syntax_error(error: lark.exceptions.UnexpectedInput, source: Preprocessed) -> CompileError:
    location = source.locate(getattr(error, "line", 0) or 0, getattr(error, "column", 0) or 0)
    if isinstance(error, lark.exceptions.UnexpectedToken):
        token = error.token
        hint = _expected_hint(error.expected)
        if token.type == "$END":
            return CompileError(f"syntax error: unexpected end of file{hint}", location)
        return CompileError(f"syntax error: unexpected '{token.value}'{hint}", location)
    if isinstance(error, lark.exceptions.UnexpectedCharacters):
        char = source.text[error.pos_in_stream] if error.pos_in_stream < len(source.text) else "?"
        return CompileError(f"syntax error: unexpected character {char!r}", location)
    return CompileError("syntax error", location)


_TOKEN_SPELLING = {
    "SEMICOLON": "';'",
    "RPAR": "')'",
    "RBRACE": "'}'",
    "RSQB": "']'",
    "COMMA": "','",
    "COLON": "':'",
    "EQUAL": "'='",
    "LPAR": "'('",
    "LBRACE": "'{'",
    "GT": "'>'",
    "IDENT": "a name",
}


def _expected_hint(expected: set[str]) -> str:
    """`; expected ';'` when the parser wanted one of a few spelled-out tokens."""
    words = sorted(_TOKEN_SPELLING[t] for t in expected if t in _TOKEN_SPELLING)
    if not words or len(words) != len(expected) or len(words) > 3:
        return ""
    return "; expected " + " or ".join(words)


def literal_base(text: str) -> int:
    digits = re.sub(r"^\d+[ws]", "", text) if re.match(r"\d+[ws].", text) else text
    return {"x": 16, "b": 2, "o": 8}.get(digits[1:2].lower(), 10) if digits[:1] == "0" else 10


def parse_int_literal(text: str) -> tuple[int, int | None, bool]:
    """`8w5` -> (5, 8, False); `16s3` -> (3, 16, True); `0x1F` -> (31, None, False)."""
    width: int | None = None
    signed = False
    match = re.match(r"(\d+)([ws])", text)
    if match and len(text) > match.end():
        width, signed = int(match.group(1)), match.group(2) == "s"
        text = text[match.end() :]
    digits = text.replace("_", "")
    base = (
        {"x": 16, "b": 2, "o": 8, "d": 10}.get(digits[1:2].lower(), 10) if digits[:1] == "0" else 10
    )
    if base != 10 or digits[1:2].lower() == "d":
        digits = digits[2:]
    return int(digits, base), width, signed


_PRECEDENCE = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "<": 7,
    ">": 7,
    "<=": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    "++": 9,
    "+": 10,
    "-": 10,
    "|+|": 10,
    "|-|": 10,
    "*": 11,
    "/": 11,
    "%": 11,
}


def _reduce(operands: list, operators: list[str]) -> None:
    right = operands.pop()
    left = operands.pop()
    operands.append(n.Binary(left.loc, operators.pop(), left, right))


class _ToAst(Transformer):
    """Builds nodes bottom-up; every rule method receives (meta, children), meta giving the
    position in the expanded text."""

    def _call_userfunc(self, tree, new_children=None):
        # one direct call per tree node (lark's v_args(meta=True) wraps every call)
        rule = getattr(self, tree.data)
        return rule(tree.meta, tree.children if new_children is None else new_children)

    def __init__(self, source: Preprocessed):
        super().__init__()
        self._source = source

    def _loc(self, meta) -> Location:
        if getattr(meta, "empty", True):  # an empty rule (an empty program): its file
            return self._source.locate(1, 1)
        return self._source.locate(meta.line, meta.column)

    def _tok_loc(self, token: Token) -> Location:
        return self._source.locate(token.line, token.column)

    # ---- helpers shared by many rules
    def start(self, meta, items):
        return n.Program(self._loc(meta), [i for i in items if isinstance(i, n.Node)])

    def annots(self, meta, items):
        result = []
        for token in items:
            match = re.match(r"@([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*$", str(token), re.S)
            result.append(n.Annotation(self._tok_loc(token), match.group(1), match.group(2)))
        return result

    def name(self, meta, items):
        return str(items[0])

    def member_name(self, meta, items):
        return str(items[0])

    def dotted_name(self, meta, items):
        return (len(items) == 2, str(items[-1]))

    def type_params(self, meta, items):
        return list(items)

    def type_args(self, meta, items):
        return list(items)

    def params(self, meta, items):
        return [p for p in items if p is not None]

    def ctor_params(self, meta, items):
        return items[0]

    def args(self, meta, items):
        return [
            a if isinstance(a, n.Arg) else n.Arg(a.loc, None, a) for a in items if a is not None
        ]

    def dontcare_arg(self, meta, items):
        return n.Arg(self._loc(meta), None, None)

    def named_arg(self, meta, items):
        return n.Arg(self._loc(meta), items[0], items[1])

    def expr_list(self, meta, items):
        return list(items)

    # ---- types
    def type_ref(self, meta, items):
        return items[0]

    def type_var(self, meta, items):
        return n.NamedTypeRef(self._loc(meta), str(items[0]), [])

    def named_type(self, meta, items):
        return n.NamedTypeRef(self._loc(meta), str(items[0]), items[1] or [])

    def tuple_type(self, meta, items):
        return n.TupleTypeRef(self._loc(meta), items[0])

    def stack_type(self, meta, items):
        return n.StackTypeRef(self._loc(meta), items[0], items[1])

    def _base(kind):
        def rule(self, meta, items):
            return n.BaseTypeRef(self._loc(meta), kind)

        return rule

    bool_type = _base("bool")
    error_type = _base("error")
    string_type = _base("string")
    void_type = _base("void")
    match_kind_type = _base("match_kind")
    int_type = _base("int")

    def bit1_type(self, meta, items):
        loc = self._loc(meta)
        return n.BitsTypeRef(loc, n.IntLit(loc, 1, None, False), False)

    def bit_type(self, meta, items):
        return n.BitsTypeRef(self._loc(meta), self._width(items[1]), False)

    def sint_type(self, meta, items):
        return n.BitsTypeRef(self._loc(meta), self._width(items[1]), True)

    def varbit_type(self, meta, items):
        return n.BitsTypeRef(self._loc(meta), self._width(items[0]), False, varbit=True)

    def _width(self, item):
        if isinstance(item, Token):
            value, _, _ = parse_int_literal(str(item))
            return n.IntLit(self._tok_loc(item), value, None, False)
        return item

    def width_name(self, meta, items):
        return n.Name(self._loc(meta), str(items[0]))

    def dontcare_type(self, meta, items):
        return n.DontCareTypeRef(self._loc(meta))

    def enum_base(self, meta, items):
        return n.BitsTypeRef(self._loc(meta), self._width(items[1]), str(items[0]) == "int")

    # ---- declarations
    def const_decl(self, meta, items):
        annots, type_, name, value = items
        return n.ConstDecl(self._loc(meta), type_, name, value, annots or [])

    def typedef_decl(self, meta, items):
        annots, kw, type_, name = items
        return n.TypedefDecl(self._loc(meta), name, annots or [], type_, str(kw) == "type")

    def field(self, meta, items):
        annots, type_, name = items
        return n.Field(self._loc(meta), type_, name, annots or [])

    def header_decl(self, meta, items):
        return n.HeaderDecl(self._loc(meta), items[1], items[0] or [], list(items[2:]))

    def struct_decl(self, meta, items):
        return n.StructDecl(self._loc(meta), items[1], items[0] or [], list(items[2:]))

    def union_decl(self, meta, items):
        return n.UnionDecl(self._loc(meta), items[1], items[0] or [], list(items[2:]))

    def enum_member(self, meta, items):
        return (items[0], items[1])

    def enum_decl(self, meta, items):
        annots, base, name, *members = items
        return n.EnumDecl(self._loc(meta), name, annots or [], base, members)

    def error_decl(self, meta, items):
        return n.ErrorDecl(self._loc(meta), "error", [], list(items))

    def match_kind_decl(self, meta, items):
        return n.MatchKindDecl(self._loc(meta), "match_kind", [], list(items))

    def function_proto(self, meta, items):
        ret, name, tparams, params = items
        return n.FunctionProto(self._loc(meta), name, [], ret, tparams or [], params)

    def function_proto_var(self, meta, items):
        ret, name, tparams, params = items
        ret_type = n.NamedTypeRef(self._tok_loc(ret), str(ret), [])
        return n.FunctionProto(self._loc(meta), name, [], ret_type, tparams or [], params)

    def direction(self, meta, items):
        return str(items[0])

    def param(self, meta, items):
        annots, direction, type_, name, default = items
        return n.Param(
            self._loc(meta),
            str(direction) if direction else None,
            type_,
            name,
            default,
            annots or [],
        )

    def extern_method(self, meta, items):
        proto = items[-1]
        proto.annotations = items[0] or []
        return proto

    def extern_ctor(self, meta, items):
        return ("ctor", items[2])

    def extern_decl(self, meta, items):
        annots, name, targs, *members = items
        tparams = [t.name for t in targs or [] if isinstance(t, n.NamedTypeRef)]
        methods = [m for m in members if isinstance(m, n.FunctionProto)]
        ctors = [m[1] for m in members if isinstance(m, tuple)]
        return n.ExternDecl(self._loc(meta), str(name), annots or [], tparams, methods, ctors)

    def extern_func_decl(self, meta, items):
        proto = items[1]
        return n.ExternFunctionDecl(self._loc(meta), proto.name, items[0] or [], proto)

    def _block_type(kind):
        def rule(self, meta, items):
            annots, name, tparams, params = items
            return n.BlockTypeDecl(self._loc(meta), name, annots or [], kind, tparams or [], params)

        return rule

    parser_type_decl = _block_type("parser")
    control_type_decl = _block_type("control")
    package_decl = _block_type("package")

    def function_decl(self, meta, items):
        annots, proto, body = items
        return n.FunctionDecl(self._loc(meta), proto.name, annots or [], proto, body)

    def action_decl(self, meta, items):
        annots, name, params, body = items
        return n.ActionDecl(self._loc(meta), name, annots or [], params, body)

    def instantiation(self, meta, items):
        annots, type_name, targs, args, name = items
        return n.Instantiation(
            self._loc(meta), name, annots or [], str(type_name), targs or [], args
        )

    def value_set_decl(self, meta, items):
        annots, type_, size, name = items
        return n.ValueSetDecl(self._loc(meta), name, annots or [], type_, size)

    def var_decl(self, meta, items):
        annots, type_, name, init = items
        return n.VarDecl(self._loc(meta), type_, name, init, annots or [])

    # ---- parsers
    def parser_decl(self, meta, items):
        annots, name, tparams, params, ctor, *rest = items
        states = [s for s in rest if isinstance(s, n.ParserState)]
        locals_ = [s for s in rest if not isinstance(s, n.ParserState)]
        return n.ParserDecl(
            self._loc(meta), name, annots or [], tparams or [], params, ctor or [], locals_, states
        )

    def parser_state(self, meta, items):
        annots, name, *stmts, transition = items
        loc = self._loc(meta)
        if transition is None:  # a state without a transition rejects
            transition = n.Transition(loc, "reject")
        return n.ParserState(loc, name, annots or [], stmts, transition)

    def parser_block(self, meta, items):
        return n.Block(self._loc(meta), list(items[1:]), items[0] or [])

    def transition_direct(self, meta, items):
        return n.Transition(self._loc(meta), items[0][1])

    def transition_select(self, meta, items):
        return n.Transition(self._loc(meta), None, items[0] or [], list(items[1:]))

    def select_case(self, meta, items):
        return n.SelectCase(self._loc(meta), items[0], items[1][1])

    def keyset_tuple(self, meta, items):
        return n.TupleKey(self._loc(meta), list(items))

    def ks_default(self, meta, items):
        return n.DefaultKey(self._loc(meta))

    def ks_dontcare(self, meta, items):
        return n.DontCareKey(self._loc(meta))

    def ks_mask(self, meta, items):
        return n.MaskKey(self._loc(meta), items[0], items[1])

    def ks_range(self, meta, items):
        return n.RangeKey(self._loc(meta), items[0], items[1])

    # ---- controls and tables
    def control_decl(self, meta, items):
        annots, name, tparams, params, ctor, *locals_, body = items
        return n.ControlDecl(
            self._loc(meta), name, annots or [], tparams or [], params, ctor or [], locals_, body
        )

    def table_decl(self, meta, items):
        annots, name, *props = items
        keys = None
        actions: list[n.ActionRef] = []
        entries = None
        const_entries = False
        others = []
        for kind, value in props:
            if kind == "key":
                keys = value
            elif kind == "actions":
                actions = value
            elif kind == "entries":
                entries, const_entries = value
            else:
                others.append(value)
        return n.TableDecl(
            self._loc(meta), name, annots or [], keys, actions, entries, const_entries, others
        )

    def key_prop(self, meta, items):
        return ("key", list(items))

    def key_elem(self, meta, items):
        return n.KeyElement(self._loc(meta), items[0], items[1], items[2] or [])

    def actions_prop(self, meta, items):
        return ("actions", list(items))

    def action_ref(self, meta, items):
        annots, (top, name), args = items
        return n.ActionRef(self._loc(meta), name, args, annots or [], top)

    def entries_prop(self, meta, items):
        return ("entries", (list(items[1:]), items[0] is not None))

    def entry(self, meta, items):
        annots, priority, keyset, (top, name), args, trailing = items
        action = n.ActionRef(self._loc(meta), name, args or [], [], top)
        return n.Entry(self._loc(meta), keyset, action, priority, (annots or []) + (trailing or []))

    def entry_priority(self, meta, items):
        return items[0]

    def table_prop(self, meta, items):
        annots, const, name, value = items
        return (
            "prop",
            n.TableProperty(self._loc(meta), name, value, const is not None, annots or []),
        )

    # ---- statements
    def block(self, meta, items):
        return n.Block(self._loc(meta), list(items[1:]), items[0] or [])

    def assign_stmt(self, meta, items):
        return n.Assign(self._loc(meta), items[0], items[1])

    def compound_assign(self, meta, items):
        target, operator, value = items
        loc = self._loc(meta)
        return n.Assign(loc, target, value, str(operator)[:-1])

    def call_stmt(self, meta, items):
        func, targs, args = items
        return n.CallStmt(self._loc(meta), n.Call(self._loc(meta), func, targs or [], args))

    def if_stmt(self, meta, items):
        return n.If(self._loc(meta), items[0], items[1], items[2] if len(items) > 2 else None)

    def switch_stmt(self, meta, items):
        return n.Switch(self._loc(meta), items[0], list(items[1:]))

    def switch_case(self, meta, items):
        return n.SwitchCase(self._loc(meta), items[0], items[1])

    def switch_label(self, meta, items):
        return items[0]

    def default_label(self, meta, items):
        return None

    def exit_stmt(self, meta, items):
        return n.Exit(self._loc(meta))

    def break_stmt(self, meta, items):
        return n.Break(self._loc(meta))

    def continue_stmt(self, meta, items):
        return n.Continue(self._loc(meta))

    def for_stmt(self, meta, items):
        _annots, inits, cond, updates, body = items
        return n.For(self._loc(meta), inits or [], cond, updates or [], body)

    def for_in_stmt(self, meta, items):
        _annots, _var_annots, type_, name, _in, collection, body = items
        return n.ForIn(self._loc(meta), type_, name, collection, body)

    def for_inits(self, meta, items):
        return list(items)

    for_updates = for_inits

    def for_decl(self, meta, items):
        type_, name, init = items
        return n.VarDecl(self._loc(meta), type_, name, init)

    def for_assign(self, meta, items):
        return n.Assign(self._loc(meta), items[0], items[1])

    def for_compound(self, meta, items):
        target, operator, value = items
        return n.Assign(self._loc(meta), target, value, str(operator)[:-1])

    def for_call(self, meta, items):
        func, targs, args = items
        return n.CallStmt(self._loc(meta), n.Call(self._loc(meta), func, targs or [], args))

    def range_expr(self, meta, items):
        return n.Range(self._loc(meta), items[0], items[1])

    def return_stmt(self, meta, items):
        return n.Return(self._loc(meta), items[0])

    def empty_stmt(self, meta, items):
        return n.Empty(self._loc(meta))

    # ---- expressions
    def lv_name(self, meta, items):
        top, name = items[0]
        return n.Name(self._loc(meta), name, top)

    name_ref = lv_name

    def member(self, meta, items):
        return n.Member(self._loc(meta), items[0], items[1])

    def index(self, meta, items):
        return n.Index(self._loc(meta), items[0], items[1])

    def slice(self, meta, items):
        return n.Slice(self._loc(meta), items[0], items[1], items[2])

    def call(self, meta, items):
        return n.Call(self._loc(meta), items[0], [], items[1])

    def lookahead(self, meta, items):
        return n.Lookahead(self._loc(meta), items[0], items[2][0])

    def int_lit(self, meta, items):
        value, width, signed = parse_int_literal(str(items[0]))
        return n.IntLit(self._loc(meta), value, width, signed, literal_base(str(items[0])))

    def true_lit(self, meta, items):
        return n.BoolLit(self._loc(meta), True)

    def false_lit(self, meta, items):
        return n.BoolLit(self._loc(meta), False)

    def string_lit(self, meta, items):
        return n.StringLit(self._loc(meta), n.unescape(str(items[0])[1:-1]))

    def type_member(self, meta, items):
        return n.TypeMember(self._loc(meta), str(items[0]), items[1])

    def error_member(self, meta, items):
        return n.TypeMember(self._loc(meta), "error", items[0])

    def ctor_call(self, meta, items):
        return n.CtorCall(self._loc(meta), str(items[0]), items[1] or [], items[2])

    def list_expr(self, meta, items):
        values = items[0] if items and items[0] is not None else []
        return n.ListExpr(self._loc(meta), values)

    def kv_pair(self, meta, items):
        return (items[0], items[1])

    def kv_list_expr(self, meta, items):
        return n.KeyValueList(self._loc(meta), [i for i in items if i is not None])

    def cond(self, meta, items):
        return n.Conditional(self._loc(meta), items[0], items[1], items[2])

    def cast(self, meta, items):
        return n.Cast(self._loc(meta), items[0], items[1])

    def binexpr(self, meta, items):
        """Operands and operators in source order -> a tree by P4's precedence (all left-assoc)."""
        operands = [items[0]]
        operators: list[str] = []
        for operator, operand in zip(items[1::2], items[2::2], strict=True):
            level = _PRECEDENCE[str(operator)]
            while operators and _PRECEDENCE[operators[-1]] >= level:
                _reduce(operands, operators)
            operators.append(str(operator))
            operands.append(operand)
        while operators:
            _reduce(operands, operators)
        return operands[0]

    def lnot(self, meta, items):
        return n.Unary(self._loc(meta), "!", items[0])

    def bnot(self, meta, items):
        return n.Unary(self._loc(meta), "~", items[0])

    def neg(self, meta, items):
        return n.Unary(self._loc(meta), "-", items[0])
