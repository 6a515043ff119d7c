"""The P4Runtime server against hostile or careless clients, over real gRPC on loopback.

Arbitration by the 1.4.1 rules, streams that cannot starve unary RPCs, paged and capped Reads,
OUT_OF_RANGE, per-update statuses, TLS with client certificates, and a seeded fuzz of requests
that must leave the state of a rejected request untouched.
"""

import contextlib
import json
import queue
import random
import re
import threading
import time
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import DecodeError
from test_p4runtime_server import jobs_entry, program, switch_state, update, write_errors
from tls_recipe import make_pki

from ina.p4rt.proto import code_pb2, p4runtime_pb2, p4runtime_pb2_grpc, status_pb2
from ina.p4rt.schema import Schema
from ina.p4rt.tls import server_credentials
from ina.switch.engine import Switch
from ina.switch.p4runtime import server as p4runtime_server
from ina.switch.p4runtime.server import MAX_CONTROLLERS, P4RuntimeService, serve

BOUND = 20  # seconds: a deadline that only a hang reaches
Set = p4runtime_pb2.SetForwardingPipelineConfigRequest


class Stream:
    """One StreamChannel; arbitration replies are read on a thread so every wait has a bound."""

    def __init__(
        self,
        channel: grpc.Channel,
        election_id: int | None = None,
        device_id: int = 0,
        arbitrate: bool = True,
    ):
        self.requests: queue.Queue = queue.Queue()
        self.replies: queue.Queue = queue.Queue()
        self.call = p4runtime_pb2_grpc.P4RuntimeStub(channel).StreamChannel(
            iter(self.requests.get, None)
        )
        threading.Thread(target=self._read, daemon=True).start()
        if arbitrate:
            self.arbitrate(election_id, device_id)

    def _read(self) -> None:
        try:
            for msg in self.call:
                self.replies.put(msg)
        except grpc.RpcError as err:
            self.replies.put(err)

    def arbitrate(self, election_id: int | None, device_id: int = 0, role: str = "") -> None:
        msg = p4runtime_pb2.StreamMessageRequest()
        msg.arbitration.device_id = device_id
        if election_id is not None:
            msg.arbitration.election_id.high = election_id >> 64
            msg.arbitration.election_id.low = election_id & (2**64 - 1)
        if role:
            msg.arbitration.role.name = role
        self.requests.put(msg)

    def next(self):
        """The next reply: an arbitration update, or the RpcError that ended the stream."""
        item = self.replies.get(timeout=BOUND)
        return item if isinstance(item, grpc.RpcError) else item.arbitration

    def status(self) -> tuple[int, int | None]:
        arb = self.next()
        return arb.status.code, (arb.election_id.low if arb.HasField("election_id") else None)

    def close(self) -> None:
        self.requests.put(None)
        self.call.cancel()


@contextlib.contextmanager
def serving(compat: p4runtime_server.Compat = p4runtime_server.SPEC):
    """(switch, channel, stub) of a server in the `compat` mode, on loopback."""
    sw = Switch()
    srv = serve(P4RuntimeService(sw, threading.Lock(), compat=compat), "127.0.0.1:0")
    channel = grpc.insecure_channel(f"127.0.0.1:{srv.bound_port}")
    try:
        yield sw, channel, p4runtime_pb2_grpc.P4RuntimeStub(channel)
    finally:
        channel.close()
        srv.stop(None)


@pytest.fixture
def served():
    with serving() as server:
        yield server


@pytest.fixture
def programmed(served):
    """(switch, stub): `served` with a primary stream (election id 1) that has set the aggregation
    pipeline; the stream closes after the test."""
    sw, channel, stub = served
    primary = Stream(channel, 1)
    assert primary.status() == (code_pb2.OK, 1)
    set_pipeline(stub, 1)
    yield sw, stub
    primary.close()


def write(stub, election_id: int | None, *updates, atomicity: int = 0):
    req = p4runtime_pb2.WriteRequest(device_id=0, updates=list(updates), atomicity=atomicity)
    if election_id is not None:
        req.election_id.low = election_id
    return stub.Write(req, timeout=BOUND)


def set_pipeline(
    stub, election_id: int | None, action=Set.VERIFY_AND_COMMIT, device_config: bytes | None = None
):
    req = Set(device_id=0, action=action)
    if election_id is not None:
        req.election_id.low = election_id
    req.config.p4info.CopyFrom(program().p4info)
    req.config.p4_device_config = (
        device_config if device_config is not None else json.dumps(program().bmv2).encode()
    )
    return stub.SetForwardingPipelineConfig(req, timeout=BOUND)


def code_of(call, *args, **kwargs) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        call(*args, **kwargs)
    return err.value.code()


def job_insert(job: int) -> p4runtime_pb2.Update:
    return update(p4runtime_pb2.Update.INSERT, "table_entry", jobs_entry(job, job * 4))


