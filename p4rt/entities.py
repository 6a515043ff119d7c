"""P4Runtime entities as typed values, encoded to and decoded from protobuf against a Schema.

Each kind holds both directions, so the controller (which encodes what it writes and decodes what
it reads) and the switch's server (the reverse) share one codec and a round trip is tested once
(tests/p4rt/test_entities.py). Both directions check the same rules and fail with EntityError
carrying the code the P4Runtime spec names: OUT_OF_RANGE for a value that does not fit its field
(or an empty byte string), INVALID_ARGUMENT for a malformed entity (a don't-care match spelled out,
an action the table lacks, a negative index), PERMISSION_DENIED for an action used outside its
@defaultonly/@tableonly scope, NOT_FOUND for a table, register, ... the P4Info lacks. What an update
may do to a target's state (exists, const, index in range, update type) is the server's business,
not this module's.

Canonical form: values are the shortest big-endian bytes, match fields go in P4Info order, and
don't-care fields (a ternary mask of 0, a range covering the whole field, an LPM prefix of 0) are
omitted: encode_match leaves them out of what it sends, and a FieldMatch that spells one out is
INVALID_ARGUMENT both ways, as the spec's Match Format says. Decoding accepts any width that holds
a value and any field order, so decode(encode(x)) == x for an x without don't-cares, and
encode(decode(m)) is m's canonical form.
"""

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple, TypeVar

import grpc

from ina.p4rt import codec
from ina.p4rt.proto import p4runtime_pb2
from ina.p4rt.schema import Action, MatchField, Param, Schema, SchemaError, Table

T = TypeVar("T")


