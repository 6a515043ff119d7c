"""The compiler's modules import one another as a pipeline of passes: acyclic, every import at the
top of its module (typing-only ones included), so no pass can lean on another through an import
hidden in a function. A pass that needs a service later in the pipeline gets it handed in
(compiler/services.py), as compiler/README.md describes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ina.compiler

PACKAGE = "ina.compiler"
SOURCES = Path(ina.compiler.__file__).parent


def module_name(path: Path) -> str:
    return PACKAGE if path.name == "__init__.py" else f"{PACKAGE}.{path.stem}"


def imported(node: ast.Import | ast.ImportFrom, modules: set[str]) -> set[str]:
    """The compiler modules one import statement names: `from ina.compiler import nodes` names the
    submodule, `from ina.compiler import compile_file` the package. Importing a submodule also runs
    the package's __init__ first; that is Python's, not an edge of the design, so it is left out."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in modules}
    module = node.module or ""
    if node.level:  # every compiler module sits directly in the package
        module = f"{PACKAGE}.{module}" if module else PACKAGE
    if module == PACKAGE:
        return {
            f"{PACKAGE}.{a.name}" if f"{PACKAGE}.{a.name}" in modules else PACKAGE
            for a in node.names
        }
    return {module} if module in modules else set()


def function_level(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports inside a function or method body (at any depth)."""
    found = []
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            found += [
                node for node in ast.walk(func) if isinstance(node, ast.Import | ast.ImportFrom)
            ]
    return found


def import_graph(sources: dict[str, str]) -> tuple[dict[str, set[str]], list[str]]:
    """Module -> compiler modules it imports anywhere (module level, `if TYPE_CHECKING`, functions),
    and the function-level imports of compiler modules as 'module:line'."""
    modules = set(sources)
    graph: dict[str, set[str]] = {}
    hidden: list[str] = []
    for name, text in sources.items():
        tree = ast.parse(text)
        graph[name] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[name] |= imported(node, modules) - {name}
        hidden += [
            f"{name}:{node.lineno}" for node in function_level(tree) if imported(node, modules)
        ]
    return graph, hidden


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that ends where it starts, or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def compiler_sources() -> dict[str, str]:
    return {module_name(path): path.read_text() for path in sorted(SOURCES.glob("*.py"))}


def test_the_compilers_imports_form_no_cycle():
    graph, _ = import_graph(compiler_sources())
    assert len(graph) > 20, "the compiler's sources were not found"
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph) or [])}"


def test_no_compiler_module_is_imported_inside_a_function():
    _, hidden = import_graph(compiler_sources())
    assert hidden == [], (
        f"imports of compiler modules inside functions (move them to the top, or hand "
        f"the service in through compiler/services.py): {hidden}"
    )


def test_the_passes_reach_the_driver_only_through_services():
    """No pass imports the driver (v1switch.py) or the services' implementation (lowering.py)."""
    graph, _ = import_graph(compiler_sources())
    users = {
        m
        for m, targets in graph.items()
        if targets & {f"{PACKAGE}.lowering", f"{PACKAGE}.v1switch"}
    }
    assert users == {f"{PACKAGE}.v1switch", PACKAGE}


@pytest.mark.parametrize(
    "hidden_import, module",
    [
        # the cycle this layout removed: calls dispatched to tables through an import inside a function
        ("    from ina.compiler.tables import TableLowering\n", "calls"),
        # a typing-only import counts too: the driver's type in a pass closes a loop
        ("if TYPE_CHECKING:\n    from ina.compiler.lowering import Lowering\n", "members"),
        ("    from .expressions import ExpressionCompiler\n", "externs"),
    ],
)
def test_a_reintroduced_cycle_is_caught(hidden_import, module):
    sources = compiler_sources()
    name = f"{PACKAGE}.{module}"
    if hidden_import.startswith("    "):
        sources[name] += f"\n\ndef _late():\n{hidden_import}"
    else:
        sources[name] += f"\n\n{hidden_import}"
    graph, hidden = import_graph(sources)
    cycle = find_cycle(graph)
    assert cycle is not None and name in cycle
    assert bool(hidden) == hidden_import.startswith("    ")
