"""A new pipeline over P4Runtime: built once, outside the engine lock (the old program serves
Reads and packets meanwhile), swapped in under it; refused whole when over the code budget; the
replaced program's memory (generated code, the native library) returned."""

import functools
import gc
import json
import threading
import weakref
from pathlib import Path

import grpc
import pytest
import test_hostile_pipeline

from ina.bench.hostile import chained
from ina.compiler import compile_file
from ina.p4rt.proto import p4runtime_pb2
from ina.p4rt.schema import Schema
from ina.p4src import AGGREGATE_P4
from ina.switch import engine as engine_module
from ina.switch.engine import Switch, reclaim
from ina.switch.model import budget
from ina.switch.model.load import load_program
from ina.switch.native import datapath
from ina.switch.p4runtime import server as server_module
from ina.switch.p4runtime.server import P4RuntimeService, serve

Action = p4runtime_pb2.SetForwardingPipelineConfigRequest
FRAME = bytes.fromhex(
    "02000000000202000000000108004500002500000000401166c60a0000010a00000204d200500011"
    "000068656c6c6f20696e61"
)  # ordinary traffic to 02:..:02, forwarded to port 2
WAIT = (
    60  # seconds any step may wait for another thread before the test fails (never a timing check)
)


@functools.cache
def compiled(pool: int = 16):
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": str(pool)})


class Client(test_hostile_pipeline.Client):
    """The primary controller on raw protobufs: pushes, Reads and Capabilities with deadlines."""

    def push(self, action: int, doc: dict | None = None) -> tuple[grpc.StatusCode, str]:
        req = Action(device_id=0, action=action)
        req.election_id.low = 1
        if doc is not None:
            req.config.p4info.CopyFrom(compiled().p4info)
            req.config.p4_device_config = json.dumps(doc).encode()
        try:
            self.stub.SetForwardingPipelineConfig(req, timeout=WAIT)
        except grpc.RpcError as err:
            return err.code(), err.details()
        return grpc.StatusCode.OK, ""

    def l2_entries(self) -> int:
        table = Schema(compiled().p4info).table("InaIngress.l2_forward")
        req = p4runtime_pb2.ReadRequest(
            device_id=0,
            entities=[
                p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=table.id))
            ],
        )
        return sum(len(r.entities) for r in self.stub.Read(req, timeout=WAIT))

    def capabilities(self) -> str:
        return self.stub.Capabilities(
            p4runtime_pb2.CapabilitiesRequest(), timeout=WAIT
        ).p4runtime_api_version


@pytest.fixture
def served(request):
    """(switch, its engine lock, client): the aggregation program running, one l2 entry in it."""
    sw, lock = Switch(engine=getattr(request, "param", "python")), threading.Lock()
    srv = serve(P4RuntimeService(sw, lock), "127.0.0.1:0")
    client = Client(f"127.0.0.1:{srv.bound_port}")
    assert client.push(Action.VERIFY_AND_COMMIT, compiled().bmv2) == (grpc.StatusCode.OK, "")
    sw.tables["InaIngress.switch_config"].set_default(
        "InaIngress.set_switch_addr", [0x2AA00000001, 0x0A0000FE]
    )
    sw.tables["InaIngress.l2_forward"].add([0x020000000002], "InaIngress.forward", [2])
    yield sw, lock, client
    client.close()
    srv.stop(None)


def old_program_runs(sw: Switch, lock: threading.Lock, client: Client) -> None:
    assert client.l2_entries() == 1
    assert client.capabilities() == "1.4.1"
    assert lock.acquire(timeout=WAIT)  # as the packet loop takes it
    try:
        assert sw.process(1, FRAME) == [(2, FRAME)]
    finally:
        lock.release()


