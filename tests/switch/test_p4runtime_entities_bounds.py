"""switch/p4runtime_entities.py where its mutants showed no test (scripts/mutation.py, #35): a
MODIFY of a multicast group needs the group, and rewrites it whole."""

import grpc
import pytest
from google.rpc import code_pb2
from test_p4runtime_server import Controller, server, update, write_errors  # noqa: F401

from ina.p4rt.proto import p4runtime_pb2

INSERT, MODIFY = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY


def group(gid: int, *replicas: tuple[int, int]) -> p4runtime_pb2.PacketReplicationEngineEntry:
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = gid
    for port, instance in replicas:
        pre.multicast_group_entry.replicas.add(egress_port=port, instance=instance)
    return pre


def test_modify_of_a_missing_group_is_not_found_and_of_a_present_one_replaces_it(server):  # noqa: F811
    sw, address = server
    c = Controller(address, 1)
    try:
        c.set_pipeline()
        with pytest.raises(grpc.RpcError) as err:
            c.write(update(MODIFY, "packet_replication_engine_entry", group(9, (1, 33))))
        assert err.value.code() == grpc.StatusCode.UNKNOWN
        assert write_errors(err.value) == [code_pb2.NOT_FOUND]
        assert sw.multicast.groups() == {}
        c.write(update(INSERT, "packet_replication_engine_entry", group(9, (1, 33))))
        c.write(update(MODIFY, "packet_replication_engine_entry", group(9, (2, 34), (3, 35))))
        assert sw.multicast.replicas(9) == [(2, 34), (3, 35)]
    finally:
        c.close()
