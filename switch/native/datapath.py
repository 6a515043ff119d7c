"""The native backend: the program model compiled to C, packets in and out, and its state.

Built from the model alone (no Python pipeline): the C switch owns the state, and the objects of
views.py are its control plane. Digests wait in a ring in C until Python reads Switch.digests
(drain_digests). When the backend is collected (a replaced program, once nothing runs it) it
frees its C state and unloads its library.
"""

import ctypes
import functools
import importlib.machinery
import importlib.util
import struct
import threading
from collections import Counter as Tally
from collections import deque
from collections.abc import Callable
from ctypes import POINTER, c_int, c_size_t, c_uint8, c_uint32, c_uint64, c_void_p
from functools import partial
from pathlib import Path
from types import ModuleType

from ina.switch.io.ports import Ports
from ina.switch.model.budget import check_source
from ina.switch.model.layout import Layout
from ina.switch.model.program import Program, malformed_json
from ina.switch.native.build import BuildError, build, build_extension
from ina.switch.native.codegen import NativeProgram, generate
from ina.switch.native.externs import STATE
from ina.switch.native.portloop import NativePorts
from ina.switch.native.views import (
    NativeCloneSessions,
    NativeMulticast,
    NativeTable,
    NativeValueSet,
)
from ina.switch.state.backend import Host, Packets, max_port
from ina.switch.state.tables import install_program_entries, new_table

PROFILE = ("parse", "control", "lookup", "actions", "deparse", "other")  # state.h's INA_PROF_*
STATS = (
    "rx",
    "tx",
    "dropped",
    "parser_errors",
    "dropped_error",
    "dropped_oversize",
    "dropped_empty_group",
    "dropped_output_full",
)  # fmt: skip; order of runtime.h
DRAIN = 1024  # digest records moved from C per call
U64 = POINTER(c_uint64)
LIBC = ctypes.CDLL(None)  # the process's own C library: dlclose here, malloc_trim (engine.reclaim)
LIBC.dlclose.argtypes, LIBC.dlclose.restype = [c_void_p], c_int


PACKET = struct.Struct("@NiI")  # runtime.h's ina_pkt: off, port, len
_unpack, _unpack_all = PACKET.unpack_from, PACKET.iter_unpack


