"""One P4Runtime connection to one switch: arbitration, pipeline, entities by name, packet I/O.

No global state: open as many connections (to as many switches) as you like in one process.
Reads return Python values, not protobufs. Every call has a deadline, so a switch that stops
answering is an error naming its address, never a hang. Writes go in batches of at most
MAX_UPDATES_PER_WRITE updates, so the per-update statuses of a failed batch always fit the
metadata limit this client sets (a 1,536-update batch overflowed BMv2's default 16 KB).
"""

import json
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from ina.p4rt import codec
from ina.p4rt import entities as p4e
from ina.p4rt.proto import (
    MAX_MESSAGE_BYTES,
    code_pb2,
    p4info_pb2,
    p4runtime_pb2,
    p4runtime_pb2_grpc,
    status_pb2,
)
from ina.p4rt.schema import Schema
from ina.p4rt.tls import TlsError, channel_credentials

Update = p4runtime_pb2.Update
MAX_UPDATES_PER_WRITE = 256
# The spec's rule of thumb is 8 KB + 100 B per update; error messages of other targets run longer.
MAX_METADATA_BYTES = 8192 + MAX_UPDATES_PER_WRITE * 1024
# seconds a pipeline push may take at least, whatever the connection's deadline: ina's native switch
# builds the program's C pipeline as it takes it (gcc, up to 120 s on a loaded machine at ELEMS=256)
PIPELINE_DEADLINE = 300.0


class ControllerError(Exception):
    """Something the switch refused or a name that does not exist; the message says which."""


class NotPrimaryError(ControllerError):
    pass


class UnsupportedError(ControllerError):
    """The switch does not implement this (e.g. register reads on simple_switch_grpc)."""


@dataclass
class TableEntry:
    """An entry as people write it: match values as ina.p4rt.entities.TableEntry.parse takes them
    (reads give ints and (value, prefix_len|mask) or (low, high) pairs), params by name."""

    table: str
    match: dict[str, object]
    action: str
    params: dict[str, int]
    priority: int = 0
    is_default: bool = False


@dataclass
class PacketIn:
    payload: bytes
    metadata: dict[str, int] = field(default_factory=dict)


def _batch_failures(err: grpc.RpcError) -> list[tuple[int, int, str]]:
    """(position, canonical code, message) of each failed update/request in a batch's status."""
    details = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
    if not details:
        return []
    failures = []
    for position, any_detail in enumerate(status_pb2.Status.FromString(details).details):
        e = p4runtime_pb2.Error()
        if any_detail.Unpack(e) and e.canonical_code != code_pb2.OK:
            failures.append((position, e.canonical_code, e.message))
    return failures


@contextmanager
def _refused() -> Iterator[None]:
    """What the P4Info refuses (an unknown name, a value that does not fit) as a ControllerError."""
    try:
        yield
    except p4e.EntityError as err:
        raise ControllerError(str(err)) from None


def _uint128(msg, value: int) -> None:
    msg.high, msg.low = value >> 64, value & (2**64 - 1)


