"""The switch's P4Runtime server over a real gRPC channel: codes, arbitration, entities, packets."""

import functools
import json
import queue
import threading
import time
from pathlib import Path

import grpc
import pytest

from ina.compiler import compile_file
from ina.p4rt import codec
from ina.p4rt.proto import code_pb2, p4runtime_pb2, p4runtime_pb2_grpc, status_pb2
from ina.p4rt.schema import Schema
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.p4runtime import entities as ent
from ina.switch.p4runtime import server as p4runtime_server
from ina.switch.p4runtime.server import P4RuntimeService, serve


@functools.cache
def program():
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})


class Controller:
    """A bare P4Runtime client on raw protobufs: just enough to drive the server in tests."""

    def __init__(self, address: str, election_id: int, device_id: int = 0):
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.election_id = election_id
        self.requests: queue.Queue = queue.Queue()
        self.responses = self.stub.StreamChannel(iter(self.requests.get, None))
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = device_id
        msg.arbitration.election_id.low = election_id
        self.requests.put(msg)
        self.arbitration = next(self.responses).arbitration

    def write(self, *updates):
        req = p4runtime_pb2.WriteRequest(device_id=0, updates=list(updates))
        req.election_id.low = self.election_id
        return self.stub.Write(req)

    def pipeline_request(self, compiled=None, device_config: bytes | None = None):
        """VERIFY_AND_COMMIT of `compiled` (the aggregation program by default), its JSON or
        `device_config` as given; tests change the request before sending it."""
        compiled = compiled or program()
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=0, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        )
        req.election_id.low = self.election_id
        req.config.p4info.CopyFrom(compiled.p4info)
        req.config.p4_device_config = (
            json.dumps(compiled.bmv2).encode() if device_config is None else device_config
        )
        return req

    def set_pipeline(self, compiled=None):
        return self.stub.SetForwardingPipelineConfig(self.pipeline_request(compiled))

    def read(self, entity):
        req = p4runtime_pb2.ReadRequest(device_id=0, entities=[entity])
        return [e for resp in self.stub.Read(req) for e in resp.entities]

    def close(self):
        self.requests.put(None)
        self.channel.close()


@pytest.fixture
def server():
    sw = Switch()
    service = P4RuntimeService(sw, threading.Lock())
    srv = serve(service, "127.0.0.1:0")
    yield sw, f"127.0.0.1:{srv.bound_port}"
    srv.stop(None)


@pytest.fixture
def programmed(server):
    """(switch, controller): `server` with a primary controller (election id 1) that has set the
    aggregation pipeline; the controller closes after the test."""
    sw, address = server
    c = Controller(address, 1)
    assert c.arbitration.status.code == code_pb2.OK
    c.set_pipeline()
    yield sw, c
    c.close()


def update(kind, entity_field, message):
    u = p4runtime_pb2.Update(type=kind)
    getattr(u.entity, entity_field).CopyFrom(message)
    return u


def jobs_entry(job: int, base: int) -> p4runtime_pb2.TableEntry:
    s = Schema(program().p4info)
    table, action = s.table("InaIngress.jobs"), s.action("InaIngress.set_job")
    entry = p4runtime_pb2.TableEntry(table_id=table.id)
    entry.match.add(field_id=table.match_fields[0].id).exact.value = codec.encode(job, 16)
    entry.action.action.action_id = action.id
    values = {"base": base, "num_slots": 4, "num_workers": 2, "mgid": 0x100 + job}
    for p in action.params:
        entry.action.action.params.add(
            param_id=p.id, value=codec.encode(values.get(p.name, 0), p.bitwidth)
        )
    return entry