# --- arbitration -------------------------------------------------------------------------
def test_no_election_id_is_never_primary_but_zero_is_an_election_id(served):
    _sw, channel, stub = served
    observer = Stream(channel, None)
    assert observer.status() == (code_pb2.NOT_FOUND, None)  # no primary yet, and it is not one
    assert code_of(set_pipeline, stub, None) == grpc.StatusCode.PERMISSION_DENIED
    assert code_of(set_pipeline, stub, 0) == grpc.StatusCode.PERMISSION_DENIED
    zero = Stream(channel, 0)
    assert zero.status() == (code_pb2.OK, 0)
    assert observer.status() == (code_pb2.ALREADY_EXISTS, 0)
    set_pipeline(stub, 0)
    assert code_of(write, stub, None, job_insert(1)) == grpc.StatusCode.PERMISSION_DENIED
    zero.close()
    observer.close()


def test_backup_cannot_write_and_nobody_is_promoted_when_the_primary_leaves(served):
    sw, channel, stub = served
    primary = Stream(channel, 10)
    assert primary.status() == (code_pb2.OK, 10)
    backup = Stream(channel, 5)  # only after the primary is in: two new streams race to the server
    assert backup.status() == (code_pb2.ALREADY_EXISTS, 10)
    set_pipeline(stub, 10)
    assert code_of(set_pipeline, stub, 5) == grpc.StatusCode.PERMISSION_DENIED
    assert code_of(write, stub, 5, job_insert(1)) == grpc.StatusCode.PERMISSION_DENIED
    primary.close()
    assert backup.status() == (code_pb2.NOT_FOUND, 10)  # told: no primary now, highest seen 10
    assert code_of(write, stub, 5, job_insert(1)) == grpc.StatusCode.PERMISSION_DENIED
    assert code_of(write, stub, 10, job_insert(1)) == grpc.StatusCode.PERMISSION_DENIED
    late = Stream(channel, 9)  # below the highest ever accepted: a backup, with no primary
    assert late.status() == (code_pb2.NOT_FOUND, 10)
    backup.arbitrate(11)
    assert backup.status() == (code_pb2.OK, 11)
    assert late.status() == (code_pb2.ALREADY_EXISTS, 11)
    write(stub, 11, job_insert(1))
    assert len(sw.tables["InaIngress.jobs"].entries()) == 1
    backup.arbitrate(3)  # the primary steps down: everyone hears there is none
    assert backup.status() == (code_pb2.NOT_FOUND, 11)
    assert late.status() == (code_pb2.NOT_FOUND, 11)
    assert code_of(write, stub, 3, job_insert(2)) == grpc.StatusCode.PERMISSION_DENIED
    backup.close()
    late.close()


def test_arbitration_errors_end_the_stream_with_the_spec_codes(served):
    _sw, channel, _stub = served
    first = Stream(channel, 7)
    assert first.status() == (code_pb2.OK, 7)
    assert Stream(channel, 7).next().code() == grpc.StatusCode.INVALID_ARGUMENT
    assert Stream(channel, 8, device_id=3).next().code() == grpc.StatusCode.NOT_FOUND
    roled = Stream(channel, arbitrate=False)
    roled.arbitrate(9, role="other")
    assert roled.next().code() == grpc.StatusCode.NOT_FOUND
    first.arbitrate(7, device_id=3)  # a live stream changing device
    assert first.next().code() == grpc.StatusCode.FAILED_PRECONDITION


@pytest.mark.parametrize(
    ("compat", "primary", "resend_answered"),
    [
        (p4runtime_server.SPEC, "primary", True),
        (p4runtime_server.SIMPLE_SWITCH_GRPC, "Is primary", False),
    ],
    ids=["spec", "compat"],
)
def test_a_128_bit_election_id_comes_back_whole_and_a_resend_is_answered_as_the_mode_says(
    compat, primary, resend_answered
):
    """The primary's id comes back in its high and low halves. The same MasterArbitrationUpdate
    again (a keepalive) is answered again by the spec's rules, not at all by PI's; the update
    after it (another device) ends the stream."""
    with serving(compat) as (_sw, channel, _stub):
        big = Stream(channel, 2**64 + 5)
        arb = big.next()
        assert (arb.status.code, arb.status.message) == (code_pb2.OK, primary)
        assert (arb.election_id.high, arb.election_id.low) == (1, 5)
        big.arbitrate(2**64 + 5)
        big.arbitrate(2**64 + 5, device_id=3)
        if resend_answered:
            assert big.next() == arb
        assert big.next().code() == grpc.StatusCode.FAILED_PRECONDITION


def test_compat_names_a_used_election_id_as_pi_does_for_a_new_and_a_live_stream():
    with serving(p4runtime_server.SIMPLE_SWITCH_GRPC) as (_sw, channel, _stub):
        first = Stream(channel, 7)
        first.next()
        assert Stream(channel, 7).next().details() == "Election id already exists"
        live = Stream(channel, 8)
        live.next()
        live.arbitrate(7)
        assert live.next().details() == "New election id already exists"


