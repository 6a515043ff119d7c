"""P4Info as p4c writes it: fully qualified names, shortest-unique-suffix aliases, and ids made of
a kind prefix byte and Jenkins' one-at-a-time hash of the name (probing +1 on collision)."""

from __future__ import annotations

from ina.compiler import nodes as n
from ina.compiler import types as t
from ina.compiler.lowered import Artifacts
from ina.p4rt.proto import p4info_pb2

PREFIX = {
    "action": 0x01,
    "table": 0x02,
    "value_set": 0x03,
    "controller_header": 0x04,
    "action_profile": 0x11,
    "counter": 0x12,
    "direct_counter": 0x13,
    "meter": 0x14,
    "direct_meter": 0x15,
    "register": 0x16,
    "digest": 0x17,
}
MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}
SCOPES = {
    "TABLE_AND_DEFAULT": p4info_pb2.ActionRef.TABLE_AND_DEFAULT,
    "TABLE_ONLY": p4info_pb2.ActionRef.TABLE_ONLY,
    "DEFAULT_ONLY": p4info_pb2.ActionRef.DEFAULT_ONLY,
}
COUNTER_UNITS = {
    "packets": p4info_pb2.CounterSpec.PACKETS,
    "bytes": p4info_pb2.CounterSpec.BYTES,
    "packets_and_bytes": p4info_pb2.CounterSpec.BOTH,
}
METER_UNITS = {"packets": p4info_pb2.MeterSpec.PACKETS, "bytes": p4info_pb2.MeterSpec.BYTES}
_HIDDEN_ANNOTATIONS = {
    "name",
    "id",
    "hidden",
    "noWarn",
    "defaultonly",
    "tableonly",
    "brief",
    "description",
}


def jenkins_one_at_a_time(text: str) -> int:
    h = 0
    for byte in text.encode():
        h = (h + byte) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


class IdAllocator:
    def __init__(self) -> None:
        self._taken: set[int] = set()

    def reserve(self, kind: str, annotations: list[n.Annotation]) -> int | None:
        annotation = n.find_annotation(annotations, "id")
        if annotation is None or annotation.body is None:
            return None
        value = int(annotation.body.strip(), 0)
        value = value if value >> 24 else (PREFIX[kind] << 24) | value
        self._taken.add(value)
        return value

    def assign(self, kind: str, name: str, fixed: int | None) -> int:
        if fixed is not None:
            return fixed
        prefix = PREFIX[kind] << 24
        low = jenkins_one_at_a_time(name) & 0xFFFFFF
        while prefix | low in self._taken:
            low = (low + 1) & 0xFFFFFF
        self._taken.add(prefix | low)
        return prefix | low


def aliases(names: list[str]) -> dict[str, str]:
    """The shortest dotted suffix of each name that no other name ends with."""
    result = {}
    parts = {name: name.split(".") for name in names}
    for name, split in parts.items():
        for k in range(1, len(split) + 1):
            suffix = split[-k:]
            if sum(1 for other in parts.values() if other[-k:] == suffix) == 1:
                result[name] = ".".join(suffix)
                break
        else:
            result[name] = name
    return result


def _annotation_strings(annotations: list[n.Annotation]) -> list[str]:
    return [
        f"@{a.name}" + (f"({a.body})" if a.body is not None else "")
        for a in annotations
        if a.name not in _HIDDEN_ANNOTATIONS
    ]


def _preamble(message, id_: int, name: str, alias: str, annotations: list[n.Annotation]) -> None:
    message.preamble.id = id_
    message.preamble.name = name
    message.preamble.alias = alias
    message.preamble.annotations.extend(_annotation_strings(annotations))
    brief = n.find_annotation(annotations, "brief")
    if brief is not None and brief.string():
        message.preamble.doc.brief = brief.string()


