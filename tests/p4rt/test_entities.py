"""ina.p4rt.entities: every kind round-trips (decode(encode(x)) == x, encode(decode(m)) == m's canonical
form) over seeded random values; bytes are canonical; refusals carry the spec's code and name the
table and field, the same way in both directions."""

import random

import grpc
import pytest

from ina.p4rt import entities as p4e
from ina.p4rt.proto import p4info_pb2, p4runtime_pb2
from ina.p4rt.schema import MatchField, Schema

MT = p4info_pb2.MatchField.MatchType
OUT_OF_RANGE, INVALID, NOT_FOUND, DENIED = (
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
)
TABLES = {  # name: (match fields (name, bitwidth, type), direct counter)
    "Ing.exact": ([("sm.ingress_port", 9, MT.EXACT), ("hdr.eth.dst", 48, MT.EXACT)], False),
    "Ing.lpm": ([("hdr.ipv4.dst", 32, MT.LPM), ("meta.vrf", 16, MT.EXACT)], False),
    "Ing.acl": (
        [
            ("hdr.ipv4.src", 32, MT.TERNARY),
            ("hdr.udp.sport", 16, MT.RANGE),
            ("hdr.ipv4.proto", 8, MT.OPTIONAL),
            ("hdr.ipv4.ttl", 8, MT.LPM),
        ],
        True,
    ),
}
ACTIONS = {
    "Ing.fwd": [("port", 9), ("mac", 48)],
    "Ing.drop": [],
    "Ing.miss": [("code", 3)],
    "Ing.hit": [],
}
DEFAULT_ONLY, TABLE_ONLY = "Ing.miss", "Ing.hit"
ELSEWHERE = "Egr.rewrite"  # an action of no table here


def make_p4info() -> p4info_pb2.P4Info:
    """A P4Info written by hand: every match type, action scopes, and one of each extern."""
    info = p4info_pb2.P4Info()
    ids = {}
    for n, (name, params) in enumerate([*ACTIONS.items(), (ELSEWHERE, [])]):
        a = info.actions.add()
        a.preamble.id, a.preamble.name, a.preamble.alias = 0x01000001 + n, name, name.split(".")[1]
        ids[name] = a.preamble.id
        for pid, (pname, width) in enumerate(params, 1):
            a.params.add(id=pid, name=pname, bitwidth=width)
    for n, (name, (fields, _counter)) in enumerate(TABLES.items()):
        t = info.tables.add()
        t.preamble.id, t.preamble.name, t.preamble.alias = 0x02000001 + n, name, name.split(".")[1]
        t.size = 1024
        for fid, (fname, width, kind) in enumerate(fields, 1):
            t.match_fields.add(id=fid, name=fname, bitwidth=width, match_type=kind)
        for action, action_id in ids.items():
            if action == ELSEWHERE:
                continue
            scope = {
                DEFAULT_ONLY: p4info_pb2.ActionRef.DEFAULT_ONLY,
                TABLE_ONLY: p4info_pb2.ActionRef.TABLE_ONLY,
            }
            t.action_refs.add(
                id=action_id, scope=scope.get(action, p4info_pb2.ActionRef.TABLE_AND_DEFAULT)
            )
    r = info.registers.add(size=16)
    r.preamble.id, r.preamble.name = 0x16000001, "Ing.reg"
    r.type_spec.bitstring.bit.bitwidth = 8
    c = info.counters.add(size=8)
    c.preamble.id, c.preamble.name = 0x12000001, "Ing.cnt"
    d = info.direct_counters.add(direct_table_id=info.tables[2].preamble.id)
    d.preamble.id, d.preamble.name = 0x13000001, "Ing.acl_hits"
    m = info.meters.add(size=4)
    m.preamble.id, m.preamble.name = 0x15000001, "Ing.meter"
    return info


SCHEMA = Schema(make_p4info())