def switch_state(sw: Switch) -> tuple:
    """Everything a Write could change: table entries (with their direct counters) and defaults,
    registers, counters, multicast groups and clone sessions."""
    tables = {
        n: (
            sorted(
                (repr(e.match), e.action.name, tuple(e.args), e.priority, t.counters(e.handle))
                for e in t.entries()
            ),
            t.get_default() if t.default is not None else None,
        )
        for n, t in sw.tables.items()
    }
    registers = {n: r.read_range(0, r.size) for n, r in sw.registers.items()}
    counters = {n: c.read_range(0, c.size) for n, c in sw.counters.items()}
    return tables, registers, counters, sw.multicast.groups(), sw.clone.sessions()


def write_errors(err: grpc.RpcError) -> list[int]:
    """The per-update (or per-request, for Read) canonical codes of a batch that failed."""
    details = dict(err.trailing_metadata())["grpc-status-details-bin"]
    status = status_pb2.Status.FromString(details)
    out = []
    for d in status.details:
        e = p4runtime_pb2.Error()
        d.Unpack(e)
        out.append(e.canonical_code)
    return out


def test_arbitration_primary_and_backup(server):
    _sw, address = server
    primary, backup = Controller(address, 10), Controller(address, 5)
    assert primary.arbitration.status.code == code_pb2.OK
    assert backup.arbitration.status.code == code_pb2.ALREADY_EXISTS
    with pytest.raises(grpc.RpcError) as err:
        backup.set_pipeline()
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    primary.close()
    backup.close()


def test_duplicate_election_id_and_wrong_device_end_the_stream(server):
    _sw, address = server
    primary = Controller(address, 10)
    with pytest.raises(grpc.RpcError) as err:
        Controller(address, 10)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        Controller(address, 11, device_id=4)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert primary.arbitration.status.code == code_pb2.OK
    primary.set_pipeline()  # still primary: the refused streams changed nothing
    primary.close()


def test_write_without_pipeline_is_failed_precondition(server):
    _sw, address = server
    c = Controller(address, 1)
    with pytest.raises(grpc.RpcError) as err:
        c.write(update(p4runtime_pb2.Update.INSERT, "table_entry", jobs_entry(1, 0)))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    c.close()


def test_table_entry_round_trip_and_batch_errors(programmed):
    sw, c = programmed
    entry = jobs_entry(3, 4)
    c.write(update(p4runtime_pb2.Update.INSERT, "table_entry", entry))
    [read] = c.read(
        p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=entry.table_id))
    )
    assert read.table_entry == entry
    with pytest.raises(grpc.RpcError) as err:
        c.write(
            update(p4runtime_pb2.Update.INSERT, "table_entry", jobs_entry(4, 8)),
            update(p4runtime_pb2.Update.INSERT, "table_entry", entry),
            update(p4runtime_pb2.Update.DELETE, "table_entry", jobs_entry(9, 0)),
        )
    assert err.value.code() == grpc.StatusCode.UNKNOWN
    assert write_errors(err.value) == [code_pb2.OK, code_pb2.ALREADY_EXISTS, code_pb2.NOT_FOUND]
    assert err.value.details() == (
        "Write failure: 2 of 3 failed; first: ALREADY_EXISTS: "
        "table 'InaIngress.jobs' already has this entry"
    )
    assert len(sw.tables["InaIngress.jobs"].entries()) == 2  # the good update applied, nothing else