def build_p4info(art: Artifacts) -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    info.pkg_info.arch = "v1model"
    ids = IdAllocator()
    used_actions = []
    for table in art.tables:
        for ref in table.actions:
            if ref.name not in used_actions:
                used_actions.append(ref.name)
    used_actions += [a for a in art.direct_actions if a not in used_actions]
    externs = {
        kind: [
            e
            for e in art.externs
            if e.kind == kind and (not kind.startswith("direct") or e.bound_table is not None)
        ]
        for kind in ("counter", "direct_counter", "meter", "direct_meter", "register")
    }
    externs["action_profile"] = [
        e
        for e in art.externs
        if e.kind in ("action_profile", "action_selector") and e.extra.get("tables")
    ]
    groups: dict[str, list[tuple[str, list[n.Annotation]]]] = {
        "action": [(a, art.actions[a].annotations) for a in used_actions],
        "table": [(tb.name, tb.annotations) for tb in art.tables],
        "value_set": [(v[0], v[3]) for v in art.value_sets],
        "controller_header": [(c[0], c[2]) for c in art.controller_headers],
        "digest": [(d.name, []) for d in art.digests],
        **{kind: [(e.name, e.annotations) for e in items] for kind, items in externs.items()},
    }
    fixed = {
        kind: {name: ids.reserve(kind, annots) for name, annots in items}
        for kind, items in groups.items()
    }
    id_of: dict[tuple[str, str], int] = {}
    alias_of: dict[str, dict[str, str]] = {}
    for kind, items in groups.items():
        alias_of[kind] = aliases([name for name, _ in items])
        for name, _ in items:
            hashed = name
            if (
                kind == "controller_header"
            ):  # p4c hashes the header type's name, not the annotation's
                hashed = next(h.name for n, h, _ in art.controller_headers if n == name)
            id_of[(kind, name)] = ids.assign(kind, hashed, fixed[kind][name])

    for table in art.tables:
        message = info.tables.add()
        _preamble(
            message,
            id_of[("table", table.name)],
            table.name,
            alias_of["table"][table.name],
            table.annotations,
        )
        for i, key in enumerate(table.keys, start=1):
            field = message.match_fields.add(
                id=i, name=key.name, bitwidth=key.width, match_type=MATCH_TYPES[key.match_kind]
            )
            field.annotations.extend(_annotation_strings(key.annotations))
        for ref in table.actions:
            action_ref = message.action_refs.add(
                id=id_of[("action", ref.name)], scope=SCOPES[ref.scope]
            )
            scope_annotations = [
                f"@{a.name}" for a in ref.annotations if a.name in ("defaultonly", "tableonly")
            ]
            if ref.scope == "DEFAULT_ONLY" and not scope_annotations:
                scope_annotations = ["@defaultonly"]
            action_ref.annotations.extend(scope_annotations + _annotation_strings(ref.annotations))
        if table.const_default_action is not None:
            message.const_default_action_id = id_of[("action", table.const_default_action)]
        for resource in table.direct_resources:
            message.direct_resource_ids.append(id_of[(resource.kind, resource.name)])
        if table.implementation is not None:
            message.implementation_id = id_of[("action_profile", table.implementation.name)]
        message.size = table.size
        if table.is_const:
            message.is_const_table = True
        if table.support_timeout:
            message.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL

    for name in used_actions:
        action = art.actions[name]
        message = info.actions.add()
        _preamble(
            message, id_of[("action", name)], name, alias_of["action"][name], action.annotations
        )
        for i, (pname, width, annots) in enumerate(action.params, start=1):
            param = message.params.add(id=i, name=pname, bitwidth=width)
            param.annotations.extend(_annotation_strings(annots))

    table_ids = {tb.name: id_of[("table", tb.name)] for tb in art.tables}
    for inst in externs["counter"]:
        message = info.counters.add()
        _preamble(
            message,
            id_of[("counter", inst.name)],
            inst.name,
            alias_of["counter"][inst.name],
            inst.annotations,
        )
        message.spec.unit = COUNTER_UNITS[inst.extra["unit"]]
        message.size = inst.extra["size"]
    for inst in externs["direct_counter"]:
        message = info.direct_counters.add()
        _preamble(
            message,
            id_of[("direct_counter", inst.name)],
            inst.name,
            alias_of["direct_counter"][inst.name],
            inst.annotations,
        )
        message.spec.unit = COUNTER_UNITS[inst.extra["unit"]]
        message.direct_table_id = table_ids[inst.bound_table]
    for inst in externs["meter"]:
        message = info.meters.add()
        _preamble(
            message,
            id_of[("meter", inst.name)],
            inst.name,
            alias_of["meter"][inst.name],
            inst.annotations,
        )
        message.spec.unit = METER_UNITS[inst.extra["unit"]]
        message.size = inst.extra["size"]
    for inst in externs["direct_meter"]:
        message = info.direct_meters.add()
        _preamble(
            message,
            id_of[("direct_meter", inst.name)],
            inst.name,
            alias_of["direct_meter"][inst.name],
            inst.annotations,
        )
        message.spec.unit = METER_UNITS[inst.extra["unit"]]
        message.direct_table_id = table_ids[inst.bound_table]
    for name, htype, annots in art.controller_headers:
        message = info.controller_packet_metadata.add()
        _preamble(
            message,
            id_of[("controller_header", name)],
            name,
            alias_of["controller_header"][name],
            annots,
        )
        for i, (fname, ftype) in enumerate(t.flat_fields(htype.fields), start=1):
            message.metadata.add(id=i, name=fname, bitwidth=t.width_of(ftype))
    for name, width, size, annots in art.value_sets:
        message = info.value_sets.add()
        _preamble(message, id_of[("value_set", name)], name, alias_of["value_set"][name], annots)
        message.match.add(id=1, bitwidth=width, match_type=p4info_pb2.MatchField.EXACT)
        message.size = size
    for inst in externs["action_profile"]:
        message = info.action_profiles.add()
        _preamble(
            message,
            id_of[("action_profile", inst.name)],
            inst.name,
            alias_of["action_profile"][inst.name],
            inst.annotations,
        )
        message.table_ids.extend(table_ids[name] for name in inst.extra["tables"])
        message.with_selector = inst.kind == "action_selector"
        message.size = inst.extra["size"]
    for inst in externs["register"]:
        message = info.registers.add()
        _preamble(
            message,
            id_of[("register", inst.name)],
            inst.name,
            alias_of["register"][inst.name],
            inst.annotations,
        )
        message.type_spec.bitstring.bit.bitwidth = inst.extra["bitwidth"]
        message.size = inst.extra["size"]
    for digest in art.digests:
        message = info.digests.add()
        _preamble(
            message,
            id_of[("digest", digest.name)],
            digest.name,
            alias_of["digest"][digest.name],
            [],
        )
        message.type_spec.struct.name = digest.type.name
        _struct_type_info(info, digest.type)
    return info


def _struct_type_info(info: p4info_pb2.P4Info, stype: t.StructLike) -> None:
    spec = info.type_info.structs[stype.name]
    if spec.members:
        return
    for fname, ftype in stype.fields:
        member = spec.members.add(name=fname)
        if isinstance(ftype, t.StructLike):
            member.type_spec.struct.name = ftype.name
            _struct_type_info(info, ftype)
        elif isinstance(ftype, t.Bool):
            member.type_spec.bool.SetInParent()
        else:
            bits = member.type_spec.bitstring
            if isinstance(ftype, t.Bits) and ftype.signed:
                bits.int.bitwidth = ftype.width
            else:
                bits.bit.bitwidth = t.width_of(ftype)
