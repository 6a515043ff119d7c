"""The switch's P4Runtime service: arbitration, pipeline config, Write/Read, packet I/O.

One lock guards the engine: the packet loop holds it around `process`, RPC handlers around each
state change. Writes are applied update by update; a failed update changes nothing and its error
travels as a p4.v1.Error in the google.rpc.Status details, as PI does.
"""

import json
import queue
import threading
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2

from ina.p4rt import codec
from ina.p4rt.proto import code_pb2, p4runtime_pb2, p4runtime_pb2_grpc, status_pb2
from ina.p4rt.schema import Schema
from ina.switch import p4runtime_entities as ent
from ina.switch.engine import Switch
from ina.switch.errors import PipelineError
from ina.switch.pipeline import load_pipeline

API_VERSION = "1.4.1"
READ_CHUNK = 4096  # entities per ReadResponse


@dataclass(frozen=True)
class _Status:
    """A grpc.Status for abort_with_status (grpcio-status is not needed for this)."""

    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple


@dataclass(frozen=True)
class _StreamEnd:
    """Queued on a stream's outbox: end that stream with this error, as the spec asks."""

    code: grpc.StatusCode
    message: str


class _Stream:
    def __init__(self) -> None:
        self.election_id: int | None = None
        self.outbox: queue.Queue = queue.Queue()


