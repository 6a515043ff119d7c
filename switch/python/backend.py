"""The Python backend: the program as generated Python (pipeline.py) and simple_switch's traffic
manager around it: one packet in, every packet out.

After ingress: I2E clone, digest, resubmit, then multicast (one copy per (port, rid) replica),
drop when egress_spec is the drop port, else unicast. After egress: E2E clone, drop,
recirculate, else deparse and transmit. The per-packet work itself is the generated code; this
module only moves packets between its stages. The only backend that traces packets (`log`).
"""

import threading
from collections import Counter as Tally
from collections import deque
from collections.abc import Callable
from time import monotonic

from ina.switch.io.ports import Ports
from ina.switch.model.layout import Layout
from ina.switch.model.program import Program
from ina.switch.python.pipeline import Pipeline, build_pipeline
from ina.switch.python.runtime import AssertionFailed
from ina.switch.state.backend import Host, Packets, max_port
from ina.switch.state.replication import (
    MAX_OUTPUT_BYTES,
    MAX_OUTPUT_PACKETS,
    CloneSessions,
    Multicast,
)

NORMAL, INGRESS_CLONE, EGRESS_CLONE, RECIRC, REPLICATION, RESUBMIT = 0, 1, 2, 4, 5, 6
MAX_REENTRY = 16  # resubmits/recirculations/clones one packet may cause, as a loop guard
MAX_PACKET = 65535


