"""Seeded differential fuzz of pushed programs (issue 28): BMv2 JSON built to stress references
and indices, on both engines. A program one engine refuses, the other refuses with the same
message; programs both accept send the same packets, drop the same ones and keep the same
registers, counters and statistics, packet by packet.

A program here is tests/switch/p4/program_fuzz.p4's JSON plus one generated action and the
conditional it leads to. The action reads its parameters at and past their count, reads and writes
registers, counts and meters at literal and computed indices around their arrays' bounds and below
0, adds, removes, pushes, pops and writes stack elements at indices in and past the stack, moves
narrow, wide and signed fields, and jumps over its own primitives. Each program is loaded alone on
both engines; that needs no C compiler when it is refused, and compiling thousands of accepted
ones would take hours, so the accepted ones are then run together: BANK of them are the actions of
one compiled program whose table `I.pick` sends a packet to program k by `p.sel = k` (and then to
its conditional), run for ROUNDS rounds of fresh register contents, action data and packets.
`--fuzz-scale N` runs N times PROGRAMS programs (10: the issue's 10,000).
"""

import copy
import functools
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from engine_compare import program, run_both

from ina.switch.engine import Switch
from ina.switch.model.errors import PipelineError, Unsupported
from ina.switch.model.load import load_program
from ina.switch.native.codegen import generate
from ina.switch.python.pipeline import build_pipeline

SKELETON = Path(__file__).parent / "p4" / "program_fuzz.p4"
PROGRAMS = 1000  # generated programs in a default run
BANK = 100  # accepted programs compiled together
ROUNDS = 2  # register contents and action data per program
PACKETS = 3  # packets per program and round
ENGINES = ("python", "native")
NATIVE_SUBSET = "may not fit 126 bits"  # what only the native engine refuses (Unsupported) here

# (header, field, width, signed): what the generated code reads and writes
FIELDS = [
    ("p", "sel", 16, False),
    ("p", "flags", 8, False),
    ("p", "b1", 1, False),
    ("p", "b7", 7, False),
    ("p", "b13", 13, False),
    ("p", "b3", 3, False),
    ("p", "a", 32, False),
    ("p", "b", 32, False),
    ("p", "m48", 48, False),
    ("p", "w64", 64, False),
    ("p", "w96", 96, False),
    ("p", "s16", 16, True),
    ("p", "s8", 8, True),
    ("p", "out", 8, False),
    ("scalars", "meta.m32", 32, False),
    ("scalars", "meta.m8", 8, False),
    ("scalars", "meta.color", 8, False),
]
PROBE = [f for f in FIELDS if f[0] == "p"]  # the packet's header, in order
TAG_FIELDS = [("v", 8), ("more", 8)]
STACK_SIZE = 3
REGISTERS = {"I.r8": (1, 8), "I.r32": (4, 32), "I.r64": (7, 64), "I.r1": (16, 1)}  # size, bitwidth
COUNTERS = {"I.c3": 3, "I.c8": 8}
METERS = {"I.m2": 2, "I.m5": 5}
PARAM_WIDTHS = [1, 3, 8, 9, 16, 32, 48, 64, 96]
WRAPPING = ["+", "-", "*", "&", "|", "^"]
COMPARE = ["==", "!=", "<", ">", "<=", ">="]


def hexstr(value: int) -> dict:
    return {"type": "hexstr", "value": f"{'-' * (value < 0)}{abs(value):#x}"}


def ref(header: str, name: str) -> dict:
    return {"type": "field", "value": [header, name]}


def expression(op: str, left: dict | None, right: dict, **more: dict) -> dict:
    return {"type": "expression", "value": {"op": op, "left": left, "right": right, **more}}


def element(index: dict) -> dict:
    """Element `index` of the stack `tags`."""
    return expression("dereference_header_stack", {"type": "header_stack", "value": "tags"}, index)


