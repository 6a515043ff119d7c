"""The native backend's control-plane state: its C state behind the Python backend's APIs.

Registers, counters, direct counters and meter buckets live only in C, behind objects with
externs.py's methods. Tables, value sets, multicast groups and clone sessions are the Python
classes' subclasses: they check and keep what the control plane reads back (entries, members,
replicas) and write each change into C, through the hooks the base classes call.
"""

from __future__ import annotations

import ctypes
from ctypes import c_uint8, c_uint64
from typing import Protocol

from ina.switch.model.externs import MeterArray
from ina.switch.state.externs import Meter, ValueSet
from ina.switch.state.replication import CloneSessions, Multicast
from ina.switch.state.tables import ActionRef, Entry, KeyField, Table


class CSwitch(Protocol):
    """What a view holds of the backend that made it (datapath.py `NativeBackend`): its library and
    its C switch. A view keeps the backend itself, so the C state outlives every view of it."""

    lib: ctypes.CDLL
    sw: ctypes.c_void_p


def u64s(values) -> ctypes.Array:
    """A uint64_t array for C (at least one element, so an empty list is a valid pointer)."""
    return (c_uint64 * max(len(values), 1))(*values)


class NativeRegister:
    """A register array in C memory, with externs.Register's methods."""

    def __init__(self, dp: CSwitch, index: int, name: str, size: int, bitwidth: int):
        self.dp, self.index = dp, index
        self.name, self.size, self.bitwidth = name, size, bitwidth

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise IndexError(
                f"register '{self.name}' has {self.size} cells; index {index} is out of range"
            )

    def read(self, index: int) -> int:
        return self.read_range(index, 1)[0]

    def read_range(self, start: int, count: int) -> list[int]:
        """`count` cells from `start`, in one call (wildcard reads)."""
        if count:  # an empty range reads nothing, of any array (one of 0 cells too)
            self._check(start)
            self._check(start + count - 1)
        buf = (c_uint64 * count)()
        self.dp.lib.ina_ctl_register_read(self.dp.sw, self.index, start, count, buf)
        return buf[:]

    def write(self, index: int, value: int) -> None:
        self._check(index)
        if not 0 <= value < (1 << self.bitwidth):
            raise ValueError(
                f"value {value} does not fit register '{self.name}' ({self.bitwidth} bits)"
            )
        self.dp.lib.ina_ctl_register_write(self.dp.sw, self.index, index, value)

    def reset(self) -> None:
        self.dp.lib.ina_ctl_register_reset(self.dp.sw, self.index)


class NativeCounter:
    """An indirect counter array in C memory, with externs.Counter's methods."""

    def __init__(self, dp: CSwitch, index: int, name: str, size: int):
        self.dp, self.index, self.name, self.size = dp, index, name, size

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise IndexError(
                f"counter '{self.name}' has {self.size} cells; index {index} is out of range"
            )

    def read(self, index: int) -> tuple[int, int]:
        return self.read_range(index, 1)[0]

    def read_range(self, start: int, count: int) -> list[tuple[int, int]]:
        """`count` cells' (packets, bytes) from `start`, in one C call (a whole array's state)."""
        if count:  # an empty range reads nothing, of any array (one of 0 cells too)
            self._check(start)
            self._check(start + count - 1)
        packets, bytes_ = (c_uint64 * count)(), (c_uint64 * count)()
        self.dp.lib.ina_ctl_counter_read(self.dp.sw, self.index, start, count, packets, bytes_)
        return list(zip(packets[:], bytes_[:], strict=True))  # slices: 4x faster than iterating

    def write(self, index: int, packets: int, bytes_: int) -> None:
        self._check(index)
        self.dp.lib.ina_ctl_counter_write(self.dp.sw, self.index, index, packets, bytes_)

    def reset(self) -> None:
        self.dp.lib.ina_ctl_counter_reset(self.dp.sw, self.index)


class NativeMeter(Meter):
    """A meter array whose cells run in C; the configuration is kept here too, for get().

    Indices are ints (indirect meters) or ("entry", handle) (direct meters, as Meter.execute_entry
    keys them); C holds an indirect cell per index and a direct cell on the table entry.
    """

    def __init__(self, dp: CSwitch, index: int, spec: MeterArray, table: NativeTable | None):
        super().__init__(spec.name, spec.size, "bytes" if spec.bytes else "packets")
        self.dp, self.index, self.table = dp, index, table
        if table is not None:
            table.meters.append(self)

    def set(self, index: object, cir: float, cburst: int, pir: float, pburst: int) -> None:
        super().set(index, cir, cburst, pir, pburst)  # checks the index and the rates
        self._mirror(index, 1, cir, cburst, pir, pburst)

    def reset(self, index: object) -> None:
        super().reset(index)
        self._mirror(index, 0, 0, 0, 0, 0)

    def _mirror(self, index: object, on: int, *config: float) -> None:
        lib, sw = self.dp.lib, self.dp.sw
        if self.table is None:
            if isinstance(index, int) and 0 <= index < self.size:
                lib.ina_ctl_meter_set(sw, self.index, index, on, *map(float, config))
        elif isinstance(index, tuple) and index[0] == "entry" and index[1] in self.table.pointers:
            lib.ina_ctl_entry_meter_set(sw, self.table.pointers[index[1]], on, *map(float, config))

    def execute(self, index: object, length: int) -> int:
        raise NotImplementedError("the native engine runs its meters in C")