def test_registers_counters_and_multicast(programmed):
    sw, c = programmed
    s = Schema(program().p4info)
    reg = s.register("InaIngress.slot_bitmap")
    cell = p4runtime_pb2.RegisterEntry(register_id=reg.id, index=p4runtime_pb2.Index(index=5))
    cell.data.bitstring = codec.encode(0b101, 32)
    c.write(update(p4runtime_pb2.Update.MODIFY, "register_entry", cell))
    assert sw.registers["InaIngress.slot_bitmap"].read(5) == 0b101
    [got] = c.read(
        p4runtime_pb2.Entity(
            register_entry=p4runtime_pb2.RegisterEntry(
                register_id=reg.id, index=p4runtime_pb2.Index(index=5)
            )
        )
    )
    assert codec.decode(got.register_entry.data.bitstring) == 0b101
    with pytest.raises(grpc.RpcError) as err:
        c.read(
            p4runtime_pb2.Entity(
                register_entry=p4runtime_pb2.RegisterEntry(
                    register_id=reg.id, index=p4runtime_pb2.Index(index=32)
                )
            )
        )
    assert (
        err.value.code() == grpc.StatusCode.UNKNOWN
    )  # a failed request in a Read batch, per the spec
    assert write_errors(err.value) == [code_pb2.OUT_OF_RANGE]
    every_cell = c.read(p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry()))
    # 17 slot registers (bitmap, count, exponent, epoch, round, done, forwarded, fallback, started,
    # 8 accumulators) of 2 x POOL_SIZE cells and the drop simulator's burst state per port and
    # direction (512 each)
    assert len(every_cell) == sum(r.size for r in s.all("register")) == 18 * 32 + 2 * 512
    sw.counters["InaIngress.job_accepted"].write(2, 7, 700)
    ctr = s.counter("InaIngress.job_accepted")
    [got] = c.read(
        p4runtime_pb2.Entity(
            counter_entry=p4runtime_pb2.CounterEntry(
                counter_id=ctr.id, index=p4runtime_pb2.Index(index=2)
            )
        )
    )
    assert (got.counter_entry.data.packet_count, got.counter_entry.data.byte_count) == (7, 700)
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = 9
    pre.multicast_group_entry.replicas.add(egress_port=1, instance=33)
    c.write(update(p4runtime_pb2.Update.INSERT, "packet_replication_engine_entry", pre))
    assert sw.multicast.replicas(9) == [(1, 33)]
    query = p4runtime_pb2.PacketReplicationEngineEntry()
    query.multicast_group_entry.multicast_group_id = 9
    [got] = c.read(p4runtime_pb2.Entity(packet_replication_engine_entry=query))
    assert got.packet_replication_engine_entry == pre


def test_large_reads_arrive_in_several_responses(programmed, monkeypatch):
    _sw, c = programmed
    monkeypatch.setattr(p4runtime_server, "READ_CHUNK", 100)
    req = p4runtime_pb2.ReadRequest(
        device_id=0, entities=[p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry())]
    )
    cells = sum(r.size for r in Schema(program().p4info).all("register"))
    sizes = [len(r.entities) for r in c.stub.Read(req)]
    assert sizes == [min(100, cells - first) for first in range(0, cells, 100)]


def test_default_entry_modify_and_const_table_rules(programmed):
    sw, c = programmed
    s = Schema(program().p4info)
    table, action = s.table("InaIngress.switch_config"), s.action("InaIngress.set_switch_addr")
    entry = p4runtime_pb2.TableEntry(table_id=table.id, is_default_action=True)
    entry.action.action.action_id = action.id
    entry.action.action.params.add(param_id=1, value=codec.encode(0x02AA00000001, 48))
    entry.action.action.params.add(param_id=2, value=codec.encode(0x0A0000FE, 32))
    c.write(update(p4runtime_pb2.Update.MODIFY, "table_entry", entry))
    assert sw.tables["InaIngress.switch_config"].get_default() == (
        "InaIngress.set_switch_addr",
        (0x02AA00000001, 0x0A0000FE),
    )
    with pytest.raises(grpc.RpcError) as err:
        c.write(update(p4runtime_pb2.Update.INSERT, "table_entry", entry))
    assert write_errors(err.value) == [code_pb2.INVALID_ARGUMENT]


