"""The switch's P4Runtime service: arbitration, pipeline config, Write/Read, packet I/O.

Arbitration follows P4Runtime 1.4.1 (default role only): the primary is the stream whose election
id equals the highest ever accepted; a stream without an election id is never primary; when the
primary leaves nobody is promoted. Only the primary may Write or set the pipeline.

Nothing a client sends can freeze the server or keep the controller with the highest election id
out (_Arbiter's admission): streams are few (MAX_STREAMS, each holding a thread), a new stream
always gets in (closing the oldest that has not arbitrated when they are all taken), a stream must
arbitrate within ARBITRATION_TIMEOUT, at most MAX_CONTROLLERS have arbitrated and a newcomer whose
election id is above all of theirs closes the oldest that is not primary, every stream but the
primary is closed after IDLE_TIMEOUT without a message; the thread pool keeps UNARY_WORKERS threads
for unary RPCs however many streams are open, Reads stream in pages and stop at MAX_READ_ENTITIES,
messages have size limits (MAX_MESSAGE_BYTES), and a Write's updates are parsed only once its
client is known to be the primary. Locks: `writing` (arbitration changes wait for a Write in flight, as the
spec asks) is taken before `lock` (the engine: the packet loop holds it around `process`) or the
arbiter's.
SetForwardingPipelineConfig builds the new program (validation, the code budget, code generation,
gcc) under `writing` alone and installs it under `lock` with a swap of references, so packets,
Reads and Capabilities keep running on the old program until the new one is ready.

`Compat` holds, as one table, every rule where another target answers differently (SPEC is this
server's own P4Runtime 1.4.1; SIMPLE_SWITCH_GRPC is BMv2 1.15 with PI, probed over loopback), so
the controller can be tested against the surface of the switch it meets in the field.
"""

import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from itertools import chain, islice

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message

from ina.p4rt import codec
from ina.p4rt.proto import (
    MAX_MESSAGE_BYTES,
    WriteRequestHead,
    code_pb2,
    p4runtime_pb2,
    p4runtime_pb2_grpc,
    status_pb2,
)
from ina.p4rt.schema import Schema, SchemaError
from ina.switch.engine import Built, Switch, reclaim
from ina.switch.model.errors import PipelineError
from ina.switch.model.externs import EXTERNS
from ina.switch.model.program import Program
from ina.switch.p4runtime import entities as ent

