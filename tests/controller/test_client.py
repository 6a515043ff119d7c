"""SwitchConnection and `ina ctl` against switches that hang, refuse or split statuses: every call
ends within its deadline with a message naming the switch, and big batches keep per-update statuses."""

import argparse
import functools
import socket
import threading
import time
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from ina.compiler import compile_file
from ina.controller.cli import build_parser
from ina.controller.cli import main as ctl_main
from ina.controller.client import (
    MAX_UPDATES_PER_WRITE,
    PIPELINE_DEADLINE,
    ControllerError,
    NotPrimaryError,
    SwitchConnection,
    UnsupportedError,
)
from ina.p4rt.proto import p4runtime_pb2, p4runtime_pb2_grpc
from ina.p4rt.schema import Schema
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, _Arbiter, serve

BOUND = 30  # seconds: only a hang gets there


@functools.cache
def program():
    return compile_file(AGGREGATE_P4, defines={"ELEMS": "8", "POOL_SIZE": "16"})


class Hung(p4runtime_pb2_grpc.P4RuntimeServicer):
    """A P4Runtime server that takes every call and answers none (until released)."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def StreamChannel(self, request_iterator, context):
        self.release.wait()
        yield from ()

    def GetForwardingPipelineConfig(self, request, context):
        self.release.wait()
        context.abort(grpc.StatusCode.UNAVAILABLE, "released")

    def Read(self, request, context):
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "Read of RegisterEntry")

    def SetForwardingPipelineConfig(self, request, context):
        self.push_allowed = context.time_remaining()
        context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not now")


@pytest.fixture
def hung_servicer():
    servicer = Hung()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}", servicer
    servicer.release.set()
    server.stop(None)


@pytest.fixture
def hung(hung_servicer):
    return hung_servicer[0]


def in_thread(fn, *args):
    """fn(*args) on a thread, its result or exception within BOUND: a hang fails the test (TimeoutError)."""
    pool = futures.ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(fn, *args).result(timeout=BOUND)
    finally:
        pool.shutdown(wait=False)


def test_a_call_the_switch_never_answers_ends_at_its_deadline(hung):
    conn = SwitchConnection(hung, election_id=None, deadline=0.5)
    with pytest.raises(ControllerError, match=rf"{hung}: no answer to get pipeline within 0.5 s"):
        in_thread(conn.adopt_pipeline)
    with pytest.raises(ControllerError, match=rf"{hung}: no arbitration answer within 0.5 s"):
        in_thread(lambda: SwitchConnection(hung, election_id=1, timeout=0.5))
    conn.close()


def test_a_pipeline_push_waits_for_the_switchs_build_whatever_the_calls_deadline(hung_servicer):
    """ina's native switch compiles the pipeline it is pushed: the push gets PIPELINE_DEADLINE
    even from a connection whose other calls end after 0.5 s."""
    address, servicer = hung_servicer
    conn = SwitchConnection(address, election_id=None, deadline=0.5)
    with pytest.raises(ControllerError, match=r"set pipeline: FAILED_PRECONDITION: not now"):
        conn.set_pipeline(program().bmv2, program().p4info)
    assert PIPELINE_DEADLINE - 60 < servicer.push_allowed < PIPELINE_DEADLINE + 2  # gRPC rounds up
    conn.close()


def test_a_port_that_never_speaks_grpc_is_no_switch():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(
            ControllerError, match=f"no P4Runtime server answers at {address} within 0.5 s"
        ):
            in_thread(lambda: SwitchConnection(address, timeout=0.5))


def test_connecting_starts_no_connectivity_polling(hung):
    """The client waits for the server with a call, not grpc.channel_ready_future, whose polling
    thread (0.2 s a round) makes every close wait up to 0.2 s (ina sim opens one per switch). The
    hung servicer answers Capabilities UNIMPLEMENTED: an answer all the same."""
    conn = SwitchConnection(hung, election_id=None, timeout=5)
    try:
        assert conn.channel._connectivity_state.polling is False  # grpc's flag for that thread
    finally:
        conn.close()


def test_ina_ctl_against_a_hung_switch_exits_1_with_the_address(hung, capsys):
    assert in_thread(ctl_main, ["--grpc-addr", hung, "--timeout", "0.5", "show-jobs"]) == 1
    assert f"{hung}: no answer to get pipeline within 0.5 s" in capsys.readouterr().err
    assert in_thread(ctl_main, ["--grpc-addr", hung, "--timeout", "0.5", "remove-job", "1"]) == 1
    assert f"{hung}: no arbitration answer" in capsys.readouterr().err


def test_unimplemented_reads_name_the_feature(hung):
    conn = SwitchConnection(hung, election_id=None, deadline=BOUND)
    conn.schema = Schema(program().p4info)
    with pytest.raises(
        UnsupportedError, match=rf"{hung}: this switch does not serve RegisterEntry reads"
    ):
        conn.read_register("InaIngress.slot_count", 0)
    conn.close()


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (
            ["--device-id", "-1", "show-jobs"],
            "argument --device-id: expected an integer in 0..18446744073709551615",
        ),
        (["--timeout", "0", "show-jobs"], "argument --timeout: expected a number in (0.0, 3600.0]"),
        (
            ["--timeout", "1e10", "show-jobs"],
            "argument --timeout: expected a number in (0.0, 3600.0], got '1e10'",
        ),
        (
            ["set-switch-addr", "zz", "10.0.0.1"],
            "argument mac: 'zz' is not a MAC address (expected aa:bb:cc:dd:ee:ff)",
        ),
        (
            ["set-switch-addr", "02:00:00:00:00:01", "300.1.1.1"],
            "argument ip: expected an IPv4 address like 10.0.0.1, got '300.1.1.1'",
        ),
        (
            ["--grpc-addr", "switch", "show-jobs"],
            "argument --grpc-addr: expected HOST:PORT with PORT in 1..65535",
        ),
        (["remove-job", "256"], "argument job: expected an integer in 0..255"),
        (
            ["set-drop", "3", "--ingress", "1.5"],
            "argument --ingress: expected a number in [0.0, 1.0]",
        ),
        (["show-slot", "1", "0", "--set", "2"], "argument --set: expected an integer in 0..1"),
        (
            ["add-job", "1", "--worker", "0:600:02:00:00:00:00:01:10.0.0.1"],
            "expected an integer in 0..511",
        ),
        (
            ["--cert", "c.pem", "--key", "k.pem", "show-jobs"],
            "argument --ca-cert/--cert/--key: needs --ssl",
        ),
    ],
)
def test_ina_ctl_bad_values_name_the_argument_and_exit_2(args, named, capsys):
    with pytest.raises(SystemExit) as exit_:
        ctl_main(args)
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("ina ctl") and named in error


def test_big_writes_go_in_bounded_batches_and_report_failures_by_position():
    sw = Switch()
    service = P4RuntimeService(sw, threading.Lock())
    sizes = []
    write = service.Write

    def spy(data, context):  # Write gets its request as bytes (serve's _WriteAsBytes)
        sizes.append(len(p4runtime_pb2.WriteRequest.FromString(data).updates))
        return write(data, context)

    service.Write = spy
    srv = serve(service, "127.0.0.1:0")
    address = f"127.0.0.1:{srv.bound_port}"
    conn = SwitchConnection(address, election_id=1, deadline=BOUND)
    conn.set_pipeline(program().bmv2, program().p4info)
    reg = conn.schema.register("InaIngress.slot_bitmap")
    cells = [("InaIngress.slot_bitmap", i % reg.size, i) for i in range(600)]
    cells[5] = cells[599] = ("InaIngress.slot_bitmap", reg.size, 1)  # past the end
    with pytest.raises(ControllerError, match=r"#5: OUT_OF_RANGE: .*; #599: OUT_OF_RANGE") as err:
        conn.write_registers(cells)
    assert address in str(err.value)
    assert sizes == [MAX_UPDATES_PER_WRITE, MAX_UPDATES_PER_WRITE, 600 - 2 * MAX_UPDATES_PER_WRITE]
    last = {i: v for name, i, v in cells if i < reg.size}  # the good cells applied, in order
    assert [sw.registers["InaIngress.slot_bitmap"].read(i) for i in sorted(last)] == [
        last[i] for i in sorted(last)
    ]
    conn.close()
    srv.stop(None)


def test_an_update_a_program_rule_denies_is_no_lost_election():
    """PERMISSION_DENIED on one update (a write to a const table) is the program's rule, not a
    controller that lost the election: the error says what was denied and is no NotPrimaryError."""
    conformance = compile_file(Path(__file__).parents[1] / "switch" / "p4" / "conformance.p4")
    srv = serve(P4RuntimeService(Switch(), threading.Lock()), "127.0.0.1:0")
    conn = SwitchConnection(f"127.0.0.1:{srv.bound_port}", election_id=1, deadline=BOUND)
    conn.set_pipeline(conformance.bmv2, conformance.p4info)
    with pytest.raises(ControllerError, match=r"#0: PERMISSION_DENIED: ") as err:
        conn.delete("I.lpm", {"hdr.x.b": (0x10, 4)})
    assert not isinstance(err.value, NotPrimaryError)
    conn.close()
    srv.stop(None)


def test_a_closed_connections_election_id_is_free_for_the_next(monkeypatch):
    """`ina run` programs a switch, closes, and at once connects again with the same election id
    (the drop simulator, `ina ctl`): close() returns only once the switch has let the stream go,
    so the next arbitration never finds the id still taken, even from a switch slow to let go."""
    release = _Arbiter.close

    def slow_release(arbiter, stream):
        time.sleep(0.5)  # a loaded switch: its stream thread runs late
        release(arbiter, stream)

    monkeypatch.setattr(_Arbiter, "close", slow_release)
    srv = serve(P4RuntimeService(Switch(), threading.Lock()), "127.0.0.1:0")
    address = f"127.0.0.1:{srv.bound_port}"
    try:
        for _ in range(10):
            SwitchConnection(address, election_id=1, deadline=BOUND).close()
    finally:
        srv.stop(None)


def test_every_ina_ctl_command_and_argument_has_help():
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert [c.dest for c in commands._choices_actions if not c.help] == []
    unexplained = [
        f"{name} {a.dest}"
        for name, sub in commands.choices.items()
        for a in sub._actions
        if not a.help and not isinstance(a, argparse._HelpAction)
    ]
    assert unexplained == []