class Sent(list):
    """The packets one input packet sends, as (port, bytes), and their total length: what
    MAX_OUTPUT_PACKETS and MAX_OUTPUT_BYTES count, without summing the list per packet."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0


class PythonBackend:
    """A program run as generated Python; its tables, externs, groups and sessions are Python
    objects the generated code reads directly."""

    name = "python"

    def __init__(
        self,
        layout: Layout,
        model: Program,
        drop_port: int,
        log: Callable[[str], None] | None = None,
    ):
        self.pipeline: Pipeline = build_pipeline(layout, model, drop_port, log)
        self.model, self.drop_port, self.log = model, drop_port, log
        self.max_port = max_port(layout)
        pl = self.pipeline
        self.tables, self.registers, self.counters = pl.tables, pl.registers, pl.counters
        self.meters, self.parse_vsets, self.externs = pl.meters, pl.parse_vsets, pl.externs
        self.multicast, self.clone = Multicast(), CloneSessions()
        self._digests: deque[tuple[str, list[int]]] = deque(maxlen=65536)
        self._stats: Tally[str] = Tally()
        self._start = monotonic()
        self._set_us: int | None = None

    @property
    def program(self) -> dict:
        return self.model.json

    def stats(self) -> dict[str, int]:
        return dict(self._stats)

    def drain_digests(self, into: deque) -> None:
        digests = self._digests
        while digests:
            into.append(digests.popleft())

    def set_clock(self, us: int | None) -> None:
        self._set_us = us

    def _now_us(self) -> int:
        return self._set_us if self._set_us is not None else int((monotonic() - self._start) * 1e6)

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
        """Ports' Python loop: every frame through `process`, under `lock`."""
        ports.run(process, host.deliver, lock, wake)

    def profile(self) -> tuple[dict[str, int], int]:
        """Nothing: only the native engine counts time per stage."""
        return {}, 0

    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        self._stats["rx"] += 1
        if len(data) > MAX_PACKET:
            self._stats["dropped_oversize"] += 1
            self._trace(f"drop: packet of {len(data)} bytes is larger than {MAX_PACKET}")
            return []
        out = Sent()
        try:
            self._ingress(self.pipeline, port, data, NORMAL, (), out, 0)
        except (IndexError, AssertionFailed, ZeroDivisionError, ValueError, OverflowError) as err:
            self._stats["dropped_error"] += 1
            self._trace(f"drop: {err}")
            return []
        self._stats["tx"] += len(out)
        return out

    def _trace(self, message: str) -> None:
        if self.log is not None:
            self.log(message)

    def _ingress(
        self,
        pl: Pipeline,
        port: int,
        data: bytes,
        itype: int,
        preserved: tuple,
        out: Sent,
        depth: int,
    ) -> None:
        h = pl.hot
        P = pl.template[:]
        P[h.ingress_port] = port
        P[h.packet_length] = len(data)
        P[h.instance_type] = itype
        P[h.ingress_global_timestamp] = self._now_us()
        for slot, value in preserved:
            P[slot] = value
        if self.log:
            self._trace(f"packet in: port {port}, {len(data)} bytes, instance type {itype}")
        off = pl.parse(P, data)
        payload = data[off:]
        if P[h.parser_error]:
            self._stats["parser_errors"] += 1
        pl.verify_checksums(P, payload)
        pl.ingress(P)
        if P[h.clone_session] and depth < MAX_REENTRY:
            self._clone(pl, P, data, INGRESS_CLONE, out, depth)
        if P[h.digest]:
            name, slots = pl.learn_lists.get(P[h.digest] - 1, ("", []))
            self._digests.append((name, [P[x] for x in slots]))
        if P[h.resubmit]:
            if depth < MAX_REENTRY:
                kept = self._preserve(pl, P, P[h.resubmit] - 1)
                self._trace("resubmit")
                self._ingress(pl, port, data, RESUBMIT, kept, out, depth + 1)
            return
        mgid = P[h.mcast_grp]
        if mgid:
            replicas = self.multicast.replicas(mgid)
            if not replicas:
                self._stats["dropped_empty_group"] += 1
                self._trace(f"drop: multicast group {mgid} has no replicas")
            for eport, rid in replicas:
                Q = P[:]
                Q[h.egress_port] = eport
                Q[h.egress_rid] = rid
                Q[h.instance_type] = REPLICATION
                self._egress(pl, Q, payload, out, depth)
            return
        if P[h.egress_spec] == self.drop_port:
            self._stats["dropped"] += 1
            self._trace("drop: egress_spec is the drop port (mark_to_drop)")
            return
        P[h.egress_port] = P[h.egress_spec]
        self._egress(pl, P, payload, out, depth)

    def _egress(self, pl: Pipeline, P: list, payload: bytes, out: Sent, depth: int) -> None:
        h = pl.hot
        P[h.egress_spec] = 0
        P[h.exit] = 0
        P[h.clone_session] = 0
        P[h.egress_global_timestamp] = self._now_us()
        if self.log:
            self._trace(f"egress: port {P[h.egress_port]}, rid {P[h.egress_rid]}")
        pl.egress(P)
        if P[h.clone_session] and depth < MAX_REENTRY:
            self._clone(pl, P, self._serialise(pl, P, payload), EGRESS_CLONE, out, depth)
        if P[h.egress_spec] == self.drop_port:
            self._stats["dropped"] += 1
            self._trace("drop: marked to drop in egress")
            return
        pl.update_checksums(P, payload)
        packet = pl.deparse(P) + payload
        if P[h.recirculate]:
            if depth < MAX_REENTRY:
                kept = self._preserve(pl, P, P[h.recirculate] - 1)
                self._trace("recirculate")
                self._ingress(pl, P[h.egress_port], packet, RECIRC, kept, out, depth + 1)
            return
        truncate = P[h.truncate]
        if truncate:
            packet = packet[:truncate]
        if len(out) >= MAX_OUTPUT_PACKETS or out.bytes + len(packet) > MAX_OUTPUT_BYTES:
            self._stats["dropped_output_full"] += 1
            self._trace(
                f"drop: the packet has sent {len(out)} packets of {out.bytes} bytes already"
            )
            return
        out.bytes += len(packet)
        if self.log:
            self._trace(f"packet out: port {P[h.egress_port]}, {len(packet)} bytes")
        out.append((P[h.egress_port], packet))

    @staticmethod
    def _serialise(pl: Pipeline, P: list, payload: bytes) -> bytes:
        pl.update_checksums(P, payload)
        return pl.deparse(P) + payload

    @staticmethod
    def _preserve(pl: Pipeline, P: list, field_list: int) -> tuple:
        return tuple((slot, P[slot]) for slot in pl.field_lists.get(field_list, []))

    def _clone(self, pl: Pipeline, P: list, data: bytes, itype: int, out: Sent, depth: int) -> None:
        hidden, s = pl.layout.hidden, pl.slots
        session = P[hidden["clone_session"]] - 1
        config = self.clone.get(session)
        if config is None:
            self._trace(f"clone: session {session} is not configured")
            return
        replicas, truncate = config
        kept = self._preserve(pl, P, P[hidden["clone_fields"]])
        for eport, rid in replicas:
            Q = pl.template[:]
            Q[s["packet_length"]] = len(data)
            off = pl.parse(Q, data)
            for slot, value in kept:
                Q[slot] = value
            Q[s["ingress_port"]] = P[s["ingress_port"]]
            Q[s["egress_port"]] = eport
            Q[s["egress_rid"]] = rid
            Q[s["instance_type"]] = itype
            Q[hidden["truncate"]] = truncate
            self._trace(f"clone ({'I2E' if itype == INGRESS_CLONE else 'E2E'}) to port {eport}")
            self._egress(pl, Q, data[off:], out, depth + 1)
