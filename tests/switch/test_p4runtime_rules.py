"""P4Runtime 1.4.1's rules for written and read entities, on both engines, over real gRPC: each
refusal has the spec's code and changes nothing; each allowed form does exactly what the spec says.

The spec's words, per test: a don't-care match must be omitted (Match Format); a keyless table takes
no INSERT and `is_const` must be false in a write (TableEntry); a default entry has priority 0 and a
MODIFY without an action resets it to the program's default (Default Entry); an action outside its
scope is PERMISSION_DENIED and one that is not the table's INVALID_ARGUMENT (Action Specification);
a negative index is INVALID_ARGUMENT, a register write without an index writes every cell, and a
counter MODIFY without data changes nothing (RegisterEntry, CounterEntry & DirectCounterEntry).
"""

import functools
import threading
from pathlib import Path

import grpc
import pytest
from test_p4runtime_server import Controller, switch_state, update, write_errors

from ina.compiler import compile_file
from ina.p4rt.proto import code_pb2, p4runtime_pb2, status_pb2
from ina.p4rt.schema import Schema
from ina.switch.engine import Switch
from ina.switch.p4runtime.server import P4RuntimeService, serve

INSERT, MODIFY, DELETE = (
    p4runtime_pb2.Update.INSERT,
    p4runtime_pb2.Update.MODIFY,
    p4runtime_pb2.Update.DELETE,
)
OK, INVALID, DENIED, OUT_OF_RANGE = (
    code_pb2.OK,
    code_pb2.INVALID_ARGUMENT,
    code_pb2.PERMISSION_DENIED,
    code_pb2.OUT_OF_RANGE,
)


@functools.cache
def rules():
    return compile_file(Path(__file__).parent / "p4" / "p4runtime_rules.p4")


SCHEMA = Schema(rules().p4info)
RANGED, KEYLESS = SCHEMA.table("I.ranged"), SCHEMA.table("I.keyless")
REGISTER, COUNTER = SCHEMA.register("I.cells"), SCHEMA.counter("I.seen")


@pytest.fixture(params=["python", "native"])
def switch(request):
    """(switch, primary controller) with the rules program loaded on the engine of the param."""
    sw = Switch(engine=request.param)
    srv = serve(P4RuntimeService(sw, threading.Lock()), "127.0.0.1:0")
    c = Controller(f"127.0.0.1:{srv.bound_port}", 1)
    c.set_pipeline(rules())
    assert sw.engine_name == request.param
    yield sw, c
    c.close()
    srv.stop(None)


def codes(c: Controller, *updates: p4runtime_pb2.Update) -> list[int]:
    """The per-update canonical codes of one Write."""
    try:
        c.write(*updates)
    except grpc.RpcError as err:
        return write_errors(err)
    return [OK] * len(updates)


def entry(
    action: str | None = "I.set_x",
    ternary: tuple[bytes, bytes] | None = (b"\x01", b"\xff"),
    low_high: tuple[bytes, bytes] | None = None,
    priority: int = 10,
    **fields,
) -> p4runtime_pb2.TableEntry:
    """An entry of I.ranged (k ternary, r range) running `action` (its parameter v = 5)."""
    e = p4runtime_pb2.TableEntry(table_id=RANGED.id, priority=priority, **fields)
    if ternary is not None:
        e.match.add(field_id=1).ternary.value, e.match[-1].ternary.mask = ternary
    if low_high is not None:
        e.match.add(field_id=2).range.low, e.match[-1].range.high = low_high
    if action is not None:
        e.action.action.action_id = SCHEMA.action(action).id
        for p in SCHEMA.action(action).params:
            e.action.action.params.add(param_id=p.id, value=b"\x05")
    return e


def default_entry(table_id: int, action: str | None = None, **fields) -> p4runtime_pb2.TableEntry:
    e = p4runtime_pb2.TableEntry(table_id=table_id, is_default_action=True, **fields)
    if action is not None:
        e.action.action.action_id = SCHEMA.action(action).id
        for p in SCHEMA.action(action).params:
            e.action.action.params.add(param_id=p.id, value=b"\x09")
    return e


def table(u: int, e: p4runtime_pb2.TableEntry) -> p4runtime_pb2.Update:
    return update(u, "table_entry", e)


def refused_alone(sw: Switch, c: Controller, *updates: p4runtime_pb2.Update) -> list[int]:
    """The codes of `updates`, each written alone, asserting that none changed anything."""
    out = []
    for u in updates:
        before = switch_state(sw)
        out += codes(c, u)
        assert switch_state(sw) == before, u
    return out


