"""ina's import graph read from its sources (ast, nothing imported): the structure tests' one reader.

Every import counts, wherever it stands (module level, `if TYPE_CHECKING`, inside a function): a
typing-only or late import still ties two modules together. Importing a submodule also runs its
packages' __init__ first; that is Python's, not an edge of the design, so it is left out.
"""

from __future__ import annotations

import ast
import functools
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = ("ina.p4rt.generated",)  # protoc's output, never edited


def package_dirs() -> dict[str, Path]:
    """Package name -> its folder, as pyproject.toml installs them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = config["package-dir"]
    return {name: ROOT / dirs[name] for name in config["packages"] if name not in SKIPPED}


def sources(prefix: str = "ina") -> dict[str, str]:
    """Module name -> source of every module of the packages under `prefix` (a package itself is
    its __init__.py's name)."""
    found = {}
    for package, folder in package_dirs().items():
        if package != prefix and not package.startswith(prefix + "."):
            continue
        for path in sorted(folder.glob("*.py")):
            name = package if path.name == "__init__.py" else f"{package}.{path.stem}"
            found[name] = path.read_text()
    return found


def _packages(modules: set[str], sources_: dict[str, str]) -> set[str]:
    return {m for m in modules if any(other.startswith(m + ".") for other in sources_)}


def imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: set[str]):
    """The ina modules one import statement names: `from ina.switch.model import program` names
    the submodule, `from ina.switch.model import load_program` the package."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in modules}
    base = node.module or ""
    if node.level:
        parts = module.split(".")
        keep = len(parts) - node.level + (1 if is_package else 0)
        base = ".".join(parts[:keep] + ([base] if base else []))
    named = {f"{base}.{a.name}" for a in node.names} & modules
    others = len(named) < len(node.names)  # names defined in `base` itself
    return named | ({base} if others and base in modules else set())


@functools.cache
def parsed(text: str) -> ast.Module:
    """A source's tree, parsed once per test session (the trees are only read)."""
    return ast.parse(text)


def function_level(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports inside a function or method body (at any depth)."""
    found = []
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            found += [
                node for node in ast.walk(func) if isinstance(node, ast.Import | ast.ImportFrom)
            ]
    return found


def import_graph(sources_: dict[str, str]) -> tuple[dict[str, set[str]], list[str]]:
    """Module -> the modules among `sources_` it imports anywhere, and the function-level imports
    of them as 'module:line'."""
    modules = set(sources_)
    packages = _packages(modules, sources_)
    graph: dict[str, set[str]] = {}
    hidden: list[str] = []
    for name, text in sources_.items():
        tree = parsed(text)
        is_package = name in packages

        def targets(node: ast.Import | ast.ImportFrom, name: str = name, pkg: bool = is_package):
            return imported(node, name, pkg, modules) - {name}

        graph[name] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[name] |= targets(node)
        hidden += [f"{name}:{node.lineno}" for node in function_level(tree) if targets(node)]
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


def unit_of(module: str, layers: tuple[tuple[str, ...], ...]) -> tuple[int, str] | None:
    """(layer, unit) of a module: the longest unit (a package or module name) that contains it."""
    best = None
    for rank, units in enumerate(layers):
        for unit in units:
            if (module == unit or module.startswith(unit + ".")) and (
                best is None or len(unit) > len(best[1])
            ):
                best = (rank, unit)
    return best


def upward(
    graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...], peers: bool
) -> list[str]:
    """Each import that runs up a layer ('a -> b'), or across to another unit of the same layer
    unless `peers` allows that; modules outside every unit are not judged here."""
    found = []
    for module, targets in sorted(graph.items()):
        here = unit_of(module, layers)
        for target in sorted(targets):
            there = unit_of(target, layers)
            if here is None or there is None or here[1] == there[1]:
                continue
            if there[0] > here[0] or (there[0] == here[0] and not peers):
                found.append(f"{module} -> {target}")
    return found
