"""The native engine (the program compiled to C) against the Python engine, the reference.

Every STF file in the repository runs on the native engine where it supports the program, and
what it does not support must be refused with the reason. Focused programs (tests/switch/p4/
native_*.p4) then run the same packets through both engines and compare every packet out, the
registers, the counters and the drop statistics exactly.
"""

import copy
import random
from pathlib import Path

import pytest
from engine_compare import engines, program, run_both, same_state

from ina.compiler import compile_file
from ina.p4src import AGGREGATE_P4
from ina.switch.engine import Switch
from ina.switch.model import hashes
from ina.switch.model.errors import PipelineError
from ina.switch.native import codegen
from ina.switch.state.replication import MAX_OUTPUT_BYTES, MAX_OUTPUT_PACKETS
from ina.switch.stf import run_stf

HERE = Path(__file__).parent
TESTS = HERE.parent
DATAPLANE = TESTS / "dataplane"

# Repository programs the native engine refuses, with the reason it must give.
REFUSED = {
    "subparser_lookahead": "varbit header 'opts' of up to 120 bits",
    "varbit_lookahead": "varbit header 'options' of up to 320 bits",
}

STF_CASES = (
    [(stf, stf.with_suffix(".p4"), {}) for stf in sorted((TESTS / "p4").glob("*.stf"))]
    + [(HERE / "conformance.stf", HERE / "p4" / "conformance.p4", {})]
    + [
        (stf, AGGREGATE_P4, {"ELEMS": "8", "POOL_SIZE": "16"})
        for stf in sorted(DATAPLANE.glob("*.stf"))
    ]
    + [
        (stf, AGGREGATE_P4, {"ELEMS": folder.name.removeprefix("elems"), "POOL_SIZE": "16"})
        for folder in sorted(DATAPLANE.glob("elems*"))
        for stf in sorted(folder.glob("*.stf"))
    ]
)


# --- the repository's STF files ------------------------------------------------------------
@pytest.mark.parametrize(
    ("stf", "p4", "defines"),
    STF_CASES,
    ids=[f"{s.parent.name}-{s.stem}-{d.get('ELEMS', '')}" for s, _p, d in STF_CASES],
)
def test_repository_stf_on_native(stf: Path, p4: Path, defines: dict) -> None:
    bmv2 = program(p4, **defines)
    if p4.stem in REFUSED:
        with pytest.raises(PipelineError, match=f"native engine cannot run.*{REFUSED[p4.stem]}"):
            Switch(engine="native").load(bmv2)
        auto = Switch(engine="auto")
        auto.load(copy.deepcopy(bmv2))
        assert auto.engine_name == "python" and REFUSED[p4.stem] in auto.engine_note
        return
    native = run_stf(copy.deepcopy(bmv2), stf.read_text(), "native")
    assert native.switch.engine_name == "native"
    assert native.ok, native.report
    py = run_stf(bmv2, stf.read_text(), "python")
    assert native.outputs == py.outputs
    same_state(py.switch, native.switch)


# --- arithmetic --------------------------------------------------------------------------
ARITH = HERE / "p4" / "native_arith.p4"


def arith_packet(a: int, b: int, s: int, t: int, n: int, d: int, c: int, op: int) -> bytes:
    return (
        a.to_bytes(8, "big")
        + b.to_bytes(8, "big")
        + s.to_bytes(2, "big", signed=True)
        + t.to_bytes(2, "big", signed=True)
        + bytes([n, d])
        + c.to_bytes(1, "big", signed=True)
        + bytes([op])
    )


def test_arithmetic_matches_python_on_edge_and_random_values() -> None:
    py, native = engines(program(ARITH))
    edges64 = [
        0,
        1,
        2,
        0x7FFFFFFFFFFFFFFF,
        0x8000000000000000,
        0xFFFFFFFFFFFFFFFF,
        0x123456789ABCDEF0,
    ]
    shifts = [0, 1, 15, 16, 31, 63, 64, 65, 127, 128, 129, 200, 255]
    signed16 = [-32768, -32767, -1, 0, 1, 255, 32767]
    packets = []
    for a in edges64:
        for n in shifts:
            packets.append(
                (
                    0,
                    arith_packet(
                        a,
                        edges64[(n + 3) % 7],
                        signed16[n % 7],
                        signed16[(n + 2) % 7],
                        n,
                        3,
                        -128 if n % 2 else 127,
                        1,
                    ),
                )
            )
    rng = random.Random(7)
    for _ in range(300):
        packets.append(
            (
                0,
                arith_packet(
                    rng.getrandbits(64),
                    rng.getrandbits(64),
                    rng.randint(-32768, 32767),
                    rng.randint(-32768, 32767),
                    rng.getrandbits(8),
                    rng.randint(1, 255),
                    rng.randint(-128, 127),
                    rng.randint(0, 1),
                ),
            )
        )
    outs = run_both(py, native, packets)
    assert all(len(out) == 1 for out in outs)


def test_arithmetic_results_are_the_p4_values() -> None:
    """One packet checked field by field, so both engines cannot be wrong the same way."""
    _py, native = engines(program(ARITH))
    [(port, out)] = native.process(
        0, arith_packet(0xFFFFFFFFFFFFFFFF, 2, -32768, -1, 65, 7, -100, 1)
    )
    assert port == 1
    r = out[24:]
    assert int.from_bytes(r[0:8], "big") == 0  # shl: a << 65 in 64 bits
    assert int.from_bytes(r[8:16], "big") == 0  # shr: a >> 65
    assert int.from_bytes(r[16:18], "big", signed=True) == -1  # int<16> >> 65 keeps the sign
    assert int.from_bytes(r[18:26], "big") == 0xFFFFFFFFFFFFFFFF // 7
    assert int.from_bytes(r[26:34], "big") == 0xFFFFFFFFFFFFFFFF % 7
    assert int.from_bytes(r[34:42], "big") == (0xFFFFFFFFFFFFFFFF * 2) & (2**64 - 1)
    assert int.from_bytes(r[42:50], "big") == (0xFFFFFFFFFFFFFFFF + 2 + 0xFFFFFFFFFFFFFFFF) & (
        2**64 - 1
    )
    assert int.from_bytes(r[50:52], "big", signed=True) == 32767  # -32768 + -1 wraps
    assert int.from_bytes(r[52:54], "big", signed=True) == -32768  # -32768 * -1 wraps
    assert r[54] == 72  # 65 |+| 7
    assert int.from_bytes(r[55:56], "big", signed=True) == -93  # -100 |+| 7
    assert r[56] == 1 | 2 | 4 | 16  # s < t, a > b, c < 0, a + b overflowed
    assert int.from_bytes(r[57:61], "big") == 0xFFFFFFFF
    assert int.from_bytes(r[61:65], "big", signed=True) == -32768
    assert int.from_bytes(r[65:73], "big") == ((-100) & (2**64 - 1)) ^ 0x8000000000000001
    assert r[73] == 58  # 65 |-| 7


