"""Switch: the v1model switch the P4Runtime server, the STF runner, the CLI and the benches drive.

A thin facade over one data-path backend per loaded program (state/backend.py): the native one
(native/datapath.py, the program compiled to C) or the Python one (python/backend.py). It picks
the backend, checks what callers pass before either sees it, and keeps what outlives a program:
the digests not yet read and the statistics.

Loading is two steps, so a switch that runs packets on other threads keeps running the old
program while the new one is generated and compiled (seconds for a big one): `build` touches no
running state and needs no lock; `install` swaps the program in, under the engine lock.
"""

import functools
import gc
import json
import threading
from collections import Counter as Tally
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ina.switch.io.ports import Ports
from ina.switch.model import budget
from ina.switch.model.errors import PipelineError, Unsupported
from ina.switch.model.layout import Layout
from ina.switch.model.load import load_program
from ina.switch.model.program import Program
from ina.switch.native.build import BuildError
from ina.switch.native.datapath import LIBC, NativeBackend
from ina.switch.python.backend import PythonBackend
from ina.switch.state.backend import Backend, Host
from ina.switch.state.replication import MAX_PORT, CloneSessions, Multicast
from ina.switch.state.tables import Table

ENGINES = ("auto", "native", "python")


@dataclass(frozen=True)
class Built:
    """A program's backend, built and not running yet (Switch.build), and why it is that engine."""

    backend: Backend
    note: str


def reclaim() -> None:
    """Return the memory of replaced programs to the system. Their generated code, tables and
    native views sit in reference cycles (functions and their namespace, tables and their actions,
    views and their backend) that only the cycle collector frees; the native backend then frees
    its C state and unloads its library; and glibc keeps freed heap pages until trimmed. Call it
    outside the engine lock: a full collection takes a while on a big heap."""
    gc.collect()
    trim = getattr(LIBC, "malloc_trim", None)  # glibc's
    if trim is not None:
        trim(0)


def _checked(program: dict) -> tuple[Layout, Program]:
    """A BMv2 JSON program validated, laid out, read and within the code budget."""
    layout, model = load_program(program)
    budget.check(layout, model)
    return layout, model


@functools.lru_cache(maxsize=2)
def checked(document: bytes) -> tuple[Layout, Program]:
    """`_checked` of a BMv2 JSON document (bytes that parse as JSON), once per distinct document:
    the switches of one process given one program (ina sim's fabrics: 80 of them) share its
    layout and model, which backends only read; a failure is not remembered."""
    return _checked(json.loads(document))


class DirectCounterView:
    """Direct counters live in table entries; this reads and writes them by entry handle."""

    def __init__(self, table: Table):
        self.table = table

    def read(self, handle: int) -> tuple[int, int]:
        return self.table.counters(handle)

    def write(self, handle: int, packets: int, bytes_: int) -> None:
        self.table.set_counters(handle, packets, bytes_)