API_VERSION = "1.4.1"
READ_CHUNK = 4096  # entities per ReadResponse
MAX_READ_ENTITIES = 1 << 18  # per ReadRequest; a Read selecting more ends with RESOURCE_EXHAUSTED
MAX_CONTROLLERS = 16  # streams that have arbitrated; beyond, only a higher election id gets in
MAX_UNARBITRATED = (
    8  # places kept for streams that have not arbitrated yet, so a newcomer always has one
)
MAX_STREAMS = (
    MAX_CONTROLLERS + MAX_UNARBITRATED
)  # open StreamChannels, each holding a server thread
UNARY_WORKERS = 8  # threads that stay free for Write/Read/... while MAX_STREAMS streams are open
ARBITRATION_TIMEOUT = 5.0  # seconds a new stream has to send its MasterArbitrationUpdate
IDLE_TIMEOUT = 60.0  # seconds a stream other than the primary may stay silent before it is closed
OUTBOX_LIMIT = (
    1024  # PacketIn/digest messages queued for a stream that does not read; more are dropped
)
ERROR_MESSAGE_CHARS = 200  # per p4.Error message, so a batch's statuses stay small metadata
Atomicity = p4runtime_pb2.WriteRequest.Atomicity
_GRPC_CODES = {code.value[0]: code for code in grpc.StatusCode}  # canonical number -> code


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
        self.arbitrated = False
        self.election_id: int | None = None  # None: arbitrated without one (never primary)
        self.outbox: queue.Queue = queue.Queue()
        self.opened = self.heard = (
            time.monotonic()
        )  # heard: its last message, or its last moment as primary

    def offer(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        """Queue data for the client unless it stopped reading (the spec lets a loaded server drop)."""
        if self.outbox.qsize() < OUTBOX_LIMIT:
            self.outbox.put(msg)


def _uint128(value: p4runtime_pb2.Uint128) -> int:
    return (value.high << 64) | value.low


class _Arbiter:
    """The streams of one device and its election (default role), by the spec's rules, and who may
    hold a stream: a process that opens streams cannot keep out a controller whose election id is
    above all of theirs (docs/security.md, "Arbitration")."""

    def __init__(self, device_id: int):
        self.device_id = device_id
        self.lock = threading.Lock()
        self.streams: list[_Stream] = []  # in the order they opened
        self.highest: int | None = None  # the highest election id ever accepted (election_id_past)

    def open(self, stream: _Stream) -> None:
        """Admit a new stream; when MAX_STREAMS are open, the oldest that has not arbitrated ends
        (there is one: at most MAX_CONTROLLERS have), so opening streams locks nobody out."""
        with self.lock:
            if len(self.streams) >= MAX_STREAMS:
                oldest = next(s for s in self.streams if not s.arbitrated)
                self._evict(
                    oldest,
                    f"{MAX_STREAMS} StreamChannels are open: this one, the oldest that had not sent "
                    "its MasterArbitrationUpdate, made room for a newer one",
                )
            self.streams.append(stream)

    def close(self, stream: _Stream) -> None:
        """A primary leaving leaves the device without one; the others are told (NOT_FOUND)."""
        with self.lock:
            if stream not in self.streams:  # evicted already
                return
            was_primary = self._primary() is stream
            self.streams.remove(stream)
            if was_primary:
                self._notify(self._arbitrated())

    def _evict(self, stream: _Stream, why: str) -> None:
        """End `stream` with RESOURCE_EXHAUSTED, the spec's code for a stream beyond the limit."""
        self.streams.remove(stream)
        stream.outbox.put(_StreamEnd(grpc.StatusCode.RESOURCE_EXHAUSTED, why))

    def _admit(self, stream: _Stream, election_id: int | None) -> _StreamEnd | None:
        """A first arbitration while MAX_CONTROLLERS streams have arbitrated gets in only with an
        election id above every one of theirs, closing the oldest that is not primary; else it is
        refused (RESOURCE_EXHAUSTED, the spec's rule 1.4). Called with the lock held."""
        arbitrated = self._arbitrated()
        if len(arbitrated) < MAX_CONTROLLERS:
            return None
        if election_id is None or any(
            s.election_id is not None and s.election_id >= election_id for s in arbitrated
        ):
            return _StreamEnd(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_CONTROLLERS} controllers are connected, the most this switch serves; "
                "only an election id above all of theirs gets in",
            )
        primary = self._primary()
        oldest = next(s for s in arbitrated if s is not primary)
        self._evict(
            oldest,
            f"{MAX_CONTROLLERS} controllers were connected and one with a higher election id "
            "arrived: this one, the oldest backup, made room",
        )
        return None

    def _left_primacy(self, previous: _Stream | None) -> None:
        """Time as primary counts as heard: a stream demoted now has IDLE_TIMEOUT from now."""
        if previous is not None and previous is not self._primary():
            previous.heard = time.monotonic()

    def idle(self, stream: _Stream) -> bool:
        """Whether `stream` has been silent for IDLE_TIMEOUT while not primary (the primary never is)."""
        with self.lock:
            now = time.monotonic()
            if self._primary() is stream:
                stream.heard = now
            return now - stream.heard >= IDLE_TIMEOUT

    def _arbitrated(self) -> list[_Stream]:
        return [s for s in self.streams if s.arbitrated]

    def _primary(self) -> _Stream | None:
        if self.highest is None:
            return None
        return next((s for s in self._arbitrated() if s.election_id == self.highest), None)

    def is_primary(self, stream: _Stream) -> bool:
        with self.lock:
            return self._primary() is stream

    def is_primary_id(self, election_id: int | None) -> bool:
        """Whether a unary request naming `election_id` comes from the live primary."""
        with self.lock:
            primary = self._primary()
            return (
                primary is not None
                and election_id is not None
                and election_id == primary.election_id
            )

    def to_primary(self, messages: list[p4runtime_pb2.StreamMessageResponse]) -> None:
        with self.lock:
            primary = self._primary()
            for msg in messages if primary else ():
                primary.offer(msg)

    def update(
        self, stream: _Stream, arb: p4runtime_pb2.MasterArbitrationUpdate
    ) -> _StreamEnd | None:
        """Apply one MasterArbitrationUpdate; the error that ends the stream, or None."""
        first = not stream.arbitrated
        if arb.device_id != self.device_id:
            code = grpc.StatusCode.NOT_FOUND if first else grpc.StatusCode.FAILED_PRECONDITION
            return _StreamEnd(code, f"this switch is device {self.device_id}, not {arb.device_id}")
        if arb.HasField("role"):
            if not first:
                return _StreamEnd(
                    grpc.StatusCode.FAILED_PRECONDITION, "a stream's role cannot change"
                )
            if arb.role.name:
                return _StreamEnd(
                    grpc.StatusCode.NOT_FOUND,
                    f"no role '{arb.role.name}': this switch has only the default role",
                )
            if arb.role.HasField("config"):
                return _StreamEnd(
                    grpc.StatusCode.INVALID_ARGUMENT, "this switch supports no role config"
                )
        election_id = _uint128(arb.election_id) if arb.HasField("election_id") else None
        with self.lock:
            if stream not in self.streams:  # evicted meanwhile: its end is queued
                return None
            if election_id is not None and any(
                s is not stream and s.election_id == election_id for s in self._arbitrated()
            ):
                return _StreamEnd(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"election id {election_id} is already used by another controller",
                )
            refused = self._admit(stream, election_id) if first else None
            if refused is not None:
                return refused
            previous = self._primary()
            stream.arbitrated, stream.election_id = True, election_id
            if election_id is not None and (self.highest is None or election_id >= self.highest):
                self.highest = election_id
                self._notify([*(s for s in self._arbitrated() if s is not stream), stream])
            else:
                self._notify(self._arbitrated() if previous is stream else [stream])
            self._left_primacy(previous)
        return None

    def _notify(self, streams: list[_Stream]) -> None:
        """The advisory MasterArbitrationUpdate: OK to the primary, ALREADY_EXISTS to backups,
        NOT_FOUND to all when there is no primary; election id = the highest ever accepted."""
        primary = self._primary()
        for s in streams:
            msg = p4runtime_pb2.StreamMessageResponse()
            arb = msg.arbitration
            arb.device_id = self.device_id
            if self.highest is not None:
                arb.election_id.high, arb.election_id.low = (
                    self.highest >> 64,
                    self.highest & (2**64 - 1),
                )
            if primary is None:
                arb.status.code, arb.status.message = code_pb2.NOT_FOUND, "no primary controller"
            elif s is primary:
                arb.status.code, arb.status.message = code_pb2.OK, "primary"
            else:
                arb.status.code = code_pb2.ALREADY_EXISTS
                arb.status.message = "backup: another controller has a higher election id"
            s.outbox.put(msg)


