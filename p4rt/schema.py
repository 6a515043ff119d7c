"""A P4Info, answering by fully qualified name, alias or id, for the server and the controller alike."""

import difflib
from dataclasses import dataclass

from ina.p4rt.proto import p4info_pb2


class SchemaError(KeyError):
    """An unknown table/action/...; the message lists the closest names."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class MatchField:
    id: int
    name: str
    bitwidth: int
    match_type: str  # EXACT, LPM, TERNARY, RANGE, OPTIONAL


@dataclass(frozen=True)
class Param:
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True)
class Action:
    id: int
    name: str
    alias: str
    params: tuple[Param, ...]


@dataclass(frozen=True)
class Table:
    id: int
    name: str
    alias: str
    match_fields: tuple[MatchField, ...]
    action_ids: tuple[int, ...]
    default_only: tuple[int, ...]
    table_only: tuple[int, ...]
    const_default_action_id: int
    size: int
    is_const: bool
    direct_counter_id: int

    @property
    def needs_priority(self) -> bool:
        """P4Runtime's rule: entries of a table with a ternary, range or optional key carry a priority."""
        return any(f.match_type in ("TERNARY", "RANGE", "OPTIONAL") for f in self.match_fields)


@dataclass(frozen=True)
class Extern:
    """A register, counter, direct counter, meter or digest: what a reader needs."""

    kind: str
    id: int
    name: str
    alias: str
    size: int
    bitwidth: int
    table_id: int


class Schema:
    def __init__(self, p4info: p4info_pb2.P4Info):
        self.p4info = p4info
        self._by: dict[str, dict] = {
            k: {}
            for k in (
                "table",
                "action",
                "register",
                "counter",
                "direct_counter",
                "meter",
                "digest",
                "packet_metadata",
            )
        }
        for a in p4info.actions:
            params = tuple(Param(p.id, p.name, p.bitwidth) for p in a.params)
            self._add("action", Action(a.preamble.id, a.preamble.name, a.preamble.alias, params))
        direct = {d.direct_table_id: d.preamble.id for d in p4info.direct_counters}
        for t in p4info.tables:
            match_type = p4info_pb2.MatchField.MatchType.Name
            fields = tuple(
                MatchField(m.id, m.name, m.bitwidth, match_type(m.match_type))
                for m in t.match_fields
            )
            refs = t.action_refs
            self._add(
                "table",
                Table(
                    t.preamble.id,
                    t.preamble.name,
                    t.preamble.alias,
                    fields,
                    tuple(r.id for r in refs),
                    tuple(r.id for r in refs if r.scope == p4info_pb2.ActionRef.DEFAULT_ONLY),
                    tuple(r.id for r in refs if r.scope == p4info_pb2.ActionRef.TABLE_ONLY),
                    t.const_default_action_id,
                    t.size,
                    t.is_const_table,
                    direct.get(t.preamble.id, 0),
                ),
            )
        for r in p4info.registers:
            self._add(
                "register",
                Extern(
                    "register",
                    r.preamble.id,
                    r.preamble.name,
                    r.preamble.alias,
                    r.size,
                    r.type_spec.bitstring.bit.bitwidth,
                    0,
                ),
            )
        for c in p4info.counters:
            self._add(
                "counter",
                Extern("counter", c.preamble.id, c.preamble.name, c.preamble.alias, c.size, 0, 0),
            )
        for d in p4info.direct_counters:
            self._add(
                "direct_counter",
                Extern(
                    "direct_counter",
                    d.preamble.id,
                    d.preamble.name,
                    d.preamble.alias,
                    0,
                    0,
                    d.direct_table_id,
                ),
            )
        for m in p4info.meters:
            self._add(
                "meter",
                Extern("meter", m.preamble.id, m.preamble.name, m.preamble.alias, m.size, 0, 0),
            )
        for d in p4info.digests:
            self._add(
                "digest",
                Extern("digest", d.preamble.id, d.preamble.name, d.preamble.alias, 0, 0, 0),
            )
        for cm in p4info.controller_packet_metadata:
            self._by["packet_metadata"][cm.preamble.name] = cm

    def _add(self, kind: str, item) -> None:
        """Index `item` by id, name and alias; a second entity of its kind with its id or name makes
        the P4Info ambiguous (which one would a write name?), so it is refused."""
        index = self._by[kind]
        what = kind.replace("_", " ")
        if item.id in index:
            raise SchemaError(f"the P4Info has two {what}s with id {item.id:#x}")
        if item.name in index:
            raise SchemaError(f"the P4Info has two {what}s named '{item.name}'")
        index[item.id] = item
        index[item.name] = item
        index.setdefault(item.alias, item)

    def _get(self, kind: str, key: str | int):
        try:
            return self._by[kind][key]
        except KeyError:
            names = [k for k in self._by[kind] if isinstance(k, str)]
            close = difflib.get_close_matches(str(key), names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            what = f"id {key:#x}" if isinstance(key, int) else f"'{key}'"
            raise SchemaError(f"the P4Info has no {kind.replace('_', ' ')} {what}{hint}") from None

    def table(self, key: str | int) -> Table:
        return self._get("table", key)

    def action(self, key: str | int) -> Action:
        return self._get("action", key)

    def register(self, key: str | int) -> Extern:
        return self._get("register", key)

    def counter(self, key: str | int) -> Extern:
        return self._get("counter", key)

    def direct_counter(self, key: str | int) -> Extern:
        return self._get("direct_counter", key)

    def meter(self, key: str | int) -> Extern:
        return self._get("meter", key)

    def digest(self, key: str | int) -> Extern:
        return self._get("digest", key)

    def controller_packet_metadata(self, name: str):
        return self._get("packet_metadata", name)

    def all(self, kind: str) -> list:
        seen = {}
        for k, v in self._by[kind].items():
            if isinstance(k, int):
                seen[k] = v
        return list(seen.values())
