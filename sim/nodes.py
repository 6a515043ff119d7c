"""The nodes of a simulated network: end hosts (a CPU and a NIC) and switches running a P4 program.

A host's CPU is one FIFO server for its packet work: a received packet costs `recv_cost` seconds
before the protocol sees it, each packet sent costs `send_cost` before it reaches the NIC, and a
timer's work waits its turn too. So a host that cannot keep up with its link falls behind as a
DPDK or kernel worker does (host-bound), and one that can leaves the link to set the pace
(link-bound). With both costs 0 work runs at the time it comes, with no event added.

A switch node runs the real program on a `Switch` (its clock set to each frame's arrival) and
puts each frame it sends into the egress of the output port the program chose, `pipeline` seconds
after the frame came in. docs/simulation.md has the model's assumptions.
"""

import math
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from ina.p4src.protocol import MAX_PORT
from ina.sim.events import Simulator
from ina.sim.links import Channel
from ina.switch.engine import Switch


@mypyc_attr(native_class=False)  # compiled too, it stays picklable: see ina/compiled.py
@dataclass(frozen=True)
class HostSpec:
    """A host's NIC rate (bit/s; its link's rate caps it) and per-packet CPU costs (seconds)."""

    nic_rate: float = math.inf
    send_cost: float = 0.0
    recv_cost: float = 0.0


IDEAL_HOST = HostSpec()  # a NIC at its link's rate and a CPU that costs nothing


class Cpu:
    """One host's packet processing, one piece of work at a time, in the order it came."""

    __slots__ = ("_backlog", "_sim", "free_at", "recv_cost", "send_cost")

    def __init__(self, sim: Simulator, send_cost: float = 0.0, recv_cost: float = 0.0):
        self._sim, self.send_cost, self.recv_cost = sim, send_cost, recv_cost
        self.free_at = 0.0  # when the work (and the sends) taken on so far are done
        self._backlog: deque[tuple[float, float, Callable, tuple]] = (
            deque()
        )  # (came, cost, work, args)

    def run(self, when: float, cost: float, work: Callable, *args) -> None:
        """Call work(start, *args) once the work before it is done and `cost` more seconds have
        passed: start = max(when, the CPU free) + cost. An idle CPU and no cost: at once."""
        if self.idle(when, cost):
            work(when, *args)
            return
        backlog = self._backlog
        backlog.append((when, cost, work, args))
        if len(backlog) == 1:
            self._schedule()

    def idle(self, when: float, cost: float) -> bool:
        """Whether work of `cost` coming at `when` runs at once (`run` calls it then): nothing
        waits, it costs nothing, and the CPU is free. A caller that knows its work may call it
        directly when this holds, without `run`'s generic call."""
        return not self._backlog and not cost and self.free_at <= when

    def depart(self, now: float) -> float:
        """When a packet the work at `now` sends reaches the NIC: `send_cost` after the CPU is
        done with the packets before it."""
        free = self.free_at if self.free_at > now else now
        self.free_at = free + self.send_cost
        return self.free_at

    def _schedule(self) -> None:
        when, cost, _work, _args = self._backlog[0]
        self._sim.at((when if when > self.free_at else self.free_at) + cost, self._run_next)

    def _run_next(self, start: float) -> None:
        _when, _cost, work, args = self._backlog.popleft()
        if self.free_at < start:
            self.free_at = start
        work(start, *args)
        if self._backlog:
            self._schedule()


class Host:
    """An end host: its CPU and the egress of its one port (toward its switch)."""

    def __init__(self, name: str, spec: HostSpec, sim: Simulator):
        self.name, self.spec = name, spec
        self.cpu = Cpu(sim, spec.send_cost, spec.recv_cost)
        self.egress: Channel | None = None  # set when a link connects it


class SwitchNode:
    """A switch running its program on `switch`; `lock` is shared with its P4Runtime server's threads.
    Per port: the channel it sends on (`egress`), the node at the link's far end (`peer`) and that
    node's port (`peer_port`)."""

    def __init__(self, name: str, switch: Switch, lock: threading.Lock, pipeline: float = 0.0):
        self.name, self.switch, self.lock, self.pipeline = name, switch, lock, pipeline
        self._clock: int | None = None  # the microsecond the switch's clock was last set to
        self._backend: object = None  # the program's backend `_direct` is for
        self._direct: Callable[[list[tuple[int, bytes]]], list[list[tuple[int, bytes]]]] | None = (
            None
        )
        self.egress: list[Channel | None] = [None] * (MAX_PORT + 1)
        self.peer: list[Host | SwitchNode | None] = [None] * (MAX_PORT + 1)
        self.peer_port: list[int] = [0] * (MAX_PORT + 1)

    def process(self, when: float, port: int, frame: bytes) -> list[tuple[int, bytes]]:
        """The frames the program sends for `frame` arriving on `port` at `when`, as (output
        port, frame): `process_all` of one frame."""
        return self.process_all(when, [(port, frame)])[0]

    def process_all(
        self, when: float, frames: list[tuple[int, bytes]]
    ) -> list[list[tuple[int, bytes]]]:
        """What the program sends for each of `frames` (port, frame) arriving in that order at
        `when` (the switch's clock reads `when`, in whole microseconds), as (output port, frame).
        Per call the least Python: the clock is set when its microsecond changes (nothing else
        sets it), and the program's backend runs the frames without the facade's checks of port
        and type, which the network's ports and bytes frames meet by construction: the native
        backend through its direct entry (all the frames in one C call, no ctypes; datapath.py),
        found again whenever the program is replaced."""
        us = round(when * 1e6)
        with self.lock:
            if us != self._clock:
                self.switch.set_clock(us)
                self._clock = us
            backend = self.switch.pipeline
            if backend is not self._backend:
                self._backend, self._direct = backend, getattr(backend, "direct", None)
            direct = self._direct
            if direct is not None:
                return direct(frames)
            if backend is not None:
                return [backend.process(port, frame) for port, frame in frames]
            return [self.switch.process(port, frame) for port, frame in frames]
