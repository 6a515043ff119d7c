"""P4Runtime entities <-> the engine's tables, registers, counters, meters and replication engine.

Each function either applies one update completely or raises EntityError before touching any
state, so a failed update in a batch leaves nothing half done.
"""

import grpc

from ina.p4rt import codec
from ina.p4rt.proto import p4data_pb2, p4runtime_pb2
from ina.p4rt.schema import Schema, SchemaError
from ina.switch.engine import Switch
from ina.switch.errors import TableError

INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)


class EntityError(Exception):
    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> EntityError:
    return EntityError(grpc.StatusCode.INVALID_ARGUMENT, message)


def decode(data: bytes, bitwidth: int, what: str) -> int:
    """A client's bytestring as an int; empty or too wide is OUT_OF_RANGE, as the spec's Bytestrings rule says."""
    try:
        return codec.decode_checked(data, bitwidth, what)
    except ValueError as err:
        raise EntityError(grpc.StatusCode.OUT_OF_RANGE, str(err)) from None


def _lookup(fn, key):
    try:
        return fn(key)
    except SchemaError as err:
        raise EntityError(grpc.StatusCode.NOT_FOUND, str(err)) from None


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
def _match(info, entry: p4runtime_pb2.TableEntry) -> list:
    given = {m.field_id: m for m in entry.match}
    if len(given) != len(entry.match):
        raise invalid(f"table '{info.name}': a match field is given twice")
    known = {f.id for f in info.match_fields}
    for field_id in given:
        if field_id not in known:
            raise invalid(f"table '{info.name}' has no match field id {field_id}")
    values = []
    for f in info.match_fields:
        m = given.get(f.id)
        what = f"match field '{f.name}' of '{info.name}'"
        full = (1 << f.bitwidth) - 1
        if m is None:
            if f.match_type == "EXACT":
                raise invalid(f"{what} is exact and must be given")
            values.append(("range", 0, full) if f.match_type == "RANGE" else ("ternary", 0, 0))
            continue
        kind = m.WhichOneof("field_match_type")
        if f.match_type == "EXACT" and kind == "exact":
            values.append(decode(m.exact.value, f.bitwidth, what))
        elif f.match_type == "LPM" and kind == "lpm":
            value = decode(m.lpm.value, f.bitwidth, what)
            plen = m.lpm.prefix_len
            if not 0 < plen <= f.bitwidth:
                raise invalid(f"{what}: prefix length {plen} out of range 1..{f.bitwidth}")
            if value & ((1 << (f.bitwidth - plen)) - 1):
                raise invalid(f"{what}: value has bits set beyond the /{plen} prefix")
            values.append(("lpm", value, plen))
        elif f.match_type == "TERNARY" and kind == "ternary":
            value = decode(m.ternary.value, f.bitwidth, what)
            mask = decode(m.ternary.mask, f.bitwidth, what)
            if value & ~mask:
                raise invalid(f"{what}: value has bits set outside the mask")
            values.append(("ternary", value, mask))
        elif f.match_type == "RANGE" and kind == "range":
            low = decode(m.range.low, f.bitwidth, what)
            high = decode(m.range.high, f.bitwidth, what)
            if low > high:
                raise invalid(f"{what}: range low {low} is above high {high}")
            values.append(("range", low, high))
        elif f.match_type == "OPTIONAL" and kind == "optional":
            values.append(("optional", decode(m.optional.value, f.bitwidth, what)))
        else:
            raise invalid(f"{what} is {f.match_type}; got a {kind} match")
    return values


def _action(schema: Schema, info, action: p4runtime_pb2.Action, default: bool) -> tuple[str, list[int]]:
    spec = _lookup(schema.action, action.action_id) if action.action_id else None
    if spec is None:
        raise invalid(f"table '{info.name}': the entry has no action")
    if spec.id not in info.action_ids:
        raise invalid(f"table '{info.name}' has no action '{spec.name}'")
    if default and spec.id in info.table_only:
        raise invalid(f"action '{spec.name}' may not be the default action of '{info.name}' (@tableonly)")
    if not default and spec.id in info.default_only:
        raise invalid(f"action '{spec.name}' may only be the default action of '{info.name}' (@defaultonly)")
    given = {p.param_id: p.value for p in action.params}
    if set(given) != {p.id for p in spec.params} or len(given) != len(action.params):
        raise invalid(f"action '{spec.name}' takes parameters {[p.name for p in spec.params]}; got ids {sorted(given)}")
    args = [decode(given[p.id], p.bitwidth, f"parameter '{p.name}' of '{spec.name}'") for p in spec.params]
    return spec.name, args


def _needs_priority(info) -> bool:
    return any(f.match_type in ("TERNARY", "RANGE", "OPTIONAL") for f in info.match_fields)