def test_broken_pipeline_is_refused_and_old_one_keeps_running(programmed):
    sw, c = programmed
    before = sw.pipeline
    with pytest.raises(grpc.RpcError) as err:
        c.stub.SetForwardingPipelineConfig(c.pipeline_request(device_config=b"{not json"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    no_p4info = c.pipeline_request()
    no_p4info.config.ClearField("p4info")
    with pytest.raises(grpc.RpcError) as err:
        c.stub.SetForwardingPipelineConfig(no_p4info)
    assert (err.value.code(), err.value.details()) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "the config carries no P4Info",
    )
    with pytest.raises(grpc.RpcError) as err:  # JSON, but no program
        c.stub.SetForwardingPipelineConfig(c.pipeline_request(device_config=b"[1]"))
    assert (err.value.code(), err.value.details()) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "the switch cannot run this BMv2 JSON: the BMv2 JSON: expected an object, got a list of 1 items",
    )
    assert sw.pipeline is before


def test_modify_then_delete_and_wildcard_read(programmed):
    sw, c = programmed
    first, second = jobs_entry(3, 4), jobs_entry(5, 8)
    c.write(
        update(p4runtime_pb2.Update.INSERT, "table_entry", first),
        update(p4runtime_pb2.Update.INSERT, "table_entry", second),
    )
    changed = jobs_entry(3, 12)
    c.write(update(p4runtime_pb2.Update.MODIFY, "table_entry", changed))
    everything = c.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()))
    assert sorted(e.table_entry.SerializeToString() for e in everything) == sorted(
        e.SerializeToString() for e in (changed, second)
    )
    c.write(update(p4runtime_pb2.Update.DELETE, "table_entry", changed))
    [left] = c.read(
        p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=first.table_id))
    )
    assert left.table_entry == second
    assert len(sw.tables["InaIngress.jobs"].entries()) == 1


def test_bad_updates_fail_alone_and_change_nothing(programmed):
    sw, c = programmed
    too_wide = jobs_entry(1, 0)
    too_wide.action.action.params[2].value = codec.encode(0x1FF, 9)  # num_workers is bit<8>
    unknown_table = jobs_entry(2, 0)
    unknown_table.table_id = 0x02000001
    with pytest.raises(grpc.RpcError) as err:
        c.write(
            update(p4runtime_pb2.Update.INSERT, "table_entry", too_wide),
            update(p4runtime_pb2.Update.INSERT, "table_entry", unknown_table),
            p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT),
        )
    assert err.value.code() == grpc.StatusCode.UNKNOWN
    codes = write_errors(err.value)
    assert codes == [code_pb2.OUT_OF_RANGE, code_pb2.NOT_FOUND, code_pb2.INVALID_ARGUMENT]
    assert sw.tables["InaIngress.jobs"].entries() == []
    c.write(update(p4runtime_pb2.Update.INSERT, "table_entry", jobs_entry(1, 0)))  # still serving


def test_an_unexpected_error_in_one_update_fails_it_alone(programmed, monkeypatch):
    """An engine error that escapes an entity's checks (KeyError, IndexError, ValueError) is that
    update's INVALID_ARGUMENT with its text: the batch goes on and nothing else changes."""
    sw, c = programmed
    escapes = (KeyError, IndexError, ValueError)

    def broken(target, update_type, entry):
        raise escapes[entry.index.index]("engine bug")

    registers = ent.ENTITIES["register_entry"]
    monkeypatch.setitem(ent.ENTITIES, "register_entry", ent.Entity(broken, registers.read))
    before = switch_state(sw)
    cells = [p4runtime_pb2.RegisterEntry(index=p4runtime_pb2.Index(index=i)) for i in range(3)]
    with pytest.raises(grpc.RpcError) as err:
        c.write(
            *(update(p4runtime_pb2.Update.MODIFY, "register_entry", cell) for cell in cells),
            update(p4runtime_pb2.Update.INSERT, "table_entry", jobs_entry(1, 0)),
        )
    assert write_errors(err.value) == [code_pb2.INVALID_ARGUMENT] * 3 + [code_pb2.OK]
    assert err.value.details() == (
        "Write failure: 3 of 4 failed; first: INVALID_ARGUMENT: 'engine bug'"
    )
    assert switch_state(sw)[1:] == before[1:]  # registers, counters, PRE: untouched
    entry = jobs_entry(1, 0)
    query = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=entry.table_id))
    assert [e.table_entry for e in c.read(query)] == [entry]


