"""Every refusal is located: no CompileError is built without a location, and each error the loop,
tuple, varbit and extern support added points at its construct (file:line:col, never <unknown>)."""

import ast
from pathlib import Path

import pytest

from ina.compiler import CompileError

COMPILER = Path(__file__).resolve().parents[2] / "compiler"


def _error_sites() -> list[tuple[str, int, ast.Call]]:
    """Every `CompileError(...)` call in the compiler's sources."""
    sites = []
    for path in sorted(COMPILER.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "CompileError":
                sites.append((path.name, node.lineno, node))
    return sites


def _location_arg(call: ast.Call) -> ast.expr | None:
    if len(call.args) >= 2:
        return call.args[1]
    return next((k.value for k in call.keywords if k.arg == "location"), None)


def test_the_walk_finds_the_raise_sites():
    assert len(_error_sites()) > 200


def test_no_error_is_built_without_a_location():
    unlocated = [f"{name}:{line}: {ast.unparse(call)[:80]}" for name, line, call in _error_sites()
                 if _location_arg(call) is None or isinstance(_location_arg(call), ast.Constant)]
    assert unlocated == []


def test_a_location_is_required_by_the_error_type():
    with pytest.raises(TypeError):
        CompileError("no location")  # type: ignore[call-arg]