@functools.cache
def entry_module() -> ModuleType | None:
    """entry.c's extension (ina_entry), built once and loaded; None where it cannot be built (no
    Python headers): callers then take `NativeBackend.process`."""
    try:
        path = build_extension(Path(__file__).with_name("entry.c"))
    except BuildError:
        return None
    loader = importlib.machinery.ExtensionFileLoader("ina_entry", str(path))
    spec = importlib.util.spec_from_file_location("ina_entry", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


_GENERATED: list[tuple[Program, NativeProgram]] = []  # the latest, newest first


def generated(model: Program, layout: Layout) -> NativeProgram:
    """The C source of a model, generated once for the latest two models: the switches of one
    process given one program share its model (engine.checked: ina sim's 80-switch fabrics), and
    backends only read what `generate` made for it."""
    for seen, native in _GENERATED:
        if seen is model:  # read from one document with its layout (engine.checked)
            return native
    with malformed_json():
        native = generate(model, layout)
    _GENERATED[:] = [(model, native), *_GENERATED[:1]]
    return native


class Out(ctypes.Structure):
    """runtime.h's ina_out; C may move pkts and arena to grow them, so read them after each call."""

    _fields_ = [
        ("n", c_int),
        ("cap", c_int),
        ("used", c_size_t),
        ("size", c_size_t),
        ("first", c_int),
        ("bytes", c_uint64),
        ("pkts", c_void_p),
        ("arena", c_void_p),
    ]


def _declare(lib: ctypes.CDLL) -> None:
    sigs = {
        "ina_new": (c_void_p, [c_int]),
        "ina_ctl_free": (None, [c_void_p]),
        "ina_ctl_table_add": (
            c_void_p,
            [c_void_p, c_int, U64, U64, POINTER(c_uint8), c_int, c_int, c_int, U64],
        ),
        "ina_ctl_table_modify": (None, [c_void_p, c_void_p, c_int, c_int, U64]),
        "ina_ctl_table_delete": (None, [c_void_p, c_int, c_void_p]),
        "ina_ctl_table_set_default": (None, [c_void_p, c_int, c_int, c_int, U64]),
        "ina_ctl_entry_counters": (None, [c_void_p, c_void_p, U64]),
        "ina_ctl_entry_set_counters": (None, [c_void_p, c_void_p, c_uint64, c_uint64]),
        "ina_ctl_group_set": (None, [c_void_p, c_int, c_int, POINTER(c_int), POINTER(c_int)]),
        "ina_ctl_stats": (None, [c_void_p, U64]),
        "ina_ctl_set_clock": (None, [c_void_p, ctypes.c_int64]),
        "ina_ctl_session_set": (
            None,
            [c_void_p, c_int, c_int, POINTER(c_int), POINTER(c_int), c_uint64],
        ),
        "ina_ctl_vset_set": (None, [c_void_p, c_int, c_int, U64, U64]),
        "ina_ctl_digests": (c_int, [c_void_p, U64, c_int]),
        "ina_ctl_digests_dropped": (c_uint64, [c_void_p]),
        "ina_ctl_process": (c_int, [c_void_p, c_int, ctypes.c_char_p, c_uint32, c_void_p]),
        "ina_ctl_out_new": (c_void_p, []),
        "ina_ctl_profile": (None, [c_void_p, U64]),
        "ina_ctl_out_free": (None, [c_void_p]),
        "ina_io_replay": (
            c_uint64,
            [
                c_void_p,
                c_int,
                POINTER(c_int),
                POINTER(ctypes.c_char_p),
                POINTER(c_uint32),
                c_int,
                c_void_p,
            ],
        ),
    }
    for kind in STATE.values():
        sigs |= kind.functions
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


class Frames:
    """Packets as the arrays ina_io_replay reads, built once (about 1 us a packet in Python) for
    replays that time the pipeline alone (ina.bench.switch_inprocess)."""

    def __init__(self, packets: list[tuple[int, bytes]]):
        self.n = len(packets)
        self.ports = (c_int * self.n)(*(p for p, _d in packets))
        self.frames = (ctypes.c_char_p * self.n)(*(d for _p, d in packets))
        self.lens = (c_uint32 * self.n)(*(len(d) for _p, d in packets))


class NativeBackend:
    """The model's program compiled to C, with its tables, registers, counters, meters, value sets,
    multicast groups and clone sessions in C.

    Raises Unsupported (the program needs the Python engine), BuildError (no working gcc) or
    PipelineError (a malformed program).
    """

    name = "native"

    def __init__(self, layout: Layout, model: Program, drop_port: int, profile: bool = False):
        native = generated(model, layout)
        self.model, self.max_port = model, max_port(layout)
        check_source(native.source, "c")
        self.lib = build(native.source, profile)
        _declare(self.lib)
        self.sw = c_void_p(self.lib.ina_new(drop_port))
        self.out = c_void_p(self.lib.ina_ctl_out_new())
        if not self.out.value:
            raise MemoryError("no memory for the native switch's output buffer")
        self.outputs = Out.from_address(self.out.value)
        self._process = self.lib[
            "ina_ctl_process"
        ]  # a handle of its own, without argtypes: per frame,
        # ctypes passes the ports (int), frames (bytes) and the two pointers as they are, converting nothing
        self._views = self._view(self.outputs)
        self.lock = threading.Lock()
        self._direct_out = c_void_p(self.lib.ina_ctl_out_new())
        self.direct = self._bind(self._direct_out.value)
        self.digest_width = native.digest_width
        self.learn_lists = native.learn_lists
        self.digest_lock = threading.Lock()  # drains from two threads keep the digests in order
        self.digest_buf = (c_uint64 * max(self.digest_width * DRAIN, 1))()
        self.parse_vsets = {name: NativeValueSet(self, i) for name, i in native.vsets.items()}
        self.multicast, self.clone = NativeMulticast(self), NativeCloneSessions(self)
        self.tables = {
            name: new_table(
                partial(NativeTable, self, i, native.key_widths.get(name), native.param_widths),
                model.tables[name],
                model,
            )
            for name, i in native.tables.items()
        }
        views = {  # a kind's C index is its instance's place in the model (native/codegen.py)
            kind: {x.name: c.view(self, i, x) for i, x in enumerate(model.externs[kind])}
            for kind, c in STATE.items()
        }
        self.registers, self.counters = views["register"], views["counter"]
        self.meters, self.externs = views["meter"], views
        with malformed_json():
            for name, table in self.tables.items():
                install_program_entries(table, model.tables[name], model)

    @property
    def program(self) -> dict:
        return self.model.json

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """The frames out of C, read through views of its output buffer (no ctypes call per frame):
        none (an absorbed update) and one output (a forwarded frame) the common cases, one copied
        alone, more from one copy of the arena's used bytes."""
        with self.lock:
            n = self._process(self.sw, port, data, len(data), self.out)
            if not n:
                return []
            out, views = self.outputs, self._views
            if (
                out.cap != views[0]
                or out.size != views[1]
                or out.pkts != views[2]
                or out.arena != views[3]
            ):
                views = self._views = self._view(out)
            pkts, arena = views[4], views[5]
            if n == 1:
                off, out_port, size = _unpack(pkts)
                return [(out_port, arena[off : off + size].tobytes())]
            frames = arena[: out.used].tobytes()
            return [
                (out_port, frames[off : off + size])
                for off, out_port, size in _unpack_all(pkts[: n * PACKET.size])
            ]

    def _bind(
        self, out: int | None
    ) -> Callable[[list[tuple[int, bytes | bytearray]]], list[list[tuple[int, bytes]]]] | None:
        """`process` of several frames in one call, in order, without ctypes, its lock or views
        (sim/nodes.py's switch node: the frames reaching it at one instant), on an output buffer
        of its own: entry.c's bound function, which holds the GIL throughout, valid while this
        backend lives; None without the extension."""
        module = entry_module()
        if module is None or not out:
            return None
        address = ctypes.cast(self.lib.ina_ctl_process, c_void_p).value
        return module.bind(address, self.sw.value, out)

    @staticmethod
    def _view(out: Out) -> tuple[int, int, int, int, memoryview, memoryview]:
        """Views of C's packet records and arena as they are now, after the sizes and addresses they
        are made for: C grows them (realloc: moved, or longer in place) when a fan-out needs it."""
        return (
            out.cap,
            out.size,
            out.pkts,
            out.arena,
            memoryview((c_uint8 * (out.cap * PACKET.size)).from_address(out.pkts)),
            memoryview((c_uint8 * out.size).from_address(out.arena)),
        )

    def replay(self, packets: list[tuple[int, bytes]] | Frames, rounds: int) -> int:
        """Run `packets` through the pipeline `rounds` times inside C; returns packets sent."""
        batch = packets if isinstance(packets, Frames) else Frames(packets)
        with self.lock:
            return self.lib.ina_io_replay(
                self.sw, batch.n, batch.ports, batch.frames, batch.lens, rounds, self.out
            )

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
                rec = buf[r * width : (r + 1) * width]
                name, fields = self.learn_lists.get(rec[0] - 1, ("", []))
                values = rec[2 : 2 + rec[1]]
                into.append(
                    (
                        name,
                        [
                            v - (1 << 64) if signed and v >> 63 else v
                            for v, (_slot, signed) in zip(values, fields, strict=False)
                        ],
                    )
                )
            if n < DRAIN:
                return

    def serve(
        self,
        ports: Ports,
        process: Callable[[int, bytes], Packets],
        host: Host,
        lock: threading.Lock,
        wake: threading.Event,
        cpu_port: int | None,
        ticks: Tally,
    ) -> None:
        """io.c's loop on the sockets of `ports`: frames stay in C but the CPU port's, which go to
        `host`; the host's own packets go through C too, keeping pcaps in order. C runs every
        frame itself (no `process`), and its lock is this backend's, not `lock`."""
        loop = NativePorts.borrow(self.lib, ports, cpu_port)
        host.transmit = loop.send
        try:
            # digests wait in C until something reads Switch.digests: deliver them every 50 ms
            tick = (lambda: host.deliver([])) if self.model.learn_lists else None
            loop.run(self.sw, host.deliver, wake, tick=tick)
        finally:
            host.transmit = ports.send
            ticks.update(loop.profile())
            loop.close()

    def profile(self) -> tuple[dict[str, int], int]:
        """(ticks per stage, packets) since the last call; all zero unless built with profile."""
        out = (c_uint64 * (len(PROFILE) + 1))()
        self.lib.ina_ctl_profile(self.sw, out)
        return dict(zip(PROFILE, out[: len(PROFILE)], strict=True)), out[len(PROFILE)]

    def set_clock(self, us: int | None) -> None:
        self.lib.ina_ctl_set_clock(self.sw, -1 if us is None else us)

    def stats(self) -> dict[str, int]:
        out = (c_uint64 * len(STATS))()
        self.lib.ina_ctl_stats(self.sw, out)
        stats = dict(zip(STATS, out, strict=True))
        if self.digest_width:
            stats["digests_dropped"] = self.lib.ina_ctl_digests_dropped(self.sw)
        return stats

    def __del__(self) -> None:
        """Frees the C state, then unloads the library (dlopen counts: a newer backend that loaded
        the same file keeps it). Only collection calls this, so nothing runs the library now:
        every caller (the views, the port loop, process) reaches it through this backend."""
        lib, sw = getattr(self, "lib", None), getattr(self, "sw", None)
        if lib is None:
            return
        if sw is not None and sw.value:
            lib.ina_ctl_free(sw)
            for out in (getattr(self, "out", None), getattr(self, "_direct_out", None)):
                if out is not None and out.value:
                    lib.ina_ctl_out_free(out)
        LIBC.dlclose(lib._handle)