@dataclass
class Variant:
    """One generated program: its action and the conditional after it."""

    params: list[int]  # parameter widths
    primitives: list[dict] = field(default_factory=list)
    condition: dict | None = None

    def show(self) -> str:
        return json.dumps(
            {"params": self.params, "primitives": self.primitives, "condition": self.condition}
        )


class Generator:
    """Random actions and conditions over FIELDS, biased to the edges of what they index."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.params: list[int] | None = []  # the action's parameter widths; None in a conditional

    def variant(self) -> Variant:
        rng = self.rng
        self.params = [rng.choice(PARAM_WIDTHS) for _ in range(rng.choice([0, 1, 1, 2, 2, 3]))]
        v = Variant(list(self.params))
        for _ in range(rng.randint(1, 5)):
            v.primitives.append(self.primitive())
        for _ in range(rng.choice([0, 0, 1, 2])):  # forward jumps over what follows them
            at = rng.randrange(len(v.primitives) + 1)
            for prim in v.primitives[at:]:  # what jumps past the new one lands one further
                if prim["op"] == "_jump_if_zero":
                    prim["parameters"][1] = hexstr(int(prim["parameters"][1]["value"], 16) + 1)
            target = rng.randint(at + 1, len(v.primitives) + 1)
            v.primitives.insert(
                at, {"op": "_jump_if_zero", "parameters": [self.condition(), hexstr(target)]}
            )
        self.params = None  # a conditional has no action data: reading it is refused
        v.condition = (
            self.condition() if rng.random() > 0.03 else {"type": "runtime_data", "value": 0}
        )
        return v

    # --- values ----------------------------------------------------------------------------
    def constant(self) -> dict:
        rng = self.rng
        return hexstr(
            rng.choice(
                [
                    0,
                    1,
                    2,
                    3,
                    4,
                    7,
                    8,
                    15,
                    16,
                    255,
                    256,
                    2**31,
                    2**32 - 1,
                    2**32,
                    2**63,
                    2**64 - 1,
                    -1,
                    -2,
                    -16,
                    rng.getrandbits(16),
                    rng.getrandbits(rng.randint(1, 96)),
                ]
            )
        )

    def param(self) -> dict:
        """Action data, now and then one past the parameters or far past them (refused)."""
        n = len(self.params or [])
        if not self.params or self.rng.random() < 0.03:
            index = self.rng.choice([n, n + 1, 65536])
        else:
            index = self.rng.randrange(n)
        return {"type": "runtime_data", "value": index}

    def leaf(self) -> dict:
        rng = self.rng
        kind = rng.random()
        if kind < 0.5:
            header, name, _w, _s = rng.choice(FIELDS)
            return ref(header, name)
        if kind < 0.75:
            return self.constant()
        if kind < 0.9 and self.params:
            return self.param()
        if kind < 0.96:
            name, _w = rng.choice(TAG_FIELDS)
            return expression("access_field", element(self.stack_index()), 0 if name == "v" else 1)
        return {"type": "stack_field", "value": ["tags", rng.choice(TAG_FIELDS)[0]]}

    def value(self, depth: int = 2) -> dict:
        rng = self.rng
        if depth == 0 or rng.random() < 0.4:
            return self.leaf()
        kind = rng.random()
        if kind < 0.4:
            return expression(rng.choice(WRAPPING), self.value(depth - 1), self.value(depth - 1))
        if kind < 0.5:
            return expression(
                rng.choice(["<<", ">>"]),
                self.value(depth - 1),
                hexstr(rng.choice([0, 1, 7, 8, 31, 63, 64, 70])),
            )
        if kind < 0.6:
            return expression(
                "?", self.value(depth - 1), self.value(depth - 1), cond=self.condition(depth - 1)
            )
        if kind < 0.7:
            op = rng.choice(["two_comp_mod", "sat_cast", "usat_cast"])
            return expression(op, self.leaf(), hexstr(rng.choice([0, 1, 3, 8, 16, 32, 64])))
        if kind < 0.75:  # by 0 now and then: dropped
            return expression(rng.choice(["/", "%"]), self.leaf(), self.leaf())
        if kind < 0.9:
            return expression(rng.choice(["~", "-"]), None, self.value(depth - 1))
        return expression("b2d", None, self.condition(depth - 1))

    def condition(self, depth: int = 2) -> dict:
        rng = self.rng
        kind = rng.random()
        if depth == 0 or kind < 0.5:
            return expression(rng.choice(COMPARE), self.value(1), self.value(1))
        if kind < 0.7:
            return expression(
                rng.choice(["and", "or"]), self.condition(depth - 1), self.condition(depth - 1)
            )
        if kind < 0.8:
            return expression("not", None, self.condition(depth - 1))
        if kind < 0.9:
            return expression("valid", None, element(self.stack_index()))
        return expression("d2b", None, ref("p", "b1"))

    # --- indices ----------------------------------------------------------------------------
    def index(self, size: int) -> dict:
        """A cell of an array of `size`: literal (at, past and below its bounds) or computed."""
        rng = self.rng
        kind = rng.random()
        if kind < 0.15:  # half of these are refused
            return hexstr(
                rng.choice(
                    [
                        0,
                        size - 1,
                        size // 2,
                        size - 1,
                        0,
                        size - 1,
                        size,
                        size + 1,
                        2**32 - 1,
                        -1,
                        -rng.randint(1, 16),
                        2**64,
                    ]
                )
            )
        small = ref("p", rng.choice(["b1", "b3", "b7", "flags"]))
        if kind < 0.5:
            return small
        if kind < 0.65:
            return expression("-", small, hexstr(rng.randint(0, size + 2)))  # below 0 now and then
        if kind < 0.75:
            return expression("%", self.leaf(), hexstr(rng.choice([size, size + 1])))
        if kind < 0.85 and self.params:
            return self.param()
        return self.value(1)

    def stack_index(self) -> dict:
        rng = self.rng
        if rng.random() < 0.5:  # in the stack, at its end, past it (refused), below it (refused)
            return hexstr(rng.choice([0, 1, 2, 0, 1, 2, 2, 2, 3, -1]))
        return rng.choice(
            [
                ref("p", "b3"),
                ref("p", "b1"),
                expression("%", ref("p", "b7"), hexstr(3)),
                expression("-", ref("p", "b3"), hexstr(2)),
            ]
        )

    # --- primitives ------------------------------------------------------------------------
    def target(self) -> dict:
        rng = self.rng
        if rng.random() < 0.1:
            return expression("access_field", element(self.stack_index()), rng.randrange(2))
        header, name, _w, _s = rng.choice(FIELDS)
        return ref(header, name)

    def primitive(self) -> dict:
        rng = self.rng
        kind = rng.random()
        if kind < 0.3:
            return {"op": "assign", "parameters": [self.target(), self.value()]}
        if kind < 0.42:
            name, (size, _w) = rng.choice(list(REGISTERS.items()))
            return {
                "op": "register_read",
                "parameters": [
                    self.target(),
                    {"type": "register_array", "value": name},
                    self.index(size),
                ],
            }
        if kind < 0.54:
            name, (size, _w) = rng.choice(list(REGISTERS.items()))
            return {
                "op": "register_write",
                "parameters": [
                    {"type": "register_array", "value": name},
                    self.index(size),
                    self.value(),
                ],
            }
        if kind < 0.62:
            name, size = rng.choice(list(COUNTERS.items()))
            return {
                "op": "count",
                "parameters": [{"type": "counter_array", "value": name}, self.index(size)],
            }
        if kind < 0.68:
            name, size = rng.choice(list(METERS.items()))
            return {
                "op": "execute_meter",
                "parameters": [
                    {"type": "meter_array", "value": name},
                    self.index(size),
                    self.target(),
                ],
            }
        if kind < 0.76:
            return {
                "op": rng.choice(["add_header", "remove_header"]),
                "parameters": [element(self.stack_index())],
            }
        if kind < 0.82:
            return {
                "op": rng.choice(["push", "pop"]),
                "parameters": [
                    {"type": "header_stack", "value": "tags"},
                    hexstr(rng.choice([-1, 0, 1, 2, 4])),
                ],
            }
        if kind < 0.85:
            return {
                "op": "mark_to_drop",
                "parameters": [{"type": "header", "value": "standard_metadata"}],
            }
        return {
            "op": "assign",
            "parameters": [self.target(), self.param()],
        }  # past the count if none

    # --- what the control plane and the packets give --------------------------------------
    def number(self, width: int) -> int:
        rng = self.rng
        return rng.choice([0, 1, 2, 3, 4, 7, 8, 16, (1 << width) - 1, rng.getrandbits(width)]) & (
            (1 << width) - 1
        )

    def packet(self, sel: int) -> bytes:
        bits, value = 0, 0
        for _h, name, width, _s in PROBE:
            v = sel if name == "sel" else self.number(width)
            value, bits = value << width | v, bits + width
        data = value.to_bytes(bits // 8, "big")
        if data[2] & 1:  # flags: tags follow, `more` chains them (a fourth is one too many)
            for _ in range(self.rng.randint(1, 4)):
                data += bytes([self.number(8), self.rng.choice([0, 1, 1])])
        return data + self.rng.randbytes(self.rng.randint(0, 4))


@functools.cache
def skeleton() -> str:
    return json.dumps(program(SKELETON))


def assemble(variants: list[Variant]) -> dict:
    """The skeleton with `variants` as actions a0, a1..., table I.pick choosing one by p.sel, and
    each action's conditional marking p.out before the packet leaves."""
    doc = json.loads(skeleton())
    pipe = doc["pipelines"][0]
    pick = next(t for t in pipe["tables"] if t["name"] == "I.pick")
    noaction = next(a for a in doc["actions"] if a["name"] == "NoAction")
    doc["actions"] = [a for a in doc["actions"] if a["name"] != "I.keep"]
    out = ref("p", "out")
    for name, bit in (("mark_true", 0x80), ("mark_false", 0x40)):
        aid = 1000 + bit
        doc["actions"].append(
            {
                "name": name,
                "id": aid,
                "runtime_data": [],
                "primitives": [
                    {"op": "assign", "parameters": [out, expression("|", out, hexstr(bit))]}
                ],
            }
        )
        pipe["tables"].append(
            {
                "name": f"t_{name}",
                "id": aid,
                "key": [],
                "action_ids": [aid],
                "actions": [name],
                "next_tables": {name: None},
                "default_entry": {
                    "action_id": aid,
                    "action_const": True,
                    "action_data": [],
                    "action_entry_const": True,
                },
            }
        )
    pick["action_ids"], pick["actions"], pick["next_tables"] = (
        [noaction["id"]],
        ["NoAction"],
        {"NoAction": None},
    )
    for k, v in enumerate(variants):
        name, aid = f"a{k}", 2000 + k
        doc["actions"].append(
            {
                "name": name,
                "id": aid,
                "primitives": copy.deepcopy(v.primitives),
                "runtime_data": [{"name": f"p{i}", "bitwidth": w} for i, w in enumerate(v.params)],
            }
        )
        pick["action_ids"].append(aid)
        pick["actions"].append(name)
        pick["next_tables"][name] = f"c{k}"
        pipe["conditionals"].append(
            {
                "name": f"c{k}",
                "id": k,
                "expression": copy.deepcopy(v.condition),
                "true_next": "t_mark_true",
                "false_next": "t_mark_false",
            }
        )
    return doc


