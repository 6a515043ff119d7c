"""P4Runtime entities <-> the engine's tables, registers, counters, meters and replication engine.

The wire format is ina.p4rt.entities' (encode and decode against the P4Info, shared with the
controller); this module adds what the target decides: which update types an entity takes,
whether an entry exists, const tables, indices in range, and the engine's match and priority forms.
Each function either applies one update completely or raises EntityError before touching any
state, so a failed update in a batch leaves nothing half done.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import grpc
from google.protobuf.message import Message

from ina.p4rt import entities as p4e
from ina.p4rt.entities import (
    CloneSessionEntry,
    CounterData,
    CounterEntry,
    DirectCounterEntry,
    EntityError,
    ExactMatch,
    LpmMatch,
    Match,
    MeterConfig,
    MeterEntry,
    MulticastGroupEntry,
    OptionalMatch,
    RangeMatch,
    RegisterEntry,
    Replica,
    TableAction,
    TableEntry,
    TernaryMatch,
    invalid,
    lookup,
)
from ina.p4rt.proto import p4runtime_pb2
from ina.p4rt.schema import Schema, Table
from ina.switch.engine import Switch
from ina.switch.model.errors import TableError
from ina.switch.state.tables import declared_default

INSERT, MODIFY, DELETE = (
    p4runtime_pb2.Update.INSERT,
    p4runtime_pb2.Update.MODIFY,
    p4runtime_pb2.Update.DELETE,
)
decode = p4e.decode_value  # server.py decodes PacketOut metadata with it, as ent.decode


def _table_error(err: TableError) -> EntityError:
    text = str(err)
    if "already has" in text:
        return EntityError(grpc.StatusCode.ALREADY_EXISTS, text)
    if "is full" in text:
        return EntityError(grpc.StatusCode.RESOURCE_EXHAUSTED, text)
    if "has no entry" in text or "does not exist" in text:
        return EntityError(grpc.StatusCode.NOT_FOUND, text)
    return invalid(text)


# --- table entries -----------------------------------------------------------------------
def _engine_match(info: Table, fields: dict[str, Match]) -> list:
    """Typed match fields -> the engine's match list, in key order; an omitted field matches anything."""
    out: list = []
    for f in info.match_fields:
        match fields.get(f.name):
            case None:
                out.append(
                    ("range", 0, (1 << f.bitwidth) - 1)
                    if f.match_type == "RANGE"
                    else ("ternary", 0, 0)
                )
            case ExactMatch(value):
                out.append(value)
            case LpmMatch(value, prefix_len):
                out.append(("lpm", value, prefix_len))
            case TernaryMatch(value, mask):
                out.append(("ternary", value, mask))
            case RangeMatch(low, high):
                out.append(("range", low, high))
            case OptionalMatch(value):
                out.append(("optional", value))
    return out


def _typed_match(info: Table, engine_entry) -> dict[str, Match]:
    """The engine's normalised match (("m", value, mask) or ("r", low, high) per key) as typed fields."""
    out: dict[str, Match] = {}
    for f, (kind, a, b) in zip(info.match_fields, engine_entry.match, strict=True):
        if kind == "r":
            out[f.name] = RangeMatch(a, b)
        elif f.match_type == "EXACT":
            out[f.name] = ExactMatch(a)
        elif b == 0:
            continue  # don't care
        elif f.match_type == "LPM":
            out[f.name] = LpmMatch(a, b.bit_count())
        elif f.match_type == "OPTIONAL":
            out[f.name] = OptionalMatch(a)
        else:
            out[f.name] = TernaryMatch(a, b)
    return out


def _priority(info: Table, priority: int) -> int | None:
    """A written entry's priority for the engine (None: LPM/exact, longest prefix first), checked by the spec's rule."""
    if info.needs_priority:
        if priority <= 0:
            raise invalid(
                f"table '{info.name}' needs a priority > 0 for its ternary/range/optional keys"
            )
        return priority
    if priority:
        raise invalid(f"table '{info.name}' has no ternary/range/optional key; priority must be 0")
    return None


