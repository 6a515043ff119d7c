"""switch/p4runtime/entities.py where its mutants showed no test (scripts/mutation.py, #35): a
MODIFY of a multicast group needs the group, and rewrites it whole; a meter cell's MODIFY with a
config sets it, without one resets it."""

from pathlib import Path

import grpc
import pytest
from test_p4runtime_server import Controller, server, update, write_errors  # noqa: F401

from ina.compiler import compile_file
from ina.p4rt.proto import code_pb2, p4runtime_pb2
from ina.p4rt.schema import Schema

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


def test_a_meter_cell_takes_its_config_and_without_one_is_reset(server):  # noqa: F811
    sw, address = server
    compiled = compile_file(Path(__file__).parent / "p4" / "native_meter.p4")
    [info] = [m for m in Schema(compiled.p4info).all("meter") if m.name.endswith("per_idx")]
    c = Controller(address, 1)
    try:
        c.set_pipeline(compiled)
        cell = p4runtime_pb2.MeterEntry(meter_id=info.id, index=p4runtime_pb2.Index(index=3))
        cell.config.cir, cell.config.cburst, cell.config.pir, cell.config.pburst = 10, 5, 20, 10
        c.write(update(MODIFY, "meter_entry", cell))
        assert sw.meters[info.name].get(3) == (10, 5, 20, 10)
        cell.ClearField("config")
        c.write(update(MODIFY, "meter_entry", cell))
        assert sw.meters[info.name].get(3) is None
    finally:
        c.close()