def test_capabilities_and_get_pipeline_config(server):
    _sw, address = server
    c = Controller(address, 1)
    assert c.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version == "1.4.1"
    kind = p4runtime_pb2.GetForwardingPipelineConfigRequest
    with pytest.raises(grpc.RpcError) as err:
        c.stub.GetForwardingPipelineConfig(kind(device_id=0, response_type=kind.ALL))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    c.set_pipeline()
    device_config = json.dumps(program().bmv2).encode()
    got = c.stub.GetForwardingPipelineConfig(kind(device_id=0, response_type=kind.ALL)).config
    assert (got.p4info, got.p4_device_config) == (program().p4info, device_config)
    got = c.stub.GetForwardingPipelineConfig(
        kind(device_id=0, response_type=kind.P4INFO_AND_COOKIE)
    ).config
    assert (got.p4info, got.p4_device_config) == (program().p4info, b"")
    got = c.stub.GetForwardingPipelineConfig(
        kind(device_id=0, response_type=kind.DEVICE_CONFIG_AND_COOKIE)
    ).config
    assert (got.HasField("p4info"), got.p4_device_config) == (False, device_config)
    got = c.stub.GetForwardingPipelineConfig(
        kind(device_id=0, response_type=kind.COOKIE_ONLY)
    ).config
    assert (got.HasField("p4info"), got.p4_device_config) == (False, b"")
    with pytest.raises(grpc.RpcError) as err:
        c.stub.GetForwardingPipelineConfig(kind(device_id=7, response_type=kind.ALL))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    c.close()


def test_garbage_request_bytes_get_an_error_and_the_server_keeps_serving(server):
    _sw, address = server
    channel = grpc.insecure_channel(address)
    raw = channel.unary_unary("/p4.v1.P4Runtime/Write")
    with pytest.raises(grpc.RpcError) as err:
        raw(b"\xff\xff\xff\xff garbage")
    assert err.value.code() == grpc.StatusCode.INTERNAL
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    assert stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version == "1.4.1"
    channel.close()


# controller headers of 2 and of 9 bytes; the wider one on Python (no gcc build: the server's
# metadata layout is the same for both engines)
@pytest.mark.parametrize(("pad", "engine"), [(7, "auto"), (63, "python")])
def test_packet_out_and_packet_in_carry_controller_metadata(pad, engine, tmp_path):
    source = (Path(__file__).parents[1] / "p4" / "packet_io.p4").read_text()
    (tmp_path / "packet_io.p4").write_text(source.replace("bit<7> _pad;", f"bit<{pad}> _pad;"))
    packet_io = compile_file(tmp_path / "packet_io.p4")
    sw = Switch(cpu_port=64, engine=engine)
    lock = threading.Lock()
    sent: list[tuple[int, bytes]] = []
    service = P4RuntimeService(sw, lock, transmit=sent.extend)
    srv = serve(service, "127.0.0.1:0")
    try:
        c = Controller(f"127.0.0.1:{srv.bound_port}", 1)
        c.set_pipeline(packet_io)
        frame = bytes.fromhex("02000000000202000000000188b5") + b"payload"
        out = p4runtime_pb2.StreamMessageRequest()
        out.packet.payload = frame
        out.packet.metadata.add(metadata_id=1, value=b"\x00\x05")  # egress_port 5, padded
        c.requests.put(out)
        deadline = time.monotonic() + 5
        while not sent and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sent == [(5, frame)]
        too_wide = p4runtime_pb2.StreamMessageRequest()
        too_wide.packet.payload = frame
        too_wide.packet.metadata.add(metadata_id=1, value=b"\x02\x00")  # 512 does not fit bit<9>
        c.requests.put(too_wide)
        error = next(c.responses).error
        assert (error.canonical_code, error.packet_out.packet_out) == (
            code_pb2.OUT_OF_RANGE,
            too_wide.packet,
        )
        assert "512 does not fit in 9 bits" in error.message
        assert sent == [(5, frame)]
        with lock:
            outputs = sw.process(3, frame)
        service.deliver(outputs)
        packet_in = next(c.responses).packet
        assert packet_in.payload == frame
        assert [(m.metadata_id, m.value) for m in packet_in.metadata] == [
            (1, b"\x03"),
            (2, b"\x00"),
        ]
        c.close()
    finally:
        srv.stop(None)


