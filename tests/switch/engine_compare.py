"""Running the same program on the Python engine (the reference) and the native engine, and
comparing them exactly: every packet out, registers, counters, direct counters, digests and
statistics. Shared by test_native.py and test_packet_fuzz.py."""

import copy
import functools
from pathlib import Path

from ina.compiler import compile_file
from ina.switch.engine import Switch


@functools.cache
def _compile(path: Path, defines: tuple = ()) -> dict:
    return compile_file(str(path), [], dict(defines)).bmv2


def program(path: Path, **defines: str) -> dict:
    """A fresh copy of a program's BMv2 JSON, compiled once per session."""
    return copy.deepcopy(_compile(path, tuple(sorted(defines.items()))))


def engines(bmv2: dict) -> tuple[Switch, Switch]:
    """The same program loaded on the Python engine and on the native engine."""
    py, native = Switch(engine="python"), Switch(engine="native")
    py.load(copy.deepcopy(bmv2))
    native.load(copy.deepcopy(bmv2))
    assert native.engine_name == "native"
    return py, native


def same_state(py: Switch, native: Switch) -> None:
    """Registers, counters, direct counters and drop statistics agree exactly."""
    for name, reg in py.registers.items():
        assert reg.read_range(0, reg.size) == native.registers[name].read_range(0, reg.size), name
    for name, cnt in py.counters.items():
        assert cnt.read_range(0, cnt.size) == native.counters[name].read_range(0, cnt.size), name
    for name, view in py.direct_counters.items():
        for entry in py.tables[name].entries():
            assert view.read(entry.handle) == native.direct_counters[name].read(entry.handle), name
    assert list(py.digests) == list(native.digests)
    assert py.stats == native.stats


def run_both(py: Switch, native: Switch, packets: list[tuple[int, bytes]]) -> list:
    """Every packet through both engines, on the same virtual clock (100 us apart); returns the
    Python engine's outputs."""
    outs = []
    for i, (port, data) in enumerate(packets):
        py.set_clock(100 * i)
        native.set_clock(100 * i)
        expected = py.process(port, data)
        assert native.process(port, data) == expected, f"input {data.hex()} on port {port}"
        outs.append(expected)
    same_state(py, native)
    return outs