def test_compat_refusals_refuse_their_entity_kind_alone():
    """simple_switch_grpc mode refuses register writes as PI does; the table entry beside one in
    the batch applies, and the register keeps its value."""
    with serving(p4runtime_server.SIMPLE_SWITCH_GRPC) as (sw, _channel, stub):
        set_pipeline(stub, None)
        reg = Schema(program().p4info).register("InaIngress.slot_count")
        cell = p4runtime_pb2.RegisterEntry(register_id=reg.id, index=p4runtime_pb2.Index(index=0))
        cell.data.bitstring = b"\x01"
        modify = update(p4runtime_pb2.Update.MODIFY, "register_entry", cell)
        with pytest.raises(grpc.RpcError) as err:
            write(stub, None, job_insert(1), modify)
        assert write_errors(err.value) == [code_pb2.OK, code_pb2.UNIMPLEMENTED]
        details = dict(err.value.trailing_metadata())["grpc-status-details-bin"]
        spaces = []
        for detail in status_pb2.Status.FromString(details).details:
            error = p4runtime_pb2.Error()
            detail.Unpack(error)
            spaces.append(error.space)
        assert spaces == ["", "ALL-sswitch-p4org"]  # PI's space on each failed update
        assert sw.registers["InaIngress.slot_count"].read(0) == 0
        assert len(sw.tables["InaIngress.jobs"].entries()) == 1


def test_a_controller_that_hangs_up_ends_its_reader_quietly(served, monkeypatch):
    """gRPC raises RpcError in the thread reading a stream's requests when the client cancels: the
    thread ends without an unhandled exception (a traceback in `ina switch`'s output for every
    controller that disconnects)."""
    _sw, channel, _stub = served
    errors: list = []
    monkeypatch.setattr(threading, "excepthook", errors.append)
    before = set(threading.enumerate())
    stream = Stream(channel, 1)
    stream.status()
    readers = [t for t in set(threading.enumerate()) - before if t.name.endswith("(_read_stream)")]
    stream.call.cancel()
    for reader in readers:
        reader.join(BOUND)
    assert len(readers) == 1 and not readers[0].is_alive()
    assert errors == []


def test_a_stream_that_never_arbitrates_is_closed(served, monkeypatch):
    _sw, channel, _stub = served
    monkeypatch.setattr(p4runtime_server, "ARBITRATION_TIMEOUT", 0.3)
    assert Stream(channel, arbitrate=False).next().code() == grpc.StatusCode.DEADLINE_EXCEEDED


def test_idle_streams_are_bounded_and_never_starve_unary_calls(served):
    sw, channel, stub = served
    primary = Stream(channel, 1)
    assert primary.status()[0] == code_pb2.OK
    set_pipeline(stub, 1)
    idle = [
        Stream(channel, None) for _ in range(MAX_CONTROLLERS + 4)
    ]  # each from its own thread pool slot
    outcomes = [s.next() for s in idle]
    refused = [o for o in outcomes if isinstance(o, grpc.RpcError)]
    assert len(refused) == 5 and {o.code() for o in refused} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
    write(stub, 1, job_insert(4))  # answered within BOUND while MAX_CONTROLLERS streams are open
    query = p4runtime_pb2.ReadRequest(
        device_id=0, entities=[p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())]
    )
    assert len([e for r in stub.Read(query, timeout=BOUND) for e in r.entities]) == 1
    kind = p4runtime_pb2.GetForwardingPipelineConfigRequest
    stub.GetForwardingPipelineConfig(
        kind(device_id=0, response_type=kind.COOKIE_ONLY), timeout=BOUND
    )
    assert len(sw.tables["InaIngress.jobs"].entries()) == 1
    for s in [primary, *idle]:
        s.close()


# --- stream admission: nobody can keep the controller with the highest election id out ---------
@pytest.fixture(
    params=[p4runtime_server.SPEC, p4runtime_server.SIMPLE_SWITCH_GRPC], ids=["spec", "compat"]
)
def admission(request, monkeypatch):
    """(service, channel) of a server admitting 3 controllers and 2 more streams that have not arbitrated."""
    monkeypatch.setattr(p4runtime_server, "MAX_CONTROLLERS", 3)
    monkeypatch.setattr(p4runtime_server, "MAX_STREAMS", 5)
    service = P4RuntimeService(Switch(), threading.Lock(), compat=request.param)
    srv = serve(service, "127.0.0.1:0")
    channel = grpc.insecure_channel(f"127.0.0.1:{srv.bound_port}")
    yield service, channel
    channel.close()
    srv.stop(None)


def opened(service: P4RuntimeService, streams: int) -> None:
    """Wait until the server holds `streams` streams (each opening is asynchronous)."""
    deadline = time.monotonic() + BOUND
    while len(service.arbiter.streams) != streams:
        assert time.monotonic() < deadline, (
            f"{len(service.arbiter.streams)} streams open, not {streams}"
        )
        time.sleep(0.01)


def ended(stream: Stream) -> grpc.StatusCode:
    """The code that ended `stream`, skipping the advisories before it."""
    while not isinstance(reply := stream.next(), grpc.RpcError):
        pass
    return reply.code()


def still_open(stream: Stream) -> bool:
    """Whether nothing has ended `stream` yet (advisories may be waiting)."""
    return not any(isinstance(reply, grpc.RpcError) for reply in list(stream.replies.queue))


