"""The program's global declarations: types (typedefs resolved), errors, match kinds, and the
global scope every block's scope chains to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.errors import CompileError

CORE_ERRORS = ["NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort",
               "ParserTimeout", "ParserInvalidArgument"]  # fmt: skip


class Scope:
    """Names visible at one point: a chain of dictionaries."""

    def __init__(self, parent: Scope | None = None, owner: str = ""):
        self.parent = parent
        self.names: dict[str, Any] = {}
        self.owner = owner  # dotted prefix for objects declared here (e.g. "MyIngress")

    def lookup(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None

    def define(self, name: str, value: Any) -> None:
        self.names[name] = value

    def child(self, owner: str | None = None) -> Scope:
        return Scope(self, self.owner if owner is None else owner)


def _serializable(ftype: t.P4Type) -> bool:
    """Types a header field may have: bits, varbit, bool, serializable enums, structs of those."""
    if isinstance(ftype, t.Struct):
        return all(_serializable(sub) and not isinstance(sub, t.Varbit) for _, sub in ftype.fields)
    return isinstance(ftype, t.Bits | t.Varbit | t.Bool) or (
        isinstance(ftype, t.Enum) and ftype.base is not None
    )


class ProgramModel:
    """Global declarations by name, with type references resolved to semantic types."""

    def __init__(self, program: n.Program):
        self.program = program
        self.type_decls: dict[str, n.Node] = {}
        self.extern_decls: dict[str, n.ExternDecl] = {}
        self.errors: list[str] = []
        self.match_kinds: list[str] = []
        self.globals = Scope()
        self._types: dict[str, t.P4Type] = {}
        self._resolving: set[str] = set()
        self.const_evaluator: Callable[[n.Expr, Scope], int | bool] | None = None
        for decl in program.decls:
            self._declare(decl)

    def _declare(self, decl: n.Node) -> None:
        match decl:
            case n.ErrorDecl(members=members):
                self.errors += [m for m in members if m not in self.errors]
            case n.MatchKindDecl(members=members):
                self.match_kinds += members
            case n.HeaderDecl() | n.StructDecl() | n.UnionDecl() | n.EnumDecl() | n.TypedefDecl():
                self._unique_type(decl)
            case n.ExternDecl():
                self._unique_type(decl)
                self.extern_decls[decl.name] = decl
            case n.BlockTypeDecl():
                self.type_decls[decl.name] = decl
            case n.ParserDecl() | n.ControlDecl():
                self.type_decls[decl.name] = decl
                self.globals.define(decl.name, decl)
            case n.ExternFunctionDecl():
                existing = self.globals.lookup(decl.name)
                overloads = existing if isinstance(existing, list) else []
                self.globals.define(decl.name, [*overloads, decl])
            case n.ConstDecl() | n.ActionDecl() | n.FunctionDecl() | n.Instantiation():
                if decl.name in self.globals.names and not isinstance(decl, n.Instantiation):
                    raise CompileError(f"'{decl.name}' is declared twice", decl.loc)
                self.globals.define(decl.name, decl)

    def _unique_type(self, decl: n.Decl) -> None:
        if decl.name in self.type_decls:
            raise CompileError(f"type '{decl.name}' is declared twice", decl.loc)
        self.type_decls[decl.name] = decl

    def error_value(self, name: str) -> int | None:
        ordered = CORE_ERRORS + [e for e in self.errors if e not in CORE_ERRORS]
        return ordered.index(name) if name in ordered else None

    def all_errors(self) -> list[str]:
        return CORE_ERRORS + [e for e in self.errors if e not in CORE_ERRORS]

    # ---- types
    def named_type(self, name: str, loc) -> t.P4Type:
        if name in self._types:
            return self._types[name]
        decl = self.type_decls.get(name)
        if decl is None:
            raise CompileError(f"unknown type '{name}'", loc)
        if name in self._resolving:
            raise CompileError(f"type '{name}' refers to itself", loc)
        self._resolving.add(name)
        try:
            resolved = self._build_type(decl)
        finally:
            self._resolving.discard(name)
        self._types[name] = resolved
        return resolved

    def _build_type(self, decl: n.Node) -> t.P4Type:
        match decl:
            case n.TypedefDecl(type=ref):
                return self.resolve(ref)
            case n.HeaderDecl(name=name, fields=fields):
                return self._struct_like(t.Header(name, loc=decl.loc), fields)
            case n.StructDecl(name=name, fields=fields):
                return self._struct_like(t.Struct(name), fields)
            case n.UnionDecl(name=name, fields=fields):
                return self._struct_like(t.Union(name), fields)
            case n.EnumDecl(name=name, base=base, members=members):
                return self._enum(name, base, members)
            case n.ExternDecl(name=name):
                return t.ExternType(name)
            case n.BlockTypeDecl(name=name) | n.ParserDecl(name=name) | n.ControlDecl(name=name):
                return t.BlockType(name)
        raise CompileError("not a type", decl.loc)

    def _struct_like(self, result: t.StructLike, fields: list[n.Field]) -> t.StructLike:
        seen = set()
        for f in fields:
            if f.name in seen:
                raise CompileError(f"field '{f.name}' is declared twice in '{result.name}'", f.loc)
            seen.add(f.name)
            ftype = self.resolve(f.type)
            serializable = _serializable(ftype)
            if isinstance(result, t.Header) and not serializable:
                raise CompileError(
                    f"header field '{f.name}' has type {ftype}; header fields must be "
                    "bit<N>, int<N>, varbit<N>, bool, a serializable enum or a struct of those",
                    f.loc,
                )
            result.fields.append((f.name, ftype))
            result.annotations[f.name] = f.annotations
        return result

    def _enum(self, name: str, base_ref: n.TypeRef | None, members) -> t.Enum:
        base = self.resolve(base_ref) if base_ref is not None else None
        if base is not None and not isinstance(base, t.Bits):
            raise CompileError(
                f"enum '{name}' needs a bit<N> or int<N> underlying type", base_ref.loc
            )
        values: dict[str, int] = {}
        for i, (member, expr) in enumerate(members):
            if base is None:
                values[member] = i
            elif expr is None:
                raise CompileError(
                    f"serializable enum member '{member}' needs a value", base_ref.loc
                )
            else:
                values[member] = int(self.const_value(expr, self.globals)) & ((1 << base.width) - 1)
        return t.Enum(name, values, base)

    def const_value(self, expr: n.Expr, scope: Scope) -> int | bool:
        assert self.const_evaluator is not None
        return self.const_evaluator(expr, scope)

    def resolve(
        self,
        ref: n.TypeRef,
        type_env: dict[str, t.P4Type] | None = None,
        scope: Scope | None = None,
    ) -> t.P4Type:
        """A syntactic type as a semantic type; `type_env` binds generic type variables."""
        scope = scope or self.globals
        match ref:
            case n.BaseTypeRef(kind=kind):
                return {
                    "bool": t.Bool(),
                    "error": t.ErrorType(),
                    "string": t.String(),
                    "void": t.Void(),
                    "match_kind": t.MatchKind(),
                    "int": t.InfInt(),
                }[kind]
            case n.BitsTypeRef(width=w, signed=signed, varbit=varbit):
                width = t.check_width(self.const_value(w, scope), w.loc)
                return t.Varbit(width) if varbit else t.Bits(width, signed)
            case n.NamedTypeRef(name=name, args=args):
                if type_env is not None and name in type_env:
                    return type_env[name]
                if name not in self.type_decls:
                    return (
                        t.TypeVar(name) if type_env is not None else self.named_type(name, ref.loc)
                    )
                resolved = self.named_type(name, ref.loc)
                if isinstance(resolved, t.ExternType) and args:
                    return t.ExternType(name, tuple(self.resolve(a, type_env, scope) for a in args))
                return resolved
            case n.StackTypeRef(element=e, size=size):
                count = self.const_value(size, scope)
                if (
                    not isinstance(count, int)
                    or isinstance(count, bool)
                    or not 0 < count <= t.MAX_STACK_SIZE
                ):
                    raise CompileError(
                        f"a header stack has 1..{t.MAX_STACK_SIZE} elements, not {count}", size.loc
                    )
                return t.Stack(self.resolve(e, type_env, scope), count)
            case n.TupleTypeRef(args=args):
                return t.Tuple(tuple(self.resolve(a, type_env, scope) for a in args))
            case n.DontCareTypeRef():
                return t.TypeVar("_")
        raise CompileError("unsupported type", ref.loc)