def test_division_by_zero_drops_the_packet_as_an_error() -> None:
    py, native = engines(program(ARITH))
    packets = [
        (0, arith_packet(10, 1, 1, 1, 1, 0, 1, 1)),
        (0, arith_packet(10, 1, 1, 1, 1, 0, 1, 0)),
    ]
    outs = run_both(py, native, packets)
    assert outs[0] == [] and len(outs[1]) == 1
    assert native.stats["dropped_error"] == 1 and native.stats["tx"] == 1


# --- parser and headers -------------------------------------------------------------------
PARSE = HERE / "p4" / "native_parse.p4"


def test_parser_and_header_operations_match_python() -> None:
    py, native = engines(program(PARSE))
    crafted = [
        "",  # nothing: PacketTooShort on the first header
        "01",  # half a header
        "0101 0111 0122 0233 10 00",  # three tags then opt
        "0101 0101 0101 0101 10 00",  # a fourth tag: StackOutOfBounds
        "0101 0102",  # lookahead low nibble 2: no tags
        "0200 11 00 BEEF",  # opt with lo bit: note; hi 1 copies note
        "0200 F0 00",  # verify fails: ParserInvalidArgument, opt stays consumed
        "0300 1234 5678",  # NoMatch after note
        "0400 AABBCC 1234 99",  # advance 3 bytes then note
        "0400 AABB",  # advance past the end: empty payload
        "0101 0111 0122 0233 21 00 4444",
        "0101 0111 0122 0233 40 00",  # push_front
        "0101 0111 0122 0233 50 00",  # pop_front
        "0101 0111 0122 0233 60 01",  # tags[1].val + 1
        "0101 0111 0122 0233 60 07",  # index 7 of 3: run-time error
        "0101 0111 0122 0233 70 02",  # copy a header into tags[2]
        "0101 0111 0222 80 00",  # lastIndex
        "0200 80 00",  # lastIndex with nothing extracted
        "0200 31 00 0001 FFFF",  # setValid on copy
    ]
    packets = [(1, bytes.fromhex(h.replace(" ", ""))) for h in crafted]
    rng = random.Random(11)
    for _ in range(400):
        body = [rng.choice([1, 1, 2, 3, 4, 5]), rng.getrandbits(8)]
        body += [
            rng.choice([1, 1, 2, 0x11, 0x21]) if rng.random() < 0.5 else rng.getrandbits(8)
            for _ in range(rng.randint(0, 12))
        ]
        packets.append((1, bytes(body)))
    outs = run_both(py, native, packets)
    assert outs[0] == [(2, b"")]  # parser error; nothing to emit
    assert outs[3][0][1][0:2] == bytes.fromhex("01e2")  # StackOutOfBounds
    assert outs[6][0][1] == bytes.fromhex("02e3f000")  # opt consumed, then ParserInvalidArgument
    assert outs[9][0][1] == bytes.fromhex("04e1")  # advance past the end: no payload left
    assert outs[14] == []  # stack index out of range
    assert native.stats["dropped_error"] >= 2 and native.stats["parser_errors"] > 0


# --- tables, registers, counters, hashes ----------------------------------------------------
TABLES = HERE / "p4" / "native_tables.p4"


def tables_packet(k: int, addr: int, idx: int, x: int, y: int, pad: int = 0) -> bytes:
    return (
        k.to_bytes(2, "big")
        + addr.to_bytes(4, "big")
        + bytes([idx, pad])
        + x.to_bytes(4, "big")
        + y.to_bytes(2, "big")
    )


def fill_tables(sw: Switch) -> list[int]:
    lpm, mixed = sw.tables["I.lpm"], sw.tables["I.mixed"]
    handles = [
        lpm.add([("lpm", 0x0A000000, 8)], "I.set_route", [1]),
        lpm.add([("lpm", 0x0A010000, 16)], "I.set_route", [2]),
        lpm.add([("lpm", 0x0A010100, 24)], "I.set_route", [3]),
        lpm.add([("lpm", 0, 0)], "I.set_route", [4]),
    ]
    mixed.add([("ternary", 0x0100, 0xFF00), ("range", 0, 0xFFFF)], "I.set_tern", [1], priority=10)
    mixed.add([("ternary", 0x0101, 0xFFFF), ("range", 100, 200)], "I.set_tern", [2], priority=20)
    mixed.add(
        [("ternary", 0, 0), ("range", 150, 160)], "I.set_tern", [3], priority=20
    )  # tie: first wins
    mixed.add([("ternary", 0x0001, 0x000F), ("range", 0, 0xFFFF)], "I.set_tern", [4], priority=5)
    return handles


def test_tables_registers_counters_and_hashes_match_python() -> None:
    bmv2 = program(TABLES)
    bmv2["calculations"][4]["algo"] = "crcCCITT"  # v1model's enum lacks it; BMv2 JSON has it
    py, native = engines(bmv2)
    assert fill_tables(py) == fill_tables(native)
    packets = []
    rng = random.Random(5)
    for _ in range(300):
        addr = rng.choice([0x0A010105, 0x0A0102FF, 0x0A7F0000, 0x0B000001, rng.getrandbits(32)])
        k = rng.choice([0x0101, 0x0100, 0x0201, 0x1231, rng.getrandbits(16)])
        y = rng.choice([0, 99, 100, 155, 160, 161, 200, 201, rng.getrandbits(16)])
        idx = rng.choice([0, 1, 7, 8, 255, rng.getrandbits(3)])
        packets.append(
            (
                rng.randint(0, 3),
                tables_packet(k, addr, idx, rng.getrandbits(32), y, rng.getrandbits(8)),
            )
        )
    outs = run_both(py, native, packets)
    past = [out for (_port, data), out in zip(packets, outs, strict=True) if data[6] >= 8]
    assert past and all(
        out[0][1][16:20] == bytes(4) for out in past
    )  # past the register: read nothing
    assert native.stats["dropped_error"] == py.stats["dropped_error"] == 0  # and went on
    # rewriting an entry and the default shows up on both
    for sw in (py, native):
        sw.tables["I.lpm"].modify(1, "I.set_route", [9])
        sw.tables["I.mixed"].set_default("I.set_tern", [0x42])
        sw.registers["I.acc"].write(3, 0xFFFFFFFF)
        sw.counters["I.seen"].write(2, 10, 1000)
    run_both(
        py,
        native,
        [
            (0, tables_packet(0x7777, 0x0A0A0A0A, 3, 1, 5)),
            (0, tables_packet(0x7777, 0x0A020304, 2, 1, 5)),
        ],
    )