class Switch:
    """A v1model switch. `engine` picks the data path: "native" (the program compiled to C, see
    native/), "python" (generated Python, the only one that traces packets), or "auto": native when
    the program and machine allow it and no packet log is asked for, else Python; `engine_note`
    then says why."""

    def __init__(
        self,
        device_id: int = 0,
        cpu_port: int | None = None,
        drop_port: int = 511,
        log: Callable[[str], None] | None = None,
        engine: str = "auto",
        profile: bool = False,
    ):
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not '{engine}'")
        self.engine = engine
        self.profile = (
            profile  # native engine: the build that counts time per stage (bench profile)
        )
        self.engine_note = ""
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.drop_port = drop_port
        self.log = log
        self.pipeline: Backend | None = None  # the loaded program's backend; None before a load
        self.max_port = MAX_PORT  # the largest ingress port: what the program's ingress_port holds
        self._empty = (Multicast(), CloneSessions())  # what multicast and clone are before a load
        self._digests: deque[tuple[str, list[int]]] = deque(maxlen=65536)
        self._stats: Tally[str] = Tally()  # counts of no program, and of the backends replaced
        self.on_load: Callable[[], None] | None = None  # told when a new program is installed
        self._clock_us: int | None = None  # set_clock's value, kept for the next program

    @property
    def native(self) -> NativeBackend | None:
        """The native backend when it runs the program (its port loop and replay need it)."""
        return self.pipeline if isinstance(self.pipeline, NativeBackend) else None

    @property
    def engine_name(self) -> str:
        return self.pipeline.name if self.pipeline is not None else "python"

    @property
    def stats(self) -> Tally[str]:
        """Packet counts: rx, tx, dropped, parser_errors, dropped_* (why), of every program loaded."""
        total = Tally(self._stats)
        if self.pipeline is not None:
            total.update(self.pipeline.stats())
        return +total

    @property
    def digests(self) -> deque:
        """Digests generated so far, oldest first, as (learn list name, field values); consumers
        popleft() them. The native engine's digests wait in C until this is read."""
        if self.pipeline is not None:
            self.pipeline.drain_digests(self._digests)
        return self._digests

    # --- pipeline ------------------------------------------------------------------------
    def load(self, program: dict) -> None:
        """Build and install a BMv2 JSON program; on error the running one stays. A switch whose
        packets run on other threads builds first, then installs under its engine lock."""
        self.install(self.build(program))

    def build(self, program: dict, document: bytes | None = None) -> Built:
        """The backend for a BMv2 JSON program, ready to install: validated, within the code budget
        (budget.py, before any code is generated), generated, compiled, its const entries in its
        tables. Touches nothing running, so it needs no lock; PipelineError if it cannot run.
        `document`: the program's JSON bytes, where the caller has them (the P4Runtime server), so
        a document checked before in this process is not read and checked again (`checked`)."""
        layout, model = checked(document) if document is not None else _checked(program)
        native, note = self._native(layout, model)
        return Built(native or PythonBackend(layout, model, self.drop_port, self.log), note)

    def install(self, built: Built) -> None:
        """Make a built program the running one: a swap of references, which the caller makes
        under the engine lock (the packet loop's) when packets run on other threads. The old
        program's statistics carry over and its digests not yet read are dropped; its memory
        goes at the next `reclaim`."""
        backend = built.backend
        if self.pipeline is not None:
            self._stats.update(self.pipeline.stats())
        self.pipeline, self.max_port, self.engine_note = backend, backend.max_port, built.note
        backend.set_clock(self._clock_us)
        self._digests.clear()
        if self.on_load is not None:
            self.on_load()

    def _native(self, layout: Layout, model: Program) -> tuple[NativeBackend | None, str]:
        """The program compiled to C, or None for Python; and the reason (engine_note)."""
        if self.engine == "python":
            return None, "the Python engine was asked for"
        if self.log is not None and self.engine == "auto":
            return None, "packet logging runs on the Python engine"
        try:
            native = NativeBackend(layout, model, self.drop_port, self.profile)
        except (Unsupported, BuildError) as err:
            if self.engine == "native":
                raise PipelineError(f"the native engine cannot run this program: {err}") from None
            return None, f"the native engine cannot run this program: {err}"
        return native, "the program runs compiled to C"

    @property
    def tables(self) -> dict[str, Table]:
        return self.pipeline.tables if self.pipeline else {}

    @property
    def registers(self) -> dict:
        return self.pipeline.registers if self.pipeline else {}

    @property
    def counters(self) -> dict:
        return self.pipeline.counters if self.pipeline else {}

    @property
    def externs(self) -> dict[str, dict[str, object]]:
        """Every extern kind's instances by name (model/externs.py; registers, counters and meters
        are three of them): a kind's control-plane state without a property of its own."""
        return self.pipeline.externs if self.pipeline else {}

    @property
    def parse_vsets(self) -> dict:
        """Parser value sets by name: sets of ints (see externs.ValueSet), changed in place."""
        return self.pipeline.parse_vsets if self.pipeline else {}

    @property
    def meters(self) -> dict:
        return self.pipeline.meters if self.pipeline else {}

    @property
    def multicast(self) -> Multicast:
        return self.pipeline.multicast if self.pipeline else self._empty[0]

    @property
    def clone(self) -> CloneSessions:
        return self.pipeline.clone if self.pipeline else self._empty[1]

    @property
    def direct_counters(self) -> dict[str, DirectCounterView]:
        if not self.pipeline:
            return {}
        return {
            c.binding: DirectCounterView(self.pipeline.tables[c.binding])
            for c in self.pipeline.model.counters
            if c.direct
        }

    # --- packets -------------------------------------------------------------------------
    def set_clock(self, us: int | None) -> None:
        """Set the switch's clock to `us` microseconds (what packets read as their global
        timestamps) until the next call; None returns to the real clock. A virtual-clock harness
        (hosts/inprocess.py, `ina stf`) drives it so timestamps, and every decision taken on them
        (e.g. a job's timeout), are the same on both engines and on every run."""
        if us is not None and not 0 <= us < 1 << 48:
            raise ValueError(
                f"clock {us} us is out of range 0..2^48-1 (v1model timestamps are 48 bits)"
            )
        self._clock_us = us
        if self.pipeline is not None:
            self.pipeline.set_clock(us)

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Run one packet through the switch; returns (port, bytes) for every packet sent.

        A port the program cannot hold (ingress_port's width) is the caller's mistake, not traffic
        to count, so it raises ValueError (TypeError for a port that is not an int or data that
        is not bytes-like) before either engine sees it: C would truncate it to its int.
        """
        if not isinstance(port, int):
            raise TypeError(f"port must be an int, not {type(port).__name__}")
        if not 0 <= port <= self.max_port:
            raise ValueError(
                f"port {port} is out of range 0..{self.max_port} (the program's ingress_port)"
            )
        if type(data) is not bytes:
            if not isinstance(data, (bytearray, memoryview)):
                raise TypeError(f"data must be bytes, not {type(data).__name__}")
            data = bytes(data)
        if self.pipeline is None:
            self._stats["rx"] += 1
            self._stats["dropped_no_pipeline"] += 1
            return []
        return self.pipeline.process(port, data)

    def serve(
        self, ports: Ports, host: Host, lock: threading.Lock, wake: threading.Event, ticks: Tally
    ) -> None:
        """Forward frames between `ports` with the loaded program's data path until `wake` is set
        (backend.py `Backend.serve`); with no program yet, Python's loop drops and counts them."""
        if self.pipeline is None:
            ports.run(self.process, host.deliver, lock, wake)
        else:
            self.pipeline.serve(ports, self.process, host, lock, wake, self.cpu_port, ticks)
            reclaim()  # a new program ended the loop: the old one (the native loop's) is free now