def test_a_full_table_admits_only_an_election_id_above_all_and_closes_the_oldest_backup(admission):
    service, channel = admission
    first = Stream(channel, 10)  # each arbitrates before the next opens: the streams do not race
    assert first.status() == (code_pb2.OK, 10)
    second = Stream(channel, 5)
    assert second.status() == (code_pb2.ALREADY_EXISTS, 10)
    third = Stream(channel, 1)
    opened(service, 3)
    refused = [Stream(channel, eid) for eid in (7, None, 10)]  # below 10, none, 10's own id
    assert [s.next().code() for s in refused] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 2 + [
        grpc.StatusCode.INVALID_ARGUMENT
    ]  # the spec checks a used id before the limit
    assert len(service.arbiter.streams) == 3
    highest = Stream(channel, 20)
    assert highest.status() == (code_pb2.OK, 20)
    assert ended(second) == grpc.StatusCode.RESOURCE_EXHAUSTED  # the oldest that was not primary
    assert first.status() == (code_pb2.ALREADY_EXISTS, 20)  # demoted, still connected
    assert [s.election_id for s in service.arbiter.streams] == [10, 1, 20]
    higher = Stream(channel, 30)
    assert higher.status() == (code_pb2.OK, 30)
    assert (
        ended(first) == grpc.StatusCode.RESOURCE_EXHAUSTED
    )  # the demoted primary is now the oldest backup
    assert [s.election_id for s in service.arbiter.streams] == [1, 20, 30]
    assert highest.status() == (code_pb2.ALREADY_EXISTS, 30)
    assert [third.status() for _ in range(3)] == [
        (code_pb2.ALREADY_EXISTS, eid) for eid in (10, 20, 30)
    ]
    for s in (third, highest, higher):
        s.close()


def test_streams_that_never_arbitrate_cannot_keep_a_controller_out(admission):
    service, channel = admission
    older = Stream(channel, 1)
    assert older.status() == (code_pb2.OK, 1)
    silent = []
    for n in range(2, 6):  # the table full of streams that send nothing, opened in a known order
        silent.append(Stream(channel, arbitrate=False))
        opened(service, n)
    controller = Stream(channel, 2)
    assert controller.status() == (code_pb2.OK, 2)
    assert (
        silent[0].next().code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    )  # the oldest that had not arbitrated
    assert len(service.arbiter.streams) == 5 and all(
        s.replies.empty() for s in silent[1:]
    )  # nothing sent to them
    assert older.status() == (
        code_pb2.ALREADY_EXISTS,
        2,
    )  # opened first, but it had arbitrated: still open
    for s in (*silent[1:], older, controller):
        s.close()


def test_closing_a_stream_that_was_evicted_changes_nothing(monkeypatch):
    monkeypatch.setattr(p4runtime_server, "MAX_STREAMS", 1)
    arbiter = p4runtime_server._Arbiter(0)
    evicted, newer = p4runtime_server._Stream(), p4runtime_server._Stream()
    arbiter.open(evicted)
    arbiter.open(newer)
    assert evicted.outbox.get_nowait().code == grpc.StatusCode.RESOURCE_EXHAUSTED
    arbiter.close(evicted)  # its handler's cleanup, after the eviction
    assert arbiter.streams == [newer] and newer.outbox.empty()


def test_a_silent_stream_is_closed_after_the_idle_bound_unless_it_is_primary(
    admission, monkeypatch
):
    service, channel = admission
    monkeypatch.setattr(p4runtime_server, "IDLE_TIMEOUT", 1.5)
    primary, chatty, backup = [], [], []
    for n, (kept, election_id) in enumerate(((primary, 10), (chatty, None), (backup, 5)), 1):
        kept.append(Stream(channel, election_id))  # opened in this order, each after the one before
        opened(service, n)
        kept[0].status()
    (primary,), (chatty,), (backup,) = primary, chatty, backup
    time.sleep(0.3)
    chatty.arbitrate(
        None
    )  # a message: its 1.5 s start again, so it outlives the backup opened after it
    assert ended(backup) == grpc.StatusCode.DEADLINE_EXCEEDED
    assert still_open(primary) and still_open(
        chatty
    )  # the primary silent longer, chatty heard later
    assert ended(chatty) == grpc.StatusCode.DEADLINE_EXCEEDED
    assert still_open(primary) and len(service.arbiter.streams) == 1
    [held] = service.arbiter.streams
    before = time.monotonic()
    demoting = Stream(channel, 11)
    assert demoting.status() == (code_pb2.OK, 11)
    assert primary.status()[0] == code_pb2.ALREADY_EXISTS
    assert held.heard >= before  # its time as primary counted as heard: 1.5 s from its demotion
    assert ended(primary) == grpc.StatusCode.DEADLINE_EXCEEDED  # a silent backup now
    demoting.close()


# --- reads -------------------------------------------------------------------------------
def test_wildcard_reads_are_paged_lazily_and_capped(programmed, monkeypatch):
    """The first page reaches the client while the server is held reading the second page's first
    cell: pages are read one at a time, never the whole selection first. (How far the server reads
    ahead of a client that stops is gRPC's flow control, not the server's: not asserted.)"""
    sw, stub = programmed
    chunk = 8
    monkeypatch.setattr(p4runtime_server, "READ_CHUNK", chunk)
    name = "InaIngress.slot_bitmap"
    reads: list[int] = []
    held, release = threading.Event(), threading.Event()

    class Holding:
        """The register, counting the cells the server reads and holding it at the second page."""

        def __init__(self, inner):
            self.inner, self.size, self.bitwidth = inner, inner.size, inner.bitwidth

        def read(self, i: int) -> int:
            reads.append(i)
            if i == chunk and not release.is_set():
                held.set()
                release.wait(BOUND)
            return self.inner.read(i)

    sw.registers[name] = Holding(sw.registers[name])
    reg = Schema(program().p4info).register(name)
    query = p4runtime_pb2.ReadRequest(
        device_id=0,
        entities=[
            p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry(register_id=reg.id))
        ],
    )
    pages = stub.Read(query, timeout=BOUND)
    first = next(pages)
    assert held.wait(BOUND)
    assert [e.register_entry.index.index for e in first.entities] == list(range(chunk))
    assert reads == list(range(chunk + 1))
    pages.cancel()
    release.set()
    monkeypatch.setattr(p4runtime_server, "MAX_READ_ENTITIES", 40)
    everything = p4runtime_pb2.ReadRequest(
        device_id=0, entities=[p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry())]
    )
    got = 0
    with pytest.raises(grpc.RpcError) as err:
        for page in stub.Read(everything, timeout=BOUND):
            got += len(page.entities)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert got == 40