def test_priorities_and_direct_counters_give_exact_values() -> None:
    _py, native = engines(program(TABLES))
    handles = fill_tables(native)
    routes, terns = [], []
    for k, addr, y in [
        (0x0101, 0x0A010105, 150),
        (0x0101, 0x0A0102FF, 120),
        (0x0100, 0x0A7F0000, 155),
        (0x0201, 0x0B000001, 155),
        (0x1231, 0x0A010105, 9),
    ]:
        [(port, out)] = native.process(0, tables_packet(k, addr, 1, 0, y))
        assert port == 3
        routes.append(out[14])
        terns.append(out[15])
    assert routes == [3, 2, 1, 4, 3]
    assert terns == [2, 2, 3, 3, 4]
    view = native.direct_counters["I.lpm"]
    assert [view.read(h)[0] for h in handles] == [1, 1, 2, 1]
    assert view.read(handles[2]) == (2, 2 * 14)
    view.write(handles[2], 5, 6)
    assert view.read(handles[2]) == (5, 6)


def test_hash_algorithms_equal_switch_hashes() -> None:
    bmv2 = program(TABLES)
    bmv2["calculations"][4]["algo"] = "crcCCITT"
    _py, native = engines(bmv2)
    fill_tables(native)
    rng = random.Random(3)
    for _ in range(50):
        k, addr, idx, x, y, pad = (
            rng.getrandbits(16),
            rng.getrandbits(32),
            rng.getrandbits(3),
            rng.getrandbits(32),
            rng.getrandbits(16),
            rng.getrandbits(8),
        )
        [(_port, out)] = native.process(0, tables_packet(k, addr, idx, x, y, pad))
        r = out[14:]
        xb, yb, ab = x.to_bytes(4, "big"), y.to_bytes(2, "big"), addr.to_bytes(4, "big")
        assert int.from_bytes(r[6:8], "big") == hashes.crc16(xb + yb)
        assert int.from_bytes(r[8:12], "big") == hashes.crc32(xb + yb + k.to_bytes(2, "big"))
        assert int.from_bytes(r[12:14], "big") == hashes.csum16(xb + bytes([idx]))
        assert int.from_bytes(r[14:16], "big") == hashes.xor16(xb + yb + bytes([pad]))
        assert int.from_bytes(r[16:18], "big") == hashes.crc_ccitt(ab)
        assert int.from_bytes(r[18:24], "big") == int.from_bytes(xb + yb, "big")
        assert int.from_bytes(r[24:26], "big") == 100 + hashes.crc16(ab) % 7


# --- refusals -----------------------------------------------------------------------------
def test_unsupported_features_are_refused_with_the_reason() -> None:
    bmv2 = program(TABLES)
    bmv2["calculations"][0]["algo"] = "random"
    with pytest.raises(PipelineError, match="hash algorithm 'random'"):
        Switch(engine="native").load(copy.deepcopy(bmv2))
    auto = Switch(engine="auto")
    auto.load(bmv2)
    assert auto.engine_name == "python" and "random" in auto.engine_note


def test_values_that_may_not_fit_128_bits_are_refused() -> None:
    """(a << n) compared unmasked could exceed an i128; the native engine must not guess."""
    bmv2 = program(ARITH)
    cond = bmv2["pipelines"][0]["conditionals"][0]
    field = {"type": "field", "value": ["i", "a"]}
    shift = {"type": "field", "value": ["i", "n"]}
    big = {"type": "expression", "value": {"op": "<<", "left": field, "right": shift}}
    cond["expression"] = {"type": "expression", "value": {"op": ">", "left": big, "right": field}}
    with pytest.raises(PipelineError, match="126 bits"):
        Switch(engine="native").load(bmv2)


def test_other_refused_programs_name_the_feature() -> None:
    """Varbit fields of at most 64 bits, the externs program and digests now run natively."""
    for path in (
        TESTS / "p4" / "externs_misc.p4",
        HERE / "p4" / "learn.p4",
        HERE / "p4" / "varbit_errors.p4",
    ):
        auto = Switch(engine="auto")
        auto.load(program(path))
        assert auto.engine_name == "native", auto.engine_note


def test_list_ids_that_are_not_constants_are_refused() -> None:
    bmv2 = program(CLONE)
    prim = next(p for a in bmv2["actions"] for p in a["primitives"] if p["op"] == "resubmit")
    prim["parameters"][0] = {"type": "field", "value": ["h", "arg"]}
    with pytest.raises(PipelineError, match="list id of type 'field'"):
        Switch(engine="native").load(bmv2)


# --- clones, resubmit, recirculate, digests ------------------------------------------------
CLONE = HERE / "p4" / "native_clone.p4"


def clone_packet(op: int, arg: int = 0, mark: int = 0, tail: bytes = b"") -> bytes:
    return bytes([op, arg, 0, mark]) + bytes(6) + tail + b"payload"


def configure_replication(sw: Switch) -> None:
    sw.clone.set_session(1, [(5, 0)])
    sw.clone.set_session(2, [(6, 1), (7, 2)], truncate=10)
    sw.clone.set_session(3, [(8, 3)], truncate=6)
    sw.multicast.set_group(1, [(1, 0), (4, 9)])


