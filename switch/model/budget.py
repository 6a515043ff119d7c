"""The budget of generated code: how much Python and C a program may make the switch generate.

The schema (bmv2_schema.py) bounds the JSON's values, depth and state, not the code the generators
make of it, and that code is what costs: generating, compile() and exec, or gcc. Some of it grows
faster than the JSON: the Python generator inlines up to INLINE_BUDGET successors into each
pipeline node's function, and the deparser repeats itself for every element of a stack it names.
So before either backend generates anything, `check` counts from the program model what the
generators will emit (pipeline nodes and parser states, functions, bytes of Python and of C, the
bytes as an upper estimate) and refuses a program over a limit with PipelineError naming both.
The backends also check the length of the source they generated (`check_source`) before compiling
it, so an estimate that falls short cannot reach compile() or gcc with more than the limit.

The limits leave room for real programs (docs/security.md says how much): p4src/aggregate.p4
with ELEMS=64 counts 124 nodes and 233 functions and is estimated at 2.3 MB of Python and 0.5 MB of
C (it generates 0.24 MB of Python); ELEMS=256 with LANE_BITS=8, the widest build, at 4.0 MB and
3.7 MB. A program at the limits builds in about 2 s of Python and 20 s of gcc on a 2-core machine.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ina.switch.model.errors import PipelineError
from ina.switch.model.layout import Layout
from ina.switch.model.program import Control, Program

INLINE_BUDGET = 48  # nodes one generated pipeline function may run before returning the next
MAX_NODES = (
    4096  # pipeline nodes (tables, conditionals) and parser states: C labels, Python functions
)
MAX_FUNCTIONS = 8192  # functions of the larger of the two generated sources
MAX_PYTHON_BYTES = 16 << 20  # generating and compiling take ~0.1 s and ~5 MB per MB of source
MAX_C_BYTES = 4 << 20  # gcc -O2 takes ~5 s and ~60 MB per MB (its own limits: native/build.py)

# Bytes of generated code per unit: above what the repository's programs need (tests/switch/
# test_budget.py checks each program's estimate against its generated code).
PY_VALUE, C_VALUE = 4, 8  # per JSON value an expression or primitive turns into code, plus a share
#                           of a mask (a quarter in Python, a half in C, of the widest one's digits)
PY_FUNCTION, C_FUNCTION = 160, 320  # per function: its header and the boilerplate around its body
PY_NODE, C_NODE = 160, 480  # per pipeline node body: a table lookup and action call, or an `if`
PY_SLOT, C_SLOT = 16, 64  # per slot of the packet layout: extract, emit and template code per field


@dataclass(frozen=True)
class CodeSize:
    """What a program makes the generators emit: counts, and the bytes as an upper estimate."""

    nodes: int
    functions: int
    python_bytes: int
    c_bytes: int


LIMITS = CodeSize(MAX_NODES, MAX_FUNCTIONS, MAX_PYTHON_BYTES, MAX_C_BYTES)
WHAT = {
    "nodes": "pipeline nodes and parser states",
    "functions": "generated functions",
    "python_bytes": "bytes of Python",
    "c_bytes": "bytes of C",
}


def check(layout: Layout, model: Program) -> CodeSize:
    """The program's code size; PipelineError naming the first count over its limit."""
    limits, nodes = LIMITS, _nodes(model)
    if nodes > limits.nodes:  # before the walks below, which are linear in the nodes
        _refuse("nodes", nodes, limits.nodes)
    size = estimate(layout, model)
    for name in ("functions", "python_bytes", "c_bytes"):
        if getattr(size, name) > getattr(limits, name):
            _refuse(name, getattr(size, name), getattr(limits, name))
    return size


def check_source(source: str, language: str) -> None:
    """The generated source itself within the limit of its language ("python" or "c")."""
    name = f"{language}_bytes"
    if len(source) > getattr(LIMITS, name):
        _refuse(name, len(source), getattr(LIMITS, name))