class NativeValueSet(ValueSet):
    """A parser value set whose members C matches: the whole set is written after every change."""

    def __init__(self, dp: CSwitch, index: int):
        super().__init__()
        self.dp, self.index = dp, index

    def _changed(self) -> None:
        values = [v & ((1 << 128) - 1) for v in self]
        lo = u64s([v & ((1 << 64) - 1) for v in values])
        hi = u64s([v >> 64 for v in values])
        self.dp.lib.ina_ctl_vset_set(self.dp.sw, self.index, len(values), lo, hi)


class NativeMulticast(Multicast):
    """Multicast groups whose replicas C reads; each change is written into C."""

    def __init__(self, dp: CSwitch):
        super().__init__()
        self.dp = dp

    def _changed(self, mgid: int, replicas: list[tuple[int, int]]) -> None:
        ports = (ctypes.c_int * max(len(replicas), 1))(*(p for p, _r in replicas))
        rids = (ctypes.c_int * max(len(replicas), 1))(*(r for _p, r in replicas))
        self.dp.lib.ina_ctl_group_set(self.dp.sw, mgid, len(replicas), ports, rids)


class NativeCloneSessions(CloneSessions):
    """Clone sessions whose replicas C reads; each change is written into C."""

    def __init__(self, dp: CSwitch):
        super().__init__()
        self.dp = dp

    def _changed(self, session: int, config: tuple[list[tuple[int, int]], int] | None) -> None:
        replicas, truncate = config if config is not None else ([], 0)
        ports = (ctypes.c_int * max(len(replicas), 1))(*(p for p, _r in replicas))
        rids = (ctypes.c_int * max(len(replicas), 1))(*(r for _p, r in replicas))
        self.dp.lib.ina_ctl_session_set(
            self.dp.sw, session, -1 if config is None else len(replicas), ports, rids, truncate
        )


def words(values, widths: list[int] | None) -> list[int]:
    """Values as C words: one wider than 64 bits (up to 128) as two, high first."""
    if widths is None:
        return list(values)
    out = []
    for v, w in zip(values, widths, strict=True):
        out += [v >> 64, v & ((1 << 64) - 1)] if w > 64 else [v]
    return out


class NativeTable(Table):
    """A table whose lookups run in C: Table checks and keeps the entries the control plane reads
    back, and each change goes into the C table; direct counters are read from C."""

    def __init__(
        self,
        dp: CSwitch,
        index: int,
        key_widths: list[int] | None,
        param_widths: dict[int, list[int]],
        name: str,
        keys: list[KeyField],
        actions: dict[str, ActionRef],
        max_size: int,
    ):
        super().__init__(name, keys, actions, max_size)
        self.dp, self.index = dp, index
        self.key_widths = key_widths  # None: no key wider than 64 bits
        self.param_widths = param_widths  # action id -> widths, for actions with wide ones
        self.pointers: dict[int, int] = {}  # entry handle -> C entry
        self.meters: list[NativeMeter] = []  # direct meters of this table

    def _added(self, entry: Entry) -> None:
        if self.exact_only:
            key, mask, ranges, position = [m[1] for m in entry.match], [], [], -1
        else:
            key = [m[1] for m in entry.match]
            mask = [m[2] for m in entry.match]
            ranges = [int(m[0] == "r") for m in entry.match]
            position = self.ordered.index(entry)
        if self.key_widths is not None:  # no range key is wide (the generator refuses them)
            key, mask = words(key, self.key_widths), words(mask, self.key_widths if mask else None)
            ranges = words(ranges, self.key_widths) if ranges else []
        flags = (c_uint8 * max(len(ranges), 1))(*ranges)
        args = self._words(entry)
        self.pointers[entry.handle] = self.dp.lib.ina_ctl_table_add(
            self.dp.sw,
            self.index,
            u64s(key),
            u64s(mask),
            flags,
            position,
            entry.action.id,
            len(args),
            u64s(args),
        )
        for meter in self.meters:  # a cell configured before its entry existed, as Python keeps it
            config = meter.get(("entry", entry.handle))
            if config is not None:
                meter.set(("entry", entry.handle), *config)

    def _words(self, entry: Entry) -> list[int]:
        return words(entry.args, self.param_widths.get(entry.action.id))

    def _modified(self, entry: Entry) -> None:
        args = self._words(entry)
        self.dp.lib.ina_ctl_table_modify(
            self.dp.sw, self.pointers[entry.handle], entry.action.id, len(args), u64s(args)
        )

    def _deleted(self, entry: Entry) -> None:
        self.dp.lib.ina_ctl_table_delete(self.dp.sw, self.index, self.pointers.pop(entry.handle))

    def _default_set(self, entry: Entry) -> None:
        args = self._words(entry)
        self.dp.lib.ina_ctl_table_set_default(
            self.dp.sw, self.index, entry.action.id, len(args), u64s(args)
        )

    def counters(self, handle: int) -> tuple[int, int]:
        out = (c_uint64 * 2)()
        self.dp.lib.ina_ctl_entry_counters(self.dp.sw, self._pointer(handle), out)
        return out[0], out[1]

    def set_counters(self, handle: int, packets: int, bytes_: int) -> None:
        self.dp.lib.ina_ctl_entry_set_counters(self.dp.sw, self._pointer(handle), packets, bytes_)

    def _pointer(self, handle: int) -> int:
        self.entry(handle)  # TableError for a handle the table does not have
        return self.pointers[handle]