def test_clones_resubmit_recirculate_and_digests_match_python() -> None:
    py, native = engines(program(CLONE))
    for sw in (py, native):
        configure_replication(sw)
    packets = [
        (port, clone_packet(op, arg, 0xEE if arg == 5 else mark, b"\x12\x34"))
        for op in range(17)
        for arg in (0, 1, 2, 3, 5, 9)
        for port, mark in ((4, 0), (0, 7))
    ]
    outs = dict(
        zip(((d[0], d[1], p, d[3]) for p, d in packets), run_both(py, native, packets), strict=True)
    )
    # I2E with a field list: two truncated clones keep m1 = arg and m2 = 0x1234, then the original
    assert outs[(2, 3, 4, 0)] == [
        (6, bytes.fromhex("0203060312340000 0001".replace(" ", ""))),
        (7, bytes.fromhex("0203070312340000 0001".replace(" ", ""))),
        (2, clone_packet(2, 3, 0, b"\x12\x34")[:4] + bytes(6) + b"\x12\x34payload"),
    ]
    # resubmit keeps field list 2 (m2) only: m1 (field list 1 only) is back to 0
    [(port, data)] = outs[(3, 2, 4, 0)]
    assert port == 3 and data[3] == 0 and data[4:6] == (0x102).to_bytes(2, "big")
    # recirculate twice, keeping m1 = rounds + 0x40; trace: ingress/egress as 0, then 4 twice
    [(port, data)] = outs[(4, 2, 4, 0)]
    assert data[2] == 2 and data[4:6] == b"\x00\x42" and data[6:10] == bytes.fromhex("00004444")
    # E2E: the clone carries the egress changes and m2 = 0x4242, truncated to 6 bytes
    assert outs[(6, 1, 4, 0)][0] == (8, bytes.fromhex("060108004242"))
    assert outs[(7, 0, 4, 0)] == [] and outs[(8, 0, 4, 0)] == []  # loops end at the guard
    assert outs[(9, 0, 4, 0)] == [(2, clone_packet(9, 0, 0, b"\x12\x34"))]  # no session 9
    assert [port for port, _d in outs[(10, 2, 4, 0)]] == [6, 7, 2]  # session from the packet
    assert [port for port, _d in outs[(12, 0, 4, 0)]] == [5]  # the original is dropped
    assert [port for port, _d in outs[(15, 0, 4, 0)]] == [8]
    # E2E clones of clones: 16 of them (the guard), each a deeper egress, then the original
    assert [d[1] for _p, d in outs[(16, 0, 4, 0)]] == [*range(17, 1, -1), 1]
    digests = list(native.digests)
    assert ("learn_t", [2, 4, -3, 0xBEEF]) in digests and len(digests) == 2 * 6 + 2 * 6 * 17
    assert native.stats["dropped"] > 0
    # session changes reach C
    for sw in (py, native):
        sw.clone.delete_session(2)
        sw.clone.set_session(1, [(9, 4), (10, 5)], truncate=3)
    outs = run_both(py, native, [(4, clone_packet(op, 1)) for op in (1, 2, 11, 12)])
    assert outs[0][:2] == [(9, b"\x01\x01\x09"), (10, b"\x01\x01\x0a")] and len(outs[1]) == 1


def test_a_drop_after_a_multicast_group_drops_and_a_group_after_a_drop_replicates() -> None:
    """v1model's mark_to_drop sets egress_spec to the drop port and mcast_grp to 0 (simple_switch):
    op 18 sets group 1 then marks, nothing goes out; op 19 marks then sets group 1, both replicas."""
    py, native = engines(program(CLONE))
    for sw in (py, native):
        configure_replication(sw)
    dropped, replicated = run_both(py, native, [(4, clone_packet(18)), (4, clone_packet(19))])
    assert dropped == []
    assert sorted(port for port, _d in replicated) == [1, 4]


def test_run_time_errors_in_a_clone_drop_everything_the_packet_caused() -> None:
    """Division by zero in the clone's egress (arg 1) or the original's (arg 0): no packets out,
    one dropped_error each. The digest comes after the I2E clone: the original's error keeps it,
    the clone's error comes first and there is none, as on Python."""
    py, native = engines(program(CLONE))
    for sw in (py, native):
        configure_replication(sw)
        sw.clone.set_session(4, [(1, 0)])
    outs = run_both(
        py,
        native,
        [(4, clone_packet(17, arg)) for arg in (1, 0, 2)]
        + [(4, clone_packet(10, 4)), (4, clone_packet(10, 200))],
    )
    assert [len(o) for o in outs] == [0, 0, 2, 2, 1]
    assert native.stats["dropped_error"] == 2
    assert [values[0] for _name, values in native.digests] == [0, 2]


def test_digest_ring_overflow_is_counted() -> None:
    _py, native = engines(program(CLONE))
    ring = codegen.DIGEST_RING
    for i in range(ring + 5):
        native.process(4, clone_packet(5, i & 0xFF))
    assert native.stats["digests_dropped"] == 5
    digests = native.digests
    assert len(digests) == ring and digests[0] == ("learn_t", [0, 4, -3, 0xBEEF])
    assert digests[-1][1][0] == (ring - 1) & 0xFF
    digests.clear()
    native.process(4, clone_packet(5, 7))
    assert list(native.digests) == [("learn_t", [7, 4, -3, 0xBEEF])]


# --- meters -------------------------------------------------------------------------------
METER = HERE / "p4" / "native_meter.p4"


