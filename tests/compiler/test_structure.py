"""The compiler's modules import one another as a pipeline of passes: acyclic, every import at the
top of its module (typing-only ones included), so no pass can lean on another through an import
hidden in a function. A pass that needs a service later in the pipeline gets it handed in
(compiler/services.py), as compiler/README.md describes."""

from __future__ import annotations

import pytest
from structure import find_cycle, import_graph, sources

PACKAGE = "ina.compiler"


def compiler_sources() -> dict[str, str]:
    return sources(PACKAGE)


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
