"""Hands each datagram a worker receives to its cores (hosts/worker.py's I/O thread, both paths):
the core of the datagram's slot gets it with its source and the time, the core's answer leaves at
once, a finished call is handed back.

Compiled by mypyc with the core (ina/compiled.py's HOT): the batched path's loop over a recvmmsg
burst (`burst`) then runs in C and calls the core natively, 0.1-0.4 us less per datagram than the
interpreted loop it replaced (docs/performance.md, "The I/O loop compiled"). Interpreted where it
is not built (INA_COMPILED=0): the same code.
"""

import time
from collections.abc import Callable
from typing import Any

from ina.hosts.batch import address, wire_ip
from ina.hosts.core import AllReduceCore
from ina.p4src.protocol import HEADER_LEN, slot_of

Address = tuple[str, int]


class Dispatch:
    """The cores of one worker (one per staleness group of `group` slots, the last also taking
    what names no group, which it calls forged) and where their answers go: `sendto(pkt, switch)`,
    or `blocked(pkt)` when the socket would block; `finish(core)` once a core's call is finished."""

    def __init__(
        self,
        cores: list[AllReduceCore],
        group: int,
        switch: Address,
        sendto: Callable[[bytearray, object], object],
        blocked: Callable[[bytearray], None],
        finish: Callable[[AllReduceCore], None],
    ) -> None:
        self._cores = cores
        self._group = group
        self._last = len(cores) - 1
        self._switch = switch
        self._to: object = switch  # kept boxed: compiled, `switch` is a C struct boxed anew per use
        self._sendto = sendto
        self._blocked = blocked
        self._finish = finish
        self._clock: Callable[[], float] = time.monotonic
        # The sources a core takes answers from, as recvmmsg reports them (batch.wire_ip, port),
        # each with its address built once; no fallback server: a port no datagram has (-1)
        self._switch_ip: int = wire_ip(switch[0])
        self._switch_port = switch[1]
        fallback = cores[0].fallback
        self._fallback: Address = switch
        self._fallback_ip, self._fallback_port = 0, -1
        if fallback is not None:
            self._fallback_ip, self._fallback_port = wire_ip(fallback[0]), fallback[1]
            self._fallback = address(self._fallback_ip, self._fallback_port)

    def route(self, data: Any) -> AllReduceCore:
        """The core of the slot a datagram names; beyond the groups (or too short to name one),
        the last. With one core, that core without reading the header."""
        if self._last == 0:
            return self._cores[0]
        slot = slot_of(data) if len(data) >= HEADER_LEN else 0
        return self._cores[min(slot // self._group, self._last)]

    def handle(self, data: Any, source: Address, now: float) -> None:
        """One datagram (bytes-like, from `source`, at `now`) into its core; its answer out."""
        core = self.route(data)
        pkt = core.receive(data, source, now)
        if pkt is not None:
            try:
                self._sendto(pkt, self._to)
            except BlockingIOError:
                self._blocked(pkt)
        if core.finished:
            self._finish(core)

    def source(self, ip: int, port: int) -> Address:
        """A source as recvmmsg reports it (IPv4 in network order, port) in the form a core
        compares: the switch's or the fallback server's address built once, any other anew (a
        forged one: not kept, so datagrams from many addresses hold no memory here)."""
        if port == self._switch_port and ip == self._switch_ip:
            return self._switch
        if port == self._fallback_port and ip == self._fallback_ip:
            return self._fallback
        return address(ip, port)

    def burst(self, io: Any, n: int) -> None:
        """The `n` datagrams a `batch.BatchSocket`'s receive took, in order, each at the time it
        is handed (as the per-datagram path does)."""
        size, views, wholes, info = io.size, io.views, io.wholes, io.info
        clock = self._clock
        for i in range(n):
            length: int = info[3 * i]
            data = wholes[i] if length == size else views[i][:length]
            self.handle(data, self.source(info[3 * i + 1], info[3 * i + 2]), clock())