def test_meters_mark_the_same_colors_in_the_same_order() -> None:
    """Rates of 0 (no refill) or huge bursts: colors that do not depend on timing, and
    buckets that run out packet by packet (GREEN, then YELLOW, then RED)."""
    py, native = engines(program(METER))
    for sw in (py, native):
        m = sw.meters["I.per_idx"]
        m.set(0, 0, 0, 0, 0)  # always RED
        m.set(1, 0, 0, 1e9, 10**9)  # always YELLOW
        m.set(2, 1e9, 10**9, 1e9, 10**9)  # always GREEN
        m.set(4, 0, 2, 0, 4)  # 2 GREEN, 2 YELLOW, then RED
        m.set(5, 0.5, 3, 1.0, 5)  # slow refill: 3 GREEN, 2 YELLOW, then RED within a second
        keyed = sw.tables["I.keyed"]
        h1 = keyed.add([1], "I.hit", [])
        keyed.add([2], "I.hit", [])
        sw.meters["I.per_key"].set(("entry", h1), 0, 10, 0, 20)  # bytes: 4-byte packets
    packets = [(0, bytes([idx, key, 0, 0])) for idx in (0, 1, 2, 3, 9, 4, 5) for key in (1, 2, 3)]
    packets += [(0, bytes([4, 1, 0, 0]))] * 4 + [(0, bytes([5, 2, 0, 0]))] * 4
    outs = run_both(py, native, packets)
    colors = [(o[0][1][2], o[0][1][3]) for o in outs]
    # direct meter of key 1 (10/20 bytes): 4-byte packets go GREEN twice, then YELLOW, then RED;
    # key 2 hits an unconfigured entry (GREEN), key 3 misses (the meter does not run)
    assert colors[:15] == [
        (2, 0),
        (2, 0),
        (2, 0xFF),
        (1, 0),
        (1, 0),
        (1, 0xFF),
        (0, 1),
        (0, 0),
        (0, 0xFF),
        (0, 1),
        (0, 0),
        (0, 0xFF),
        (0, 1),
        (0, 0),
        (0, 0xFF),
    ]
    assert [colors[i][1] for i in range(21, 25)] == [2, 2, 2, 2]
    idx4 = [colors[i][0] for i in (15, 16, 17, 21, 22, 23, 24)]
    assert idx4 == [0, 0, 1, 1, 2, 2, 2]
    idx5 = [colors[i][0] for i in (18, 19, 20, 25, 26, 27, 28)]
    assert idx5 == [0, 0, 0, 1, 1, 2, 2]
    # reset and get, and a meter index out of range refused alike
    for sw in (py, native):
        assert sw.meters["I.per_idx"].get(4) == (0, 2, 0, 4)
        sw.meters["I.per_idx"].reset(0)
        with pytest.raises(IndexError):
            sw.meters["I.per_idx"].set(8, 0, 0, 0, 0)
        with pytest.raises(ValueError, match="below"):
            sw.meters["I.per_idx"].set(3, 5, 1, 1, 1)
    assert run_both(py, native, [(0, bytes([0, 3, 0, 0]))])[0][0][1][2:] == bytes([0, 0xFF])
    # a direct meter cell configured for an entry handle before the entry exists (0/0: RED)
    for sw in (py, native):
        handle = max(e.handle for e in sw.tables["I.keyed"].entries()) + 1
        sw.meters["I.per_key"].set(("entry", handle), 0, 0, 0, 0)
        assert sw.tables["I.keyed"].add([3], "I.hit", []) == handle
    assert run_both(py, native, [(0, bytes([0, 3, 0, 0]))])[0][0][1][2:] == bytes([0, 2])


# --- parser value sets --------------------------------------------------------------------
VSET = HERE / "p4" / "native_vset.p4"


def vset_packets(rng: random.Random) -> list[tuple[int, bytes]]:
    kinds = [0x0800, 0x86DD, 0x1234, 0xFFFF, 0]
    subs = [0x01, 0x11, 0x21, 0xFF, 0x0F]
    packets = [(0, k.to_bytes(2, "big") + bytes([s, 0, 0x99])) for k in kinds for s in subs]
    packets += [
        (0, rng.getrandbits(16).to_bytes(2, "big") + bytes([rng.getrandbits(8), 0, 1]))
        for _ in range(100)
    ]
    return packets


def test_parser_value_sets_follow_their_members() -> None:
    bmv2 = program(VSET)
    state = next(s for s in bmv2["parsers"][0]["parse_states"] if s["name"] == "two")
    state["transitions"][0]["mask"] = "0x0f"  # the subs set matched under a mask
    py, native = engines(bmv2)
    rng = random.Random(13)
    outs = run_both(py, native, vset_packets(rng))
    assert {o[0][1][3] for o in outs} <= {0, 4}  # empty sets match nothing
    for sw in (py, native):
        sw.parse_vsets["P.kinds"].update([0x0800, 0x86DD])
        sw.parse_vsets["P.subs"].add(0x01)
    outs = run_both(py, native, vset_packets(rng))
    assert (
        outs[0][0][1][3] == 1 and outs[10][0][1][3] == 3 and outs[11][0][1][3] == 3
    )  # 0x11 & 0x0f
    for sw in (py, native):
        sw.parse_vsets["P.kinds"].discard(0x0800)
        sw.parse_vsets["P.subs"].clear()
        with pytest.raises(ValueError):
            sw.parse_vsets["P.subs"].add(-1)
    outs = run_both(py, native, vset_packets(rng))
    assert outs[0][0][1][3] == 0 and outs[5][0][1][3] == 1


# --- header unions -------------------------------------------------------------------------
UNION = HERE / "p4" / "native_union.p4"


def union_packets(rng: random.Random) -> list[tuple[int, bytes]]:
    crafted = [
        "",  # PacketTooShort on kind
        "0000 11 EE",  # u.a only
        "0101 0102",  # u.b, setValid keeps it and adds 1: route to 2 (0x0102 then 0x0103)
        "0100 0102",  # u.b as parsed: key (0x0102, a invalid) -> port 2
        "0201 11 0102",  # both u.a and u.b valid; setValid(b) invalidates a
        "0200 11 0103",  # both valid, a valid in the key -> port 3
        "0202 11 0103",  # both valid, copied into u2: deparsed member by member
        "0206 11 0103",  # copy, then u.a invalid
        "0308 22 3344",  # us[0].a copied into u.a (u.b keeps its validity)
        "0310 22 3344",  # union stack copy
        "0320 22 3344",  # us[1].a setValid invalidates us[1].b
        "0340 22 3344",  # u.c setValid over an invalid union
        "0440 1abc 77",  # u.c then u.a; u.c setValid keeps its fields, invalidates u.a
        "0400 1abc",  # u.c then u.a: PacketTooShort, u.a stays invalid
        "0100 dead",  # dropped by the table
        "057f",  # nothing extracted, every operation
        "01",  # half a kind header
    ]
    packets = [(1, bytes.fromhex(h.replace(" ", ""))) for h in crafted]
    for _ in range(400):
        body = [rng.choice([0, 1, 2, 3, 4, 5]), rng.getrandbits(7)]
        body += [
            rng.choice([1, 2, 3, 0x10, 0xDE, 0xAD]) if rng.random() < 0.5 else rng.getrandbits(8)
            for _ in range(rng.randint(0, 8))
        ]
        packets.append((1, bytes(body)))
    return packets


def test_header_unions_match_python() -> None:
    py, native = engines(program(UNION))
    outs = run_both(py, native, union_packets(random.Random(17)))
    assert outs[2] == [(1, bytes.fromhex("0101 0103 8100"))]  # u.b kept its field
    assert outs[3] == [(2, bytes.fromhex("0100 0102 8100"))]  # st: u valid, u.b valid
    assert outs[4] == [(1, bytes.fromhex("0201 0103 8100"))]  # setValid(b) dropped u.a
    assert outs[5] == [(3, bytes.fromhex("0200 11 0103 c100"))]  # both members valid
    assert outs[6] == [(3, bytes.fromhex("0202 11 0103 11 0103 c300"))]  # u copied into u2
    assert outs[8] == [(1, bytes.fromhex("0308 22 22 3344 4d00"))]  # u.a = us[0].a
    assert outs[10] == [(1, bytes.fromhex("0320 22 07 0c00"))]  # us[1].a replaced us[1].b
    assert outs[12] == [(1, bytes.fromhex("0440 1abc 0100"))]  # u.c kept, u.a invalidated
    assert outs[14] == []  # dropped
    assert outs[15] == [(1, bytes.fromhex("057f 0abc 0001 07 0b00"))]  # every operation
    assert native.counters["Ingress.by_member"].read(2)[0] > 0