def refused_alike(doc: dict) -> str | None:
    """The refusal both engines give a program alone (None: both accept it). Refusals come before
    any C is compiled; an accepted program is built in Python and generated in C, not compiled."""
    try:
        layout, model = load_program(copy.deepcopy(doc))
        build_pipeline(layout, model)
    except PipelineError as err:
        for engine in ENGINES:
            with pytest.raises(PipelineError) as refusal:
                Switch(engine=engine).load(copy.deepcopy(doc))
            assert str(refusal.value) == str(err), engine
        return str(err)
    generate(model, layout)  # Unsupported: outside the native subset, which the generator keeps to
    return None


@dataclass
class Tally:
    programs: int = 0
    refused: int = 0
    banks: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # refusals by their reason's first word
    stats: dict[str, int] = field(default_factory=dict)  # the packets' fates (Switch.stats)


def run_bank(variants: list[Variant], rng: random.Random, gen: Generator, tally: Tally) -> None:
    """The accepted variants compiled together, each run for ROUNDS rounds on both engines."""
    doc = assemble(variants)
    py, native = Switch(engine="python"), Switch(engine="native")
    py.load(copy.deepcopy(doc))
    native.load(doc)
    assert native.engine_name == "native"
    tally.banks += 1
    for sw in (py, native):
        sw.meters["I.m2"].set(0, 0, 2, 0, 4)  # no refill: colours by count alone
        sw.meters["I.m5"].set(4, 0, 100, 0, 300)
    handles = [
        [sw.tables["I.pick"].add([k], f"a{k}", [0] * len(v.params)) for k, v in enumerate(variants)]
        for sw in (py, native)
    ]
    assert handles[0] == handles[1]
    for _round in range(ROUNDS):
        cells = {
            name: [gen.number(width) for _ in range(size)]
            for name, (size, width) in REGISTERS.items()
        }
        for k, v in enumerate(variants):
            args = [gen.number(w) for w in v.params]
            for sw in (py, native):
                sw.tables["I.pick"].modify(handles[0][k], f"a{k}", args)
                for name, values in cells.items():
                    for i, value in enumerate(values):
                        sw.registers[name].write(i, value)
            packets = [(rng.randrange(4), gen.packet(k)) for _ in range(PACKETS)]
            try:
                run_both(py, native, packets)
            except AssertionError as err:
                raise AssertionError(f"program {v.show()} with action data {args}: {err}") from None
    for name, count in py.stats.items():
        tally.stats[name] = tally.stats.get(name, 0) + count