# --- random values --------------------------------------------------------------------------
def value(rng: random.Random, width: int) -> int:
    """Uniform, with the edges (0, 1, all ones) often."""
    return rng.choice([0, 1, (1 << width) - 1, rng.getrandbits(width), rng.getrandbits(width)]) & (
        (1 << width) - 1
    )


def random_match(rng: random.Random, f: MatchField) -> p4e.Match | None:
    """A random field that is not a don't-care; None (left out) for some non-exact fields."""
    w, full = f.bitwidth, (1 << f.bitwidth) - 1
    if f.match_type != "EXACT" and rng.random() < 0.25:
        return None
    match f.match_type:
        case "EXACT":
            return p4e.ExactMatch(value(rng, w))
        case "OPTIONAL":
            return p4e.OptionalMatch(value(rng, w))
        case "LPM":
            plen = rng.randint(1, w)
            return p4e.LpmMatch(value(rng, w) & (full ^ ((1 << (w - plen)) - 1)), plen)
        case "TERNARY":
            mask = value(rng, w) or 1
            return p4e.TernaryMatch(value(rng, w) & mask, mask)
        case "RANGE":
            low, high = sorted((value(rng, w), value(rng, w)))
            return (
                p4e.RangeMatch(low, high) if (low, high) != (0, full) else p4e.RangeMatch(1, high)
            )
    raise AssertionError(f.match_type)


def random_action(rng: random.Random, default: bool) -> p4e.TableAction:
    name = rng.choice([a for a in ACTIONS if a != (TABLE_ONLY if default else DEFAULT_ONLY)])
    return p4e.TableAction(name, {p: value(rng, w) for p, w in ACTIONS[name]})


def random_table_entry(rng: random.Random) -> p4e.TableEntry:
    table = SCHEMA.table(rng.choice(list(TABLES)))
    if rng.random() < 0.1:
        return p4e.TableEntry(table.name, {}, random_action(rng, True), 0, True)
    match = {f.name: m for f in table.match_fields if (m := random_match(rng, f)) is not None}
    priority = rng.randint(1, (1 << 31) - 1) if table.needs_priority else 0
    return p4e.TableEntry(table.name, match, random_action(rng, False), priority)


def random_replicas(rng: random.Random) -> tuple[p4e.Replica, ...]:
    return tuple(
        p4e.Replica(rng.randrange(512), rng.randrange(1 << 16)) for _ in range(rng.randrange(4))
    )


def random_other(rng: random.Random) -> p4e.Entity:
    """A random register, counter, direct counter, meter, multicast group or clone session entry."""
    index = rng.choice([None, 0, rng.randrange(1 << 20)])
    counter_data = rng.choice([None, p4e.CounterData(value(rng, 63), value(rng, 63))])
    kinds = [
        lambda: p4e.RegisterEntry("Ing.reg", index, rng.choice([None, value(rng, 8)])),
        lambda: p4e.CounterEntry("Ing.cnt", index, counter_data),
        lambda: p4e.DirectCounterEntry(random_table_entry(rng), counter_data),
        lambda: p4e.MeterEntry(
            "Ing.meter",
            index,
            rng.choice([None, p4e.MeterConfig(*(value(rng, 63) for _ in range(4)))]),
        ),
        lambda: p4e.MulticastGroupEntry(rng.randrange(1 << 16), random_replicas(rng)),
        lambda: p4e.CloneSessionEntry(rng.randrange(1 << 16), random_replicas(rng), value(rng, 31)),
    ]
    return rng.choice(kinds)()


def noncanonical(rng: random.Random, msg: p4runtime_pb2.TableEntry) -> p4runtime_pb2.TableEntry:
    """The same entry written another legal way: padded bytes, fields shuffled."""
    out = p4runtime_pb2.TableEntry()
    out.CopyFrom(msg)
    for m in out.match:
        part = getattr(m, m.WhichOneof("field_match_type"))
        for name in ("value", "mask", "low", "high"):
            if hasattr(part, name):
                setattr(part, name, b"\x00" * rng.randrange(3) + getattr(part, name))
    fields = list(out.match)
    rng.shuffle(fields)
    del out.match[:]
    out.match.extend(fields)
    for p in out.action.action.params:
        p.value = b"\x00" * rng.randrange(3) + p.value
    return out


