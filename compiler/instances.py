"""Instantiating v1model externs: check constructor arguments and record what BMv2 and P4Info need
(each kind's `construct` in externs.py `EXTERNS`)."""

from __future__ import annotations

from ina.compiler import nodes as n
from ina.compiler.errors import CompileError
from ina.compiler.externs import EXTERNS, unsupported_extern
from ina.compiler.objects import ExternInstance
from ina.compiler.services import Expressions


def make_extern(
    ec: Expressions, decl: n.Instantiation, ext: n.ExternDecl, name: str
) -> ExternInstance:
    """`ec` evaluates the constructor arguments in the scope of the instantiation."""
    kind = ext.name
    if kind not in EXTERNS:
        raise CompileError(unsupported_extern("extern", ext), decl.loc)
    if len(decl.args) not in EXTERNS[kind].ctor_args:
        expected = " or ".join(map(str, EXTERNS[kind].ctor_args))
        raise CompileError(
            f"wrong number of arguments: {kind} takes {expected}, got {len(decl.args)}", decl.loc
        )
    type_args = tuple(ec.model.resolve(a, scope=ec.scope) for a in decl.type_args)
    instance = ExternInstance(kind, name, type_args, [], decl.annotations, decl)
    EXTERNS[kind].construct(ec, decl, instance)
    return instance