def write_table_entry(sw: Switch, schema: Schema, update_type: int, entry: p4runtime_pb2.TableEntry) -> None:
    info = _lookup(schema.table, entry.table_id)
    table = sw.tables.get(info.name)
    if table is None:
        raise EntityError(grpc.StatusCode.NOT_FOUND, f"the running pipeline has no table '{info.name}'")
    if entry.is_default_action:
        if update_type != MODIFY:
            raise invalid(f"the default entry of '{info.name}' can only be modified")
        if entry.match:
            raise invalid("a default entry has no match fields")
        if table.default_is_const or info.const_default_action_id:
            raise EntityError(grpc.StatusCode.PERMISSION_DENIED, f"the default action of '{info.name}' is const")
        name, args = _action(schema, info, entry.action.action, default=True)
        table.set_default(name, args)
        return
    if info.is_const or table.is_const:
        raise EntityError(grpc.StatusCode.PERMISSION_DENIED, f"table '{info.name}' is const; its entries cannot change")
    match = _match(info, entry)
    if _needs_priority(info):
        if entry.priority <= 0:
            raise invalid(f"table '{info.name}' needs a priority > 0 for its ternary/range/optional keys")
        priority = entry.priority
    else:
        if entry.priority:
            raise invalid(f"table '{info.name}' has no ternary/range/optional key; priority must be 0")
        priority = None
    try:
        existing = table.find(match, priority)
        if update_type == INSERT:
            if existing is not None:
                raise EntityError(grpc.StatusCode.ALREADY_EXISTS, f"table '{info.name}' already has this entry")
            name, args = _action(schema, info, entry.action.action, default=False)
            table.add(match, name, args, priority)
        elif update_type == MODIFY:
            if existing is None:
                raise EntityError(grpc.StatusCode.NOT_FOUND, f"table '{info.name}' has no such entry to modify")
            name, args = _action(schema, info, entry.action.action, default=False)
            table.modify(existing.handle, name, args)
        elif update_type == DELETE:
            if existing is None:
                raise EntityError(grpc.StatusCode.NOT_FOUND, f"table '{info.name}' has no such entry to delete")
            table.delete(existing.handle)
        else:
            raise invalid("unknown update type")
    except TableError as err:
        raise _table_error(err) from None


def _entry_to_proto(schema: Schema, info, engine_entry, default: bool = False) -> p4runtime_pb2.TableEntry:
    out = p4runtime_pb2.TableEntry(table_id=info.id, is_default_action=default)
    if not default:
        for f, m in zip(info.match_fields, engine_entry.match, strict=True):
            full = (1 << f.bitwidth) - 1
            fm = p4runtime_pb2.FieldMatch(field_id=f.id)
            if m[0] == "r":
                if (m[1], m[2]) == (0, full):
                    continue
                fm.range.low, fm.range.high = codec.encode(m[1], f.bitwidth), codec.encode(m[2], f.bitwidth)
            elif f.match_type == "EXACT":
                fm.exact.value = codec.encode(m[1], f.bitwidth)
            elif m[2] == 0:
                continue  # don't care
            elif f.match_type == "LPM":
                fm.lpm.value = codec.encode(m[1], f.bitwidth)
                fm.lpm.prefix_len = bin(m[2]).count("1")
            elif f.match_type == "OPTIONAL":
                fm.optional.value = codec.encode(m[1], f.bitwidth)
            else:
                fm.ternary.value, fm.ternary.mask = codec.encode(m[1], f.bitwidth), codec.encode(m[2], f.bitwidth)
            out.match.append(fm)
        if _needs_priority(info):
            out.priority = engine_entry.priority
    spec = schema.action(engine_entry.action.name)
    action = out.action.action
    action.action_id = spec.id
    for p, value in zip(spec.params, engine_entry.args, strict=True):
        action.params.add(param_id=p.id, value=codec.encode(value, p.bitwidth))
    return out


def read_table_entries(sw: Switch, schema: Schema, query: p4runtime_pb2.TableEntry):
    infos = [_lookup(schema.table, query.table_id)] if query.table_id else schema.all("table")
    for info in infos:
        table = sw.tables.get(info.name)
        if table is None:
            continue
        if query.is_default_action:
            if table.default is not None:
                yield _entry_to_proto(schema, info, table.default, default=True)
            continue
        for engine_entry in table.entries():
            yield _entry_to_proto(schema, info, engine_entry)


# --- registers and counters --------------------------------------------------------------
def _indices(size: int, query) -> range:
    if query.HasField("index"):
        if not 0 <= query.index.index < size:
            raise EntityError(grpc.StatusCode.OUT_OF_RANGE, f"index {query.index.index} is out of range 0..{size - 1}")
        return range(query.index.index, query.index.index + 1)
    return range(size)


