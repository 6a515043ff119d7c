"""The v1model data plane: one packet in, every packet out, with simple_switch's traffic manager.

After ingress: I2E clone, digest, resubmit, then multicast (one copy per (port, rid) replica),
drop when egress_spec is the drop port, else unicast. After egress: E2E clone, drop,
recirculate, else deparse and transmit. The per-packet work itself is the generated code of
pipeline.py; this module only moves packets between its stages.
"""

from collections import Counter as Tally
from collections import deque
from collections.abc import Callable
from time import monotonic

from ina.switch.errors import PipelineError
from ina.switch.native.build import BuildError
from ina.switch.native.datapath import NativeDataPath
from ina.switch.native.expressions import Unsupported
from ina.switch.pipeline import Pipeline, load_pipeline
from ina.switch.replication import (
    MAX_OUTPUT_BYTES,
    MAX_OUTPUT_PACKETS,
    MAX_PORT,
    CloneSessions,
    Multicast,
)
from ina.switch.runtime import AssertionFailed

NORMAL, INGRESS_CLONE, EGRESS_CLONE, RECIRC, REPLICATION, RESUBMIT = 0, 1, 2, 4, 5, 6
MAX_REENTRY = 16  # resubmits/recirculations/clones one packet may cause, as a loop guard
MAX_PACKET = 65535


ENGINES = ("auto", "native", "python")


class DirectCounterView:
    """Direct counters live in table entries; this reads and writes them by entry handle."""

    def __init__(self, table):
        self.table = table

    def read(self, handle: int) -> tuple[int, int]:
        return self.table.counters(handle)

    def write(self, handle: int, packets: int, bytes_: int) -> None:
        self.table.set_counters(handle, packets, bytes_)