def test_a_packet_out_to_a_switch_without_a_cpu_port_is_refused_and_sends_nothing():
    """A pipeline but no CPU port: the PacketOut comes back in a FAILED_PRECONDITION StreamError."""
    sent: list[tuple[int, bytes]] = []
    service = P4RuntimeService(Switch(), threading.Lock(), transmit=sent.extend)
    srv = serve(service, "127.0.0.1:0")
    try:
        c = Controller(f"127.0.0.1:{srv.bound_port}", 1)
        c.set_pipeline()
        out = p4runtime_pb2.StreamMessageRequest()
        out.packet.payload = b"payload"
        c.requests.put(out)
        error = next(c.responses).error
        assert (error.canonical_code, error.message, error.packet_out.packet_out) == (
            code_pb2.FAILED_PRECONDITION,
            "no CPU port (ina switch --cpu-port) or no pipeline",
            out.packet,
        )
        assert sent == []
        c.close()
    finally:
        srv.stop(None)


def test_p4info_that_does_not_match_the_json_is_refused(server):
    sw, address = server
    c = Controller(address, 1)
    req = c.pipeline_request()
    for i in range(6):
        req.config.p4info.tables[i].preamble.name = f"InaIngress.renamed{i}"
    with pytest.raises(grpc.RpcError) as err:
        c.stub.SetForwardingPipelineConfig(req)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    named = ", ".join(f"table 'InaIngress.renamed{i}'" for i in range(5))  # the first 5 of 6
    assert err.value.details() == (
        f"the P4Info names {named} that the BMv2 JSON lacks; "
        "push the P4Info and the JSON of one compile"
    )
    assert sw.pipeline is None
    c.close()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda p4info: p4info.tables.append(p4info.tables[0]),
            "the P4Info has two tables with id ",
        ),
        (
            lambda p4info: setattr(
                p4info.tables[1].preamble, "name", p4info.tables[0].preamble.name
            ),
            "the P4Info has two tables named 'InaIngress.",
        ),
        (
            lambda p4info: setattr(p4info.actions[1].preamble, "id", p4info.actions[0].preamble.id),
            "the P4Info has two actions with id ",
        ),
    ],
)
def test_an_ambiguous_p4info_is_refused_and_nothing_changes(programmed, change, problem):
    """Two entities of one kind with one id or name: a write naming it could mean either."""
    sw, c = programmed
    running = sw.pipeline
    req = c.pipeline_request()
    change(req.config.p4info)
    with pytest.raises(grpc.RpcError) as err:
        c.stub.SetForwardingPipelineConfig(req)
    assert (err.value.code(), err.value.details()[: len(problem)]) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        problem,
    )
    assert sw.pipeline is running