def write_table_entry(
    sw: Switch, schema: Schema, update_type: int, entry: p4runtime_pb2.TableEntry
) -> None:
    info = lookup(schema.table, entry.table_id)
    table = sw.tables.get(info.name)
    if table is None:
        raise EntityError(
            grpc.StatusCode.NOT_FOUND, f"the running pipeline has no table '{info.name}'"
        )
    if entry.is_const:
        raise invalid(
            f"table '{info.name}': a written entry must leave is_const false (the server sets it)"
        )
    if entry.is_default_action:
        if update_type != MODIFY:
            raise invalid(f"the default entry of '{info.name}' can only be modified")
        if table.default_is_const or info.const_default_action_id:
            raise EntityError(
                grpc.StatusCode.PERMISSION_DENIED, f"the default action of '{info.name}' is const"
            )
        action = TableEntry.decode(entry, schema).action
        if action is None:  # the spec's reset to the default the program declares
            table.set_default(
                *declared_default(sw.pipeline.model.tables[info.name], sw.pipeline.model)
            )
        else:
            table.set_default(action.name, action.args(schema))
        return
    if update_type == INSERT and not info.match_fields:
        raise invalid(
            f"table '{info.name}' has no key: it has only its default entry (MODIFY it with is_default_action)"
        )
    if info.is_const or table.is_const:
        raise EntityError(
            grpc.StatusCode.PERMISSION_DENIED,
            f"table '{info.name}' is const; its entries cannot change",
        )
    match = _engine_match(info, p4e.decode_match(entry.match, info))
    priority = _priority(info, entry.priority)
    try:
        existing = table.find(match, priority)
        if update_type == INSERT:
            if existing is not None:
                raise EntityError(
                    grpc.StatusCode.ALREADY_EXISTS, f"table '{info.name}' already has this entry"
                )
            action = TableAction.decode(entry.action.action, schema, info, default=False)
            table.add(match, action.name, action.args(schema), priority)
        elif update_type == MODIFY:
            if existing is None:
                raise EntityError(
                    grpc.StatusCode.NOT_FOUND, f"table '{info.name}' has no such entry to modify"
                )
            action = TableAction.decode(entry.action.action, schema, info, default=False)
            table.modify(existing.handle, action.name, action.args(schema))
        elif update_type == DELETE:
            if existing is None:
                raise EntityError(
                    grpc.StatusCode.NOT_FOUND, f"table '{info.name}' has no such entry to delete"
                )
            table.delete(existing.handle)
        else:
            raise invalid("unknown update type")
    except TableError as err:
        raise _table_error(err) from None


def _table_entry(schema: Schema, info: Table, engine_entry, default: bool = False) -> TableEntry:
    """An engine entry (or default) as P4Runtime sees it: priority only where the spec has one."""
    action = schema.action(engine_entry.action.name)
    params = dict(zip((p.name for p in action.params), engine_entry.args, strict=True))
    priority = engine_entry.priority if info.needs_priority and not default else 0
    return TableEntry(
        info.name,
        {} if default else _typed_match(info, engine_entry),
        TableAction(action.name, params),
        priority,
        default,
    )


def read_table_entries(sw: Switch, schema: Schema, query: p4runtime_pb2.TableEntry):
    infos = [lookup(schema.table, query.table_id)] if query.table_id else schema.all("table")
    for info in infos:
        table = sw.tables.get(info.name)
        if table is None:
            continue
        if query.is_default_action:
            if table.default is not None:
                yield _table_entry(schema, info, table.default, default=True).encode(schema)
            continue
        for engine_entry in table.entries():
            yield _table_entry(schema, info, engine_entry).encode(schema)


# --- registers, counters and meters --------------------------------------------------------
def _indices(size: int, index: int | None) -> range:
    """The cells an entry selects: one (past the end is OUT_OF_RANGE; p4e refused a negative one
    already) or, with no index, all."""
    if index is None:
        return range(size)
    if index >= size:
        raise EntityError(
            grpc.StatusCode.OUT_OF_RANGE, f"index {index} is out of range 0..{size - 1}"
        )
    return range(index, index + 1)


def write_register(
    sw: Switch, schema: Schema, update_type: int, entry: p4runtime_pb2.RegisterEntry
) -> None:
    """One cell, or with no index every cell (the spec's wildcard write)."""
    cell = RegisterEntry.decode(entry, schema)
    if update_type != MODIFY:
        raise invalid("register cells can only be modified")
    reg = sw.registers[cell.register]
    cells = _indices(reg.size, cell.index)
    if cell.value is None:
        raise invalid(f"writing register '{cell.register}' needs a value (data.bitstring)")
    for i in cells:
        reg.write(i, cell.value)


def read_registers(sw: Switch, schema: Schema, query: p4runtime_pb2.RegisterEntry):
    infos = (
        [lookup(schema.register, query.register_id)]
        if query.register_id
        else schema.all("register")
    )
    for info in infos:
        reg = sw.registers[info.name]
        for i in _indices(reg.size, p4e.index_of(query, f"register '{info.name}'")):
            yield RegisterEntry(info.name, i, reg.read(i)).encode(schema)


