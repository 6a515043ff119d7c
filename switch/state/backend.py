"""The interface of a data-path backend: one loaded program, its packets and its state.

Switch (engine.py) is a facade over one backend; python/backend.py (generated Python) and
native/datapath.py (the program compiled to C) implement this. Each backend is built from the
program model alone (program.load_program) and owns every piece of its control-plane state: the
objects below are the only copy the control plane reads and writes.
"""

import threading
from collections import Counter as Tally
from collections import deque
from collections.abc import Callable
from typing import Protocol

from ina.switch.io.ports import Ports
from ina.switch.model.layout import Layout
from ina.switch.model.program import Program
from ina.switch.state.externs import Meter, ValueSet
from ina.switch.state.replication import CloneSessions, Multicast
from ina.switch.state.tables import Table


class Register(Protocol):
    name: str
    size: int
    bitwidth: int

    def read(self, index: int) -> int: ...
    def read_range(self, start: int, count: int) -> list[int]: ...
    def write(self, index: int, value: int) -> None: ...
    def reset(self) -> None: ...


class Counter(Protocol):
    name: str
    size: int

    def read(self, index: int) -> tuple[int, int]: ...
    def read_range(self, start: int, count: int) -> list[tuple[int, int]]: ...
    def write(self, index: int, packets: int, bytes_: int) -> None: ...
    def reset(self) -> None: ...


Packets = list[tuple[int, bytes]]


class Host(Protocol):
    """The switch process around a port loop (the P4Runtime service): it takes the packets sent
    to the CPU port, and sends the control plane's packets through `transmit`."""

    transmit: Callable[[Packets], None]

    def deliver(self, packets: Packets) -> None:
        """Packets the switch sends to the CPU port; called with none, it passes on digests."""
        ...


class Backend(Protocol):
    name: str  # "python" or "native": Switch.engine_name
    model: Program
    max_port: int  # the largest ingress port the program's ingress_port holds
    tables: dict[str, Table]
    registers: dict[str, Register]
    counters: dict[str, Counter]
    meters: dict[str, Meter]
    externs: dict[str, dict[str, object]]  # each model/externs.py kind's instances by name (the
    # three above among them): a new kind's control plane reads it here, with no attribute of its own
    parse_vsets: dict[str, ValueSet]
    multicast: Multicast
    clone: CloneSessions

    @property
    def program(self) -> dict:
        """The BMv2 JSON the backend runs."""
        ...

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Every packet one input packet sends, in order; `port` and `data` are checked already."""
        ...

    def stats(self) -> dict[str, int]:
        """Packet counts since the backend was built: rx, tx, dropped, dropped_* (why)..."""
        ...

    def set_clock(self, us: int | None) -> None:
        """Timestamps (ingress/egress_global_timestamp) read `us` from now on, or the real clock
        (microseconds since the backend was built) again with None."""
        ...

    def drain_digests(self, into: deque) -> None:
        """Moves the digests generated so far, oldest first, to `into` as (learn list, values)."""
        ...

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
        """Forward frames between `ports` until `wake` is set (a new program, or the end), the
        sockets left open. `process` is Switch.process (its checks before this backend's); packets
        for `cpu_port` go to `host`; `lock` is held while frames run, so the control plane's
        changes fall between them; `ticks` gains the loop's time per I/O step, if it counts them."""
        ...

    def profile(self) -> tuple[dict[str, int], int]:
        """(time per pipeline stage, packets) since the last call, where the backend counts them."""
        ...


def max_port(layout: Layout) -> int:
    """The largest port the program's standard_metadata.ingress_port holds (v1model: 511)."""
    return (1 << layout.header("standard_metadata").width("ingress_port")) - 1