def test_a_read_of_exactly_the_cap_is_served_and_one_more_is_refused(programmed, monkeypatch):
    """MAX_READ_ENTITIES is how many a Read may select: a register of that many cells reads whole
    (over several pages); with the cap one lower, the same Read is RESOURCE_EXHAUSTED."""
    _sw, stub = programmed
    monkeypatch.setattr(p4runtime_server, "READ_CHUNK", 8)
    reg = Schema(program().p4info).register("InaIngress.slot_count")
    query = p4runtime_pb2.ReadRequest(
        device_id=0,
        entities=[
            p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry(register_id=reg.id))
        ],
    )
    monkeypatch.setattr(p4runtime_server, "MAX_READ_ENTITIES", reg.size)
    assert sum(len(page.entities) for page in stub.Read(query, timeout=BOUND)) == reg.size
    monkeypatch.setattr(p4runtime_server, "MAX_READ_ENTITIES", reg.size - 1)
    with pytest.raises(grpc.RpcError) as err:
        for _page in stub.Read(query, timeout=BOUND):
            pass
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (
        err.value.details()
        == f"the Read selects more than {reg.size - 1} entities; read by id or index"
    )


def test_the_limits_docs_security_md_states_are_the_ones_enforced():
    """The limits table of docs/security.md gives each server limit's value beside its constant:
    the two agree, so the documented figures are the enforced ones (the tests above lower the
    constants to reach them)."""
    text = (Path(__file__).parents[2] / "docs" / "security.md").read_text()
    stated = {
        name: float(value.replace(",", ""))
        for value, name in re.findall(r"\| ([\d,]+)(?: s)? \(`(\w+)`\)", text)
    }
    names = (
        "MAX_STREAMS",
        "MAX_CONTROLLERS",
        "ARBITRATION_TIMEOUT",
        "IDLE_TIMEOUT",
        "UNARY_WORKERS",
        "MAX_READ_ENTITIES",
        "OUTBOX_LIMIT",
        "ERROR_MESSAGE_CHARS",
    )
    assert stated == {name: getattr(p4runtime_server, name) for name in names}
    assert "sent in pages of 4,096" in text and p4runtime_server.READ_CHUNK == 4096


def test_read_batch_reports_each_request_and_returns_the_good_ones(programmed):
    _sw, stub = programmed
    write(stub, 1, job_insert(2))
    reg = Schema(program().p4info).register("InaIngress.slot_count")
    req = p4runtime_pb2.ReadRequest(
        device_id=0,
        entities=[
            p4runtime_pb2.Entity(
                table_entry=p4runtime_pb2.TableEntry(table_id=jobs_entry(0, 0).table_id)
            ),
            p4runtime_pb2.Entity(
                register_entry=p4runtime_pb2.RegisterEntry(register_id=0x05FFFFFF)
            ),
            p4runtime_pb2.Entity(),
            p4runtime_pb2.Entity(
                register_entry=p4runtime_pb2.RegisterEntry(
                    register_id=reg.id, index=p4runtime_pb2.Index(index=3)
                )
            ),
        ],
    )
    got = []
    with pytest.raises(grpc.RpcError) as err:
        for page in stub.Read(req, timeout=BOUND):
            got += page.entities
    assert err.value.code() == grpc.StatusCode.UNKNOWN
    assert write_errors(err.value) == [
        code_pb2.OK,
        code_pb2.NOT_FOUND,
        code_pb2.INVALID_ARGUMENT,
        code_pb2.OK,
    ]
    assert [e.WhichOneof("entity") for e in got] == ["table_entry", "register_entry"]