def test_header_union_variants_of_the_json_match_python() -> None:
    """What p4c may emit besides ina's compiler: unions named in the deparser order, members
    reached through access_union_header (whose setValid leaves the other members alone, as on the
    Python engine), and assign_union_stack."""
    bmv2 = program(UNION)
    deparser = bmv2["deparsers"][0]
    deparser["order"] = ["kind", "u", "u2", "us[0]", "us[1]", "us2[0]", "us2[1]", "st"]
    for action in bmv2["actions"]:
        for prim in action["primitives"]:
            target = prim["parameters"][0] if prim.get("parameters") else None
            if prim["op"] == "add_header" and target["value"] == "u.c":
                target["type"] = "expression"
                target["value"] = {
                    "op": "access_union_header",
                    "left": {"type": "header_union", "value": "u"},
                    "right": 2,
                }
            if prim["op"] == "assign_header_stack":
                prim["op"] = "assign_union_stack"
    py, native = engines(bmv2)
    outs = run_both(py, native, union_packets(random.Random(19)))
    assert outs[12] == [(1, bytes.fromhex("0440 77 1abc 4100"))]  # u.a stays valid, emitted first


# --- varbit fields -------------------------------------------------------------------------
VARBIT = HERE / "p4" / "native_varbit.p4"


def varbit_packets(rng: random.Random) -> list[tuple[int, bytes]]:
    crafted = [
        "0000",  # o1 of length 0 with no byte left for its tag: PacketTooShort
        "0800 aa bb",  # o1 with 8 bits
        "0000 aa",  # length 0
        "0300 aa",  # 3 bits: ParserInvalidArgument
        "4000 aa 1122334455667788",  # 64 bits, above the 56 maximum: HeaderTooShort
        "3800 aa 11223344556677 99",  # the maximum
        "3800 aa 112233",  # past the end: PacketTooShort
        "1000 aa bbcc",  # o2 made valid with length 0
        "0801 aa bb ccdd",  # a stack: 8 then 16 bits
        "0805 11 22 3344 55",  # a third element: StackOutOfBounds
        "0002 f0",  # a varbit field of length 0 between two fixed fields
        "0802 1a bf 99",  # 8 bits between them; b == 0xf: dropped
        "2002 12 34 56 78",  # 32 bits between them
        "0818 aa bb",  # copy then setValid (keeps the copied length)
        "0828 aa bb",  # copy then o1 invalid: not equal
        "0848 aa bb",  # o1 copied into st[1]
        "0841 aa bb ccdd 99",  # an invalid o1 copied over st[1]
    ]
    packets = [(1, bytes.fromhex(h.replace(" ", ""))) for h in crafted]
    for _ in range(400):
        body = [rng.choice([0, 8, 16, 24, 32, 56, 64, 3, 12]), rng.getrandbits(7)]
        body += [rng.getrandbits(8) for _ in range(rng.randint(0, 12))]
        packets.append((1, bytes(body)))
    return packets


def test_varbit_fields_match_python() -> None:
    py, native = engines(program(VARBIT))
    outs = run_both(py, native, varbit_packets(random.Random(23)))
    assert outs[0] == [(1, bytes.fromhex("0000 0301"))]
    assert outs[1] == [(1, bytes.fromhex("0800 aabb 0000"))]
    assert outs[3] == [(1, bytes.fromhex("0300 0101 aa"))]  # ParserInvalidArgument
    assert outs[4][0][1][:4] == bytes.fromhex("4000 0201")  # HeaderTooShort
    assert outs[5] == [(1, bytes.fromhex("3800 aa11223344556677 0000 99"))]
    assert outs[6][0][1][:4] == bytes.fromhex("3800 0301")  # PacketTooShort
    assert outs[9] == [(1, bytes.fromhex("0805 1122 334455 0401"))]  # StackOutOfBounds
    assert outs[11] == []
    assert outs[13] == [(1, bytes.fromhex("0818 aabb 55bb 0000"))]  # o2 kept o1's length
    assert native.stats["parser_errors"] > 5


def test_varbit_variants_of_the_json_match_python() -> None:
    """extract of a varbit header without a length (0, as on the Python engine), assign_VL (the
    value and its length, as BMv2: tests/p4/varbit_assign.stf), a negative length (a run-time
    error) and a varbit wider than 64 bits (refused)."""
    bmv2 = program(VARBIT)
    states = {s["name"]: s for s in bmv2["parsers"][0]["parse_states"]}
    second = states["stack"]["parser_ops"][1]
    assert second["op"] == "extract_VL"
    second["op"], second["parameters"] = "extract", second["parameters"][:1]
    one = states["one"]["parser_ops"][0]
    bits = one["parameters"][1]["value"]
    one["parameters"][1]["value"] = {
        "op": "-",
        "left": bits,
        "right": {"type": "hexstr", "value": "0x10"},
    }
    for action in bmv2["actions"]:
        for prim in action["primitives"]:
            if prim["op"] == "assign" and prim["parameters"][0]["value"] == ["o2", "tag"]:
                prim["op"] = "assign_VL"
                prim["parameters"] = [
                    {"type": "field", "value": ["o1", "data"]},
                    {"type": "field", "value": ["o2", "data"]},
                ]
    py, native = engines(copy.deepcopy(bmv2))
    packets = [
        (1, bytes.fromhex(h))
        for h in (
            "0000",
            "0800aabb",
            "1800aabbcc",
            "1810aabbcc",
            "2818aabbccdd",
            "0801112233445566",
        )
    ]
    outs = run_both(py, native, packets + varbit_packets(random.Random(29)))
    assert outs[0] == [] and outs[1] == []  # lengths -16 and -8: dropped as errors
    assert outs[3] == [
        (1, bytes.fromhex("1810 aa00 00 00 cc"))
    ]  # o1.data = the new o2's 0, 8 bits long
    assert outs[5] == [(1, bytes.fromhex("0801 1122 33 0001 445566"))]  # st[1]: length 0
    assert native.stats["dropped_error"] >= 2
    next(h for h in bmv2["header_types"] if h["name"] == "opts_t")["max_length"] = 10
    with pytest.raises(PipelineError, match="varbit header 'o1' of up to 72 bits"):
        Switch(engine="native").load(bmv2)