def write_register(sw: Switch, schema: Schema, update_type: int, entry: p4runtime_pb2.RegisterEntry) -> None:
    info = _lookup(schema.register, entry.register_id)
    if update_type != MODIFY:
        raise invalid("register cells can only be modified")
    if not entry.HasField("index"):
        raise invalid(f"writing register '{info.name}' needs an index")
    reg = sw.registers[info.name]
    (index,) = _indices(reg.size, entry)
    if entry.data.WhichOneof("data") != "bitstring":
        raise invalid(f"register '{info.name}' holds a bitstring")
    reg.write(index, decode(entry.data.bitstring, reg.bitwidth, f"register '{info.name}'"))


def read_registers(sw: Switch, schema: Schema, query: p4runtime_pb2.RegisterEntry):
    infos = [_lookup(schema.register, query.register_id)] if query.register_id else schema.all("register")
    for info in infos:
        reg = sw.registers[info.name]
        for i in _indices(reg.size, query):
            yield p4runtime_pb2.RegisterEntry(
                register_id=info.id, index=p4runtime_pb2.Index(index=i),
                data=p4data_pb2.P4Data(bitstring=codec.encode(reg.read(i), reg.bitwidth)))


def write_counter(sw: Switch, schema: Schema, update_type: int, entry: p4runtime_pb2.CounterEntry) -> None:
    info = _lookup(schema.counter, entry.counter_id)
    if update_type != MODIFY:
        raise invalid("counter cells can only be modified")
    counter = sw.counters[info.name]
    for i in _indices(counter.size, entry):
        counter.write(i, entry.data.packet_count, entry.data.byte_count)


def read_counters(sw: Switch, schema: Schema, query: p4runtime_pb2.CounterEntry):
    infos = [_lookup(schema.counter, query.counter_id)] if query.counter_id else schema.all("counter")
    for info in infos:
        counter = sw.counters[info.name]
        for i in _indices(counter.size, query):
            packets, bytes_ = counter.read(i)
            yield p4runtime_pb2.CounterEntry(
                counter_id=info.id, index=p4runtime_pb2.Index(index=i),
                data=p4runtime_pb2.CounterData(byte_count=bytes_, packet_count=packets))


def _find_entry(sw: Switch, schema: Schema, table_entry: p4runtime_pb2.TableEntry):
    info = _lookup(schema.table, table_entry.table_id)
    table = sw.tables[info.name]
    priority = table_entry.priority if _needs_priority(info) else None
    found = table.find(_match(info, table_entry), priority)
    if found is None:
        raise EntityError(grpc.StatusCode.NOT_FOUND, f"table '{info.name}' has no such entry")
    return info, found


def write_direct_counter(sw: Switch, schema: Schema, update_type: int, entry) -> None:
    if update_type != MODIFY:
        raise invalid("direct counters can only be modified")
    info, found = _find_entry(sw, schema, entry.table_entry)
    sw.tables[info.name].set_counters(found.handle, entry.data.packet_count, entry.data.byte_count)


def read_direct_counters(sw: Switch, schema: Schema, query):
    if query.table_entry.match:
        info, found = _find_entry(sw, schema, query.table_entry)
        entries = [(info, found)]
    else:
        infos = [_lookup(schema.table, query.table_entry.table_id)] if query.table_entry.table_id else schema.all("table")
        entries = [(i, e) for i in infos if i.direct_counter_id for e in sw.tables[i.name].entries()]
    for info, found in entries:
        packets, bytes_ = sw.tables[info.name].counters(found.handle)
        yield p4runtime_pb2.DirectCounterEntry(
            table_entry=_entry_to_proto(schema, info, found),
            data=p4runtime_pb2.CounterData(byte_count=bytes_, packet_count=packets))


def write_meter(sw: Switch, schema: Schema, update_type: int, entry: p4runtime_pb2.MeterEntry) -> None:
    info = _lookup(schema.meter, entry.meter_id)
    if update_type != MODIFY:
        raise invalid("meter cells can only be modified")
    meter = sw.meters[info.name]
    for i in _indices(info.size, entry):
        if entry.HasField("config"):
            c = entry.config
            try:
                meter.set(i, c.cir, c.cburst, c.pir, c.pburst)
            except ValueError as err:
                raise invalid(str(err)) from None
        else:
            meter.reset(i)


def read_meters(sw: Switch, schema: Schema, query: p4runtime_pb2.MeterEntry):
    infos = [_lookup(schema.meter, query.meter_id)] if query.meter_id else schema.all("meter")
    for info in infos:
        meter = sw.meters[info.name]
        for i in _indices(info.size, query):
            out = p4runtime_pb2.MeterEntry(meter_id=info.id, index=p4runtime_pb2.Index(index=i))
            config = meter.get(i)
            if config:
                out.config.cir, out.config.cburst, out.config.pir, out.config.pburst = (int(x) for x in config)
            yield out