class P4RuntimeService(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, switch: Switch, lock: threading.Lock, device_id: int = 0,
                 transmit: Callable[[list[tuple[int, bytes]]], None] | None = None):
        self.sw = switch
        self.lock = lock
        self.device_id = device_id
        self.transmit = transmit or (lambda outputs: None)
        self.schema: Schema | None = None
        self.config = p4runtime_pb2.ForwardingPipelineConfig()
        self.pending: p4runtime_pb2.ForwardingPipelineConfig | None = None
        self.streams: list[_Stream] = []
        self.streams_lock = threading.Lock()
        self._list_id = 0
        self.digest_configs: dict[int, p4runtime_pb2.DigestEntry] = {}

    # --- arbitration -----------------------------------------------------------------------
    def _primary_id(self) -> int | None:
        ids = [s.election_id for s in self.streams if s.election_id is not None]
        return max(ids) if ids else None

    def _require_primary(self, context, election_id: p4runtime_pb2.Uint128, device_id: int) -> None:
        if device_id != self.device_id:
            context.abort(grpc.StatusCode.NOT_FOUND, f"this switch is device {self.device_id}, not {device_id}")
        wanted = (election_id.high << 64) | election_id.low
        with self.streams_lock:
            primary = self._primary_id()
        if primary is None or wanted != primary:
            context.abort(grpc.StatusCode.PERMISSION_DENIED,
                          "not the primary controller: open a StreamChannel with the highest election id first")

    def _announce(self) -> None:
        """Tell every arbitrated stream whether it is primary (OK) or backup (ALREADY_EXISTS)."""
        primary = self._primary_id()
        for s in self.streams:
            if s.election_id is None:
                continue
            ok = s.election_id == primary
            msg = p4runtime_pb2.StreamMessageResponse()
            arb = msg.arbitration
            arb.device_id = self.device_id
            arb.election_id.high, arb.election_id.low = primary >> 64, primary & (2**64 - 1)
            arb.status.code = code_pb2.OK if ok else code_pb2.ALREADY_EXISTS
            arb.status.message = "primary" if ok else "backup: another controller has a higher election id"
            s.outbox.put(msg)

    def StreamChannel(self, request_iterator, context):
        stream = _Stream()
        with self.streams_lock:
            self.streams.append(stream)

        def read() -> None:
            try:
                for msg in request_iterator:
                    self._on_stream_message(stream, msg)
            except grpc.RpcError:
                pass
            finally:
                stream.outbox.put(None)

        threading.Thread(target=read, daemon=True).start()
        try:
            while True:
                item = stream.outbox.get()
                if item is None:
                    break
                if isinstance(item, _StreamEnd):
                    context.abort(item.code, item.message)
                yield item
        finally:
            with self.streams_lock:
                self.streams.remove(stream)
                if stream.election_id is not None:
                    self._announce()

    def _on_stream_message(self, stream: _Stream, msg: p4runtime_pb2.StreamMessageRequest) -> None:
        kind = msg.WhichOneof("update")
        if kind == "arbitration":
            arb = msg.arbitration
            if arb.device_id != self.device_id:
                stream.outbox.put(_StreamEnd(grpc.StatusCode.NOT_FOUND,
                                             f"this switch is device {self.device_id}, not {arb.device_id}"))
                return
            election_id = (arb.election_id.high << 64) | arb.election_id.low
            with self.streams_lock:
                if any(s is not stream and s.election_id == election_id for s in self.streams):
                    stream.outbox.put(_StreamEnd(grpc.StatusCode.INVALID_ARGUMENT,
                                                 f"election id {election_id} is already used by another controller"))
                    return
                stream.election_id = election_id
                self._announce()
        elif kind == "packet":
            with self.streams_lock:
                primary = stream.election_id is not None and stream.election_id == self._primary_id()
            if primary and self.sw.cpu_port is not None and self.schema is not None:
                try:
                    data = self._packet_out_bytes(msg.packet)
                except ValueError as err:
                    reply = p4runtime_pb2.StreamMessageResponse()
                    reply.error.canonical_code = code_pb2.INVALID_ARGUMENT
                    reply.error.message = str(err)
                    reply.error.packet_out.packet_out.CopyFrom(msg.packet)
                    stream.outbox.put(reply)
                    return
                with self.lock:
                    outputs = self.sw.process(self.sw.cpu_port, data)
                self.deliver(outputs)

    def _metadata_layout(self, name: str) -> list[tuple[int, int]]:
        try:
            cpm = self.schema.controller_packet_metadata(name)
        except KeyError:
            return []
        return [(m.id, m.bitwidth) for m in cpm.metadata]

    def _packet_out_bytes(self, packet: p4runtime_pb2.PacketOut) -> bytes:
        """The packet_out header the program parses on the CPU port, then the payload.

        Raises ValueError for a metadata id the P4Info lacks or a value wider than its field.
        """
        layout = self._metadata_layout("packet_out")
        widths = dict(layout)
        given = {}
        for m in packet.metadata:
            if m.metadata_id not in widths:
                raise ValueError(f"PacketOut metadata id {m.metadata_id} is not in the P4Info's packet_out header")
            given[m.metadata_id] = codec.decode_checked(m.value, widths[m.metadata_id],
                                                        f"PacketOut metadata {m.metadata_id}")
        value, bits = 0, 0
        for mid, width in layout:
            value = (value << width) | given.get(mid, 0)
            bits += width
        header = value.to_bytes((bits + 7) // 8, "big") if bits else b""
        return header + packet.payload

    def deliver(self, outputs: list[tuple[int, bytes]]) -> None:
        """Send packets to ports, turning those for the CPU port into PacketIn messages."""
        wire = [(p, d) for p, d in outputs if p != self.sw.cpu_port]
        if wire:
            self.transmit(wire)
        for port, data in outputs:
            if port == self.sw.cpu_port:
                self._packet_in(data)
        if self.sw.digests:
            self._digest_lists()

    def _digest_lists(self) -> None:
        """Each digest the data plane generated becomes a DigestList of one entry for the primary."""
        messages = []
        while self.sw.digests:
            name, values = self.sw.digests.popleft()
            try:
                digest_id = self.schema.digest(name).id if self.schema else 0
            except KeyError:
                continue
            self._list_id += 1
            msg = p4runtime_pb2.StreamMessageResponse()
            msg.digest.digest_id, msg.digest.list_id = digest_id, self._list_id
            struct = msg.digest.data.add().struct
            for value in values:
                struct.members.add(bitstring=value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big"))
            messages.append(msg)
        with self.streams_lock:
            primary = self._primary_id()
            for s in self.streams:
                if s.election_id is not None and s.election_id == primary:
                    for msg in messages:
                        s.outbox.put(msg)

    def _packet_in(self, data: bytes) -> None:
        layout = self._metadata_layout("packet_in") if self.schema else []
        bits = sum(w for _i, w in layout)
        nbytes = (bits + 7) // 8
        msg = p4runtime_pb2.StreamMessageResponse()
        value = int.from_bytes(data[:nbytes], "big") if nbytes else 0
        shift = nbytes * 8
        for mid, width in layout:
            shift -= width
            field = (value >> shift) & ((1 << width) - 1)
            msg.packet.metadata.add(metadata_id=mid, value=codec.encode(field, width))
        msg.packet.payload = data[nbytes:]
        with self.streams_lock:
            primary = self._primary_id()
            for s in self.streams:
                if s.election_id is not None and s.election_id == primary:
                    s.outbox.put(msg)

    # --- pipeline ------------------------------------------------------------------------
    def SetForwardingPipelineConfig(self, request, context):
        self._require_primary(context, request.election_id, request.device_id)
        action = request.action
        Action = p4runtime_pb2.SetForwardingPipelineConfigRequest
        if action in (Action.VERIFY, Action.VERIFY_AND_COMMIT, Action.VERIFY_AND_SAVE):
            program = self._verify(context, request.config)
            if action == Action.VERIFY:
                return p4runtime_pb2.SetForwardingPipelineConfigResponse()
            if action == Action.VERIFY_AND_SAVE:
                self.pending = request.config
                return p4runtime_pb2.SetForwardingPipelineConfigResponse()
            self._commit(context, request.config, program)
        elif action == Action.COMMIT:
            if self.pending is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "COMMIT without a saved config (use VERIFY_AND_SAVE first)")
            self._commit(context, self.pending, json.loads(self.pending.p4_device_config))
            self.pending = None
        elif action == Action.RECONCILE_AND_COMMIT:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "RECONCILE_AND_COMMIT is not supported; use VERIFY_AND_COMMIT")
        else:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "unspecified SetForwardingPipelineConfig action")
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _verify(self, context, config: p4runtime_pb2.ForwardingPipelineConfig) -> dict:
        if not config.HasField("p4info"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the config carries no P4Info")
        try:
            program = json.loads(config.p4_device_config)
            load_pipeline(program, self.sw.drop_port)
        except (ValueError, UnicodeDecodeError) as err:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"p4_device_config is not BMv2 JSON: {err}")
        except PipelineError as err:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the switch cannot run this BMv2 JSON: {err}")
        missing = _p4info_names_missing_from(config.p4info, program)
        if missing:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"the P4Info names {', '.join(missing[:5])} that the BMv2 JSON lacks; "
                          "push the P4Info and the JSON of one compile")
        return program

    def _commit(self, context, config: p4runtime_pb2.ForwardingPipelineConfig, program: dict) -> None:
        with self.lock:
            try:
                self.sw.load(program)
            except PipelineError as err:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
            self.schema = Schema(config.p4info)
            self.digest_configs = {}
            self.config = p4runtime_pb2.ForwardingPipelineConfig()
            self.config.CopyFrom(config)

    def GetForwardingPipelineConfig(self, request, context):
        if request.device_id != self.device_id:
            context.abort(grpc.StatusCode.NOT_FOUND, f"this switch is device {self.device_id}")
        if self.schema is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline has been set")
        kind = p4runtime_pb2.GetForwardingPipelineConfigRequest
        out = p4runtime_pb2.ForwardingPipelineConfig()
        out.cookie.CopyFrom(self.config.cookie)
        if request.response_type in (kind.ALL, kind.P4INFO_AND_COOKIE):
            out.p4info.CopyFrom(self.config.p4info)
        if request.response_type in (kind.ALL, kind.DEVICE_CONFIG_AND_COOKIE):
            out.p4_device_config = self.config.p4_device_config
        return p4runtime_pb2.GetForwardingPipelineConfigResponse(config=out)

    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    # --- write and read ------------------------------------------------------------------
    def Write(self, request, context):
        self._require_primary(context, request.election_id, request.device_id)
        if self.schema is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline has been set")
        errors: list[p4runtime_pb2.Error] = []
        with self.lock:
            for update in request.updates:
                try:
                    self._apply(update)
                    errors.append(p4runtime_pb2.Error(canonical_code=code_pb2.OK))
                except ent.EntityError as err:
                    errors.append(p4runtime_pb2.Error(canonical_code=err.code.value[0], message=err.message))
                except (KeyError, IndexError, ValueError) as err:
                    errors.append(p4runtime_pb2.Error(canonical_code=code_pb2.INVALID_ARGUMENT, message=str(err)))
        if all(e.canonical_code == code_pb2.OK for e in errors):
            return p4runtime_pb2.WriteResponse()
        status = status_pb2.Status(code=code_pb2.UNKNOWN, message="Write failure.")
        for error in errors:
            detail = any_pb2.Any()
            detail.Pack(error)
            status.details.append(detail)
        failed = "; ".join(e.message for e in errors if e.canonical_code != code_pb2.OK)
        context.abort_with_status(_Status(grpc.StatusCode.UNKNOWN, failed,
                                          (("grpc-status-details-bin", status.SerializeToString()),)))
        return None

    def _apply(self, update: p4runtime_pb2.Update) -> None:
        entity = update.entity
        kind = entity.WhichOneof("entity")
        sw, schema, utype = self.sw, self.schema, update.type
        if kind == "table_entry":
            ent.write_table_entry(sw, schema, utype, entity.table_entry)
        elif kind == "register_entry":
            ent.write_register(sw, schema, utype, entity.register_entry)
        elif kind == "counter_entry":
            ent.write_counter(sw, schema, utype, entity.counter_entry)
        elif kind == "direct_counter_entry":
            ent.write_direct_counter(sw, schema, utype, entity.direct_counter_entry)
        elif kind == "meter_entry":
            ent.write_meter(sw, schema, utype, entity.meter_entry)
        elif kind == "packet_replication_engine_entry":
            ent.write_pre(sw, utype, entity.packet_replication_engine_entry)
        elif kind == "digest_entry":
            ent.write_digest(self.digest_configs, schema, utype, entity.digest_entry)
        else:
            raise ent.EntityError(grpc.StatusCode.UNIMPLEMENTED, f"writing {kind} is not supported")

    def Read(self, request, context):
        if request.device_id != self.device_id:
            context.abort(grpc.StatusCode.NOT_FOUND, f"this switch is device {self.device_id}")
        if self.schema is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no pipeline has been set")
        readers = {
            "table_entry": lambda e: ent.read_table_entries(self.sw, self.schema, e.table_entry),
            "register_entry": lambda e: ent.read_registers(self.sw, self.schema, e.register_entry),
            "counter_entry": lambda e: ent.read_counters(self.sw, self.schema, e.counter_entry),
            "direct_counter_entry": lambda e: ent.read_direct_counters(self.sw, self.schema, e.direct_counter_entry),
            "meter_entry": lambda e: ent.read_meters(self.sw, self.schema, e.meter_entry),
            "packet_replication_engine_entry": lambda e: ent.read_pre(self.sw, e.packet_replication_engine_entry),
            "digest_entry": lambda e: ent.read_digests(self.digest_configs, self.schema, e.digest_entry),
        }
        found: list[p4runtime_pb2.Entity] = []
        with self.lock:
            try:
                for query in request.entities:
                    kind = query.WhichOneof("entity")
                    if kind not in readers:
                        context.abort(grpc.StatusCode.UNIMPLEMENTED, f"reading {kind} is not supported")
                    found.extend(_wrap(kind, item) for item in readers[kind](query))
            except ent.EntityError as err:
                context.abort(err.code, err.message)
        # Several responses keep each message far below gRPC's 4 MB default (a wildcard read of
        # every register cell of the aggregation program is tens of MB).
        for start in range(0, max(len(found), 1), READ_CHUNK):
            yield p4runtime_pb2.ReadResponse(entities=found[start:start + READ_CHUNK])