# --- round trips ------------------------------------------------------------------------------
def test_table_entries_round_trip_both_ways(fuzz_cases):
    rng = random.Random(20250113)
    seen = set()
    for case in range(fuzz_cases(1500)):
        entry = random_table_entry(rng)
        msg = entry.encode(SCHEMA)
        assert p4e.TableEntry.decode(msg, SCHEMA) == entry, (case, entry)
        assert p4e.from_entity(p4e.to_entity(entry, SCHEMA), SCHEMA) == entry
        assert p4runtime_pb2.TableEntry.FromString(msg.SerializeToString()) == msg
        assert p4e.TableEntry.decode(noncanonical(rng, msg), SCHEMA).encode(SCHEMA) == msg, (
            case,
            msg,
        )
        seen |= {type(m) for m in entry.match.values()} | {entry.is_default}
    assert seen == {
        p4e.ExactMatch,
        p4e.LpmMatch,
        p4e.TernaryMatch,
        p4e.RangeMatch,
        p4e.OptionalMatch,
        True,
        False,
    }


def test_other_entities_round_trip_both_ways(fuzz_cases):
    rng = random.Random(7)
    seen = set()
    for case in range(fuzz_cases(1000)):
        item = random_other(rng)
        msg = p4e.to_entity(item, SCHEMA)
        assert p4e.from_entity(msg, SCHEMA) == item, (case, item)
        assert p4e.to_entity(p4e.from_entity(msg, SCHEMA), SCHEMA) == msg
        seen.add(type(item))
    assert len(seen) == 6


def test_canonical_form_is_p4info_order_shortest_bytes_no_dont_cares():
    acl = SCHEMA.table("Ing.acl")
    entry = p4e.TableEntry(
        "Ing.acl",
        {
            "hdr.ipv4.ttl": p4e.LpmMatch(0x80, 1),
            "hdr.ipv4.src": p4e.TernaryMatch(0x0A000000, 0xFF000000),
            "hdr.udp.sport": p4e.RangeMatch(0, 0xFFFF),
            "hdr.ipv4.proto": p4e.OptionalMatch(17),
        },
        p4e.TableAction("Ing.fwd", {"mac": 0xAB, "port": 0}),
        10,
    )
    msg = entry.encode(SCHEMA)
    assert [m.field_id for m in msg.match] == [
        1,
        3,
        4,
    ]  # P4Info order; the full range is a don't-care, left out
    assert (msg.match[0].ternary.value, msg.match[0].ternary.mask) == (
        b"\x0a\x00\x00\x00",
        b"\xff\x00\x00\x00",
    )
    assert msg.match[1].optional.value == b"\x11"
    assert (msg.match[2].lpm.value, msg.match[2].lpm.prefix_len) == (b"\x80", 1)
    assert [(p.param_id, p.value) for p in msg.action.action.params] == [(1, b"\x00"), (2, b"\xab")]
    assert msg.table_id == acl.id and msg.priority == 10
    # a ternary with mask 0 or a full range spelled out is refused: the spec says to omit them
    mask_zero = p4runtime_pb2.TableEntry(table_id=acl.id, priority=1)
    mask_zero.match.add(field_id=1).ternary.value = b"\x00"
    mask_zero.match[0].ternary.mask = b"\x00\x00"
    with pytest.raises(
        p4e.EntityError,
        match=r"'hdr\.ipv4\.src' of 'Ing\.acl': a ternary mask of 0 is a don't-care",
    ) as err:
        p4e.TableEntry.decode(mask_zero, SCHEMA)
    assert err.value.code == INVALID
    full_range = p4runtime_pb2.TableEntry(table_id=acl.id, priority=1)
    full_range.match.add(field_id=2).range.low = b"\x00"
    full_range.match[0].range.high = b"\xff\xff"
    with pytest.raises(
        p4e.EntityError,
        match=r"'hdr\.udp\.sport' of 'Ing\.acl': a range over every value is a don't-care",
    ) as err:
        p4e.TableEntry.decode(full_range, SCHEMA)
    assert err.value.code == INVALID