def test_each_action_builds_the_program_once_and_installs_that_build(served, monkeypatch) -> None:
    sw, _lock, client = served
    builds = []
    build = Switch.build

    def counted(self, *args):
        builds.append(build(self, *args))
        return builds[-1]

    monkeypatch.setattr(Switch, "build", counted)
    old = sw.pipeline
    assert client.push(Action.VERIFY, compiled().bmv2) == (grpc.StatusCode.OK, "")
    assert len(builds) == 1 and sw.pipeline is old
    assert client.push(Action.VERIFY_AND_COMMIT, compiled().bmv2) == (grpc.StatusCode.OK, "")
    assert len(builds) == 2 and sw.pipeline is builds[1].backend
    assert client.push(Action.VERIFY_AND_SAVE, compiled().bmv2) == (grpc.StatusCode.OK, "")
    assert len(builds) == 3 and sw.pipeline is builds[1].backend
    assert client.push(Action.COMMIT) == (grpc.StatusCode.OK, "")
    assert len(builds) == 3 and sw.pipeline is builds[2].backend


def test_memory_is_reclaimed_only_when_a_built_program_was_dropped(monkeypatch) -> None:
    """A switch's first program drops nothing, so no full collection runs for it (ina sim sets up
    80 switches in one process: one per switch was O(switches^2)); replacing, verifying only and
    saving over do drop one, and reclaim."""
    reclaims = []
    monkeypatch.setattr(server_module, "reclaim", lambda: reclaims.append(1))
    sw = Switch(engine="python")
    srv = serve(P4RuntimeService(sw, threading.Lock()), "127.0.0.1:0")
    client = Client(f"127.0.0.1:{srv.bound_port}")
    try:
        steps = [
            (Action.VERIFY_AND_SAVE, compiled().bmv2, 0),  # kept, nothing dropped
            (Action.COMMIT, None, 0),  # the first program: nothing replaced
            (Action.VERIFY_AND_COMMIT, compiled().bmv2, 1),  # replaced
            (Action.VERIFY, compiled().bmv2, 2),  # built and dropped
            (Action.VERIFY_AND_SAVE, compiled().bmv2, 2),
            (Action.VERIFY_AND_SAVE, compiled().bmv2, 3),  # saved over
            (Action.COMMIT, None, 4),  # replaced
        ]
        for action, doc, expected in steps:
            assert client.push(action, doc) == (grpc.StatusCode.OK, "")
            assert len(reclaims) == expected, action
    finally:
        client.close()
        srv.stop(None)


def test_switches_given_one_document_share_its_model_and_code_not_their_state(monkeypatch) -> None:
    """A document read and checked once per process (engine.checked) and its C generated once
    (datapath.generated): ina sim's 80 switches get one program. Each switch's tables stay its own."""
    document = json.dumps(compiled(pool=21).bmv2).encode()  # one no other test builds
    generated = []
    generate = datapath.generate
    monkeypatch.setattr(datapath, "generate", lambda *args: generated.append(1) or generate(*args))
    a, b = Switch(engine="native"), Switch(engine="native")
    for sw in (a, b):
        sw.install(sw.build(json.loads(document), document))
    assert a.pipeline.model is b.pipeline.model and len(generated) == 1
    a.tables["InaIngress.switch_config"].set_default(
        "InaIngress.set_switch_addr", [0x2AA00000001, 0x0A0000FE]
    )
    a.tables["InaIngress.l2_forward"].add([0x020000000002], "InaIngress.forward", [2])
    assert a.process(1, FRAME) == [(2, FRAME)]
    assert b.process(1, FRAME) == []
    assert len(b.tables["InaIngress.l2_forward"].entries()) == 0


def test_while_a_program_builds_the_old_one_serves_reads_and_packets(served, monkeypatch) -> None:
    sw, lock, client = served
    started, release = threading.Event(), threading.Event()
    real = engine_module.PythonBackend

    def held(*args, **kwargs):
        started.set()
        assert release.wait(WAIT)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine_module, "PythonBackend", held)
    old, answers = sw.pipeline, []
    pusher = threading.Thread(
        target=lambda: answers.append(client.push(Action.VERIFY_AND_COMMIT, compiled().bmv2))
    )
    pusher.start()
    try:
        assert started.wait(WAIT)
        old_program_runs(sw, lock, client)
        assert sw.pipeline is old
    finally:
        release.set()
        pusher.join()
    assert answers == [(grpc.StatusCode.OK, "")]
    assert sw.pipeline is not old and client.l2_entries() == 0  # the new program, its tables empty