class _LiveElection(_Arbiter):
    """simple_switch_grpc's election (PI's server): the primary is the open stream with the highest
    election id (none counts as 0), so the next highest is promoted when it leaves; roles are
    ignored; while no stream is open, requests without an election id are the primary's."""

    def _primary(self) -> _Stream | None:
        return max(self._arbitrated(), key=lambda s: s.election_id, default=None)

    def is_primary_id(self, election_id: int | None) -> bool:
        with self.lock:
            primary = self._primary()
            if primary is None:
                return election_id is None
            return (election_id or 0) == primary.election_id

    def update(
        self, stream: _Stream, arb: p4runtime_pb2.MasterArbitrationUpdate
    ) -> _StreamEnd | None:
        first = not stream.arbitrated
        if arb.device_id != self.device_id:
            if first:  # PI makes a device per id; this switch is one device
                return _StreamEnd(
                    grpc.StatusCode.NOT_FOUND,
                    f"this switch is device {self.device_id}, not {arb.device_id}",
                )
            return _StreamEnd(grpc.StatusCode.FAILED_PRECONDITION, "Invalid device id")
        election_id = _uint128(arb.election_id)
        with self.lock:
            if stream not in self.streams or (not first and election_id == stream.election_id):
                return None
            if any(s is not stream and s.election_id == election_id for s in self._arbitrated()):
                return _StreamEnd(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "Election id already exists" if first else "New election id already exists",
                )
            refused = self._admit(stream, election_id) if first else None
            if refused is not None:
                return refused
            previous = self._primary()
            stream.arbitrated, stream.election_id = True, election_id
            is_primary = self._primary() is stream
            changed = is_primary if first else is_primary != (previous is stream)
            self._notify(self._arbitrated() if changed else [stream])
            self._left_primacy(previous)
        return None

    def _notify(self, streams: list[_Stream]) -> None:
        primary = self._primary()
        for s in streams:
            msg = p4runtime_pb2.StreamMessageResponse()
            arb = msg.arbitration
            arb.device_id = self.device_id
            arb.election_id.high, arb.election_id.low = (
                primary.election_id >> 64,
                primary.election_id & (2**64 - 1),
            )
            if s is primary:
                arb.status.code, arb.status.message = code_pb2.OK, "Is primary"
            else:
                arb.status.code, arb.status.message = code_pb2.ALREADY_EXISTS, "Is backup"
            s.outbox.put(msg)