# --- writes ------------------------------------------------------------------------------
def test_values_that_do_not_fit_are_out_of_range_and_change_nothing(programmed):
    sw, stub = programmed
    reg = Schema(program().p4info).register("InaIngress.slot_exponent")  # bit<8>
    wide = p4runtime_pb2.RegisterEntry(register_id=reg.id, index=p4runtime_pb2.Index(index=1))
    wide.data.bitstring = b"\x01\x00"
    empty = p4runtime_pb2.RegisterEntry(register_id=reg.id, index=p4runtime_pb2.Index(index=1))
    empty.data.bitstring = b""
    past_end = p4runtime_pb2.RegisterEntry(
        register_id=reg.id, index=p4runtime_pb2.Index(index=reg.size)
    )
    past_end.data.bitstring = b"\x01"
    key = jobs_entry(1, 0)
    key.match[0].exact.value = b"\x01\x00\x00"  # job_id is bit<16>
    padded = p4runtime_pb2.RegisterEntry(register_id=reg.id, index=p4runtime_pb2.Index(index=2))
    padded.data.bitstring = b"\x00\x00\x07"  # longer than needed but in range: accepted
    with pytest.raises(grpc.RpcError) as err:
        write(
            stub,
            1,
            *(
                update(p4runtime_pb2.Update.MODIFY, "register_entry", e)
                for e in (wide, empty, past_end)
            ),
            update(p4runtime_pb2.Update.INSERT, "table_entry", key),
            update(p4runtime_pb2.Update.MODIFY, "register_entry", padded),
        )
    assert write_errors(err.value) == [code_pb2.OUT_OF_RANGE] * 4 + [code_pb2.OK]
    assert [sw.registers[reg.name].read(i) for i in range(3)] == [0, 0, 7]
    assert sw.tables["InaIngress.jobs"].entries() == []


def test_a_mixed_batch_applies_exactly_the_good_updates(programmed):
    sw, stub = programmed
    bad_table = jobs_entry(6, 0)
    bad_table.table_id = 0x02FFFFFF
    updates = [
        job_insert(1),
        job_insert(1),
        job_insert(2),
        update(p4runtime_pb2.Update.DELETE, "table_entry", jobs_entry(9, 0)),
        update(p4runtime_pb2.Update.INSERT, "table_entry", bad_table),
        p4runtime_pb2.Update(
            type=p4runtime_pb2.Update.UNSPECIFIED,
            entity=p4runtime_pb2.Entity(table_entry=jobs_entry(7, 0)),
        ),
        job_insert(3),
    ]
    with pytest.raises(grpc.RpcError) as err:
        write(stub, 1, *updates)
    assert err.value.code() == grpc.StatusCode.UNKNOWN
    assert write_errors(err.value) == [
        code_pb2.OK,
        code_pb2.ALREADY_EXISTS,
        code_pb2.OK,
        code_pb2.NOT_FOUND,
        code_pb2.NOT_FOUND,
        code_pb2.INVALID_ARGUMENT,
        code_pb2.OK,
    ]
    assert sorted(e.match[0][1] for e in sw.tables["InaIngress.jobs"].entries()) == [1, 2, 3]


def test_unsupported_atomicity_is_refused_before_anything_applies(programmed):
    sw, stub = programmed
    Atomicity = p4runtime_pb2.WriteRequest
    for mode in (Atomicity.ROLLBACK_ON_ERROR, Atomicity.DATAPLANE_ATOMIC):
        assert (
            code_of(write, stub, 1, job_insert(1), job_insert(1), atomicity=mode)
            == grpc.StatusCode.UNIMPLEMENTED
        )
    assert code_of(write, stub, 1, job_insert(1), atomicity=9) == grpc.StatusCode.INVALID_ARGUMENT
    assert sw.tables["InaIngress.jobs"].entries() == []


def test_bad_pipelines_get_the_spec_codes(served):
    sw, channel, stub = served
    primary = Stream(channel, 1)
    primary.status()
    deep = b"[" * 100_000 + b"]" * 100_000
    assert code_of(set_pipeline, stub, 1, device_config=deep) == grpc.StatusCode.INVALID_ARGUMENT
    assert (
        code_of(set_pipeline, stub, 1, Set.COMMIT) == grpc.StatusCode.INVALID_ARGUMENT
    )  # config given
    assert (
        code_of(
            stub.SetForwardingPipelineConfig,
            Set(device_id=0, action=Set.COMMIT, election_id=p4runtime_pb2.Uint128(low=1)),
            timeout=BOUND,
        )
        == grpc.StatusCode.NOT_FOUND
    )  # nothing saved
    assert sw.pipeline is None
    primary.close()


# --- TLS ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1 and a client certificate: docs/security.md's recipe."""
    return make_pki(tmp_path_factory.mktemp("pki"))


def test_tls_with_client_auth_refuses_clients_without_a_certificate(pki):
    creds = server_credentials(
        pki / "server.crt", pki / "server.key", pki / "ca.crt", client_auth=True
    )
    srv = serve(P4RuntimeService(Switch(), threading.Lock()), "127.0.0.1:0", creds)
    address = f"127.0.0.1:{srv.bound_port}"
    ca = (pki / "ca.crt").read_bytes()
    try:
        good = grpc.ssl_channel_credentials(
            ca, (pki / "client.key").read_bytes(), (pki / "client.crt").read_bytes()
        )
        with grpc.secure_channel(address, good) as channel:
            reply = p4runtime_pb2_grpc.P4RuntimeStub(channel).Capabilities(
                p4runtime_pb2.CapabilitiesRequest(), timeout=BOUND
            )
            assert reply.p4runtime_api_version == "1.4.1"
        for channel in (
            grpc.secure_channel(address, grpc.ssl_channel_credentials(ca)),
            grpc.insecure_channel(address),
        ):
            with channel:
                stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
                assert (
                    code_of(stub.Capabilities, p4runtime_pb2.CapabilitiesRequest(), timeout=BOUND)
                    == grpc.StatusCode.UNAVAILABLE
                )
    finally:
        srv.stop(None)