@pytest.mark.fuzz
def test_generated_programs_are_refused_alike_or_run_alike(fuzz_cases) -> None:
    rng = random.Random(20260828)
    gen = Generator(rng)
    tally = Tally()
    bank: list[Variant] = []
    outside = 0
    target = fuzz_cases(PROGRAMS)
    while tally.programs < target:
        variant = gen.variant()
        try:
            reason = refused_alike(assemble([variant]))
        except (
            Unsupported
        ) as err:  # the native engine's subset, exact arithmetic: not a program here
            assert str(err).endswith(NATIVE_SUBSET), (
                f"the native engine alone refused {variant.show()}: {err}"
            )
            outside += 1
            continue
        tally.programs += 1
        if reason is not None:
            tally.refused += 1
            kind = re.sub(
                r"'[^']*'|-?0x[0-9a-f]+|-?\b\d+\b", "_", reason.split(": ", 1)[-1]
            )  # names, numbers
            tally.reasons[kind] = tally.reasons.get(kind, 0) + 1
            continue
        bank.append(variant)
        if len(bank) == BANK:
            run_bank(bank, rng, gen, tally)
            bank = []
    if bank:
        run_bank(bank, rng, gen, tally)
    print(
        f"\n{tally.programs} programs: {tally.refused} refused alike ({dict(sorted(tally.reasons.items()))}), "
        f"{tally.programs - tally.refused} run alike in {tally.banks} compiled programs "
        f"({dict(sorted(tally.stats.items()))}); {outside} outside the native subset skipped"
    )
    assert 0 < tally.refused < tally.programs  # both paths are exercised
    assert outside < tally.programs // 4  # the generator keeps to what both engines run
