"""Big P4Runtime messages: a Write from a client that is not the primary is refused before its
updates are parsed, and the message size limit holds to the byte, both ways."""

import threading

import grpc
import pytest
from test_p4runtime_server import Controller, jobs_entry, program, update

from ina.controller.client import ControllerError, SwitchConnection
from ina.p4rt.proto import MAX_MESSAGE_BYTES, p4runtime_pb2
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve

WRITE = "/p4.v1.P4Runtime/Write"
INSERT = p4runtime_pb2.Update.INSERT


@pytest.fixture
def primary():
    """A server with the aggregation program set by a primary holding election id 5."""
    sw = Switch()
    srv = serve(P4RuntimeService(sw, threading.Lock()), "127.0.0.1:0")
    address = f"127.0.0.1:{srv.bound_port}"
    controller = Controller(address, election_id=5)
    controller.set_pipeline()
    yield sw, address
    controller.close()
    srv.stop(None)


def _varint(n: int) -> bytes:
    out = b""
    while n >= 0x80:
        out, n = out + bytes([n & 0x7F | 0x80]), n >> 7
    return out + bytes([n])


def padded(message: bytes, size: int) -> bytes:
    """`message` and an unknown bytes field (number 15, which no reader here knows) making it `size`
    bytes long; protobuf skips unknown fields, so the request means what `message` means."""
    for filler in range(size - len(message) - 6, size - len(message)):
        field = bytes([15 << 3 | 2]) + _varint(filler) + bytes(filler)
        if len(message) + len(field) == size:
            return message + field
    raise ValueError(f"no filler makes {len(message)} bytes into {size}")


def write_request(election_id: int, updates: bytes) -> bytes:
    """A WriteRequest for device 0 with `updates` as the serialized field 4 entries, whatever they hold."""
    head = p4runtime_pb2.WriteRequest(device_id=0)
    head.election_id.low = election_id
    return head.SerializeToString() + updates


def send(address: str, data: bytes) -> grpc.StatusCode:
    """The status of a Write of exactly these bytes (the server's answer, or the sender's refusal)."""
    with grpc.insecure_channel(address, options=[("grpc.max_send_message_length", -1)]) as channel:
        try:
            channel.unary_unary(WRITE)(data, timeout=60)
        except grpc.RpcError as err:
            return err.code()
    return grpc.StatusCode.OK


def test_write_from_a_client_that_is_not_primary_is_refused_before_its_updates_are_read(primary):
    """Updates that are not protobuf at all: the primary's Write fails to parse (INTERNAL, as gRPC
    answers any request it cannot read); another client's is PERMISSION_DENIED, so its updates
    were never parsed. A big valid Write from it changes nothing either."""
    sw, address = primary
    garbage = (
        bytes([4 << 3 | 2, 3]) + b"\xff\xff\xff"
    )  # field 4 (updates), 3 bytes, a broken varint
    assert send(address, write_request(5, garbage)) == grpc.StatusCode.INTERNAL
    for election_id in (4, 6):
        assert (
            send(address, write_request(election_id, garbage)) == grpc.StatusCode.PERMISSION_DENIED
        )
    batch = p4runtime_pb2.WriteRequest(
        updates=[update(INSERT, "table_entry", jobs_entry(job, job)) for job in range(256)]
    ).SerializeToString()
    big = batch * ((MAX_MESSAGE_BYTES - 64) // len(batch))  # serialized messages join into one
    assert send(address, write_request(4, big)) == grpc.StatusCode.PERMISSION_DENIED
    assert list(sw.tables["InaIngress.jobs"].entries()) == []


def test_message_size_limit_holds_to_the_byte(primary):
    sw, address = primary
    one = write_request(
        5,
        p4runtime_pb2.WriteRequest(
            updates=[update(INSERT, "table_entry", jobs_entry(7, 3))]
        ).SerializeToString(),
    )
    assert send(address, padded(one, MAX_MESSAGE_BYTES + 1)) == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert list(sw.tables["InaIngress.jobs"].entries()) == []
    assert send(address, padded(one, MAX_MESSAGE_BYTES)) == grpc.StatusCode.OK
    assert [e.args for e in sw.tables["InaIngress.jobs"].entries()] == [
        (3, 4, 2, 0x107, 0, 0, 0, 0)
    ]


def test_controller_refuses_to_send_past_the_limit(primary):
    """The controller's channel stops a pipeline over the limit itself; the switch keeps its own."""
    sw, address = primary
    with SwitchConnection(address, election_id=9) as conn, pytest.raises(ControllerError) as err:
        conn.set_pipeline({**program().bmv2, "padding": " " * MAX_MESSAGE_BYTES}, program().p4info)
    assert "RESOURCE_EXHAUSTED: CLIENT: Sent message larger than max" in str(err.value)
    assert str(err.value).endswith(f" vs. {MAX_MESSAGE_BYTES})")
    assert sw.pipeline is not None and "padding" not in sw.pipeline.program
