"""A loaded native pipeline: the C switch state plus Python views with the engine's API.

The Python Table objects stay the control plane's source of truth (validation, handles, errors);
a TableMirror copies every change into the C table; multicast groups, clone sessions and parser
value sets are mirrored the same way. Registers, counters and meter buckets live only in C, behind
objects with the same methods as externs.py's. Digests wait in a ring in C until Python reads
Switch.digests (drain_digests).
"""

import ctypes
import threading
from collections import deque
from ctypes import POINTER, c_double, c_int, c_uint8, c_uint32, c_uint64, c_void_p

from ina.switch.externs import Meter
from ina.switch.native.build import build
from ina.switch.native.codegen import generate
from ina.switch.pipeline import Pipeline
from ina.switch.tables import Entry, Table

PROFILE = ("parse", "control", "lookup", "actions", "deparse", "other")  # state.h's INA_PROF_*
STATS = ("rx", "tx", "dropped", "parser_errors", "dropped_error", "dropped_oversize",
         "dropped_empty_group", "dropped_output_full")  # fmt: skip; order of runtime.h
MAX_OUT = 1024
DRAIN = 1024  # digest records moved from C per call
U64 = POINTER(c_uint64)


class Packet(ctypes.Structure):
    _fields_ = [("port", c_int), ("off", c_uint32), ("len", c_uint32)]


class OutHeader(ctypes.Structure):
    """The start of runtime.h's ina_out; the arena follows it."""

    _fields_ = [("n", c_int), ("used", c_uint32), ("pkts", Packet * MAX_OUT)]


def _u64s(values) -> ctypes.Array:
    return (c_uint64 * max(len(values), 1))(*values)