# --- fields, keys and parameters of 65..128 bits ----------------------------------------------
WIDE = HERE / "p4" / "native_wide.p4"
ONES = (1 << 128) - 1


def wide_packet(
    tc: int, nh: int, hop: int, src: int, dst: int, flow: int = 0, length: int = 0
) -> bytes:
    first = (6 << 28) | (tc << 20) | flow
    return (
        first.to_bytes(4, "big")
        + length.to_bytes(2, "big")
        + bytes([nh, hop])
        + src.to_bytes(16, "big")
        + dst.to_bytes(16, "big")
    )


def fill_wide(sw: Switch, srcs: list[int], dsts: list[int]) -> None:
    for k, src in enumerate(srcs):
        sw.tables["I.by_src"].add([src, 17], "I.set_nh", [ONES - src, k])
    for k, (dst, plen) in enumerate(zip(dsts, (16, 64, 65, 100, 128, 0), strict=False)):
        sw.tables["I.by_dst"].add([("lpm", dst, plen)], "I.set_mix", [k, dst ^ (1 << 127)])
    sw.tables["I.tern"].add(
        [("ternary", srcs[0], ONES ^ 0xFF), 7], "I.set_nh", [1 << 100, 1], priority=3
    )
    sw.tables["I.tern"].add(
        [("ternary", 0, 1 << 127), 7], "I.set_nh", [(1 << 64) | 5, 2], priority=2
    )


def test_wide_fields_keys_and_parameters_match_python() -> None:
    py, native = engines(program(WIDE))
    rng = random.Random(11)
    srcs = [rng.getrandbits(128) for _ in range(4)] + [ONES, 0, 1 << 64, (1 << 64) - 1]
    dsts = [0xFF02 << 112, rng.getrandbits(128), rng.getrandbits(128), ONES, 0x2001 << 112, 0]
    fill_wide(py, srcs, dsts)
    fill_wide(native, srcs, dsts)
    values = srcs + dsts + [1 << 127, (1 << 127) - 1, 0xFF, 0x100]
    packets = []
    for _ in range(400):
        src = rng.choice([*values, rng.getrandbits(128)])
        dst = rng.choice(
            [
                *values,
                rng.getrandbits(128),
                src,
                (0xFF02 << 112) | rng.getrandbits(100),
                dsts[1] ^ rng.getrandbits(60),
                src ^ 0xFF,
            ]
        )
        if rng.random() < 0.3:
            src = rng.choice(srcs) ^ rng.choice([0, 0, rng.getrandbits(8)])
        packets.append(
            (
                0,
                wide_packet(
                    rng.randint(0, 8),
                    rng.choice([17, 6]),
                    rng.choice([7, 64]),
                    src,
                    dst,
                    rng.getrandbits(20),
                    rng.getrandbits(16),
                ),
            )
        )
    outs = run_both(py, native, packets)
    flags = {
        out[0][1][2 * 40 + 16 + 1] if len(out[0][1]) > 120 else out[0][1][40 + 17] for out in outs
    }
    assert len(flags) > 8  # the comparisons took both ways
    for sw in (py, native):  # rewritten entries and defaults reach C as two words per value
        table = sw.tables["I.by_src"]
        table.modify(table.entries()[0].handle, "I.set_nh", [0x1234 << 80, 0x55])
        sw.tables["I.by_dst"].set_default("I.set_mix", [3, 1 << 90])
    run_both(
        py,
        native,
        [(0, wide_packet(0, 17, 7, srcs[0], dsts[2])), (0, wide_packet(5, 6, 64, 123, ONES))],
    )


def test_wide_values_are_the_p4_values() -> None:
    _py, native = engines(program(WIDE))
    src, dst = (0x2001 << 112) | 0x1234, (0xFF02 << 112) | 1
    native.tables["I.by_src"].add([src, 17], "I.set_nh", [ONES ^ 1, 0x21])
    native.tables["I.by_dst"].add([("lpm", 0xFF02 << 112, 16)], "I.set_mix", [2, 1 << 127])
    [(port, out)] = native.process(0, wide_packet(1, 17, 64, src, dst, 0, 40))
    assert port == 2
    r = out[40:]
    assert int.from_bytes(r[0:16], "big") == ONES ^ 1  # nexthop: a 128-bit parameter
    # route 0x21 + 2; flags: src <= 2**127, m != nexthop, dst in ff02::/16, mix >= src, dst[127:120]
    assert r[16] == 0x23 and r[17] == 4 | 8 | 16 | 32 | 128
    assert int.from_bytes(r[24:40], "big") == (src + dst) & ONES  # tc 1: the sum, modulo 2**128
    pseudo = (
        src.to_bytes(16, "big")
        + dst.to_bytes(16, "big")
        + (40).to_bytes(2, "big")
        + bytes([0, 0, 0, 17])
    )
    assert int.from_bytes(r[18:20], "big") == hashes.csum16(pseudo)


def test_wide_values_that_are_not_exact_are_refused() -> None:
    """Arithmetic on 128-bit values compared, signed wide fields and wide registers, digests and
    range keys stay on the Python engine; a broken split of the words would show in the packets."""
    bmv2 = program(WIDE)
    cond = bmv2["pipelines"][0]["conditionals"][1]  # src == dst
    src, dst = cond["expression"]["value"]["left"], cond["expression"]["value"]["right"]
    cond["expression"]["value"]["left"] = {
        "type": "expression",
        "value": {"op": "+", "left": src, "right": dst},
    }
    with pytest.raises(PipelineError, match="may not fit 126 bits"):
        Switch(engine="native").load(copy.deepcopy(bmv2))
    bmv2 = program(WIDE)
    bmv2["register_arrays"] = [{"name": "wide", "id": 0, "size": 4, "bitwidth": 128}]
    with pytest.raises(PipelineError, match="register 'wide' is 128 bits wide"):
        Switch(engine="native").load(copy.deepcopy(bmv2))
    bmv2 = program(WIDE)
    ip6 = next(h for h in bmv2["header_types"] if h["name"] == "ip6_t")
    ip6["fields"][6][2] = True
    with pytest.raises(PipelineError, match="signed and 128 bits wide"):
        Switch(engine="native").load(copy.deepcopy(bmv2))
    bmv2 = program(WIDE)
    table = next(t for t in bmv2["pipelines"][0]["tables"] if t["name"] == "I.tern")
    table["key"][0]["match_type"] = "range"
    with pytest.raises(PipelineError, match="range key wider than 64 bits"):
        Switch(engine="native").load(copy.deepcopy(bmv2))
    bmv2 = program(WIDE)
    bmv2["learn_lists"] = [
        {"id": 1, "name": "d", "elements": [{"type": "field", "value": ["ip6", "src"]}]}
    ]
    with pytest.raises(PipelineError, match="learn list 'd' has a field wider than 64 bits"):
        Switch(engine="native").load(bmv2)