def write_counter(
    sw: Switch, schema: Schema, update_type: int, entry: p4runtime_pb2.CounterEntry
) -> None:
    """One cell, or with no index every cell; without data nothing changes (the spec's MODIFY)."""
    cell = CounterEntry.decode(entry, schema)
    if update_type != MODIFY:
        raise invalid("counter cells can only be modified")
    counter = sw.counters[cell.counter]
    cells = _indices(counter.size, cell.index)
    if cell.data is None:
        return
    for i in cells:
        counter.write(i, cell.data.packet_count, cell.data.byte_count)


def read_counters(sw: Switch, schema: Schema, query: p4runtime_pb2.CounterEntry):
    infos = (
        [lookup(schema.counter, query.counter_id)] if query.counter_id else schema.all("counter")
    )
    for info in infos:
        counter = sw.counters[info.name]
        for i in _indices(counter.size, p4e.index_of(query, f"counter '{info.name}'")):
            yield CounterEntry(info.name, i, CounterData(*counter.read(i))).encode(schema)


def _find_entry(sw: Switch, schema: Schema, key: TableEntry):
    """The engine entry a direct counter's table entry names (by its key), NOT_FOUND if none."""
    info = schema.table(key.table)
    priority = key.priority if info.needs_priority else None
    found = sw.tables[info.name].find(_engine_match(info, key.match), priority)
    if found is None:
        raise EntityError(grpc.StatusCode.NOT_FOUND, f"table '{info.name}' has no such entry")
    return info, found


def write_direct_counter(
    sw: Switch, schema: Schema, update_type: int, entry: p4runtime_pb2.DirectCounterEntry
) -> None:
    if update_type != MODIFY:
        raise invalid("direct counters can only be modified")
    cell = DirectCounterEntry.decode(entry, schema)
    info, found = _find_entry(sw, schema, cell.table_entry)
    if cell.data is not None:  # without data nothing changes, as the spec says
        sw.tables[info.name].set_counters(
            found.handle, cell.data.packet_count, cell.data.byte_count
        )


def read_direct_counters(sw: Switch, schema: Schema, query: p4runtime_pb2.DirectCounterEntry):
    if query.table_entry.match:
        entries = [_find_entry(sw, schema, TableEntry.decode(query.table_entry, schema))]
    else:
        infos = (
            [lookup(schema.table, query.table_entry.table_id)]
            if query.table_entry.table_id
            else schema.all("table")
        )
        entries = [
            (i, e) for i in infos if i.direct_counter_id for e in sw.tables[i.name].entries()
        ]
    for info, found in entries:
        data = CounterData(*sw.tables[info.name].counters(found.handle))
        yield DirectCounterEntry(_table_entry(schema, info, found), data).encode(schema)


def write_meter(
    sw: Switch, schema: Schema, update_type: int, entry: p4runtime_pb2.MeterEntry
) -> None:
    cell = MeterEntry.decode(entry, schema)
    if update_type != MODIFY:
        raise invalid("meter cells can only be modified")
    meter = sw.meters[cell.meter]
    for i in _indices(schema.meter(cell.meter).size, cell.index):
        if cell.config is None:
            meter.reset(i)
            continue
        c = cell.config
        try:
            meter.set(i, c.cir, c.cburst, c.pir, c.pburst)
        except ValueError as err:
            raise invalid(str(err)) from None


def read_meters(sw: Switch, schema: Schema, query: p4runtime_pb2.MeterEntry):
    infos = [lookup(schema.meter, query.meter_id)] if query.meter_id else schema.all("meter")
    for info in infos:
        meter = sw.meters[info.name]
        for i in _indices(info.size, p4e.index_of(query, f"meter '{info.name}'")):
            config = meter.get(i)
            yield MeterEntry(
                info.name, i, MeterConfig(*(int(x) for x in config)) if config else None
            ).encode(schema)


# --- packet replication engine -----------------------------------------------------------
def _check_exists(update_type: int, exists: bool, what: str) -> None:
    if update_type == INSERT and exists:
        raise EntityError(grpc.StatusCode.ALREADY_EXISTS, f"{what} already exists")
    if update_type == MODIFY and not exists:
        raise EntityError(grpc.StatusCode.NOT_FOUND, f"{what} does not exist")


def write_pre(
    sw: Switch, update_type: int, entry: p4runtime_pb2.PacketReplicationEngineEntry
) -> None:
    item = p4e.decode_pre(entry)
    try:
        match item:
            case MulticastGroupEntry(mgid, replicas):
                if mgid == 0:
                    raise invalid(
                        "multicast group 0 means 'no multicast' in v1model; use ids from 1"
                    )
                _check_exists(update_type, mgid in sw.multicast.groups(), f"multicast group {mgid}")
                if update_type == DELETE:
                    sw.multicast.delete_group(mgid)
                else:
                    sw.multicast.set_group(mgid, list(replicas))
            case CloneSessionEntry(session, replicas, truncate):
                _check_exists(
                    update_type, session in sw.clone.sessions(), f"clone session {session}"
                )
                if update_type == DELETE:
                    sw.clone.delete_session(session)
                else:
                    sw.clone.set_session(session, list(replicas), truncate)
    except TableError as err:
        raise _table_error(err) from None