def test_bytes_are_shortest_any_width_holding_the_value_is_accepted_too_wide_refused(fuzz_cases):
    rng = random.Random(11)
    for _ in range(fuzz_cases(3000)):
        width = rng.randint(1, 130)
        v = value(rng, width)
        data = p4e.encode_value(v, width, "f")
        assert data == (v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big"))
        assert len(data) == 1 or data[0] != 0
        padded = v.to_bytes(len(data) + rng.randrange(4), "big")
        assert p4e.decode_value(padded, width, "f") == v
        wide = v | (1 << (width + rng.randrange(8)))
        message = rf"^f: {wide} does not fit in {width} bits$"
        with pytest.raises(p4e.EntityError, match=message) as err:
            p4e.encode_value(wide, width, "f")
        assert err.value.code == OUT_OF_RANGE
        with pytest.raises(p4e.EntityError, match=message) as err:
            p4e.decode_value(wide.to_bytes((wide.bit_length() + 7) // 8 + 1, "big"), width, "f")
        assert err.value.code == OUT_OF_RANGE
    with pytest.raises(p4e.EntityError, match="f: empty byte string") as err:
        p4e.decode_value(b"", 8, "f")
    assert err.value.code == OUT_OF_RANGE


WIRE_FIELDS = {
    "exact": ["value"],
    "optional": ["value"],
    "lpm": ["value", "prefix_len"],
    "ternary": ["value", "mask"],
    "range": ["low", "high"],
}


def field_match(f: MatchField, kind: str, *values: int) -> p4runtime_pb2.FieldMatch:
    """A FieldMatch written by hand (bytes of the values' own length), not by the module under test."""
    msg = p4runtime_pb2.FieldMatch(field_id=f.id)
    part = getattr(msg, kind)
    for name, v in zip(WIRE_FIELDS[kind], values, strict=True):
        setattr(
            part,
            name,
            v if name == "prefix_len" else v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big"),
        )
    return msg


def refusal(fn, *args) -> grpc.StatusCode | None:
    """The code fn(*args) refuses with, None if it does not."""
    try:
        fn(*args)
    except p4e.EntityError as err:
        return err.code
    return None


def expected_refusal(kind: str, args: list[int], width: int) -> grpc.StatusCode | None:
    """The spec's rules, written apart from the module: too wide, then a bad prefix, mask or range
    or a don't-care (/0, a mask of 0, the whole range)."""
    if any(a >> width for a in (args[:1] if kind == "lpm" else args)):
        return OUT_OF_RANGE
    if kind == "lpm":
        value, plen = args
        return INVALID if not 0 < plen <= width or value & ((1 << (width - plen)) - 1) else None
    if kind == "ternary":
        return INVALID if args[0] & ~args[1] or args[1] == 0 else None
    if kind == "range":
        return INVALID if args[0] > args[1] or args == [0, (1 << width) - 1] else None
    return None


def test_each_match_kind_refuses_the_same_values_both_ways(fuzz_cases):
    """Random values, legal or not: encode and decode refuse exactly what the spec's rules refuse,
    with the same code (too wide OUT_OF_RANGE, a bad prefix, mask or range or a don't-care
    INVALID_ARGUMENT)."""
    rng = random.Random(3)
    for case in range(fuzz_cases(4000)):
        width = rng.choice([1, 3, 8, 9, 16, 32, 48])
        kind = rng.choice(["exact", "optional", "lpm", "ternary", "range"])
        f = MatchField(1, "hdr.x", width, kind.upper())
        args = [value(rng, width + rng.choice([0, 0, 0, 1, 5])) for _ in WIRE_FIELDS[kind]]
        if kind == "lpm":
            args[1] = rng.randint(-1, width + 1)
        want = expected_refusal(kind, args, width)
        typed = p4e.MATCH_KINDS[kind.upper()](*args)
        assert refusal(typed.encode, f, "w") == want, (case, typed)
        assert refusal(type(typed).decode, field_match(f, kind, *args), f, "w") == want, (
            case,
            typed,
        )


def test_plain_values_parse_back_and_text_is_read():
    rng = random.Random(5)
    for _ in range(500):
        entry = random_table_entry(rng)
        plain = {name: m.plain() for name, m in entry.match.items()}
        params = entry.action.params
        parsed = p4e.TableEntry.parse(
            SCHEMA, entry.table, plain, entry.action.name, params, entry.priority, entry.is_default
        )
        assert parsed == entry
    parsed = p4e.TableEntry.parse(
        SCHEMA,
        "Ing.lpm",
        {"dst": "10.1.0.0/16", "vrf": "0x2a"},
        "Ing.fwd",
        {"port": "7", "mac": "02:00:00:00:00:09"},
    )
    assert parsed.match == {
        "hdr.ipv4.dst": p4e.LpmMatch(0x0A010000, 16),
        "meta.vrf": p4e.ExactMatch(42),
    }
    host = p4e.TableEntry.parse(SCHEMA, "Ing.lpm", {"hdr.ipv4.dst": "10.1.2.3", "meta.vrf": 0})
    assert host.match["hdr.ipv4.dst"] == p4e.LpmMatch(
        0x0A010203, 32
    )  # a bare value is the whole width
    assert parsed.action == p4e.TableAction("Ing.fwd", {"port": 7, "mac": 0x020000000009})
    acl = p4e.TableEntry.parse(
        SCHEMA, "Ing.acl", {"src": "10.0.0.1", "sport": (1, 9), "proto": None}, priority=3
    )
    assert acl.match == {
        "hdr.ipv4.src": p4e.TernaryMatch(0x0A000001, 0xFFFFFFFF),
        "hdr.udp.sport": p4e.RangeMatch(1, 9),
    }
    assert acl.action is None


# --- refusals ---------------------------------------------------------------------------------
def good_entry() -> p4runtime_pb2.TableEntry:
    return p4e.TableEntry(
        "Ing.lpm",
        {"hdr.ipv4.dst": p4e.LpmMatch(0x0A000000, 8), "meta.vrf": p4e.ExactMatch(1)},
        p4e.TableAction("Ing.fwd", {"port": 1, "mac": 2}),
    ).encode(SCHEMA)


def with_(change) -> p4runtime_pb2.TableEntry:
    msg = good_entry()
    change(msg)
    return msg


def set_lpm(msg, value: bytes, plen: int) -> None:
    msg.match[0].lpm.value, msg.match[0].lpm.prefix_len = value, plen


LPM_FIELD = "match field 'hdr.ipv4.dst' of 'Ing.lpm'"
BAD_ENTRIES = [
    (
        lambda m: set_lpm(m, b"\x0a\x00\x00\x01", 8),
        INVALID,
        f"{LPM_FIELD}: value has bits set beyond the /8 prefix",
    ),
    (lambda m: set_lpm(m, b"\x00", 0), INVALID, f"{LPM_FIELD}: prefix length 0 out of range 1..32"),
    (
        lambda m: set_lpm(m, b"\x0a", 33),
        INVALID,
        f"{LPM_FIELD}: prefix length 33 out of range 1..32",
    ),
    (
        lambda m: set_lpm(m, b"\x01\x0a\x00\x00\x00", 8),
        OUT_OF_RANGE,
        f"{LPM_FIELD}: 4462739456 does not fit in 32 bits",
    ),
    (lambda m: m.match[0].exact.SetInParent(), INVALID, f"{LPM_FIELD} is LPM; got a exact match"),
    (
        lambda m: m.match.pop(),
        INVALID,
        "match field 'meta.vrf' of 'Ing.lpm' is exact and must be given",
    ),
    (
        lambda m: m.match.add(field_id=9).exact.SetInParent(),
        INVALID,
        "table 'Ing.lpm' has no match field id 9",
    ),
    (
        lambda m: m.match.append(m.match[0]),
        INVALID,
        "table 'Ing.lpm': a match field is given twice",
    ),
    (
        lambda m: setattr(m, "table_id", 0x02FFFFFF),
        NOT_FOUND,
        "the P4Info has no table id 0x2ffffff",
    ),
    (
        lambda m: setattr(m.action.action.params[0], "value", b"\x02\x00"),
        OUT_OF_RANGE,
        "parameter 'port' of 'Ing.fwd': 512 does not fit in 9 bits",
    ),
    (
        lambda m: m.action.action.params.pop(),
        INVALID,
        r"action 'Ing.fwd' takes parameters \['port', 'mac'\]; got ids \[1\]",
    ),
    (
        lambda m: setattr(m.action.action, "action_id", SCHEMA.action(DEFAULT_ONLY).id),
        DENIED,
        "action 'Ing.miss' may only be the default action of 'Ing.lpm'",
    ),
    (
        lambda m: setattr(m.action.action, "action_id", 0x01FFFFFF),
        INVALID,
        r"table 'Ing.lpm' has no action id 0x1ffffff \(nor has the P4Info\)",
    ),
    (
        lambda m: setattr(m.action.action, "action_id", SCHEMA.action(ELSEWHERE).id),
        INVALID,
        "table 'Ing.lpm' has no action 'Egr.rewrite'",
    ),
    (
        lambda m: setattr(m, "is_default_action", True),
        INVALID,
        "table 'Ing.lpm': a default entry has no match fields",
    ),
    (
        lambda m: (
            m.ClearField("match"),
            setattr(m, "is_default_action", True),
            setattr(m, "priority", 3),
        ),
        INVALID,
        "table 'Ing.lpm': a default entry has priority 0, not 3",
    ),
]


@pytest.mark.parametrize(("change", "code", "message"), BAD_ENTRIES)
def test_bad_entries_are_refused_naming_table_and_field(change, code, message):
    with pytest.raises(p4e.EntityError, match=message) as err:
        p4e.TableEntry.decode(with_(change), SCHEMA)
    assert err.value.code == code


@pytest.mark.parametrize(
    ("entry", "code", "message"),
    [
        (
            p4e.TableEntry(
                "Ing.lpm",
                {"hdr.ipv4.dst": p4e.LpmMatch(0x0A000001, 8), "meta.vrf": p4e.ExactMatch(1)},
            ),
            INVALID,
            f"{LPM_FIELD}: value has bits set beyond the /8 prefix",
        ),
        (
            p4e.TableEntry("Ing.acl", {"hdr.ipv4.src": p4e.TernaryMatch(3, 1)}, priority=1),
            INVALID,
            "match field 'hdr.ipv4.src' of 'Ing.acl': value has bits set outside the mask",
        ),
        (
            p4e.TableEntry("Ing.acl", {"hdr.udp.sport": p4e.RangeMatch(9, 1)}, priority=1),
            INVALID,
            "match field 'hdr.udp.sport' of 'Ing.acl': range low 9 is above high 1",
        ),
        (
            p4e.TableEntry(
                "Ing.exact",
                {"sm.ingress_port": p4e.ExactMatch(512), "hdr.eth.dst": p4e.ExactMatch(0)},
            ),
            OUT_OF_RANGE,
            "match field 'sm.ingress_port' of 'Ing.exact': 512 does not fit in 9 bits",
        ),
        (
            p4e.TableEntry(
                "Ing.exact",
                {"sm.ingress_port": p4e.LpmMatch(1, 9), "hdr.eth.dst": p4e.ExactMatch(0)},
            ),
            INVALID,
            "match field 'sm.ingress_port' of 'Ing.exact' is EXACT; got a lpm match",
        ),
        (
            p4e.TableEntry("Ing.exact", {"nope": p4e.ExactMatch(1)}),
            INVALID,
            "table 'Ing.exact' has no key 'nope'",
        ),
        (
            p4e.TableEntry("Ing.exact", {}, p4e.TableAction("Ing.hit"), is_default=True),
            DENIED,
            "action 'Ing.hit' may not be the default action of 'Ing.exact'",
        ),
        (
            p4e.TableEntry(
                "Ing.exact", {}, p4e.TableAction("Ing.drop"), priority=2, is_default=True
            ),
            INVALID,
            "table 'Ing.exact': a default entry has priority 0, not 2",
        ),
        (
            p4e.TableEntry(
                "Ing.exact", {}, p4e.TableAction("Ing.fwd", {"port": 1}), is_default=True
            ),
            INVALID,
            "action 'Ing.fwd' needs parameter 'mac'",
        ),
        (
            p4e.TableEntry("Ing.exact", {}, p4e.TableAction("Ing.drop", {"x": 1}), is_default=True),
            INVALID,
            "action 'Ing.drop' has no parameter x",
        ),
        (
            p4e.TableEntry("Ing.exact", {}, p4e.TableAction(ELSEWHERE), is_default=True),
            INVALID,
            "table 'Ing.exact' has no action 'Egr.rewrite'",
        ),
        (p4e.TableEntry("Ing.nope"), NOT_FOUND, "the P4Info has no table 'Ing.nope'"),
        (
            p4e.RegisterEntry("Ing.reg", 0, 256),
            OUT_OF_RANGE,
            "register 'Ing.reg': 256 does not fit in 8 bits",
        ),
        (p4e.RegisterEntry("Ing.reg", -1, 1), INVALID, "register 'Ing.reg': index -1 is negative"),
        (p4e.CounterEntry("Ing.cnt", -2), INVALID, "counter 'Ing.cnt': index -2 is negative"),
        (p4e.MeterEntry("Ing.meter", -3), INVALID, "meter 'Ing.meter': index -3 is negative"),
    ],
)
def test_encode_refuses_what_decode_refuses(entry, code, message):
    with pytest.raises(p4e.EntityError, match=message) as err:
        entry.encode(SCHEMA)
    assert err.value.code == code


def test_other_malformed_entities():
    cell = p4runtime_pb2.RegisterEntry(register_id=SCHEMA.register("Ing.reg").id)
    cell.data.bool = True
    assert refusal(lambda: p4e.RegisterEntry.decode(cell, SCHEMA)) == INVALID
    minus_one = p4runtime_pb2.Index(index=-1)
    for decode, msg in (
        (
            p4e.RegisterEntry.decode,
            p4runtime_pb2.RegisterEntry(register_id=0x16000001, index=minus_one),
        ),
        (
            p4e.CounterEntry.decode,
            p4runtime_pb2.CounterEntry(counter_id=0x12000001, index=minus_one),
        ),
        (p4e.MeterEntry.decode, p4runtime_pb2.MeterEntry(meter_id=0x15000001, index=minus_one)),
    ):
        assert refusal(decode, msg, SCHEMA) == INVALID, msg
    assert refusal(lambda: p4e.decode_pre(p4runtime_pb2.PacketReplicationEngineEntry())) == INVALID
    assert refusal(lambda: p4e.from_entity(p4runtime_pb2.Entity(), SCHEMA)) == INVALID
    assert (
        refusal(lambda: p4e.TableEntry.parse(SCHEMA, "Ing.lpm", {"dst": "10.0.0.0/x"})) == INVALID
    )
    assert refusal(lambda: p4e.TableEntry.parse(SCHEMA, "Ing.exact", {"dst": "banana"})) == INVALID
    assert refusal(lambda: p4e.TableEntry.parse(SCHEMA, "Ing.acl", {"sport": 5})) == INVALID
    assert (
        refusal(
            lambda: p4e.TableEntry.parse(
                SCHEMA, "Ing.exact", {"dst": "1.2.3.4"}, "Ing.fwd", {"port": 600, "mac": 0}
            )
        )
        == OUT_OF_RANGE
    )