# --- fuzz --------------------------------------------------------------------------------
def _mutate(rng: random.Random, msg) -> None:
    """Flip one byte, cut the end or append noise of a serialized message; what fails to parse is kept as parsed so far."""
    data = bytearray(msg.SerializeToString())
    choice = rng.randrange(3)
    if choice == 0 and data:
        data[rng.randrange(len(data))] = rng.randrange(256)
    elif choice == 1 and data:
        del data[rng.randrange(len(data)) :]
    else:
        data += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
    with contextlib.suppress(DecodeError):
        msg.ParseFromString(bytes(data))


def _random_value(rng: random.Random) -> bytes:
    return rng.choice(
        [
            b"",
            b"\x00",
            b"\x01",
            b"\xff" * rng.randrange(1, 20),
            bytes([rng.randrange(256)]) * 2,
            rng.randbytes(rng.randrange(1, 9)),
        ]
    )


def _random_update(rng: random.Random, schema: Schema) -> p4runtime_pb2.Update:
    u = p4runtime_pb2.Update(type=rng.choice([0, 1, 1, 2, 3, 7]))
    kind = rng.randrange(6)
    if kind == 0:
        table = rng.choice(schema.all("table"))
        entry = u.entity.table_entry
        entry.table_id = table.id if rng.random() < 0.9 else rng.randrange(1 << 32)
        entry.is_default_action = rng.random() < 0.2
        entry.priority = rng.choice([0, 0, 1, -1, 1 << 30])
        for f in table.match_fields:
            if rng.random() < 0.9:
                fm = entry.match.add(field_id=f.id if rng.random() < 0.95 else rng.randrange(9))
                getattr(
                    fm, rng.choice(["exact", "exact", "lpm", "ternary", "range", "optional"])
                ).SetInParent()
                which = fm.WhichOneof("field_match_type")
                if which in ("exact", "optional"):
                    getattr(fm, which).value = _random_value(rng)
                elif which == "lpm":
                    fm.lpm.value, fm.lpm.prefix_len = _random_value(rng), rng.randrange(-1, 70)
                elif which == "ternary":
                    fm.ternary.value, fm.ternary.mask = _random_value(rng), _random_value(rng)
                else:
                    fm.range.low, fm.range.high = _random_value(rng), _random_value(rng)
        action = schema.action(rng.choice(table.action_ids)) if table.action_ids else None
        if action is not None and rng.random() < 0.9:
            entry.action.action.action_id = action.id
            for p in action.params:
                if rng.random() < 0.95:
                    entry.action.action.params.add(param_id=p.id, value=_random_value(rng))
    elif kind == 1:
        reg = rng.choice(schema.all("register"))
        cell = u.entity.register_entry
        cell.register_id = reg.id if rng.random() < 0.9 else rng.randrange(1 << 32)
        if rng.random() < 0.9:
            cell.index.index = rng.choice([0, 1, reg.size - 1, reg.size, 1 << 40])
        if rng.random() < 0.9:
            cell.data.bitstring = _random_value(rng)
    elif kind == 2:
        ctr = rng.choice(schema.all("counter"))
        cell = u.entity.counter_entry
        cell.counter_id = ctr.id if rng.random() < 0.9 else 0
        if rng.random() < 0.7:
            cell.index.index = rng.choice([0, 3, ctr.size, 1 << 33])
        cell.data.packet_count, cell.data.byte_count = (
            rng.choice([0, 5, -1, 1 << 62]),
            rng.choice([0, 64, -5]),
        )
    elif kind == 3:
        pre = u.entity.packet_replication_engine_entry
        if rng.random() < 0.5:
            pre.multicast_group_entry.multicast_group_id = rng.choice([0, 1, 2, 0xFFFF, 1 << 31])
            for _ in range(rng.randrange(4)):
                pre.multicast_group_entry.replicas.add(
                    egress_port=rng.choice([0, 1, 511, 512, 1 << 31]),
                    instance=rng.choice([0, 1, 1 << 16, 1 << 31]),
                )
        else:
            pre.clone_session_entry.session_id = rng.choice([0, 1, 5, 1 << 31])
            pre.clone_session_entry.packet_length_bytes = rng.choice([0, 64, -1, (1 << 31) - 1])
            for _ in range(rng.randrange(3)):
                pre.clone_session_entry.replicas.add(
                    egress_port=rng.choice([0, 2, 512]), instance=rng.randrange(3)
                )
    elif kind == 4:
        u.entity.meter_entry.meter_id = rng.randrange(1 << 32)
    # kind 5: no entity at all
    if rng.random() < 0.3:
        _mutate(rng, u)
    return u


def _random_read(rng: random.Random, schema: Schema) -> p4runtime_pb2.ReadRequest:
    req = p4runtime_pb2.ReadRequest(device_id=rng.choice([0, 0, 0, 1]))
    for _ in range(rng.randrange(1, 4)):
        e = req.entities.add()
        kind = rng.randrange(5)
        if kind == 0:
            e.table_entry.table_id = rng.choice([0, rng.choice(schema.all("table")).id, 7])
        elif kind == 1:
            e.register_entry.register_id = rng.choice([rng.choice(schema.all("register")).id, 9])
            if rng.random() < 0.7:
                e.register_entry.index.index = rng.choice([0, 5, 1 << 40])
        elif kind == 2:
            e.counter_entry.counter_id = rng.choice([rng.choice(schema.all("counter")).id, 9])
            e.counter_entry.index.index = rng.choice([0, 1 << 20])
        elif kind == 3:
            e.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = (
                rng.randrange(3)
            )
    if rng.random() < 0.3:
        _mutate(rng, req)
    return req