# --- packet replication engine -----------------------------------------------------------
def write_pre(sw: Switch, update_type: int, entry: p4runtime_pb2.PacketReplicationEngineEntry) -> None:
    kind = entry.WhichOneof("type")
    try:
        if kind == "multicast_group_entry":
            group = entry.multicast_group_entry
            mgid = group.multicast_group_id
            if mgid == 0:
                raise invalid("multicast group 0 means 'no multicast' in v1model; use ids from 1")
            exists = mgid in sw.multicast.groups()
            replicas = [(r.egress_port, r.instance) for r in group.replicas]
            if update_type == INSERT:
                if exists:
                    raise EntityError(grpc.StatusCode.ALREADY_EXISTS, f"multicast group {mgid} already exists")
                sw.multicast.set_group(mgid, replicas)
            elif update_type == MODIFY:
                if not exists:
                    raise EntityError(grpc.StatusCode.NOT_FOUND, f"multicast group {mgid} does not exist")
                sw.multicast.set_group(mgid, replicas)
            else:
                sw.multicast.delete_group(mgid)
        elif kind == "clone_session_entry":
            session = entry.clone_session_entry
            exists = session.session_id in sw.clone.sessions()
            replicas = [(r.egress_port, r.instance) for r in session.replicas]
            if update_type == INSERT and exists:
                raise EntityError(grpc.StatusCode.ALREADY_EXISTS, f"clone session {session.session_id} already exists")
            if update_type == MODIFY and not exists:
                raise EntityError(grpc.StatusCode.NOT_FOUND, f"clone session {session.session_id} does not exist")
            if update_type == DELETE:
                sw.clone.delete_session(session.session_id)
            else:
                sw.clone.set_session(session.session_id, replicas, session.packet_length_bytes)
        else:
            raise invalid("empty packet replication engine entry")
    except TableError as err:
        raise _table_error(err) from None


def read_pre(sw: Switch, query: p4runtime_pb2.PacketReplicationEngineEntry):
    kind = query.WhichOneof("type")
    if kind == "multicast_group_entry":
        wanted = query.multicast_group_entry.multicast_group_id
        for mgid, replicas in sorted(sw.multicast.groups().items()):
            if wanted and mgid != wanted:
                continue
            out = p4runtime_pb2.PacketReplicationEngineEntry()
            out.multicast_group_entry.multicast_group_id = mgid
            for port, rid in replicas:
                out.multicast_group_entry.replicas.add(egress_port=port, instance=rid)
            yield out
    elif kind == "clone_session_entry":
        wanted = query.clone_session_entry.session_id
        for session, (replicas, truncate) in sorted(sw.clone.sessions().items()):
            if wanted and session != wanted:
                continue
            out = p4runtime_pb2.PacketReplicationEngineEntry()
            out.clone_session_entry.session_id = session
            out.clone_session_entry.packet_length_bytes = truncate
            for port, rid in replicas:
                out.clone_session_entry.replicas.add(egress_port=port, instance=rid)
            yield out


# --- digest entries ------------------------------------------------------------------------
def write_digest(configs: dict[int, p4runtime_pb2.DigestEntry], schema: Schema, update_type: int,
                 entry: p4runtime_pb2.DigestEntry) -> None:
    """Store a digest's streaming config; `configs` (digest id -> entry) belongs to the pipeline."""
    info = _lookup(schema.digest, entry.digest_id)
    exists = info.id in configs
    if update_type == INSERT and exists:
        raise EntityError(grpc.StatusCode.ALREADY_EXISTS, f"digest '{info.name}' is already configured")
    if update_type in (MODIFY, DELETE) and not exists:
        raise EntityError(grpc.StatusCode.NOT_FOUND, f"digest '{info.name}' is not configured")
    if update_type == DELETE:
        del configs[info.id]
        return
    if not entry.HasField("config"):
        raise invalid(f"digest '{info.name}' needs a config (max_timeout_ns, max_list_size, ack_timeout_ns)")
    stored = p4runtime_pb2.DigestEntry()
    stored.CopyFrom(entry)
    configs[info.id] = stored


def read_digests(configs: dict[int, p4runtime_pb2.DigestEntry], schema: Schema, query: p4runtime_pb2.DigestEntry):
    if query.digest_id:
        _lookup(schema.digest, query.digest_id)
    for digest_id, entry in sorted(configs.items()):
        if not query.digest_id or digest_id == query.digest_id:
            yield entry