def _declare(lib: ctypes.CDLL) -> None:
    sigs = {
        "ina_new": (c_void_p, [c_int]),
        "ina_ctl_free": (None, [c_void_p, c_int, c_int, c_int]),
        "ina_ctl_table_add": (c_void_p, [c_void_p, c_int, U64, U64, POINTER(c_uint8), c_int, c_int, c_int, U64]),
        "ina_ctl_table_modify": (None, [c_void_p, c_void_p, c_int, c_int, U64]),
        "ina_ctl_table_delete": (None, [c_void_p, c_int, c_void_p]),
        "ina_ctl_table_set_default": (None, [c_void_p, c_int, c_int, c_int, U64]),
        "ina_ctl_entry_counters": (None, [c_void_p, c_void_p, U64]),
        "ina_ctl_entry_set_counters": (None, [c_void_p, c_void_p, c_uint64, c_uint64]),
        "ina_ctl_register_read": (None, [c_void_p, c_int, c_uint64, c_uint64, U64]),
        "ina_ctl_register_write": (None, [c_void_p, c_int, c_uint64, c_uint64]),
        "ina_ctl_register_reset": (None, [c_void_p, c_int]),
        "ina_ctl_counter_read": (None, [c_void_p, c_int, c_uint64, c_uint64, U64, U64]),
        "ina_ctl_counter_write": (None, [c_void_p, c_int, c_uint64, c_uint64, c_uint64]),
        "ina_ctl_counter_reset": (None, [c_void_p, c_int]),
        "ina_ctl_group_set": (None, [c_void_p, c_int, c_int, POINTER(c_int), POINTER(c_int)]),
        "ina_ctl_stats": (None, [c_void_p, U64]),
        "ina_ctl_session_set": (None, [c_void_p, c_int, c_int, POINTER(c_int), POINTER(c_int), c_uint64]),
        "ina_ctl_meter_set": (None, [c_void_p, c_int, c_uint64, c_int] + [c_double] * 4),
        "ina_ctl_entry_meter_set": (None, [c_void_p, c_void_p, c_int] + [c_double] * 4),
        "ina_ctl_vset_set": (None, [c_void_p, c_int, c_int, U64, U64]),
        "ina_ctl_digests": (c_int, [c_void_p, U64, c_int]),
        "ina_ctl_digests_dropped": (c_uint64, [c_void_p]),
        "ina_ctl_process": (c_int, [c_void_p, c_int, ctypes.c_char_p, c_uint32, c_void_p]),
        "ina_ctl_out_new": (c_void_p, []),
        "ina_ctl_profile": (None, [c_void_p, U64]),
        "ina_ctl_out_free": (None, [c_void_p]),
        "ina_io_replay": (c_uint64, [c_void_p, c_int, POINTER(c_int), POINTER(ctypes.c_char_p),
                                     POINTER(c_uint32), c_int, c_void_p]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


class NativeRegister:
    """A register array in C memory, with externs.Register's methods."""

    def __init__(self, dp: "NativeDataPath", index: int, name: str, size: int, bitwidth: int):
        self.dp, self.index = dp, index
        self.name, self.size, self.bitwidth = name, size, bitwidth

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise IndexError(f"register '{self.name}' has {self.size} cells; index {index} is out of range")

    def read(self, index: int) -> int:
        return self.read_range(index, 1)[0]

    def read_range(self, start: int, count: int) -> list[int]:
        """`count` cells from `start`, in one call (wildcard reads)."""
        self._check(start)
        self._check(start + count - 1)
        buf = (c_uint64 * count)()
        self.dp.lib.ina_ctl_register_read(self.dp.sw, self.index, start, count, buf)
        return list(buf)

    def write(self, index: int, value: int) -> None:
        self._check(index)
        if not 0 <= value < (1 << self.bitwidth):
            raise ValueError(f"value {value} does not fit register '{self.name}' ({self.bitwidth} bits)")
        self.dp.lib.ina_ctl_register_write(self.dp.sw, self.index, index, value)

    def reset(self) -> None:
        self.dp.lib.ina_ctl_register_reset(self.dp.sw, self.index)


class NativeCounter:
    """An indirect counter array in C memory, with externs.Counter's methods."""

    def __init__(self, dp: "NativeDataPath", index: int, name: str, size: int):
        self.dp, self.index, self.name, self.size = dp, index, name, size

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise IndexError(f"counter '{self.name}' has {self.size} cells; index {index} is out of range")

    def read(self, index: int) -> tuple[int, int]:
        self._check(index)
        packets, bytes_ = (c_uint64 * 1)(), (c_uint64 * 1)()
        self.dp.lib.ina_ctl_counter_read(self.dp.sw, self.index, index, 1, packets, bytes_)
        return packets[0], bytes_[0]

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

    def __init__(self, dp: "NativeDataPath", index: int, spec: dict, table: "TableMirror | None"):
        super().__init__(spec["name"], int(spec.get("size", 0)), spec.get("type", "packets"))
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


class ValueSetMirror:
    """Copies a parser value set's members into C after every change."""

    def __init__(self, dp: "NativeDataPath", index: int, members):
        self.dp, self.index = dp, index
        self(members)
        members.mirror = self

    def __call__(self, members) -> None:
        values = [v & ((1 << 128) - 1) for v in members]
        lo = _u64s([v & ((1 << 64) - 1) for v in values])
        hi = _u64s([v >> 64 for v in values])
        self.dp.lib.ina_ctl_vset_set(self.dp.sw, self.index, len(values), lo, hi)


class TableMirror:
    """Copies a Python table's entries and default into its C twin, change by change."""

    def __init__(self, dp: "NativeDataPath", index: int, table: Table):
        self.dp, self.index, self.table = dp, index, table
        self.pointers: dict[int, int] = {}  # entry handle -> C entry
        self.meters: list[NativeMeter] = []  # direct meters of this table
        for entry in table.entries() if table.exact_only else table.ordered:  # in priority order
            self.added(entry)
        if table.default is not None:
            self.default_set(table.default)
        table.mirror = self

    def added(self, entry: Entry) -> None:
        table = self.table
        if table.exact_only:
            key, mask, ranges, position = [m[1] for m in entry.match], [], [], -1
        else:
            key = [m[1] for m in entry.match]
            mask = [m[2] for m in entry.match]
            ranges = [int(m[0] == "r") for m in entry.match]
            position = table.ordered.index(entry)
        flags = (c_uint8 * max(len(ranges), 1))(*ranges)
        args = _u64s(entry.args)
        self.pointers[entry.handle] = self.dp.lib.ina_ctl_table_add(
            self.dp.sw, self.index, _u64s(key), _u64s(mask), flags, position,
            entry.action.id, len(entry.args), args)
        for meter in self.meters:  # a cell configured before its entry existed, as Python keeps it
            config = meter.get(("entry", entry.handle))
            if config is not None:
                meter.set(("entry", entry.handle), *config)

    def modified(self, entry: Entry) -> None:
        self.dp.lib.ina_ctl_table_modify(self.dp.sw, self.pointers[entry.handle], entry.action.id,
                                         len(entry.args), _u64s(entry.args))

    def deleted(self, entry: Entry) -> None:
        self.dp.lib.ina_ctl_table_delete(self.dp.sw, self.index, self.pointers.pop(entry.handle))

    def default_set(self, entry: Entry) -> None:
        self.dp.lib.ina_ctl_table_set_default(self.dp.sw, self.index, entry.action.id,
                                              len(entry.args), _u64s(entry.args))

    def counters(self, entry: Entry) -> tuple[int, int]:
        out = (c_uint64 * 2)()
        self.dp.lib.ina_ctl_entry_counters(self.dp.sw, self.pointers[entry.handle], out)
        return out[0], out[1]

    def set_counters(self, entry: Entry, packets: int, bytes_: int) -> None:
        self.dp.lib.ina_ctl_entry_set_counters(self.dp.sw, self.pointers[entry.handle], packets, bytes_)


class NativeDataPath:
    """Compiles `pipeline`'s program to C and takes over its tables, registers and counters.

    Raises Unsupported (the program needs the Python engine) or BuildError (no working gcc).
    """

    def __init__(self, pipeline: Pipeline, drop_port: int, profile: bool = False):
        program = pipeline.program
        native = generate(program, pipeline.layout)
        self.lib = build(native.source, profile)
        _declare(self.lib)
        self.sizes = (len(native.tables), len(native.registers), len(native.counters))
        self.sw = c_void_p(self.lib.ina_new(drop_port))
        self.out = c_void_p(self.lib.ina_ctl_out_new())
        self.header = OutHeader.from_address(self.out.value)
        self.arena = self.out.value + ctypes.sizeof(OutHeader)
        self.lock = threading.Lock()
        self.mirrors = [TableMirror(self, native.tables[name], t) for name, t in pipeline.tables.items()]
        by_table = {m.table.name: m for m in self.mirrors}
        pipeline.meters = {
            m["name"]: NativeMeter(self, native.meters[m["name"]], m, by_table.get(m.get("binding"))
                                   if m.get("is_direct") else None)
            for m in program.get("meter_arrays", [])
        }
        self.vset_mirrors = [ValueSetMirror(self, i, pipeline.parse_vsets[name])
                             for name, i in native.vsets.items()]
        self.digest_width = native.digest_width
        self.learn_lists = native.learn_lists
        self.digest_lock = threading.Lock()  # drains from two threads keep the digests in order
        self.digest_buf = (c_uint64 * max(self.digest_width * DRAIN, 1))()
        specs = {r["name"]: r for r in program.get("register_arrays", [])}
        pipeline.registers = {
            name: NativeRegister(self, i, name, int(specs[name]["size"]), int(specs[name]["bitwidth"]))
            for name, i in native.registers.items()
        }
        counters = {c["name"]: c for c in program.get("counter_arrays", [])}
        pipeline.counters = {
            name: NativeCounter(self, i, name, 0 if counters[name].get("is_direct") else int(counters[name]["size"]))
            for name, i in native.counters.items()
        }

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        with self.lock:
            n = self.lib.ina_ctl_process(self.sw, port, data, len(data), self.out)
            pkts = self.header.pkts
            return [(pkts[i].port, ctypes.string_at(self.arena + pkts[i].off, pkts[i].len)) for i in range(n)]

    def replay(self, packets: list[tuple[int, bytes]], rounds: int) -> int:
        """Run `packets` through the pipeline `rounds` times inside C; returns packets sent."""
        n = len(packets)
        ports = (c_int * n)(*(p for p, _d in packets))
        frames = (ctypes.c_char_p * n)(*(d for _p, d in packets))
        lens = (c_uint32 * n)(*(len(d) for _p, d in packets))
        with self.lock:
            return self.lib.ina_io_replay(self.sw, n, ports, frames, lens, rounds, self.out)

    def set_group(self, mgid: int, replicas: list[tuple[int, int]]) -> None:
        ports = (c_int * max(len(replicas), 1))(*(p for p, _r in replicas))
        rids = (c_int * max(len(replicas), 1))(*(r for _p, r in replicas))
        self.lib.ina_ctl_group_set(self.sw, mgid, len(replicas), ports, rids)

    def set_session(self, session: int, config: tuple[list[tuple[int, int]], int] | None) -> None:
        """Mirrors clone session `session` ((replicas, truncate), or None: deleted) into C."""
        replicas, truncate = config if config is not None else ([], 0)
        ports = (c_int * max(len(replicas), 1))(*(p for p, _r in replicas))
        rids = (c_int * max(len(replicas), 1))(*(r for _p, r in replicas))
        self.lib.ina_ctl_session_set(self.sw, session, -1 if config is None else len(replicas),
                                     ports, rids, truncate)

    def drain_digests(self, into: deque) -> None:
        """Moves the digests C generated, in order, to `into` as (learn list name, values)."""
        if not self.digest_width:
            return
        with self.digest_lock:
            self._drain(self.digest_buf, self.digest_width, into)

    def _drain(self, buf: ctypes.Array, width: int, into: deque) -> None:
        while True:
            n = self.lib.ina_ctl_digests(self.sw, buf, DRAIN)
            for r in range(n):
                rec = buf[r * width:(r + 1) * width]
                name, fields = self.learn_lists.get(rec[0] - 1, ("", []))
                values = rec[2:2 + rec[1]]
                into.append((name, [v - (1 << 64) if signed and v >> 63 else v
                                    for v, (_slot, signed) in zip(values, fields, strict=False)]))
            if n < DRAIN:
                return

    def profile(self) -> tuple[dict[str, int], int]:
        """(ticks per stage, packets) since the last call; all zero unless built with profile."""
        out = (c_uint64 * (len(PROFILE) + 1))()
        self.lib.ina_ctl_profile(self.sw, out)
        return dict(zip(PROFILE, out[: len(PROFILE)], strict=True)), out[len(PROFILE)]

    def stats(self) -> dict[str, int]:
        out = (c_uint64 * len(STATS))()
        self.lib.ina_ctl_stats(self.sw, out)
        stats = dict(zip(STATS, out, strict=True))
        if self.digest_width:
            stats["digests_dropped"] = self.lib.ina_ctl_digests_dropped(self.sw)
        return stats

    def __del__(self) -> None:
        lib, sw = getattr(self, "lib", None), getattr(self, "sw", None)
        if lib is not None and sw is not None and sw.value:
            lib.ina_ctl_free(sw, *self.sizes)
            lib.ina_ctl_out_free(self.out)
