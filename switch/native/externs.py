"""Each extern kind's native state, one `CState` in `STATE` (model/externs.py names the kinds).

The C state itself is state.h and state.c's (its arrays, their alloc and init, its ina_ctl_*
functions); this record is what the rest of the native backend needs of it: the C calls the
generated constructor makes (codegen.py), the control-plane view and its functions' ctypes
signatures (datapath.py). A kind without an entry is refused by name ("the native engine has no
accumulator"), and `Switch(engine="auto")` runs the program on the Python engine.
"""

from collections.abc import Callable
from ctypes import POINTER, c_double, c_int, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any

from ina.switch.model.externs import RegisterArray
from ina.switch.native.views import NativeCounter, NativeMeter, NativeRegister

U64 = POINTER(c_uint64)


@dataclass(frozen=True)
class RegisterPlace:
    """Where a register's cells lie: cell i is cell `i * stride + offset` of the allocation of
    register `bank` (the first of its bank)."""

    bank: int
    offset: int
    stride: int


def register_places(registers: tuple[RegisterArray, ...]) -> tuple[RegisterPlace, ...]:
    """Each register's place, by C index: registers of one size share one allocation,
    interleaved, so the registers a packet reaches with one index (aggregate.p4's slot: its
    accumulators and its state) lie side by side in memory, a run of cache lines the prefetcher
    follows, instead of a line (and often a page) per register."""
    banks: dict[int, list[int]] = {}
    for i, r in enumerate(registers):
        banks.setdefault(r.size, []).append(i)
    places: dict[int, RegisterPlace] = {}
    for members in banks.values():
        for offset, i in enumerate(members):
            places[i] = RegisterPlace(members[0], offset, len(members))
    return tuple(places[i] for i in range(len(registers)))


def _register_init(i: int, r: RegisterArray, places: tuple[RegisterPlace, ...]) -> str:
    p = places[i]
    return f"ina_register_init(sw, {i}, {int(r.size)}u, {p.bank}, {p.offset}u, {p.stride}u);"


@dataclass(frozen=True)
class CState:
    alloc: str  # state.c's function making the kind's arrays for n instances: f(sw, n)
    # the constructor's C call making instance i from its record (and the program's
    # `register_places`, which a register's needs)
    init: Callable[[int, Any, tuple[RegisterPlace, ...]], str]
    view: Callable[[Any, int, Any], object]  # (backend, C index, record) -> its control plane
    functions: dict[str, tuple[Any, list]]  # its ina_ctl_* functions: (restype, argtypes)


STATE: dict[str, CState] = {
    "register": CState(
        "ina_registers_alloc",
        _register_init,
        lambda dp, i, r: NativeRegister(dp, i, r.name, int(r.size), int(r.bitwidth)),
        {
            "ina_ctl_register_read": (None, [c_void_p, c_int, c_uint64, c_uint64, U64]),
            "ina_ctl_register_write": (None, [c_void_p, c_int, c_uint64, c_uint64]),
            "ina_ctl_register_reset": (None, [c_void_p, c_int]),
        },
    ),
    "counter": CState(
        "ina_counters_alloc",
        lambda i, c, _places: f"ina_counter_init(sw, {i}, {c.size}u);",
        lambda dp, i, c: NativeCounter(dp, i, c.name, c.size),
        {
            "ina_ctl_counter_read": (None, [c_void_p, c_int, c_uint64, c_uint64, U64, U64]),
            "ina_ctl_counter_write": (None, [c_void_p, c_int, c_uint64, c_uint64, c_uint64]),
            "ina_ctl_counter_reset": (None, [c_void_p, c_int]),
        },
    ),
    "meter": CState(
        "ina_meters_alloc",
        lambda i, m, _places: (
            f"ina_meter_init(sw, {i}, {0 if m.direct else m.size}u, {int(m.bytes)});"
        ),
        lambda dp, i, m: NativeMeter(dp, i, m, dp.tables.get(m.binding) if m.direct else None),
        {
            "ina_ctl_meter_set": (None, [c_void_p, c_int, c_uint64, c_int] + [c_double] * 4),
            "ina_ctl_entry_meter_set": (None, [c_void_p, c_void_p, c_int] + [c_double] * 4),
        },
    ),
}