def test_a_program_over_the_budget_is_refused_and_one_at_it_accepted(served, monkeypatch) -> None:
    sw, lock, client = served
    old = sw.pipeline
    for action in (Action.VERIFY, Action.VERIFY_AND_COMMIT, Action.VERIFY_AND_SAVE):
        assert client.push(
            action, chained(compiled().bmv2, 8192)
        ) == (  # 2.3 MB: within the message limit
            grpc.StatusCode.INVALID_ARGUMENT,
            "the switch cannot run this BMv2 JSON: the program is too large for the switch: it makes 8,321 "
            "pipeline nodes and parser states, over the limit of 4,096",
        )
        assert sw.pipeline is old
        old_program_runs(sw, lock, client)
    assert client.push(Action.COMMIT)[0] == grpc.StatusCode.NOT_FOUND  # nothing was saved
    at_limit = chained(compiled().bmv2, 40)
    monkeypatch.setattr(budget, "LIMITS", budget.estimate(*load_program(at_limit)))
    assert client.push(Action.VERIFY_AND_COMMIT, at_limit) == (grpc.StatusCode.OK, "")
    assert sw.pipeline is not old


def test_the_program_each_push_lets_go_is_freed_by_it(served, monkeypatch) -> None:
    """A VERIFY's program, a saved one that another VERIFY_AND_SAVE replaces, and the running one
    that a COMMIT replaces: the push that lets a program go frees its generated code."""
    sw, _lock, client = served
    codes = []  # each program the server builds: its generated ingress, weakly
    build = sw.build

    def kept_weakly(program: dict, document: bytes | None = None):
        built = build(program, document)
        codes.append(weakref.ref(built.backend.pipeline.ingress))
        return built

    monkeypatch.setattr(sw, "build", kept_weakly)
    running, ok = weakref.ref(sw.pipeline.pipeline.ingress), (grpc.StatusCode.OK, "")
    gc.disable()  # the generated functions and their namespace are a cycle: only reclaim frees them
    try:
        assert client.push(Action.VERIFY, compiled().bmv2) == ok
        assert codes[0]() is None
        assert client.push(Action.VERIFY_AND_SAVE, compiled().bmv2) == ok
        assert client.push(Action.VERIFY_AND_SAVE, compiled().bmv2) == ok
        assert codes[1]() is None and codes[2]() is not None
        assert client.push(Action.COMMIT) == ok
        assert running() is None and codes[2]() is sw.pipeline.pipeline.ingress
    finally:
        gc.enable()


@pytest.mark.parametrize("served", ["native"], indirect=True)
def test_the_replaced_native_library_is_unloaded(served, monkeypatch, tmp_path: Path) -> None:
    sw, _lock, client = served
    monkeypatch.setenv("INA_CACHE", str(tmp_path))  # a library no other test has loaded
    assert client.push(Action.VERIFY_AND_COMMIT, compiled(pool=23).bmv2) == (grpc.StatusCode.OK, "")
    library = sw.native.lib._name
    assert library in Path("/proc/self/maps").read_text()
    gc.disable()  # only the server's reclaim may collect the replaced program
    try:
        assert client.push(Action.VERIFY_AND_COMMIT, compiled().bmv2) == (grpc.StatusCode.OK, "")
        assert library not in Path("/proc/self/maps").read_text()
    finally:
        gc.enable()


def test_reclaim_frees_the_generated_code_of_a_replaced_program() -> None:
    sw = Switch(engine="python")
    sw.load(compiled().bmv2)
    code = weakref.ref(sw.pipeline.pipeline.ingress)
    gc.disable()  # the generated functions and their namespace are a cycle: only collection frees them
    try:
        sw.load(compiled().bmv2)
        assert code() is not None
        reclaim()
        assert code() is None
    finally:
        gc.enable()