# --- fan-out and the caller's arguments: the same in both engines -------------------------------
FANOUT = TESTS / "p4" / "register_accumulate.p4"
BROADCAST = bytes.fromhex("ffffffffffff0000000000028801") + b"payload!"  # forwarded to group 1


def fan_out(replicas: int, frame: bytes) -> tuple[Switch, list[tuple[int, bytes]]]:
    """`frame` into both engines with multicast group 1 of `replicas` (port, rid) replicas;
    returns the Python engine and what the packet sent, once both engines agreed."""
    py, native = engines(program(FANOUT))
    group = [(i % 512, i // 512) for i in range(replicas)]
    for sw in (py, native):
        sw.multicast.set_group(1, group)
    [out] = run_both(py, native, [(1, frame)])
    return py, out


def test_a_fan_out_past_the_first_output_buffer_is_sent_whole_by_both_engines() -> None:
    """2,044 replicas: the native engine once stopped at 1,024 (its fixed buffer), Python did not."""
    py, out = fan_out(2044, BROADCAST)
    assert [port for port, _data in out] == [i % 512 for i in range(2044)]
    assert py.stats["tx"] == 2044 and py.stats["dropped_output_full"] == 0


def test_the_fan_out_cap_in_packets_is_the_same_in_both_engines() -> None:
    py, out = fan_out(MAX_OUTPUT_PACKETS + 512, BROADCAST)
    assert len(out) == MAX_OUTPUT_PACKETS
    assert py.stats["dropped_output_full"] == 512


def test_the_fan_out_cap_in_bytes_is_the_same_in_both_engines() -> None:
    frame = BROADCAST + bytes(2048 - len(BROADCAST))
    fits = MAX_OUTPUT_BYTES // len(frame)  # exactly: the last one fills the cap to the byte
    py, out = fan_out(fits + 100, frame)
    assert len(out) == fits
    assert py.stats["dropped_output_full"] == 100


@pytest.mark.parametrize("port", [-1, 512, 2**31, 2**32, 2**32 + 1, 2**64])
def test_ports_the_program_cannot_hold_are_refused_alike(port: int) -> None:
    """ingress_port is 9 bits: C's int once kept 2**32 as port 0, Python as itself."""
    for sw in engines(program(FANOUT)):
        with pytest.raises(ValueError, match=rf"^port {port} is out of range 0\.\.511 "):
            sw.process(port, BROADCAST)
        assert sw.stats == {}  # not received: nothing counted


def test_arguments_of_the_wrong_type_are_refused_alike() -> None:
    py, native = engines(program(FANOUT))
    for sw in (py, native):
        with pytest.raises(TypeError, match="port must be an int, not str"):
            sw.process("1", BROADCAST)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="data must be bytes, not list"):
            sw.process(1, list(BROADCAST))  # type: ignore[arg-type]
        sw.multicast.set_group(1, [(2, 0)])
    outs = run_both(
        py, native, [(511, bytearray(BROADCAST)), (0, memoryview(BROADCAST)), (511, BROADCAST)]
    )
    assert outs == [[(2, BROADCAST)]] * 3


def test_replay_keeps_every_fan_out_in_one_growing_buffer() -> None:
    """ina_io_replay runs several inputs into one output buffer, as the port loop's batches do."""
    _py, native = engines(program(FANOUT))
    native.multicast.set_group(1, [(i % 512, i // 512) for i in range(2044)])
    assert native.native.replay([(1, BROADCAST)] * 3, 2) == 6 * 2044
    assert native.stats["dropped_output_full"] == 0


def test_the_direct_entry_sends_what_process_sends() -> None:
    """NativeBackend.direct (entry.c, sim/nodes.py's call for the frames reaching a switch at one
    instant) against `process`: frames in order, each one's outputs apart, a fan-out past the
    first output buffer from bytes and from a bytearray, a frame the parser rejects."""
    _py, native = engines(program(FANOUT))
    native.multicast.set_group(1, [(i % 512, i // 512) for i in range(2044)])
    backend = native.native
    assert backend is not None and backend.direct is not None
    fan_out = backend.process(1, BROADCAST)
    assert [port for port, _frame in fan_out] == [i % 512 for i in range(2044)]
    assert backend.process(1, BROADCAST[:13]) == []
    frames = [(1, BROADCAST), (1, BROADCAST[:13]), (3, bytearray(BROADCAST))]
    assert backend.direct(frames) == [fan_out, [], fan_out]
    assert backend.direct([]) == []
    assert native.stats["rx"] == 5 and native.stats["tx"] == 3 * 2044
    with pytest.raises(TypeError, match=r"^process: a frame is bytes or bytearray$"):
        backend.direct([(1, list(BROADCAST))])
    with pytest.raises(TypeError, match=r"^process: frames is a list of \(port, frame\)$"):
        backend.direct([(1, BROADCAST, 0)])


# --- assert and assume: README says a failure drops the packet (simple_switch aborts) ----------
ASSERTS_P4 = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct metadata_t { }
parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    counter(1, CounterType.packets) passed;
    apply {
        sm.egress_spec = 1;
        assert(hdr.h.a != 1);
        assume(hdr.h.a != 2);
        passed.count(0);
        hdr.h.b = 0xAB;
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_assert_and_assume_failures_drop_the_packet_and_nothing_after_runs(tmp_path: Path) -> None:
    source = tmp_path / "asserts.p4"
    source.write_text(ASSERTS_P4)
    py, native = engines(compile_file(source).bmv2)
    outs = run_both(
        py, native, [(0, b"\x00\x00"), (0, b"\x01\x00"), (0, b"\x02\x00"), (0, b"\x00\x01")]
    )
    assert outs == [[(1, b"\x00\xab")], [], [], [(1, b"\x00\xab")]]
    assert py.counters["I.passed"].read(0)[0] == 2
    assert (py.stats["rx"], py.stats["tx"], py.stats["dropped_error"]) == (4, 2, 2)
