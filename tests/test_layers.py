"""ina's imports run one way: no import circle anywhere in the package, switch/ in layers whose
imports only run down, and the top-level packages in an order whose imports run down too
(DEVELOPERS.md, Layout). Every import counts (typing-only and function-level ones too); tests/structure.py reads them."""

from __future__ import annotations

import pytest
from structure import find_cycle, import_graph, sources, unit_of, upward

# switch/, lowest layer first: a module imports its own unit and the layers below, never a peer
# (python/ and native/ know nothing of each other) nor anything above.
SWITCH_LAYERS = (
    ("ina.switch.model", "ina.switch.io"),  # the program model and limits; packet I/O
    ("ina.switch.state",),  # control-plane state in Python, the Backend interface
    ("ina.switch.python", "ina.switch.native"),  # the two backends
    ("ina.switch.engine",),  # `Switch`, the facade
    ("ina.switch.p4runtime", "ina.switch.stf"),  # the engine's users
    ("ina.switch.cli",),  # `ina switch`
)
# The top-level packages, lowest first; units of one layer may import each other (module-level
# acyclic all the same). A module is a unit of its own where its job sits in another layer than
# its package's: bench's result files and figures (sim writes them too) and the straggler models
# at the bottom; the simulator's event core, network model and frame bytes under hosts/ (the
# in-process harness runs on them; train/ counts frames' bytes); the CLIs on top.
PACKAGE_LAYERS = (
    ("ina.args", "ina.compiled", "ina.files", "ina.p4rt", "ina.p4src"),
    ("ina.bench.results", "ina.bench.plots", "ina.hosts.compute"),
    ("ina.compiler",),
    ("ina.switch",),
    ("ina.controller",),
    ("ina.topologies",),
    ("ina.sim.events", "ina.sim.frames", "ina.sim.links", "ina.sim.network", "ina.sim.nodes"),
    ("ina.hosts",),
    # `ina run`'s runner checks a hierarchical job's sums with hosts/' verify and members
    ("ina.topologies.runner", "ina.topologies.job_sums"),
    ("ina.train",),
    ("ina.sim",),
    ("ina.bench",),
    # `ina ctl` reads topologies too; `ina run` starts workers; `ina sim` writes bench's results
    (
        "ina.cli",
        "ina.__main__",
        "ina.controller.cli",
        "ina.topologies.cli",
        "ina.sim.cli",
        "ina.sim.workload_cli",
    ),
)


def problems(graph: dict[str, set[str]], hidden: list[str]) -> list[str]:
    """What the layering rules refuse in a graph: a cycle, an upward or sideways import in switch/,
    a switch module hidden in a function, an upward import between packages."""
    found = []
    if cycle := find_cycle(graph):
        found.append(f"import cycle: {' -> '.join(cycle)}")
    found += [f"switch/ imports up or sideways: {e}" for e in upward(graph, SWITCH_LAYERS, False)]
    found += [
        f"an import of a switch module inside a function: {h}"
        for h in hidden
        if h.startswith("ina.switch")
    ]
    found += [f"a package imports up: {e}" for e in upward(graph, PACKAGE_LAYERS, True)]
    return found


def switch_hidden(sources_: dict[str, str]) -> list[str]:
    """Function-level imports of switch modules by switch modules."""
    switch = {name: text for name, text in sources_.items() if name.startswith("ina.switch")}
    return import_graph(switch)[1]


def test_the_package_has_no_cycle_and_its_imports_run_down():
    src = sources()
    graph, _ = import_graph(src)
    assert len([m for m in graph if m.startswith("ina.switch.")]) > 30, "sources not found"
    assert problems(graph, switch_hidden(src)) == []


def test_every_module_has_its_layer():
    graph, _ = import_graph(sources())
    assert [m for m in graph if m != "ina.switch" and m.startswith("ina.switch")] == [
        m for m in graph if m.startswith("ina.switch.") and unit_of(m, SWITCH_LAYERS)
    ]
    assert [m for m in graph if unit_of(m, PACKAGE_LAYERS) is None] == ["ina"]


@pytest.mark.parametrize(
    "module, added, refusal",
    [
        # the circles this layout removed: the primitives typed against the generators' classes,
        # the views against the backend that makes them
        (
            "ina.switch.model.primitives",
            "if TYPE_CHECKING:\n    from ina.switch.native.codegen import CGenerator\n",
            "import cycle",
        ),
        (
            "ina.switch.native.views",
            "if TYPE_CHECKING:\n    from ina.switch.native.datapath import NativeBackend\n",
            "import cycle",
        ),
        # an import that runs back up: the model taking Unsupported from a backend
        (
            "ina.switch.model.program",
            "from ina.switch.native.expressions import CExpressions\n",
            "up",
        ),
        # a peer: one backend borrowing the other's helper
        (
            "ina.switch.native.codegen",
            "from ina.switch.python.codegen import node_function\n",
            "up",
        ),
        # late, to dodge a circle
        (
            "ina.switch.state.tables",
            "def _late():\n    from ina.switch.model import budget\n",
            "inside",
        ),
        # a new upward import between packages
        ("ina.compiler.p4info", "from ina.switch.engine import Switch\n", "package"),
        # a module with a layer of its own imports by that layer: the network model under hosts/,
        # bench's result files under sim/
        ("ina.sim.nodes", "from ina.hosts.core import AllReduceCore\n", "package"),
        ("ina.bench.results", "from ina.sim.allreduce import frame_bytes\n", "package"),
    ],
)
def test_a_reintroduced_back_import_is_caught(module, added, refusal):
    src = sources()
    src[module] += f"\n\n{added}"
    graph, _ = import_graph(src)
    found = problems(graph, switch_hidden(src))
    assert any(refusal in text for text in found), found