class SwitchConnection:
    """A P4Runtime client of one switch.

    election_id None opens no stream: reads only, without taking part in (or changing) the
    switch's election. `timeout` bounds connecting and arbitration, `deadline` every call.
    TLS: `ssl=True`, the server verified against `ca_cert` (else the system's CAs), `cert` + `key`
    when the switch requires client certificates.
    """

    def __init__(
        self,
        address: str,
        device_id: int = 0,
        election_id: int | None = 1,
        timeout: float = 5.0,
        *,
        deadline: float = 30.0,
        ssl: bool = False,
        ca_cert: str | None = None,
        cert: str | None = None,
        key: str | None = None,
    ):
        self.address, self.device_id, self.election_id = address, device_id, election_id
        self.timeout, self.deadline = timeout, deadline
        self._reader: threading.Thread | None = None  # reads the stream (with an election id)
        self.channel = self._open_channel(ssl, ca_cert, cert, key)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        if not self._answers(timeout):
            self.channel.close()
            hint = " or the TLS options do not match its" if ssl else ""
            raise ControllerError(
                f"no P4Runtime server answers at {address} within {timeout} s "
                f"(is the switch running? is it TLS-only{hint}?)"
            ) from None
        self.schema: Schema | None = None
        self._requests: queue.Queue = queue.Queue()
        self._packets: queue.Queue = queue.Queue()
        self._arbitration: queue.Queue = queue.Queue()
        self._digests: queue.Queue = queue.Queue()
        if election_id is not None:
            self._arbitrate(timeout)

    def _answers(self, timeout: float) -> bool:
        """Whether a server answers within `timeout`: a Capabilities call that waits for the
        channel to connect (any answer counts, UNIMPLEMENTED from a server without the call too).
        Not grpc.channel_ready_future: its connectivity polling (0.2 s a round) makes `close` wait
        for the round in progress, about 0.1-0.2 s per connection (ina sim connects to each of 80
        switches)."""
        try:
            self.stub.Capabilities(
                p4runtime_pb2.CapabilitiesRequest(), timeout=timeout, wait_for_ready=True
            )
        except grpc.RpcError as err:
            return err.code() not in (
                grpc.StatusCode.DEADLINE_EXCEEDED,
                grpc.StatusCode.UNAVAILABLE,
            )
        return True

    def _open_channel(
        self, ssl: bool, ca_cert: str | None, cert: str | None, key: str | None
    ) -> grpc.Channel:
        options = [
            ("grpc.max_metadata_size", MAX_METADATA_BYTES),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ]
        if not ssl:
            if ca_cert or cert or key:
                raise ControllerError("--ca-cert/--cert/--key need --ssl")
            return grpc.insecure_channel(self.address, options=options)
        try:
            return grpc.secure_channel(
                self.address, channel_credentials(ca_cert, cert, key), options=options
            )
        except TlsError as err:
            raise ControllerError(str(err)) from None

    def _arbitrate(self, timeout: float) -> None:
        """Open the stream and win the election, or raise saying who holds it."""
        self._stream = self.stub.StreamChannel(iter(self._requests.get, None))
        self._reader = threading.Thread(target=self._read_stream, daemon=True)
        self._reader.start()
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = self.device_id
        _uint128(msg.arbitration.election_id, self.election_id)
        self._requests.put(msg)
        try:
            reply = self._arbitration.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise ControllerError(
                f"{self.address}: no arbitration answer within {timeout} s"
            ) from None
        if isinstance(reply, grpc.RpcError):
            self.close()
            raise ControllerError(
                f"{self.address}: the switch ended the stream: "
                f"{reply.code().name}: {reply.details()}"
            ) from None
        if reply.status.code != code_pb2.OK:
            self.close()
            highest = (reply.election_id.high << 64) | reply.election_id.low
            if reply.status.code == code_pb2.ALREADY_EXISTS:
                raise NotPrimaryError(
                    f"{self.address}: another controller is primary (election id {highest} > {self.election_id}); "
                    "use a higher --election-id or stop the other controller"
                )
            raise NotPrimaryError(
                f"{self.address}: election id {self.election_id} is below {highest}, the highest this switch "
                "has seen (P4Runtime never lets a lower one become primary); use --election-id "
                f"{highest} or higher"
            )

    def _read_stream(self) -> None:
        try:
            for msg in self._stream:
                kind = msg.WhichOneof("update")
                if kind == "arbitration":
                    self._arbitration.put(msg.arbitration)
                elif kind == "packet":
                    self._packets.put(msg.packet)
                elif kind == "digest":
                    self._digests.put(msg.digest)
        except grpc.RpcError as err:
            self._arbitration.put(err)

    def _failed(self, what: str, failures: list[tuple[int, int, str]]) -> ControllerError:
        """One error for a batch's failed updates/requests: the first ten, by position."""
        text = "; ".join(f"#{p}: {code_pb2.Code.Name(c)}: {m}" for p, c, m in failures[:10])
        more = f" (and {len(failures) - 10} more)" if len(failures) > 10 else ""
        codes = {c for _p, c, _m in failures}
        # an update's own PERMISSION_DENIED is a rule of the program (a const table, an action's
        # scope); a controller that is not primary gets the Write's status, without details
        kind = UnsupportedError if codes == {code_pb2.UNIMPLEMENTED} else ControllerError
        return kind(f"{self.address}: {what} failed: {text}{more}")

    def _raise_rpc(self, err: grpc.RpcError, what: str, deadline: float | None = None) -> None:
        """A ControllerError (or subclass) for a failed call, naming the switch and the operation
        (`deadline`: the call's, when not the connection's)."""
        code = err.code()
        failures = _batch_failures(err)
        if failures:
            raise self._failed(what, failures) from None
        message = f"{self.address}: {what}: {err.details()}"
        if code == grpc.StatusCode.PERMISSION_DENIED:
            raise NotPrimaryError(message) from None
        if code == grpc.StatusCode.UNIMPLEMENTED:
            raise UnsupportedError(
                f"{self.address}: the switch does not implement {what} ({err.details()})"
            ) from None
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            raise ControllerError(
                f"{self.address}: no answer to {what} within {deadline or self.deadline} s "
                "(the switch is hung or overloaded)"
            ) from None
        if code == grpc.StatusCode.UNAVAILABLE:
            raise ControllerError(
                f"{self.address}: the switch is not reachable ({err.details()})"
            ) from None
        raise ControllerError(f"{self.address}: {what}: {code.name}: {err.details()}") from None

    def close(self) -> None:
        """End the stream and wait (up to `timeout`) until the switch has ended its side: it lets
        the election id go before that, so a next connection with the same id is never refused
        as its duplicate."""
        self._requests.put(None)
        if self._reader is not None:
            self._reader.join(self.timeout)
        self.channel.close()

    def __enter__(self) -> "SwitchConnection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _election(self, msg) -> None:
        if self.election_id is not None:
            _uint128(msg.election_id, self.election_id)

    # --- pipeline ------------------------------------------------------------------------
    def set_pipeline(
        self, bmv2_json: dict | str | Path, p4info: p4info_pb2.P4Info | str | Path
    ) -> None:
        """Push a program: BMv2 JSON (dict or file) and its P4Info (message or text-format file)."""
        if not isinstance(bmv2_json, dict):
            bmv2_json = json.loads(Path(bmv2_json).read_text())
        if not isinstance(p4info, p4info_pb2.P4Info):
            from google.protobuf import text_format

            p4info = text_format.Parse(Path(p4info).read_text(), p4info_pb2.P4Info())
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
        )
        self._election(req)
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = json.dumps(bmv2_json).encode()
        deadline = max(self.deadline, PIPELINE_DEADLINE)
        try:
            self.stub.SetForwardingPipelineConfig(req, timeout=deadline)
        except grpc.RpcError as err:
            self._raise_rpc(err, "set pipeline", deadline)
        self.schema = Schema(p4info)

    def adopt_pipeline(self) -> Schema:
        """Use the program already loaded on the switch (its P4Info)."""
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE,
        )
        try:
            resp = self.stub.GetForwardingPipelineConfig(req, timeout=self.deadline)
        except grpc.RpcError as err:
            self._raise_rpc(err, "get pipeline")
        self.schema = Schema(resp.config.p4info)
        return self.schema

    def _schema(self) -> Schema:
        if self.schema is None:
            raise ControllerError("no pipeline: call set_pipeline() or adopt_pipeline() first")
        return self.schema

    # --- writes --------------------------------------------------------------------------
    def _write(self, updates: list, what: str) -> None:
        """Send `updates` in batches of MAX_UPDATES_PER_WRITE; each batch applies its good updates
        (CONTINUE_ON_ERROR), so all are attempted and the failures are reported together."""
        failures = []
        for start in range(0, len(updates), MAX_UPDATES_PER_WRITE):
            req = p4runtime_pb2.WriteRequest(
                device_id=self.device_id, updates=updates[start : start + MAX_UPDATES_PER_WRITE]
            )
            self._election(req)
            try:
                self.stub.Write(req, timeout=self.deadline)
            except grpc.RpcError as err:
                batch = _batch_failures(err)
                if not batch:
                    self._raise_rpc(err, what)
                failures += [(start + p, c, m) for p, c, m in batch]
        if failures:
            raise self._failed(what, failures)

    def _entity(self, item: p4e.Entity) -> p4runtime_pb2.Entity:
        with _refused():
            return p4e.to_entity(item, self._schema())

    def _update(self, kind: int, item: p4e.Entity) -> Update:
        return Update(type=kind, entity=self._entity(item))

    def write_table_entries(self, entries: list[TableEntry], kind: int = Update.INSERT) -> None:
        with _refused():
            typed = [
                p4e.TableEntry.parse(
                    self._schema(),
                    e.table,
                    e.match,
                    e.action or None,
                    e.params,
                    e.priority,
                    e.is_default,
                )
                for e in entries
            ]
        updates = [self._update(kind, e) for e in typed]
        self._write(updates, f"{Update.Type.Name(kind).lower()} table entries")

    def insert(
        self, table: str, match: dict, action: str, params: dict | None = None, priority: int = 0
    ) -> None:
        self.write_table_entries([TableEntry(table, match, action, params or {}, priority)])

    def modify(
        self, table: str, match: dict, action: str, params: dict | None = None, priority: int = 0
    ) -> None:
        self.write_table_entries(
            [TableEntry(table, match, action, params or {}, priority)], Update.MODIFY
        )

    def delete(self, table: str, match: dict, priority: int = 0) -> None:
        self.write_table_entries([TableEntry(table, match, "", {}, priority)], Update.DELETE)

    def set_default(self, table: str, action: str, params: dict | None = None) -> None:
        self.write_table_entries(
            [TableEntry(table, {}, action, params or {}, 0, True)], Update.MODIFY
        )

    def write_register(self, name: str, index: int, value: int) -> None:
        self.write_registers([(name, index, value)])

    def write_registers(self, cells: list[tuple[str, int, int]]) -> None:
        """Write (register, index, value) cells in one batch."""
        updates = [
            self._update(Update.MODIFY, p4e.RegisterEntry(name, index, value))
            for name, index, value in cells
        ]
        self._write(updates, "write registers")

    def clear_counters(self, cells: list[tuple[str, int]]) -> None:
        """Set (counter, index) cells to zero packets and bytes, in one batch."""
        updates = [
            self._update(Update.MODIFY, p4e.CounterEntry(name, index, p4e.CounterData()))
            for name, index in cells
        ]
        self._write(updates, "clear counters")

    def set_multicast_group(
        self, mgid: int, replicas: list[tuple[int, int]], kind: int = Update.INSERT
    ) -> None:
        group = p4e.MulticastGroupEntry(mgid, tuple(p4e.Replica(*r) for r in replicas))
        self._write([self._update(kind, group)], f"multicast group {mgid}")

    def delete_multicast_group(self, mgid: int) -> None:
        self.set_multicast_group(mgid, [], Update.DELETE)

    def set_clone_session(
        self,
        session: int,
        replicas: list[tuple[int, int]],
        truncate: int = 0,
        kind: int = Update.INSERT,
    ) -> None:
        clone = p4e.CloneSessionEntry(session, tuple(p4e.Replica(*r) for r in replicas), truncate)
        self._write([self._update(kind, clone)], f"clone session {session}")

    # --- reads ---------------------------------------------------------------------------
    def _read(self, entity: p4runtime_pb2.Entity, what: str) -> list[p4e.Entity]:
        """The entities a query selects, decoded against the P4Info."""
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id, entities=[entity])
        try:
            found = [
                e for resp in self.stub.Read(req, timeout=self.deadline) for e in resp.entities
            ]
        except grpc.RpcError as err:
            self._raise_rpc(err, what)
            return []
        try:
            return [p4e.from_entity(e, self._schema()) for e in found]
        except p4e.EntityError as err:
            raise ControllerError(
                f"{self.address}: {what}: the switch answered with {err}"
            ) from None

    def read_table(self, table: str, default: bool = False) -> list[TableEntry]:
        with _refused():
            info = p4e.lookup(self._schema().table, table)
        query = p4runtime_pb2.TableEntry(
            table_id=info.id, is_default_action=default
        )  # a wildcard: no match
        return [
            TableEntry(
                e.table,
                {name: m.plain() for name, m in e.match.items()},
                e.action.name if e.action else "",
                e.action.params if e.action else {},
                e.priority,
                e.is_default,
            )
            for e in self._read(p4runtime_pb2.Entity(table_entry=query), f"read table {table}")
        ]

    def read_register(self, name: str, index: int | None = None) -> list[int]:
        query = self._entity(p4e.RegisterEntry(name, index))
        try:
            cells = self._read(query, f"read register {name}")
        except UnsupportedError:
            raise UnsupportedError(
                f"{self.address}: this switch does not serve RegisterEntry reads (simple_switch_grpc does not); "
                "use ina's built-in switch, or BMv2's Thrift CLI (simple_switch_CLI register_read)"
            ) from None
        return [cell.value for cell in cells]

    def read_counter(self, name: str, index: int | None = None) -> list[tuple[int, int]]:
        """(packets, bytes) per index."""
        cells = self._read(self._entity(p4e.CounterEntry(name, index)), f"read counter {name}")
        return [(c.data.packet_count, c.data.byte_count) if c.data else (0, 0) for c in cells]

    def read_multicast_groups(self) -> dict[int, list[tuple[int, int]]]:
        groups = self._read(self._entity(p4e.MulticastGroupEntry(0)), "read multicast groups")
        return {g.group_id: list(g.replicas) for g in groups}

    # --- packet I/O ----------------------------------------------------------------------
    def packet_out(self, payload: bytes, **metadata: int) -> None:
        cpm = self._schema().controller_packet_metadata("packet_out")
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.packet.payload = payload
        for m in cpm.metadata:
            if m.name in metadata:
                msg.packet.metadata.add(
                    metadata_id=m.id, value=codec.encode(metadata[m.name], m.bitwidth)
                )
        self._requests.put(msg)

    def next_digest(self, timeout: float = 1.0) -> p4runtime_pb2.DigestList | None:
        """The next DigestList the switch sent (None after `timeout` seconds)."""
        try:
            return self._digests.get(timeout=timeout)
        except queue.Empty:
            return None

    def packet_in(self, timeout: float = 1.0) -> PacketIn | None:
        try:
            packet = self._packets.get(timeout=timeout)
        except queue.Empty:
            return None
        cpm = self._schema().controller_packet_metadata("packet_in")
        names = {m.id: m.name for m in cpm.metadata}
        return PacketIn(
            packet.payload,
            {
                names.get(m.metadata_id, str(m.metadata_id)): codec.decode(m.value)
                for m in packet.metadata
            },
        )