@dataclass(frozen=True)
class Refusal:
    """Requests for entities of `kind` (None: no entity) that `applies` to, answered `code` `message`."""

    kind: str | None
    code: grpc.StatusCode
    message: str
    applies: Callable[[Message], bool] = lambda _entity: True

    def matches(self, kind: str | None, entity: p4runtime_pb2.Entity) -> bool:
        return kind == self.kind and self.applies(getattr(entity, kind) if kind else entity)


@dataclass(frozen=True)
class Compat:
    """The rules where P4Runtime targets answer differently; the service consults only these."""

    name: str
    api_version: str  # Capabilities
    election: type[_Arbiter]  # who is primary, what streams are told
    not_primary: str  # PERMISSION_DENIED message of Write/SetForwardingPipelineConfig
    no_pipeline: str  # FAILED_PRECONDITION message before a pipeline is set
    other_device: str | None  # unary RPCs naming another device: None = NOT_FOUND naming both ids,
    #                           else FAILED_PRECONDITION with this (PI has a pipeline-less device per id)
    atomic_writes: (
        str | None
    )  # UNIMPLEMENTED message of ROLLBACK_ON_ERROR/DATAPLANE_ATOMIC; None names the mode
    write_refusals: tuple[Refusal, ...] = ()  # per update, the batch goes on
    read_refusals: tuple[Refusal, ...] = ()  # the whole Read ends with the refusal's code
    read_error_ends_read: bool = (
        False  # a failed request ends the Read with its own code, not UNKNOWN + details
    )
    batch_summary: bool = True  # a failed Write's status message sums up its p4.Errors (else empty)
    error_space: str = ""  # p4.Error.space of each failed update


SPEC = Compat(
    name="p4runtime-1.4",
    api_version=API_VERSION,
    election=_Arbiter,
    not_primary=(
        "not the primary controller: open a StreamChannel and win the election "
        "(the highest election id), then send that election id"
    ),
    no_pipeline="no pipeline has been set",
    other_device=None,
    atomic_writes=None,
)

_PI_NO_PIPELINE = "No forwarding pipeline config set for this device"
SIMPLE_SWITCH_GRPC = Compat(
    name="simple_switch_grpc",
    api_version="1.3.0",
    election=_LiveElection,
    not_primary="Not primary",
    no_pipeline=_PI_NO_PIPELINE,
    other_device=_PI_NO_PIPELINE,
    atomic_writes="Support for atomic write modes has not been implemented yet",
    write_refusals=(
        Refusal(
            "register_entry", grpc.StatusCode.UNIMPLEMENTED, "Register writes are not supported yet"
        ),
        Refusal(
            "counter_entry",
            grpc.StatusCode.UNIMPLEMENTED,
            "Wildcard write is not supported for indirect counters yet",
            lambda counter: not counter.HasField("index"),
        ),
        Refusal(None, grpc.StatusCode.UNKNOWN, "Incorrect entity type"),
    ),
    read_refusals=(
        Refusal(
            "register_entry", grpc.StatusCode.UNIMPLEMENTED, "Register reads are not supported yet"
        ),
        Refusal(
            "packet_replication_engine_entry",
            grpc.StatusCode.INVALID_ARGUMENT,
            "Invalid PRE operation",
            lambda pre: pre.WhichOneof("type") is None,
        ),
        Refusal(
            "digest_entry",
            grpc.StatusCode.UNIMPLEMENTED,
            "digest_id must be set when reading DigestEntry",
            lambda digest: not digest.digest_id,
        ),
        Refusal(None, grpc.StatusCode.UNKNOWN, "Incorrect entity type"),
    ),
    read_error_ends_read=True,
    batch_summary=False,
    error_space="ALL-sswitch-p4org",
)
COMPAT_MODES = {"simple_switch_grpc": SIMPLE_SWITCH_GRPC}  # ina switch/run --p4runtime-compat


def _error(code: int, message: str = "") -> p4runtime_pb2.Error:
    return p4runtime_pb2.Error(canonical_code=code, message=message[:ERROR_MESSAGE_CHARS])


def _entity_error(err: ent.EntityError) -> p4runtime_pb2.Error:
    return _error(err.code.value[0], err.message)