def test_a_dont_care_match_spelled_out_is_invalid_and_omitting_it_is_the_same_entry(switch):
    sw, c = switch
    mask_zero = entry(ternary=(b"\x00", b"\x00"), low_high=(b"\x00\x01", b"\x00\x05"))
    full_range = entry(low_high=(b"\x00", b"\xff\xff"))
    assert refused_alone(sw, c, table(INSERT, mask_zero), table(INSERT, full_range)) == [
        INVALID,
        INVALID,
    ]
    assert codes(
        c, table(INSERT, entry(ternary=None, low_high=(b"\x01", b"\x05"))), table(INSERT, entry())
    ) == [OK, OK]
    assert sorted(e.match for e in sw.tables["I.ranged"].entries()) == [
        (("m", 0, 0), ("r", 1, 5)),
        (("m", 1, 0xFF), ("r", 0, 0xFFFF)),
    ]


def test_an_insert_into_a_keyless_table_is_invalid(switch):
    sw, c = switch
    keyless = p4runtime_pb2.TableEntry(table_id=KEYLESS.id)
    keyless.action.action.action_id = SCHEMA.action("I.set_x").id
    keyless.action.action.params.add(param_id=1, value=b"\x02")
    assert refused_alone(sw, c, table(INSERT, keyless)) == [INVALID]
    assert sw.tables["I.keyless"].entries() == []


def test_is_const_in_a_written_entry_is_invalid(switch):
    sw, c = switch
    assert codes(c, table(INSERT, entry())) == [OK]
    assert (
        refused_alone(
            sw,
            c,
            *(table(u, entry(is_const=True)) for u in (INSERT, MODIFY, DELETE)),
            table(MODIFY, default_entry(KEYLESS.id, "I.set_x", is_const=True)),
        )
        == [INVALID] * 4
    )


def test_a_default_entry_with_a_priority_is_invalid(switch):
    sw, c = switch
    assert refused_alone(
        sw,
        c,
        table(MODIFY, default_entry(RANGED.id, "I.set_x", priority=5)),
        table(MODIFY, default_entry(RANGED.id, priority=1)),
    ) == [INVALID, INVALID]


def test_a_default_entry_modified_without_an_action_is_reset_to_the_programs(switch):
    sw, c = switch
    assert codes(
        c,
        table(MODIFY, default_entry(KEYLESS.id, "I.set_x")),
        table(MODIFY, default_entry(RANGED.id, "I.set_x")),
    ) == [OK, OK]
    assert [sw.tables[t].get_default() for t in ("I.keyless", "I.ranged")] == [
        ("I.set_x", (9,)),
        ("I.set_x", (9,)),
    ]
    assert codes(
        c, table(MODIFY, default_entry(KEYLESS.id)), table(MODIFY, default_entry(RANGED.id))
    ) == [OK, OK]
    assert [sw.tables[t].get_default() for t in ("I.keyless", "I.ranged")] == [
        ("I.set_x", (7,)),
        ("I.miss", ()),
    ]
    [got] = c.read(
        p4runtime_pb2.Entity(
            table_entry=p4runtime_pb2.TableEntry(table_id=KEYLESS.id, is_default_action=True)
        )
    )
    assert [p.value for p in got.table_entry.action.action.params] == [b"\x07"]


def test_actions_outside_their_scope_are_permission_denied_and_others_invalid(switch):
    sw, c = switch
    unknown = entry()
    unknown.action.action.action_id = 0x01ABCDEF  # in no table and not in the P4Info
    other_table = default_entry(KEYLESS.id, "I.miss")  # in the P4Info, not this table's
    assert refused_alone(
        sw,
        c,
        table(INSERT, entry("I.miss")),
        table(MODIFY, default_entry(RANGED.id, "I.pick")),
        table(INSERT, unknown),
        table(MODIFY, other_table),
    ) == [DENIED, DENIED, INVALID, INVALID]
    assert codes(
        c, table(INSERT, entry("I.pick")), table(MODIFY, default_entry(RANGED.id, "I.miss"))
    ) == [OK, OK]