class EntityError(Exception):
    """An entity that cannot be encoded, decoded or applied; `code` is the P4Runtime canonical code."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> EntityError:
    return EntityError(grpc.StatusCode.INVALID_ARGUMENT, message)


def lookup(find: Callable[[str | int], T], key: str | int) -> T:
    """`find(key)` (schema.table and the like), an unknown name or id being NOT_FOUND."""
    try:
        return find(key)
    except SchemaError as err:
        raise EntityError(grpc.StatusCode.NOT_FOUND, str(err)) from None


def check_fits(value: int, bitwidth: int, where: str) -> None:
    try:
        codec.check_fits(value, bitwidth, where)
    except codec.DoesNotFit as err:
        raise EntityError(grpc.StatusCode.OUT_OF_RANGE, str(err)) from None


def encode_value(value: int, bitwidth: int, where: str) -> bytes:
    """The canonical (shortest big-endian) bytes of `value`; OUT_OF_RANGE if it does not fit."""
    check_fits(value, bitwidth, where)
    return codec.encode(value, bitwidth)


def decode_value(data: bytes, bitwidth: int, where: str) -> int:
    """Bytes of any width that holds the value; empty or too wide is OUT_OF_RANGE (the spec's Bytestrings rule)."""
    try:
        return codec.decode_checked(data, bitwidth, where)
    except ValueError as err:
        raise EntityError(grpc.StatusCode.OUT_OF_RANGE, str(err)) from None


def parse_value(value: object, bitwidth: int, where: str) -> int:
    """A value as people write it (int, decimal or 0x text, MAC, IPv4): malformed is INVALID_ARGUMENT,
    too wide OUT_OF_RANGE."""
    if not isinstance(value, int | str):
        raise invalid(f"{where}: {value!r} is not a number, MAC or IPv4 address")
    try:
        return codec.parse_value(value, bitwidth)
    except codec.DoesNotFit as err:
        raise EntityError(grpc.StatusCode.OUT_OF_RANGE, f"{where}: {err}") from None
    except ValueError as err:
        raise invalid(f"{where}: {err}") from None


def _pair(value: object, where: str, what: str) -> tuple[object, object]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise invalid(f"{where}: expected {what}; got {value!r}")
    return value[0], value[1]


# --- match fields ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Match:
    """One field's match. Each kind's dataclass fields are named as in its FieldMatch oneof member,
    so one encode and one decode serve all five; a kind adds its own rules in check()."""

    kind: ClassVar[str]  # the FieldMatch oneof member; upper-cased, the P4Info match type
    counts: ClassVar[tuple[str, ...]] = ()  # fields that are integers on the wire, not bytes

    def check(self, f: MatchField, where: str) -> None:
        for item in dataclasses.fields(self):
            if item.name not in self.counts:
                check_fits(getattr(self, item.name), f.bitwidth, where)

    def is_dont_care(self, f: MatchField) -> bool:
        return False

    def encode(self, f: MatchField, where: str) -> p4runtime_pb2.FieldMatch:
        self.check(f, where)
        msg = p4runtime_pb2.FieldMatch(field_id=f.id)
        part = getattr(msg, self.kind)
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            setattr(
                part,
                item.name,
                value if item.name in self.counts else codec.encode(value, f.bitwidth),
            )
        return msg

    @classmethod
    def decode(cls, msg: p4runtime_pb2.FieldMatch, f: MatchField, where: str) -> "_Match":
        part = getattr(msg, cls.kind)
        values = {
            item.name: getattr(part, item.name)
            if item.name in cls.counts
            else decode_value(getattr(part, item.name), f.bitwidth, where)
            for item in dataclasses.fields(cls)
        }
        match = cls(**values)
        match.check(f, where)
        return match

    @classmethod
    def parse(cls, value: object, f: MatchField, where: str) -> "_Match":
        """From the plain form (see plain), text allowed for values."""
        return cls(parse_value(value, f.bitwidth, where))

    def plain(self) -> int | tuple[int, int]:
        """The value, or the pair (value, prefix_len), (value, mask), (low, high): the controller's form."""
        values = dataclasses.astuple(self)
        return values[0] if len(values) == 1 else values


@dataclass(frozen=True)
class ExactMatch(_Match):
    value: int
    kind: ClassVar[str] = "exact"


@dataclass(frozen=True)
class LpmMatch(_Match):
    value: int
    prefix_len: int
    kind: ClassVar[str] = "lpm"
    counts: ClassVar[tuple[str, ...]] = ("prefix_len",)

    def check(self, f: MatchField, where: str) -> None:
        super().check(f, where)
        if not 0 < self.prefix_len <= f.bitwidth:  # /0 is a don't-care, which the spec says to omit
            raise invalid(f"{where}: prefix length {self.prefix_len} out of range 1..{f.bitwidth}")
        if self.value & ((1 << (f.bitwidth - self.prefix_len)) - 1):
            raise invalid(f"{where}: value has bits set beyond the /{self.prefix_len} prefix")

    @classmethod
    def parse(cls, value: object, f: MatchField, where: str) -> "LpmMatch":
        """ "10.0.0.0/8", (value, prefix_len), or a bare value (the whole width)."""
        if isinstance(value, str) and "/" in value:
            text, _, length = value.partition("/")
            if not length.isdigit():
                raise invalid(f"{where}: '{value}' has no prefix length after '/'")
            value = (text, int(length))
        v, length = (
            _pair(value, where, "(value, prefix_len)")
            if isinstance(value, tuple | list)
            else (value, f.bitwidth)
        )
        if not isinstance(length, int):
            raise invalid(f"{where}: prefix length {length!r} is not an integer")
        return cls(parse_value(v, f.bitwidth, where), length)


@dataclass(frozen=True)
class TernaryMatch(_Match):
    value: int
    mask: int
    kind: ClassVar[str] = "ternary"

    def check(self, f: MatchField, where: str) -> None:
        super().check(f, where)
        if self.value & ~self.mask:
            raise invalid(f"{where}: value has bits set outside the mask")
        if self.is_dont_care(f):
            raise invalid(f"{where}: a ternary mask of 0 is a don't-care; omit the field instead")

    def is_dont_care(self, f: MatchField) -> bool:
        return self.mask == 0

    @classmethod
    def parse(cls, value: object, f: MatchField, where: str) -> "TernaryMatch":
        """(value, mask), or a bare value (all bits matter)."""
        v, mask = (
            _pair(value, where, "(value, mask)")
            if isinstance(value, tuple | list)
            else (value, (1 << f.bitwidth) - 1)
        )
        return cls(parse_value(v, f.bitwidth, where), parse_value(mask, f.bitwidth, where))


@dataclass(frozen=True)
class RangeMatch(_Match):
    low: int
    high: int
    kind: ClassVar[str] = "range"

    def check(self, f: MatchField, where: str) -> None:
        super().check(f, where)
        if self.low > self.high:
            raise invalid(f"{where}: range low {self.low} is above high {self.high}")
        if self.is_dont_care(f):
            raise invalid(
                f"{where}: a range over every value is a don't-care; omit the field instead"
            )

    def is_dont_care(self, f: MatchField) -> bool:
        return (self.low, self.high) == (0, (1 << f.bitwidth) - 1)

    @classmethod
    def parse(cls, value: object, f: MatchField, where: str) -> "RangeMatch":
        low, high = _pair(value, where, "(low, high)")
        return cls(parse_value(low, f.bitwidth, where), parse_value(high, f.bitwidth, where))


@dataclass(frozen=True)
class OptionalMatch(_Match):
    value: int
    kind: ClassVar[str] = "optional"


Match = ExactMatch | LpmMatch | TernaryMatch | RangeMatch | OptionalMatch
MATCH_KINDS: dict[str, type[Match]] = {
    k.kind.upper(): k for k in (ExactMatch, LpmMatch, TernaryMatch, RangeMatch, OptionalMatch)
}


def _where(f: MatchField, table: Table) -> str:
    return f"match field '{f.name}' of '{table.name}'"


def _no_key(table: Table, key: object) -> EntityError:
    keys = ", ".join(f.name for f in table.match_fields)
    return invalid(f"table '{table.name}' has no key '{key}' (keys: {keys})")


def _kind(f: MatchField, table: Table, given: str | None) -> type[Match] | None:
    """The class for field `f` given a match of kind `given` (None: the field is omitted)."""
    where = _where(f, table)
    if given is None:
        if f.match_type == "EXACT":
            raise invalid(f"{where} is exact and must be given")
        return None
    kind = MATCH_KINDS.get(f.match_type)
    if kind is None or kind.kind != given:
        raise invalid(f"{where} is {f.match_type}; got a {given} match")
    return kind


def encode_match(match: Mapping[str, Match], table: Table) -> list[p4runtime_pb2.FieldMatch]:
    """Fields by P4Info name -> FieldMatch messages in P4Info order, don't-cares left out."""
    names = {f.name for f in table.match_fields}
    for key in match:
        if key not in names:
            raise _no_key(table, key)
    out = []
    for f in table.match_fields:
        m = match.get(f.name)
        if _kind(f, table, None if m is None else m.kind) is not None and not m.is_dont_care(f):
            out.append(m.encode(f, _where(f, table)))
    return out


def decode_match(fields: Iterable[p4runtime_pb2.FieldMatch], table: Table) -> dict[str, Match]:
    """FieldMatch messages in any order -> fields by P4Info name (a don't-care is refused)."""
    fields = list(fields)
    given = {m.field_id: m for m in fields}
    if len(given) != len(fields):
        raise invalid(f"table '{table.name}': a match field is given twice")
    known = {f.id for f in table.match_fields}
    for field_id in given:
        if field_id not in known:
            raise invalid(f"table '{table.name}' has no match field id {field_id}")
    out = {}
    for f in table.match_fields:
        m = given.get(f.id)
        kind = _kind(f, table, None if m is None else m.WhichOneof("field_match_type"))
        if kind is not None:
            out[f.name] = kind.decode(m, f, _where(f, table))
    return out


# --- actions and table entries ----------------------------------------------------------------
def _check_scope(action: Action, table: Table, default: bool) -> None:
    """The action belongs to the table (else INVALID_ARGUMENT), and may be used as (or other than)
    its default action (else PERMISSION_DENIED: the spec's code for an action outside its scope)."""
    if action.id not in table.action_ids:
        raise invalid(f"table '{table.name}' has no action '{action.name}'")
    if default and action.id in table.table_only:
        raise EntityError(
            grpc.StatusCode.PERMISSION_DENIED,
            f"action '{action.name}' may not be the default action of '{table.name}' (@tableonly)",
        )
    if not default and action.id in table.default_only:
        raise EntityError(
            grpc.StatusCode.PERMISSION_DENIED,
            f"action '{action.name}' may only be the default action of '{table.name}' (@defaultonly)",
        )


def _check_param_names(action: Action, names: Iterable[str]) -> None:
    names = set(names)
    for p in action.params:
        if p.name not in names:
            raise invalid(f"action '{action.name}' needs parameter '{p.name}'")
    unknown = names - {p.name for p in action.params}
    if unknown:
        raise invalid(f"action '{action.name}' has no parameter {', '.join(sorted(unknown))}")


def _param_where(p: Param, action: Action) -> str:
    return f"parameter '{p.name}' of '{action.name}'"


@dataclass
class TableAction:
    """A table entry's (direct) action and its parameters by name; decoded in the P4Info's order."""

    name: str
    params: dict[str, int] = field(default_factory=dict)

    def encode(self, schema: Schema, table: Table, default: bool) -> p4runtime_pb2.Action:
        action = lookup(schema.action, self.name)
        _check_scope(action, table, default)
        _check_param_names(action, self.params)
        msg = p4runtime_pb2.Action(action_id=action.id)
        for p in action.params:
            msg.params.add(
                param_id=p.id,
                value=encode_value(self.params[p.name], p.bitwidth, _param_where(p, action)),
            )
        return msg

    @classmethod
    def decode(
        cls, msg: p4runtime_pb2.Action, schema: Schema, table: Table, default: bool
    ) -> "TableAction":
        if not msg.action_id:
            raise invalid(f"table '{table.name}': the entry has no action")
        try:
            action = schema.action(msg.action_id)
        except (
            SchemaError
        ):  # the spec: an action id that is not one of the table's is INVALID_ARGUMENT
            raise invalid(
                f"table '{table.name}' has no action id {msg.action_id:#x} (nor has the P4Info)"
            ) from None
        _check_scope(action, table, default)
        given = {p.param_id: p.value for p in msg.params}
        if set(given) != {p.id for p in action.params} or len(given) != len(msg.params):
            raise invalid(
                f"action '{action.name}' takes parameters {[p.name for p in action.params]}; "
                f"got ids {sorted(given)}"
            )
        return cls(
            action.name,
            {
                p.name: decode_value(given[p.id], p.bitwidth, _param_where(p, action))
                for p in action.params
            },
        )

    @classmethod
    def parse(cls, schema: Schema, name: str, params: Mapping[str, object]) -> "TableAction":
        """From parameter values as people write them (text allowed)."""
        action = lookup(schema.action, name)
        _check_param_names(action, params)
        return cls(
            action.name,
            {
                p.name: parse_value(params[p.name], p.bitwidth, _param_where(p, action))
                for p in action.params
            },
        )

    def args(self, schema: Schema) -> list[int]:
        """The parameter values in the P4Info's order (the switch engine's argument list)."""
        return [self.params[p.name] for p in lookup(schema.action, self.name).params]


def _check_default(table: Table, is_default: bool, has_match: bool, priority: int) -> None:
    """The spec's Default Entry: no match fields, priority 0."""
    if is_default and has_match:
        raise invalid(f"table '{table.name}': a default entry has no match fields")
    if is_default and priority:
        raise invalid(f"table '{table.name}': a default entry has priority 0, not {priority}")


@dataclass
class TableEntry:
    """A table entry by names. `match` holds the fields that are not don't-care, by P4Info name;
    `action` is None in a key-only entry (a delete, a direct counter's entry)."""

    table: str
    match: dict[str, Match] = field(default_factory=dict)
    action: TableAction | None = None
    priority: int = 0
    is_default: bool = False
    entity: ClassVar[str] = "table_entry"

    def encode(self, schema: Schema) -> p4runtime_pb2.TableEntry:
        table = lookup(schema.table, self.table)
        _check_default(table, self.is_default, bool(self.match), self.priority)
        match = [] if self.is_default else encode_match(self.match, table)
        msg = p4runtime_pb2.TableEntry(
            table_id=table.id,
            match=match,
            priority=self.priority,
            is_default_action=self.is_default,
        )
        if self.action is not None:
            msg.action.action.CopyFrom(self.action.encode(schema, table, self.is_default))
        return msg

    @classmethod
    def decode(cls, msg: p4runtime_pb2.TableEntry, schema: Schema) -> "TableEntry":
        table = lookup(schema.table, msg.table_id)
        _check_default(table, msg.is_default_action, bool(msg.match), msg.priority)
        match = {} if msg.is_default_action else decode_match(msg.match, table)
        action = None
        if msg.HasField("action"):
            action = TableAction.decode(msg.action.action, schema, table, msg.is_default_action)
        return cls(table.name, match, action, msg.priority, msg.is_default_action)

    @classmethod
    def parse(
        cls,
        schema: Schema,
        table: str,
        match: Mapping[str, object],
        action: str | None = None,
        params: Mapping[str, object] | None = None,
        priority: int = 0,
        is_default: bool = False,
    ) -> "TableEntry":
        """From values as people write them: keys by full name or a dotted suffix ("job_id"), a None
        value leaving the field out, text for values, an LPM as "10.0.0.0/8"; see each kind's parse."""
        info = lookup(schema.table, table)
        typed: dict[str, Match] = {}
        for key, value in match.items():
            f = next((x for x in info.match_fields if x.name == key), None) or next(
                (x for x in info.match_fields if x.name.endswith("." + key)), None
            )
            if f is None:
                raise _no_key(info, key)
            if value is None:
                continue
            kind = MATCH_KINDS.get(f.match_type)
            if kind is None:
                raise invalid(
                    f"{_where(f, info)} is {f.match_type}, a match type P4Runtime entities lack"
                )
            typed[f.name] = kind.parse(value, f, _where(f, info))
        typed_action = TableAction.parse(schema, action, params or {}) if action else None
        return cls(info.name, typed, typed_action, priority, is_default)


# --- registers, counters, meters -----------------------------------------------------------
def _checked_index(index: int | None, what: str) -> int | None:
    """`index`, unless negative: INVALID_ARGUMENT, the spec's code (past the end is the server's OUT_OF_RANGE)."""
    if index is not None and index < 0:
        raise invalid(f"{what}: index {index} is negative")
    return index


def index_of(msg, what: str) -> int | None:
    """The Index of a register, counter or meter entry (`what` names it); None when absent (every cell)."""
    return _checked_index(msg.index.index if msg.HasField("index") else None, what)


def _set_index(msg, index: int | None, what: str) -> None:
    if _checked_index(index, what) is not None:
        msg.index.index = index


@dataclass(frozen=True)
class RegisterEntry:
    """A register cell; index None selects every cell (a read, or a write of every cell), value None
    carries no data (a query)."""

    register: str
    index: int | None = None
    value: int | None = None
    entity: ClassVar[str] = "register_entry"

    def encode(self, schema: Schema) -> p4runtime_pb2.RegisterEntry:
        info = lookup(schema.register, self.register)
        msg = p4runtime_pb2.RegisterEntry(register_id=info.id)
        _set_index(msg, self.index, f"register '{info.name}'")
        if self.value is not None:
            msg.data.bitstring = encode_value(self.value, info.bitwidth, f"register '{info.name}'")
        return msg

    @classmethod
    def decode(cls, msg: p4runtime_pb2.RegisterEntry, schema: Schema) -> "RegisterEntry":
        info = lookup(schema.register, msg.register_id)
        value = None
        if msg.HasField("data"):
            if msg.data.WhichOneof("data") != "bitstring":
                raise invalid(f"register '{info.name}' holds a bitstring")
            value = decode_value(msg.data.bitstring, info.bitwidth, f"register '{info.name}'")
        return cls(info.name, index_of(msg, f"register '{info.name}'"), value)


@dataclass(frozen=True)
class CounterData:
    packet_count: int = 0
    byte_count: int = 0

    def encode(self) -> p4runtime_pb2.CounterData:
        return p4runtime_pb2.CounterData(**dataclasses.asdict(self))

    @classmethod
    def decode(cls, msg: p4runtime_pb2.CounterData) -> "CounterData":
        return cls(msg.packet_count, msg.byte_count)


def _data(msg, name: str, kind: type[T]) -> T | None:
    return kind.decode(getattr(msg, name)) if msg.HasField(name) else None


@dataclass(frozen=True)
class CounterEntry:
    """A counter cell; index None selects every cell, data None is a query."""

    counter: str
    index: int | None = None
    data: CounterData | None = None
    entity: ClassVar[str] = "counter_entry"

    def encode(self, schema: Schema) -> p4runtime_pb2.CounterEntry:
        info = lookup(schema.counter, self.counter)
        msg = p4runtime_pb2.CounterEntry(counter_id=info.id)
        _set_index(msg, self.index, f"counter '{info.name}'")
        if self.data is not None:
            msg.data.CopyFrom(self.data.encode())
        return msg

    @classmethod
    def decode(cls, msg: p4runtime_pb2.CounterEntry, schema: Schema) -> "CounterEntry":
        info = lookup(schema.counter, msg.counter_id)
        return cls(
            info.name, index_of(msg, f"counter '{info.name}'"), _data(msg, "data", CounterData)
        )


@dataclass
class DirectCounterEntry:
    """The direct counter of the entry `table_entry` identifies (its key; an action is optional)."""

    table_entry: TableEntry
    data: CounterData | None = None
    entity: ClassVar[str] = "direct_counter_entry"

    def encode(self, schema: Schema) -> p4runtime_pb2.DirectCounterEntry:
        msg = p4runtime_pb2.DirectCounterEntry(table_entry=self.table_entry.encode(schema))
        if self.data is not None:
            msg.data.CopyFrom(self.data.encode())
        return msg

    @classmethod
    def decode(cls, msg: p4runtime_pb2.DirectCounterEntry, schema: Schema) -> "DirectCounterEntry":
        return cls(TableEntry.decode(msg.table_entry, schema), _data(msg, "data", CounterData))


@dataclass(frozen=True)
class MeterConfig:
    """Two-rate three-colour meter rates and bursts (the switch has no single-rate eburst)."""

    cir: int
    cburst: int
    pir: int
    pburst: int

    def encode(self) -> p4runtime_pb2.MeterConfig:
        return p4runtime_pb2.MeterConfig(**dataclasses.asdict(self))

    @classmethod
    def decode(cls, msg: p4runtime_pb2.MeterConfig) -> "MeterConfig":
        return cls(msg.cir, msg.cburst, msg.pir, msg.pburst)


@dataclass(frozen=True)
class MeterEntry:
    """A meter cell; index None selects every cell, config None resets it (or is a query)."""

    meter: str
    index: int | None = None
    config: MeterConfig | None = None
    entity: ClassVar[str] = "meter_entry"

    def encode(self, schema: Schema) -> p4runtime_pb2.MeterEntry:
        info = lookup(schema.meter, self.meter)
        msg = p4runtime_pb2.MeterEntry(meter_id=info.id)
        _set_index(msg, self.index, f"meter '{info.name}'")
        if self.config is not None:
            msg.config.CopyFrom(self.config.encode())
        return msg

    @classmethod
    def decode(cls, msg: p4runtime_pb2.MeterEntry, schema: Schema) -> "MeterEntry":
        info = lookup(schema.meter, msg.meter_id)
        return cls(
            info.name, index_of(msg, f"meter '{info.name}'"), _data(msg, "config", MeterConfig)
        )


# --- packet replication engine -------------------------------------------------------------
class Replica(NamedTuple):
    """One copy: a plain (port, rid) tuple, as the switch engine's replication API takes it."""

    port: int
    instance: int


def _replicas(msg) -> tuple[Replica, ...]:
    return tuple(Replica(r.egress_port, r.instance) for r in msg.replicas)


def _pre(**kind) -> p4runtime_pb2.PacketReplicationEngineEntry:
    return p4runtime_pb2.PacketReplicationEngineEntry(**kind)


@dataclass(frozen=True)
class MulticastGroupEntry:
    """A multicast group; group_id 0 in a read selects every group. Needs no schema."""

    group_id: int
    replicas: tuple[Replica, ...] = ()
    entity: ClassVar[str] = "packet_replication_engine_entry"

    def encode(self, schema: Schema | None = None) -> p4runtime_pb2.PacketReplicationEngineEntry:
        replicas = [
            p4runtime_pb2.Replica(egress_port=port, instance=rid) for port, rid in self.replicas
        ]
        return _pre(
            multicast_group_entry=p4runtime_pb2.MulticastGroupEntry(
                multicast_group_id=self.group_id, replicas=replicas
            )
        )

    @classmethod
    def decode(
        cls, msg: p4runtime_pb2.PacketReplicationEngineEntry, schema: Schema | None = None
    ) -> "MulticastGroupEntry":
        group = msg.multicast_group_entry
        return cls(group.multicast_group_id, _replicas(group))


@dataclass(frozen=True)
class CloneSessionEntry:
    """A clone session: its replicas and the length clones are truncated to (0: whole packets)."""

    session_id: int
    replicas: tuple[Replica, ...] = ()
    packet_length_bytes: int = 0
    entity: ClassVar[str] = "packet_replication_engine_entry"

    def encode(self, schema: Schema | None = None) -> p4runtime_pb2.PacketReplicationEngineEntry:
        replicas = [
            p4runtime_pb2.Replica(egress_port=port, instance=rid) for port, rid in self.replicas
        ]
        return _pre(
            clone_session_entry=p4runtime_pb2.CloneSessionEntry(
                session_id=self.session_id,
                replicas=replicas,
                packet_length_bytes=self.packet_length_bytes,
            )
        )

    @classmethod
    def decode(
        cls, msg: p4runtime_pb2.PacketReplicationEngineEntry, schema: Schema | None = None
    ) -> "CloneSessionEntry":
        session = msg.clone_session_entry
        return cls(session.session_id, _replicas(session), session.packet_length_bytes)


def decode_pre(
    msg: p4runtime_pb2.PacketReplicationEngineEntry,
) -> MulticastGroupEntry | CloneSessionEntry:
    kind = msg.WhichOneof("type")
    if kind == "multicast_group_entry":
        return MulticastGroupEntry.decode(msg)
    if kind == "clone_session_entry":
        return CloneSessionEntry.decode(msg)
    raise invalid("empty packet replication engine entry")


# --- entities --------------------------------------------------------------------------------
Entity = (
    TableEntry
    | RegisterEntry
    | CounterEntry
    | DirectCounterEntry
    | MeterEntry
    | MulticastGroupEntry
    | CloneSessionEntry
)
_DECODERS: dict[str, Callable[[object, Schema], Entity]] = {
    "table_entry": TableEntry.decode,
    "register_entry": RegisterEntry.decode,
    "counter_entry": CounterEntry.decode,
    "direct_counter_entry": DirectCounterEntry.decode,
    "meter_entry": MeterEntry.decode,
    "packet_replication_engine_entry": lambda msg, _schema: decode_pre(msg),
}


def to_entity(item: Entity, schema: Schema) -> p4runtime_pb2.Entity:
    """`item` encoded and wrapped in an Entity (what Write updates and Read requests carry)."""
    return p4runtime_pb2.Entity(**{item.entity: item.encode(schema)})


def from_entity(msg: p4runtime_pb2.Entity, schema: Schema) -> Entity:
    kind = msg.WhichOneof("entity")
    if kind is None:
        raise invalid("the entity is empty")
    if kind not in _DECODERS:
        raise EntityError(grpc.StatusCode.UNIMPLEMENTED, f"{kind} is not supported")
    return _DECODERS[kind](getattr(msg, kind), schema)