WRITE_CODES = {
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.UNIMPLEMENTED,
}
UPDATE_CODES = {
    code_pb2.OK,
    code_pb2.INVALID_ARGUMENT,
    code_pb2.OUT_OF_RANGE,
    code_pb2.NOT_FOUND,
    code_pb2.ALREADY_EXISTS,
    code_pb2.PERMISSION_DENIED,
    code_pb2.RESOURCE_EXHAUSTED,
    code_pb2.UNIMPLEMENTED,
}
READ_CODES = {
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
PIPELINE_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.UNIMPLEMENTED,
}


@pytest.mark.fuzz
def test_fuzzed_requests_get_documented_codes_and_rejections_change_nothing(programmed, fuzz_cases):
    sw, stub = programmed
    rng = random.Random(20240601)
    schema = Schema(program().p4info)
    pipeline = sw.pipeline
    for case in range(fuzz_cases(1500)):
        before = switch_state(sw)
        what = rng.randrange(10)
        if what < 6:
            updates = [_random_update(rng, schema) for _ in range(rng.randrange(1, 5))]
            req = p4runtime_pb2.WriteRequest(
                device_id=rng.choice([0] * 9 + [2]),
                updates=updates,
                atomicity=rng.choice([0] * 8 + [1, 2]),
            )
            if rng.random() < 0.95:
                req.election_id.low = rng.choice([1] * 9 + [0])
            try:
                stub.Write(req, timeout=BOUND)
                continue
            except grpc.RpcError as err:
                assert err.code() in WRITE_CODES, (case, err.code(), err.details(), req)
                if err.code() != grpc.StatusCode.UNKNOWN:
                    assert switch_state(sw) == before, (case, req)
                    continue
                codes = write_errors(err)
                assert len(codes) == len(updates) and set(codes) <= UPDATE_CODES, (
                    case,
                    codes,
                    err.details(),
                )
                if all(c != code_pb2.OK for c in codes):
                    assert switch_state(sw) == before, (case, codes, req)
        elif what < 9:
            req = _random_read(rng, schema)
            try:
                for _page in stub.Read(req, timeout=BOUND):
                    pass
            except grpc.RpcError as err:
                assert err.code() in READ_CODES, (case, err.code(), err.details(), req)
            assert switch_state(sw) == before, (case, req)
        else:
            device_config = json.dumps(program().bmv2).encode()
            config = rng.choice(
                [
                    device_config[: rng.randrange(len(device_config))],
                    b"{}",
                    b"[]",
                    b"null",
                    b'{"pipelines": 5}',
                    rng.randbytes(40),
                ]
            )
            code = code_of(
                set_pipeline, stub, rng.choice([1, 1, 2]), rng.choice([1, 1, 2, 4, 5, 9]), config
            )
            assert code in PIPELINE_CODES, (case, code, config[:80])
            assert sw.pipeline is pipeline and switch_state(sw) == before, (case, config[:80])


def test_the_controller_connects_over_mutual_tls_and_without_a_certificate_is_refused(pki):
    from ina.controller.client import ControllerError, SwitchConnection

    creds = server_credentials(
        pki / "server.crt", pki / "server.key", pki / "ca.crt", client_auth=True
    )
    srv = serve(P4RuntimeService(Switch(), threading.Lock()), "127.0.0.1:0", creds)
    address = f"127.0.0.1:{srv.bound_port}"
    try:
        with SwitchConnection(
            address,
            election_id=1,
            ssl=True,
            ca_cert=str(pki / "ca.crt"),
            cert=str(pki / "client.crt"),
            key=str(pki / "client.key"),
        ) as conn:
            conn.set_pipeline(program().bmv2, program().p4info)
        with pytest.raises(ControllerError, match=f"no P4Runtime server answers at {address}"):
            SwitchConnection(address, timeout=1, ssl=True, ca_cert=str(pki / "ca.crt"))
    finally:
        srv.stop(None)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (
            ["--grpc-server-ssl", "--grpc-server-cert", "s.crt"],
            "needs --grpc-server-cert FILE and --grpc-server-key FILE",
        ),
        (["--grpc-server-cert", "s.crt", "--grpc-server-key", "s.key"], "need --grpc-server-ssl"),
        (
            [
                "--grpc-server-ssl",
                "--grpc-server-cert",
                "s.crt",
                "--grpc-server-key",
                "s.key",
                "--grpc-server-with-client-auth",
            ],
            "needs --grpc-server-cacert FILE",
        ),
    ],
)
def test_ina_switch_refuses_incomplete_tls_options(args, named, capsys):
    from ina.switch.cli import build_parser, main

    assert "default: 127.0.0.1:9559" in " ".join(build_parser().format_help().split())
    assert main(["--no-p4", "--grpc-server-addr", "127.0.0.1:0", *args]) == 2
    assert named in capsys.readouterr().err