def cell(kind: str, index: int | None, **data) -> p4runtime_pb2.Update:
    """A MODIFY of I.cells (kind register, data value=) or I.seen (counter, data packets=, bytes=)."""
    if kind == "register":
        e = p4runtime_pb2.RegisterEntry(register_id=REGISTER.id)
        if data:
            e.data.bitstring = data["value"].to_bytes(4, "big")
    else:
        e = p4runtime_pb2.CounterEntry(counter_id=COUNTER.id)
        if data:
            e.data.packet_count, e.data.byte_count = data["packets"], data["bytes"]
    if index is not None:
        e.index.index = index
    return update(MODIFY, f"{kind}_entry", e)


def test_negative_indexes_are_invalid_and_past_the_end_out_of_range(switch):
    sw, c = switch
    assert (
        refused_alone(
            sw,
            c,
            cell("register", -1, value=3),
            cell("counter", -1, packets=1, bytes=2),
            cell("register", -(1 << 63), value=3),
            cell("register", REGISTER.size, value=3),
            cell("counter", COUNTER.size, packets=1, bytes=2),
        )
        == [INVALID] * 3 + [OUT_OF_RANGE] * 2
    )
    reads = [
        p4runtime_pb2.Entity(
            register_entry=p4runtime_pb2.RegisterEntry(
                register_id=REGISTER.id, index=p4runtime_pb2.Index(index=-1)
            )
        ),
        p4runtime_pb2.Entity(
            counter_entry=p4runtime_pb2.CounterEntry(
                counter_id=COUNTER.id, index=p4runtime_pb2.Index(index=-2)
            )
        ),
    ]
    with pytest.raises(grpc.RpcError) as err:
        list(c.stub.Read(p4runtime_pb2.ReadRequest(device_id=0, entities=reads)))
    assert write_errors(err.value) == [INVALID, INVALID]


def test_writes_without_an_index_write_every_cell_and_without_data_change_nothing(switch):
    sw, c = switch
    assert (
        codes(
            c,
            cell("register", None, value=0xABCDEF01),
            cell("counter", None, packets=3, bytes=300),
            cell("register", 2, value=5),
            cell("counter", 1, packets=4, bytes=8),
        )
        == [OK] * 4
    )
    assert [sw.registers["I.cells"].read(i) for i in range(4)] == [
        0xABCDEF01,
        0xABCDEF01,
        5,
        0xABCDEF01,
    ]
    assert [sw.counters["I.seen"].read(i) for i in range(4)] == [
        (3, 300),
        (4, 8),
        (3, 300),
        (3, 300),
    ]
    assert codes(c, table(INSERT, entry())) == [OK]
    [handle] = [e.handle for e in sw.tables["I.ranged"].entries()]
    sw.tables["I.ranged"].set_counters(handle, 6, 60)
    direct = p4runtime_pb2.DirectCounterEntry(table_entry=entry(action=None))
    before = switch_state(sw)
    assert (
        codes(
            c,
            cell("counter", None),
            cell("counter", 1),
            update(MODIFY, "direct_counter_entry", direct),
        )
        == [OK] * 3
    )
    assert switch_state(sw) == before
    assert sw.tables["I.ranged"].counters(handle) == (6, 60)


def test_entries_read_back_as_written_a_dont_care_key_omitted_and_priority_kept(switch):
    # Priority 1 is the least a ternary/range table takes; the don't-care k (omitted) reads back
    # omitted, before the range r that follows it; a one-bit mask is no don't-care.
    _sw, c = switch
    dont_care = entry(ternary=None, low_high=(b"\x01", b"\x05"), priority=1)
    one_bit = entry(ternary=(b"\x01", b"\x01"), low_high=(b"\x02", b"\x03"))
    written = (dont_care, entry(), one_bit)
    assert codes(c, *(table(INSERT, e) for e in written)) == [OK, OK, OK]
    query = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=RANGED.id))
    read = [
        e.table_entry
        for page in c.stub.Read(p4runtime_pb2.ReadRequest(device_id=0, entities=[query]))
        for e in page.entities
    ]
    assert sorted(e.SerializeToString(deterministic=True) for e in read) == sorted(
        e.SerializeToString(deterministic=True) for e in written
    )


def test_an_index_past_the_end_names_the_valid_range(switch):
    _sw, c = switch
    with pytest.raises(grpc.RpcError) as err:
        c.write(cell("register", REGISTER.size, value=3))
    details = dict(err.value.trailing_metadata())["grpc-status-details-bin"]
    [detail] = status_pb2.Status.FromString(details).details
    error = p4runtime_pb2.Error()
    detail.Unpack(error)
    assert (error.canonical_code, error.message) == (
        OUT_OF_RANGE,
        f"index {REGISTER.size} is out of range 0..{REGISTER.size - 1}",
    )