def _p4info_names_missing_from(p4info, program: dict) -> list[str]:
    """P4Info entities the server maps to the JSON by fully qualified name that the JSON lacks."""
    in_json = {
        "table": {t["name"] for p in program["pipelines"] for t in p.get("tables", [])},
        "register": {r["name"] for r in program.get("register_arrays", [])},
        "counter": {c["name"] for c in program.get("counter_arrays", [])},
        "meter": {m["name"] for m in program.get("meter_arrays", [])},
    }
    named = [("table", p4info.tables), ("register", p4info.registers), ("counter", p4info.counters),
             ("counter", p4info.direct_counters), ("meter", p4info.meters)]
    return [f"{kind} '{e.preamble.name}'" for kind, items in named for e in items
            if e.preamble.name not in in_json[kind]]


def _wrap(kind: str, item) -> p4runtime_pb2.Entity:
    entity = p4runtime_pb2.Entity()
    getattr(entity, kind).CopyFrom(item)
    return entity


def serve(service: P4RuntimeService, address: str) -> grpc.Server:
    """Start a gRPC server for `service` on `address` (HOST:PORT; port 0 picks one)."""
    # Without so_reuseport=0 a second switch would silently share a port already in use.
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=[("grpc.so_reuseport", 0)])
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(service, server)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError:
        port = 0
    if port == 0:
        raise OSError(f"cannot listen on {address}: the port is in use or the address is not HOST:PORT "
                      "(pick another --grpc-server-addr)")
    server.start()
    server.bound_port = port  # type: ignore[attr-defined]
    return server