def _batch_status(errors: list[p4runtime_pb2.Error], what: str, compat: Compat) -> _Status:
    """UNKNOWN with one p4.Error per update/request, in order, as the spec's Error Reporting says."""
    failed = [e for e in errors if e.canonical_code != code_pb2.OK]
    for error in failed:
        error.space = compat.error_space
    first = failed[0]
    message = (
        (
            f"{what} failure: {len(failed)} of {len(errors)} failed; first: "
            f"{code_pb2.Code.Name(first.canonical_code)}: {first.message}"
        )
        if compat.batch_summary
        else ""
    )
    status = status_pb2.Status(code=code_pb2.UNKNOWN, message=message)
    for error in errors:
        detail = any_pb2.Any()
        detail.Pack(error)
        status.details.append(detail)
    return _Status(
        grpc.StatusCode.UNKNOWN, message, (("grpc-status-details-bin", status.SerializeToString()),)
    )


class P4RuntimeService(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(
        self,
        switch: Switch,
        lock: threading.Lock,
        device_id: int = 0,
        transmit: Callable[[list[tuple[int, bytes]]], None] | None = None,
        compat: Compat = SPEC,
    ):
        self.sw = switch
        self.compat = compat
        self.lock = lock
        self.device_id = device_id
        self.transmit = transmit or (lambda outputs: None)
        self.schema: Schema | None = None
        self.config = p4runtime_pb2.ForwardingPipelineConfig()
        self.pending: tuple[p4runtime_pb2.ForwardingPipelineConfig, Built, Schema] | None = (
            None  # VERIFY_AND_SAVE's
        )
        self.arbiter = compat.election(device_id)
        self.writing = threading.Lock()
        self._list_id = 0
        self.digest_configs: dict[int, p4runtime_pb2.DigestEntry] = {}

    # --- checks every unary RPC makes, in the spec's order ---------------------------------
    def _check_device(self, context, request) -> None:
        if request.device_id != self.device_id:
            if self.compat.other_device is not None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, self.compat.other_device)
            context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"this switch is device {self.device_id}, not {request.device_id}",
            )
        if getattr(request, "role", ""):
            context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"no role '{request.role}': this switch has only the default role",
            )

    def _check_primary(self, context, request) -> None:
        self._check_device(context, request)
        election_id = _uint128(request.election_id) if request.HasField("election_id") else None
        if not self.arbiter.is_primary_id(election_id):
            context.abort(grpc.StatusCode.PERMISSION_DENIED, self.compat.not_primary)

    def _check_pipeline(self, context) -> None:
        if self.schema is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, self.compat.no_pipeline)

    # --- stream channel ----------------------------------------------------------------------
    def StreamChannel(self, request_iterator, context):
        stream = _Stream()
        self.arbiter.open(stream)
        context.add_callback(lambda: stream.outbox.put(None))  # cancelled: free this thread
        threading.Thread(
            target=self._read_stream, args=(stream, request_iterator), daemon=True
        ).start()
        try:
            yield from self._replies(stream, context)
        finally:
            self.arbiter.close(stream)

    def _read_stream(self, stream: _Stream, request_iterator) -> None:
        try:
            for msg in request_iterator:
                self._on_stream_message(stream, msg)
        except grpc.RpcError:
            pass
        finally:
            stream.outbox.put(None)

    def _replies(self, stream: _Stream, context) -> Iterator[p4runtime_pb2.StreamMessageResponse]:
        """The stream's outbox until it ends; a stream that does not arbitrate in time, or that is
        silent for IDLE_TIMEOUT while not primary, is closed (DEADLINE_EXCEEDED)."""
        while True:
            due = (
                stream.heard + IDLE_TIMEOUT
                if stream.arbitrated
                else stream.opened + ARBITRATION_TIMEOUT
            )
            try:
                item = stream.outbox.get(timeout=max(0.0, due - time.monotonic()))
            except queue.Empty:
                if not stream.arbitrated:
                    context.abort(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"no MasterArbitrationUpdate within {ARBITRATION_TIMEOUT} s of opening the stream",
                    )
                if self.arbiter.idle(stream):
                    context.abort(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"nothing received for {IDLE_TIMEOUT} s while not the primary controller "
                        "(a backup resends its MasterArbitrationUpdate to stay)",
                    )
                continue
            if item is None:
                return
            if isinstance(item, _StreamEnd):
                context.abort(item.code, item.message)
            yield item

    def _on_stream_message(self, stream: _Stream, msg: p4runtime_pb2.StreamMessageRequest) -> None:
        stream.heard = time.monotonic()
        kind = msg.WhichOneof("update")
        if kind == "arbitration":
            with self.writing:
                end = self.arbiter.update(stream, msg.arbitration)
            if end is not None:
                stream.outbox.put(end)
        elif kind == "packet":
            self._packet_out(stream, msg.packet)

    def _packet_out(self, stream: _Stream, packet: p4runtime_pb2.PacketOut) -> None:
        """Inject a PacketOut on the CPU port; a refused one gets a StreamError naming why."""
        try:
            if not self.arbiter.is_primary(stream):
                raise ent.EntityError(
                    grpc.StatusCode.PERMISSION_DENIED,
                    "only the primary controller may send packets",
                )
            if self.sw.cpu_port is None or self.schema is None:
                raise ent.EntityError(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "no CPU port (ina switch --cpu-port) or no pipeline",
                )
            data = self._packet_out_bytes(packet)
        except ent.EntityError as err:
            reply = p4runtime_pb2.StreamMessageResponse()
            reply.error.canonical_code = err.code.value[0]
            reply.error.message = err.message
            reply.error.packet_out.packet_out.CopyFrom(packet)
            stream.offer(reply)
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

        Raises EntityError: INVALID_ARGUMENT for a metadata id the P4Info lacks, OUT_OF_RANGE for a
        value wider than its field.
        """
        layout = self._metadata_layout("packet_out")
        widths = dict(layout)
        given = {}
        for m in packet.metadata:
            if m.metadata_id not in widths:
                raise ent.invalid(
                    f"PacketOut metadata id {m.metadata_id} is not in the P4Info's packet_out header"
                )
            given[m.metadata_id] = ent.decode(
                m.value, widths[m.metadata_id], f"PacketOut metadata {m.metadata_id}"
            )
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
                struct.members.add(
                    bitstring=value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
                )
            messages.append(msg)
        self.arbiter.to_primary(messages)

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
        self.arbiter.to_primary([msg])

    # --- pipeline ------------------------------------------------------------------------
    def SetForwardingPipelineConfig(self, request, context):
        self._check_device(context, request)
        with self.writing:
            self._check_primary(context, request)
            if self._set_pipeline(request, context):
                reclaim()  # the program replaced, or the one verified only, or the older one saved
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _set_pipeline(self, request, context) -> bool:
        """Each action builds a config's program at most once: VERIFY builds it (and drops it),
        VERIFY_AND_COMMIT installs what it built, VERIFY_AND_SAVE keeps it for COMMIT. Whether a
        program was let go, for `reclaim` to free: a switch's first program replaces none, and
        spares the full collection (an `ina sim` run pushes one to each of its fresh switches)."""
        Action = p4runtime_pb2.SetForwardingPipelineConfigRequest
        action = request.action
        replacing = self.sw.pipeline is not None
        if action in (Action.VERIFY, Action.VERIFY_AND_COMMIT, Action.VERIFY_AND_SAVE):
            built, schema = self._verify(context, request)
            if action == Action.VERIFY_AND_SAVE:
                older = self.pending is not None
                self.pending = (request.config, built, schema)
                return older
            if action == Action.VERIFY_AND_COMMIT:
                self._commit(request.config, built, schema)
                return replacing
            return True
        if action == Action.COMMIT:
            if request.HasField("config"):
                context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "COMMIT takes no config; it commits the saved one",
                )
            if self.pending is None:
                context.abort(
                    grpc.StatusCode.NOT_FOUND,
                    "COMMIT without a saved config (use VERIFY_AND_SAVE first)",
                )
            (config, built, schema), self.pending = self.pending, None
            self._commit(config, built, schema)
            return replacing
        if action == Action.RECONCILE_AND_COMMIT:
            context.abort(
                grpc.StatusCode.UNIMPLEMENTED,
                "RECONCILE_AND_COMMIT is not supported; use VERIFY_AND_COMMIT",
            )
        context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"SetForwardingPipelineConfig action {action} is not one the spec defines",
        )

    def _verify(self, context, request) -> tuple[Built, Schema]:
        """The config's program built for this switch's engine, outside the engine lock (the old
        program keeps running meanwhile), and its P4Info's schema; INVALID_ARGUMENT if it cannot
        run, or its P4Info is ambiguous or does not match."""
        if not request.HasField("config") or not request.config.HasField("p4info"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the config carries no P4Info")
        config = request.config
        try:
            schema = Schema(config.p4info)
        except SchemaError as err:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        try:
            program = json.loads(config.p4_device_config)
        except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"p4_device_config is not BMv2 JSON: {str(err)[:200]}",
            )
        try:
            built = self.sw.build(program)
        except PipelineError as err:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"the switch cannot run this BMv2 JSON: {err}"
            )
        missing = _p4info_names_missing_from(config.p4info, built.backend.model)
        if missing:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the P4Info names {', '.join(missing[:5])} that the BMv2 JSON lacks; "
                "push the P4Info and the JSON of one compile",
            )
        return built, schema

    def _commit(
        self, config: p4runtime_pb2.ForwardingPipelineConfig, built: Built, schema: Schema
    ) -> None:
        """Install a built program and its P4Info: a swap under the engine lock."""
        saved = p4runtime_pb2.ForwardingPipelineConfig()
        saved.CopyFrom(config)
        with self.lock:
            self.sw.install(built)
            self.schema, self.config, self.digest_configs = schema, saved, {}

    def GetForwardingPipelineConfig(self, request, context):
        self._check_device(context, request)
        self._check_pipeline(context)
        kind = p4runtime_pb2.GetForwardingPipelineConfigRequest
        out = p4runtime_pb2.ForwardingPipelineConfig()
        out.cookie.CopyFrom(self.config.cookie)
        if request.response_type in (kind.ALL, kind.P4INFO_AND_COOKIE):
            out.p4info.CopyFrom(self.config.p4info)
        if request.response_type in (kind.ALL, kind.DEVICE_CONFIG_AND_COOKIE):
            out.p4_device_config = self.config.p4_device_config
        return p4runtime_pb2.GetForwardingPipelineConfigResponse(config=out)

    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=self.compat.api_version)

    # --- write and read ------------------------------------------------------------------
    def Write(self, data: bytes, context):
        """The request comes as bytes (serve's _WriteAsBytes): its head is checked first, so a client
        that may not write costs no parse of its updates."""
        head = _parsed(context, WriteRequestHead, data)
        self._check_device(context, head)
        with self.writing:
            self._check_primary(context, head)
            self._check_pipeline(context)
            if head.atomicity in (Atomicity.ROLLBACK_ON_ERROR, Atomicity.DATAPLANE_ATOMIC):
                context.abort(
                    grpc.StatusCode.UNIMPLEMENTED,
                    self.compat.atomic_writes
                    or f"atomicity {Atomicity.Name(head.atomicity)} is not supported; "
                    "use CONTINUE_ON_ERROR (each update applies or fails alone)",
                )
            if head.atomicity != Atomicity.CONTINUE_ON_ERROR:
                context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT, f"unknown atomicity {head.atomicity}"
                )
            request = _parsed(context, p4runtime_pb2.WriteRequest, data)
            with self.lock:
                errors = [self._attempt(update) for update in request.updates]
        if any(e.canonical_code != code_pb2.OK for e in errors):
            context.abort_with_status(_batch_status(errors, "Write", self.compat))
        return p4runtime_pb2.WriteResponse()

    def _attempt(self, update: p4runtime_pb2.Update) -> p4runtime_pb2.Error:
        """Apply one update; its p4.Error (OK, or why it changed nothing)."""
        try:
            self._apply(update)
        except ent.EntityError as err:
            return _entity_error(err)
        except (KeyError, IndexError, ValueError) as err:
            return _error(code_pb2.INVALID_ARGUMENT, str(err))
        return _error(code_pb2.OK)

    def _apply(self, update: p4runtime_pb2.Update) -> None:
        entity = update.entity
        kind = entity.WhichOneof("entity")
        _refuse(self.compat.write_refusals, kind, entity)
        utype = update.type
        if utype not in (ent.INSERT, ent.MODIFY, ent.DELETE):
            raise ent.invalid(f"update type {utype} is not INSERT, MODIFY or DELETE")
        if kind is None:
            raise ent.invalid("the update has no entity")
        if kind not in ent.ENTITIES:
            raise ent.EntityError(grpc.StatusCode.UNIMPLEMENTED, f"writing {kind} is not supported")
        target = ent.Target(self.sw, self.schema, self.digest_configs)
        ent.ENTITIES[kind].write(target, utype, getattr(entity, kind))

    def Read(self, request, context):
        """Entities in pages of READ_CHUNK, the engine locked per page (a wildcard read need not be
        atomic, says the spec), so memory stays bounded; per-request errors end it as UNKNOWN."""
        self._check_device(context, request)
        self._check_pipeline(context)
        errors = [_error(code_pb2.OK) for _ in request.entities]
        found = chain.from_iterable(
            self._read_one(query, errors, i) for i, query in enumerate(request.entities)
        )
        sent = 0
        while True:
            with self.lock:
                page = list(islice(found, READ_CHUNK))
            if not page:
                break
            sent += len(page)
            if sent > MAX_READ_ENTITIES:
                context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"the Read selects more than {MAX_READ_ENTITIES} entities; read by id or index",
                )
            yield p4runtime_pb2.ReadResponse(entities=page)
        failed = [e for e in errors if e.canonical_code != code_pb2.OK]
        if failed and self.compat.read_error_ends_read:
            context.abort(_GRPC_CODES[failed[0].canonical_code], failed[0].message)
        if failed:
            context.abort_with_status(_batch_status(errors, "Read", self.compat))
        if not sent:
            yield p4runtime_pb2.ReadResponse()

    def _read_one(
        self, query: p4runtime_pb2.Entity, errors: list[p4runtime_pb2.Error], position: int
    ) -> Iterator[p4runtime_pb2.Entity]:
        """The entities one request selects; its failure goes to errors[position]."""
        kind = query.WhichOneof("entity")
        target = ent.Target(self.sw, self.schema, self.digest_configs)
        try:
            _refuse(self.compat.read_refusals, kind, query)
            if kind is None:
                raise ent.invalid(
                    "the request has no entity (a wildcard read names the entity type)"
                )
            if kind not in ent.ENTITIES:
                raise ent.EntityError(
                    grpc.StatusCode.UNIMPLEMENTED, f"reading {kind} is not supported"
                )
            for item in ent.ENTITIES[kind].read(target, getattr(query, kind)):
                yield _wrap(kind, item)
        except ent.EntityError as err:
            errors[position] = _entity_error(err)


def _refuse(refusals: tuple[Refusal, ...], kind: str | None, entity: p4runtime_pb2.Entity) -> None:
    """Raise the first refusal that matches the entity, as EntityError."""
    for refusal in refusals:
        if refusal.matches(kind, entity):
            raise ent.EntityError(refusal.code, refusal.message)


def _p4info_names_missing_from(p4info, model: Program) -> list[str]:
    """P4Info entities the server maps to the JSON by fully qualified name that the JSON lacks."""
    in_json = {
        "table": set(model.tables),
        **{k.name: {x.name for x in model.externs[k.name]} for k in EXTERNS.values()},
    }
    named = [  # P4Info names each kind's list as the model does (model/externs.py `attribute`)
        ("table", p4info.tables),
        *((k.name, getattr(p4info, k.attribute, ())) for k in EXTERNS.values()),
        ("counter", p4info.direct_counters),
    ]
    return [
        f"{kind} '{e.preamble.name}'"
        for kind, items in named
        for e in items
        if e.preamble.name not in in_json[kind]
    ]


def _wrap(kind: str, item) -> p4runtime_pb2.Entity:
    entity = p4runtime_pb2.Entity()
    getattr(entity, kind).CopyFrom(item)
    return entity


def _parsed(context, kind: type[Message], data: bytes) -> Message:
    """`data` parsed as `kind`; bytes that are not one end the call with INTERNAL, as gRPC ends any
    RPC whose request it cannot deserialize."""
    try:
        return kind.FromString(data)
    except DecodeError as err:
        context.abort(
            grpc.StatusCode.INTERNAL, f"the request is not a valid {kind.DESCRIPTOR.name}: {err}"
        )


class _WriteAsBytes(grpc.ServerInterceptor):
    """Hands Write its request unparsed (no request deserializer): Write parses the head first."""

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None or handler_call_details.method != "/p4.v1.P4Runtime/Write":
            return handler
        return grpc.unary_unary_rpc_method_handler(
            handler.unary_unary, response_serializer=handler.response_serializer
        )


def serve(
    service: P4RuntimeService, address: str, credentials: grpc.ServerCredentials | None = None
) -> grpc.Server:
    """Start a gRPC server for `service` on `address` (HOST:PORT; port 0 picks one), with TLS when
    `credentials` are given (ina.p4rt.tls.server_credentials)."""
    workers = MAX_STREAMS + UNARY_WORKERS
    options = [
        ("grpc.so_reuseport", 0),  # else a second switch would silently share a port already in use
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.keepalive_time_ms", 30_000),  # find dead controllers so their stream slots free up
        ("grpc.keepalive_timeout_ms", 10_000),
    ]
    # Calls beyond 4 per thread wait for none: gRPC answers them RESOURCE_EXHAUSTED at once.
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="p4rt"),
        options=options,
        maximum_concurrent_rpcs=4 * workers,
        interceptors=[_WriteAsBytes()],
    )
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(service, server)
    try:
        port = (
            server.add_secure_port(address, credentials)
            if credentials
            else server.add_insecure_port(address)
        )
    except RuntimeError:
        port = 0
    if port == 0:
        raise OSError(
            f"cannot listen on {address}: the port is in use or the address is not HOST:PORT "
            "(pick another --grpc-server-addr)"
        )
    server.start()
    server.bound_port = port  # type: ignore[attr-defined]
    return server