def test_multicast_group_zero_is_invalid_and_clone_sessions_round_trip(programmed):
    sw, c = programmed
    group = p4runtime_pb2.PacketReplicationEngineEntry()
    group.multicast_group_entry.replicas.add(egress_port=1, instance=0)
    with pytest.raises(grpc.RpcError) as err:
        c.write(update(p4runtime_pb2.Update.INSERT, "packet_replication_engine_entry", group))
    assert write_errors(err.value) == [code_pb2.INVALID_ARGUMENT]
    assert sw.multicast.groups() == {}
    session = p4runtime_pb2.PacketReplicationEngineEntry()
    session.clone_session_entry.session_id = 4
    session.clone_session_entry.replicas.add(egress_port=7, instance=1)
    session.clone_session_entry.packet_length_bytes = 64
    c.write(update(p4runtime_pb2.Update.INSERT, "packet_replication_engine_entry", session))
    query = p4runtime_pb2.PacketReplicationEngineEntry()
    query.clone_session_entry.session_id = 0
    [got] = c.read(p4runtime_pb2.Entity(packet_replication_engine_entry=query))
    assert got.packet_replication_engine_entry == session
    with pytest.raises(grpc.RpcError) as err:
        c.write(update(p4runtime_pb2.Update.INSERT, "packet_replication_engine_entry", session))
    assert write_errors(err.value) == [code_pb2.ALREADY_EXISTS]
    c.write(update(p4runtime_pb2.Update.DELETE, "packet_replication_engine_entry", session))
    assert sw.clone.sessions() == {}


def test_digest_entries_round_trip():
    learn = compile_file(Path(__file__).parent / "p4" / "learn.p4")
    srv = serve(P4RuntimeService(Switch(), threading.Lock()), "127.0.0.1:0")
    try:
        c = Controller(f"127.0.0.1:{srv.bound_port}", 1)
        c.set_pipeline(learn)
        entry = p4runtime_pb2.DigestEntry(digest_id=Schema(learn.p4info).digest("learn_t").id)
        entry.config.max_list_size = 1
        entry.config.max_timeout_ns = 1000
        c.write(update(p4runtime_pb2.Update.INSERT, "digest_entry", entry))
        [got] = c.read(p4runtime_pb2.Entity(digest_entry=p4runtime_pb2.DigestEntry()))
        assert got.digest_entry == entry
        with pytest.raises(grpc.RpcError) as err:
            c.write(
                update(p4runtime_pb2.Update.INSERT, "digest_entry", entry),
                update(
                    p4runtime_pb2.Update.INSERT,
                    "digest_entry",
                    p4runtime_pb2.DigestEntry(digest_id=0x17000001),
                ),
            )
        assert write_errors(err.value) == [code_pb2.ALREADY_EXISTS, code_pb2.NOT_FOUND]
        c.write(update(p4runtime_pb2.Update.DELETE, "digest_entry", entry))
        assert c.read(p4runtime_pb2.Entity(digest_entry=p4runtime_pb2.DigestEntry())) == []
        c.close()
    finally:
        srv.stop(None)


def test_const_table_refuses_writes_but_reads_its_entries():
    accumulate = compile_file(Path(__file__).parents[1] / "p4" / "register_accumulate.p4")
    sw = Switch()
    srv = serve(P4RuntimeService(sw, threading.Lock()), "127.0.0.1:0")
    try:
        c = Controller(f"127.0.0.1:{srv.bound_port}", 1)
        c.set_pipeline(accumulate)
        s = Schema(accumulate.p4info)
        table = s.table("MainIngress.forward")
        before = c.read(
            p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=table.id))
        )
        assert before  # the const entries are readable
        entry = p4runtime_pb2.TableEntry(table_id=table.id)
        entry.match.add(field_id=1).exact.value = codec.encode(0x0A0B0C0D0E0F, 48)
        entry.action.action.action_id = s.action("MainIngress.drop").id
        with pytest.raises(grpc.RpcError) as err:
            c.write(
                update(p4runtime_pb2.Update.INSERT, "table_entry", entry),
                update(p4runtime_pb2.Update.DELETE, "table_entry", before[0].table_entry),
            )
        assert write_errors(err.value) == [code_pb2.PERMISSION_DENIED, code_pb2.PERMISSION_DENIED]
        assert (
            c.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=table.id)))
            == before
        )
        c.close()
    finally:
        srv.stop(None)