def read_pre(sw: Switch, query: p4runtime_pb2.PacketReplicationEngineEntry):
    kind = query.WhichOneof("type")
    if kind == "multicast_group_entry":
        wanted = query.multicast_group_entry.multicast_group_id
        for mgid, replicas in sorted(sw.multicast.groups().items()):
            if not wanted or mgid == wanted:
                yield MulticastGroupEntry(mgid, tuple(map(Replica._make, replicas))).encode()
    elif kind == "clone_session_entry":
        wanted = query.clone_session_entry.session_id
        for session, (replicas, truncate) in sorted(sw.clone.sessions().items()):
            if not wanted or session == wanted:
                yield CloneSessionEntry(
                    session, tuple(map(Replica._make, replicas)), truncate
                ).encode()


# --- digest entries ------------------------------------------------------------------------
def write_digest(
    configs: dict[int, p4runtime_pb2.DigestEntry],
    schema: Schema,
    update_type: int,
    entry: p4runtime_pb2.DigestEntry,
) -> None:
    """Store a digest's streaming config; `configs` (digest id -> entry) belongs to the pipeline."""
    info = lookup(schema.digest, entry.digest_id)
    exists = info.id in configs
    if update_type == INSERT and exists:
        raise EntityError(
            grpc.StatusCode.ALREADY_EXISTS, f"digest '{info.name}' is already configured"
        )
    if update_type in (MODIFY, DELETE) and not exists:
        raise EntityError(grpc.StatusCode.NOT_FOUND, f"digest '{info.name}' is not configured")
    if update_type == DELETE:
        del configs[info.id]
        return
    if not entry.HasField("config"):
        raise invalid(
            f"digest '{info.name}' needs a config (max_timeout_ns, max_list_size, ack_timeout_ns)"
        )
    stored = p4runtime_pb2.DigestEntry()
    stored.CopyFrom(entry)
    configs[info.id] = stored


def read_digests(
    configs: dict[int, p4runtime_pb2.DigestEntry], schema: Schema, query: p4runtime_pb2.DigestEntry
):
    if query.digest_id:
        lookup(schema.digest, query.digest_id)
    for digest_id, entry in sorted(configs.items()):
        if not query.digest_id or digest_id == query.digest_id:
            yield entry


# --- the entities the server writes and reads, one entry each -----------------------------
@dataclass(frozen=True)
class Target:
    """What an entity's write or read reaches: the switch, its P4Info, the pipeline's digest
    configs (the server's, replaced with the pipeline)."""

    sw: Switch
    schema: Schema
    digests: dict[int, p4runtime_pb2.DigestEntry]


@dataclass(frozen=True)
class Entity:
    """One P4Runtime entity kind (the Entity message's oneof name): its update applied completely
    or refused with EntityError before any change, and the entries a read selects."""

    write: Callable[[Target, int, Message], None]
    read: Callable[[Target, Message], Iterable[Message]]


ENTITIES: dict[str, Entity] = {
    "table_entry": Entity(
        lambda t, u, e: write_table_entry(t.sw, t.schema, u, e),
        lambda t, q: read_table_entries(t.sw, t.schema, q),
    ),
    "register_entry": Entity(
        lambda t, u, e: write_register(t.sw, t.schema, u, e),
        lambda t, q: read_registers(t.sw, t.schema, q),
    ),
    "counter_entry": Entity(
        lambda t, u, e: write_counter(t.sw, t.schema, u, e),
        lambda t, q: read_counters(t.sw, t.schema, q),
    ),
    "direct_counter_entry": Entity(
        lambda t, u, e: write_direct_counter(t.sw, t.schema, u, e),
        lambda t, q: read_direct_counters(t.sw, t.schema, q),
    ),
    "meter_entry": Entity(
        lambda t, u, e: write_meter(t.sw, t.schema, u, e),
        lambda t, q: read_meters(t.sw, t.schema, q),
    ),
    "packet_replication_engine_entry": Entity(
        lambda t, u, e: write_pre(t.sw, u, e), lambda t, q: read_pre(t.sw, q)
    ),
    "digest_entry": Entity(
        lambda t, u, e: write_digest(t.digests, t.schema, u, e),
        lambda t, q: read_digests(t.digests, t.schema, q),
    ),
}