def _refuse(name: str, count: int, limit: int) -> None:
    raise PipelineError(
        f"the program is too large for the switch: it makes {count:,} {WHAT[name]}, "
        f"over the limit of {limit:,}"
    )


def estimate(layout: Layout, model: Program) -> CodeSize:
    """Counts of what the generators emit for `model`, the bytes estimated from above."""
    digits = _digits(_widest(layout, model))  # of a mask a value may carry
    actions = sum(_values(a.primitives) for a in model.actions.values())
    states = [s for p in model.parsers for s in p.states]
    parser = sum(
        _values(s.ops) + _values(k.expr for k in s.keys) + len(s.transitions) for s in states
    )
    calcs = sum(len(c.inputs) for c in model.calculations.values())
    checks = sum(_values([ck.condition]) + 2 for ck in model.checksums)
    deparsed = sum(_deparsed(layout, name) for d in model.deparsers for name in d.order)
    once = actions + parser + calcs + checks + deparsed  # values either generator emits once
    bodies = [_bodies(c) for c in model.controls]
    inlined = [_inlined(b) for b in bodies]
    node_count, copies = sum(map(len, bodies)), sum(n for n, _v in inlined)
    functions_py = (
        len(model.actions)
        + len(states)
        + node_count
        + len(model.controls)
        + 2 * len({h.type_name for h in layout.headers.values()})
        + len(model.calculations)
        + 8
    )
    functions_c = len(model.actions) + 2 * len(model.calculations) + 16
    python = (
        (PY_VALUE + digits // 4) * (once + sum(v for _n, v in inlined))
        + PY_NODE * copies
        + PY_FUNCTION * functions_py
        + PY_SLOT * layout.size
    )
    c = (
        (C_VALUE + digits // 2) * (once + sum(map(sum, bodies)))
        + C_NODE * node_count
        + C_FUNCTION * functions_c
        + C_SLOT * layout.size
    )
    return CodeSize(_nodes(model), max(functions_py, functions_c), python, c)


def _nodes(model: Program) -> int:
    return sum(len(c.tables) + len(c.conditionals) for c in model.controls) + sum(
        len(p.states) for p in model.parsers
    )


def _bodies(control: Control) -> list[int]:
    """JSON values each node's code is made of: a conditional's expression, a table's keys and
    actions (a lookup's code is mostly fixed: PY_NODE and C_NODE)."""
    tables = [2 * len(t.keys) + len(t.action_ids) + len(t.next_tables) for t in control.tables]
    return tables + [_values([c.expression]) for c in control.conditionals]


def _inlined(bodies: list[int]) -> tuple[int, int]:
    """(node bodies, their JSON values) the Python generator may emit for a control of these node
    bodies: each node's function inlines up to INLINE_BUDGET nodes, so at most that many of the
    largest bodies."""
    largest = sorted(bodies, reverse=True)[:INLINE_BUDGET]
    return len(bodies) * len(largest), len(bodies) * sum(largest)


def _deparsed(layout: Layout, name: str) -> int:
    """Headers the deparser emits for one name of its order: a stack's elements, a union's members."""
    if name in layout.stacks:
        return len(layout.stacks[name].elements)
    return len(layout.unions.get(name, (name,)))


def _widest(layout: Layout, model: Program) -> int:
    widths = [w for h in layout.headers.values() for _n, w, _s in h.fields]
    widths += [h.varbit_max for h in layout.headers.values()]
    widths += [p.width for a in model.actions.values() for p in a.params]
    widths += [r.bitwidth for r in model.registers]
    return max(widths, default=64)


def _digits(bits: int) -> int:
    """Decimal digits of a `bits`-bit mask: what a generator may print beside a value."""
    return math.ceil(bits * math.log10(2)) + 1


def _values(items: Iterable[object]) -> int:
    """JSON values (objects, lists, scalars) in `items`, walked with a stack, strings counted by
    their length in 8-character units (hex literals become decimal ones of about that length)."""
    stack, count = list(items), 0
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, str):
            count += len(item) // 8
    return count