class Sent(list):
    """The packets one input packet sends, as (port, bytes), and their total length: what
    MAX_OUTPUT_PACKETS and MAX_OUTPUT_BYTES count, without summing the list per packet."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0


class Switch:
    """A v1model switch. `engine` picks the data path: "native" (the program compiled to C, see
    native/), "python" (generated Python, the only one that traces packets), or "auto": native when
    the program and machine allow it and no packet log is asked for, else Python; `engine_note`
    then says why."""

    def __init__(self, device_id: int = 0, cpu_port: int | None = None, drop_port: int = 511,
                 log: Callable[[str], None] | None = None, engine: str = "auto", profile: bool = False):
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not '{engine}'")
        self.engine = engine
        self.profile = profile  # native engine: the build that counts time per stage (bench profile)
        self.engine_note = ""
        self.native: NativeDataPath | None = None
        self.device_id = device_id
        self.cpu_port = cpu_port
        self.drop_port = drop_port
        self.log = log
        self.pipeline: Pipeline | None = None
        self.max_port = MAX_PORT  # the largest ingress port: what the program's ingress_port holds
        self.multicast = Multicast()
        self.clone = CloneSessions()
        self._digests: deque[tuple[str, list[int]]] = deque(maxlen=65536)
        self._stats: Tally[str] = Tally()
        self._start = monotonic()
        self.on_load: Callable[[], None] | None = None  # told when a new program is installed

    @property
    def stats(self) -> Tally[str]:
        """Packet counts: rx, tx, dropped, parser_errors, dropped_* (why), of both data paths."""
        total = Tally(self._stats)
        if self.native is not None:
            total.update(self.native.stats())
        return +total

    @property
    def digests(self) -> deque:
        """Digests generated so far, oldest first, as (learn list name, field values); consumers
        popleft() them. The native engine's digests wait in C until this is read."""
        if self.native is not None:
            self.native.drain_digests(self._digests)
        return self._digests

    @property
    def engine_name(self) -> str:
        return "native" if self.native is not None else "python"

    # --- pipeline ------------------------------------------------------------------------
    def load(self, program: dict) -> None:
        """Compile and install a BMv2 JSON program; on error the running one stays."""
        pipeline = load_pipeline(program, self.drop_port, self.log)
        if "standard_metadata" not in pipeline.layout.headers:
            raise PipelineError("the program has no standard_metadata header (not a v1model program?)")
        max_port = (1 << pipeline.layout.header("standard_metadata").width("ingress_port")) - 1
        native = self._native(pipeline)
        self.pipeline, self.native, self.max_port = pipeline, native, max_port
        self.multicast, self.clone = Multicast(), CloneSessions()
        if native is not None:
            self.multicast.mirror, self.clone.mirror = native.set_group, native.set_session
        self._digests.clear()
        if self.on_load is not None:
            self.on_load()

    def _native(self, pipeline: Pipeline) -> "NativeDataPath | None":
        """The program compiled to C, or None (with the reason in engine_note) for Python."""
        if self.engine == "python":
            self.engine_note = "the Python engine was asked for"
            return None
        if self.log is not None and self.engine == "auto":
            self.engine_note = "packet logging runs on the Python engine"
            return None
        try:
            native = NativeDataPath(pipeline, self.drop_port, self.profile)
        except (Unsupported, BuildError) as err:
            if self.engine == "native":
                raise PipelineError(f"the native engine cannot run this program: {err}") from None
            self.engine_note = f"the native engine cannot run this program: {err}"
            return None
        self.engine_note = "the program runs compiled to C"
        return native

    @property
    def tables(self) -> dict:
        return self.pipeline.tables if self.pipeline else {}

    @property
    def registers(self) -> dict:
        return self.pipeline.registers if self.pipeline else {}

    @property
    def counters(self) -> dict:
        return self.pipeline.counters if self.pipeline else {}

    @property
    def parse_vsets(self) -> dict:
        """Parser value sets by name: sets of ints (see pipeline.ValueSet), changed in place."""
        return self.pipeline.parse_vsets if self.pipeline else {}

    @property
    def meters(self) -> dict:
        return self.pipeline.meters if self.pipeline else {}

    @property
    def direct_counters(self) -> dict[str, DirectCounterView]:
        if not self.pipeline:
            return {}
        return {c.binding: DirectCounterView(self.pipeline.tables[c.binding])
                for c in self.pipeline.model.counters if c.direct}

    # --- packets -------------------------------------------------------------------------
    def process(self, port: int, data: bytes) -> list[tuple[int, bytes]]:
        """Run one packet through the switch; returns (port, bytes) for every packet sent.

        A port the program cannot hold (ingress_port's width) is the caller's mistake, not traffic
        to count, so it raises ValueError (TypeError for a port that is not an int or data that
        is not bytes-like) before either engine sees it: C would truncate it to its int.
        """
        if not isinstance(port, int):
            raise TypeError(f"port must be an int, not {type(port).__name__}")
        if not 0 <= port <= self.max_port:
            raise ValueError(f"port {port} is out of range 0..{self.max_port} (the program's ingress_port)")
        if type(data) is not bytes:
            if not isinstance(data, (bytearray, memoryview)):
                raise TypeError(f"data must be bytes, not {type(data).__name__}")
            data = bytes(data)
        if self.native is not None:
            return self.native.process(port, data)
        self._stats["rx"] += 1
        pipeline = self.pipeline
        if pipeline is None:
            self._stats["dropped_no_pipeline"] += 1
            return []
        if len(data) > MAX_PACKET:
            self._stats["dropped_oversize"] += 1
            self._trace(f"drop: packet of {len(data)} bytes is larger than {MAX_PACKET}")
            return []
        out = Sent()
        try:
            self._ingress(pipeline, port, data, NORMAL, (), out, 0)
        except (IndexError, AssertionFailed, ZeroDivisionError, ValueError, OverflowError) as err:
            self._stats["dropped_error"] += 1
            self._trace(f"drop: {err}")
            return []
        self._stats["tx"] += len(out)
        return out

    def _trace(self, message: str) -> None:
        if self.log is not None:
            self.log(message)

    def _now_us(self) -> int:
        return int((monotonic() - self._start) * 1e6)

    def _ingress(self, pl: Pipeline, port: int, data: bytes, itype: int,
                 preserved: tuple, out: Sent, depth: int) -> None:
        h = pl.hot
        P = pl.template[:]
        P[h.ingress_port] = port
        P[h.packet_length] = len(data)
        P[h.instance_type] = itype
        P[h.ingress_global_timestamp] = int((monotonic() - self._start) * 1e6)
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
        P[h.egress_global_timestamp] = int((monotonic() - self._start) * 1e6)
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
            self._trace(f"drop: the packet has sent {len(out)} packets of {out.bytes} bytes already")
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
