"""Known-answer vectors for every v1model hash algorithm ina runs, on both engines.

The expected values are published check values, not ina's own code: the CRC catalogue's check
value (the CRC of the ASCII bytes "123456789"), RFC 1071's worked example for the Internet
checksum, and BMv2's definitions (calculations.cpp) for xor16 and identity. Comparing the engines
with each other or with switch/model/hashes.py alone would let a shared wrong constant pass.
"""

import copy

import pytest
from engine_compare import engines, run_both

from ina.compiler import compile_file
from ina.switch.model import hashes

CHECK = b"123456789"  # the CRC catalogue's check input
RFC1071 = bytes.fromhex("0001f203f4f5f6f7")  # RFC 1071 section 3: sum 0xddf2, checksum 0x220d

# (algorithm as BMv2 JSON names it, input, expected); crc16_custom and crc32_custom are BMv2's
# custom CRCs with their default parameters, which are CRC-16/ARC and CRC-32.
VECTORS = [
    ("crc16", CHECK, 0xBB3D),  # CRC-16/ARC
    ("crc16_custom", CHECK, 0xBB3D),
    ("crc32", CHECK, 0xCBF43926),  # CRC-32/ISO-HDLC (zlib's)
    ("crc32_custom", CHECK, 0xCBF43926),
    ("crcCCITT", CHECK, 0x29B1),  # CRC-16/IBM-3740 (CCITT-FALSE: init 0xFFFF, not reflected)
    ("csum16", RFC1071, 0x220D),
    ("csum16", CHECK, 0xF62A),  # odd length: padded with a zero byte (RFC 1071)
    ("xor16", CHECK, 0x3908),  # 0x3132 ^ 0x3334 ^ 0x3536 ^ 0x3738 ^ 0x3900: BMv2 pads the tail
    ("identity", CHECK[:8], 0x3132333435363738),  # the bytes as one big-endian integer
]

# Headers carry the inputs in fields of at most 64 bits (the native engine's limit per field); the
# program hashes each into its own result field, with base 0 and a max of 2**width (no modulo).
# crcCCITT is not in v1model's HashAlgorithm enum: the test sets the algorithm of the calculation
# that writes r.ccitt in the JSON.
P4 = """
#include <core.p4>
#include <v1model.p4>
header check_t { bit<32> a; bit<32> b; bit<8> c; }
header rfc_t { bit<32> a; bit<32> b; }
header res_t {
    bit<16> crc16; bit<16> crc16_custom; bit<32> crc32; bit<32> crc32_custom; bit<16> ccitt;
    bit<16> csum16_rfc; bit<16> csum16; bit<16> xor16; bit<64> identity; bit<16> based;
}
struct headers_t { check_t check; rfc_t rfc; res_t r; }
struct metadata_t { }
parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.check); pkt.extract(hdr.rfc); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.setValid();
        hash(hdr.r.crc16, HashAlgorithm.crc16, 16w0, { hdr.check.a, hdr.check.b, hdr.check.c }, 32w65536);
        hash(hdr.r.crc16_custom, HashAlgorithm.crc16_custom, 16w0,
             { hdr.check.a, hdr.check.b, hdr.check.c }, 32w65536);
        hash(hdr.r.crc32, HashAlgorithm.crc32, 32w0, { hdr.check.a, hdr.check.b, hdr.check.c },
             64w4294967296);
        hash(hdr.r.crc32_custom, HashAlgorithm.crc32_custom, 32w0,
             { hdr.check.a, hdr.check.b, hdr.check.c }, 64w4294967296);
        hash(hdr.r.ccitt, HashAlgorithm.crc16, 16w0, { hdr.check.a, hdr.check.b, hdr.check.c }, 32w65536);
        hash(hdr.r.csum16_rfc, HashAlgorithm.csum16, 16w0, { hdr.rfc.a, hdr.rfc.b }, 32w65536);
        hash(hdr.r.csum16, HashAlgorithm.csum16, 16w0, { hdr.check.a, hdr.check.b, hdr.check.c }, 32w65536);
        hash(hdr.r.xor16, HashAlgorithm.xor16, 16w0, { hdr.check.a, hdr.check.b, hdr.check.c }, 32w65536);
        hash(hdr.r.identity, HashAlgorithm.identity, 64w0, { hdr.check.a, hdr.check.b }, 128w1 << 64);
        hash(hdr.r.based, HashAlgorithm.crc16, 16w100, { hdr.check.a, hdr.check.b, hdr.check.c }, 32w7);
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.check); pkt.emit(hdr.rfc); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""
# res_t's fields in order: (name, bytes)
RESULT_FIELDS = [
    ("crc16", 2),
    ("crc16_custom", 2),
    ("crc32", 4),
    ("crc32_custom", 4),
    ("ccitt", 2),
    ("csum16_rfc", 2),
    ("csum16", 2),
    ("xor16", 2),
    ("identity", 8),
    ("based", 2),
]


@pytest.mark.parametrize(
    ("algo", "data", "expected"), VECTORS, ids=[f"{v[0]}-{v[1].hex()}" for v in VECTORS]
)
def test_python_hash_functions_give_the_published_values(
    algo: str, data: bytes, expected: int
) -> None:
    python = {
        "crc16": hashes.crc16,
        "crc16_custom": hashes.crc16,
        "crc32": hashes.crc32,
        "crc32_custom": hashes.crc32,
        "crcCCITT": hashes.crc_ccitt,
        "csum16": hashes.csum16,
        "xor16": hashes.xor16,
        "identity": hashes.identity,
    }[algo]
    assert python(data) == expected


@pytest.fixture(scope="module")
def hash_program(tmp_path_factory: pytest.TempPathFactory) -> dict:
    source = tmp_path_factory.mktemp("hashes") / "hashes.p4"
    source.write_text(P4)
    bmv2 = compile_file(source).bmv2
    [calc] = [
        p["parameters"][2]["value"]
        for a in bmv2["actions"]
        for p in a["primitives"]
        if p["parameters"][:1] == [{"type": "field", "value": ["r", "ccitt"]}]
    ]
    [ccitt] = [c for c in bmv2["calculations"] if c["name"] == calc]
    ccitt["algo"] = "crcCCITT"  # BMv2 JSON has it; v1model's enum does not
    return bmv2


def test_both_engines_give_the_published_values(hash_program: dict) -> None:
    py, native = engines(copy.deepcopy(hash_program))
    [[(port, out)]] = run_both(py, native, [(0, CHECK + RFC1071)])
    assert port == 1 and out[:17] == CHECK + RFC1071
    values, at = {}, 17
    for name, size in RESULT_FIELDS:
        values[name] = int.from_bytes(out[at : at + size], "big")
        at += size
    assert at == len(out)
    assert values == {
        "crc16": 0xBB3D,
        "crc16_custom": 0xBB3D,
        "crc32": 0xCBF43926,
        "crc32_custom": 0xCBF43926,
        "ccitt": 0x29B1,
        "csum16_rfc": 0x220D,
        "csum16": 0xF62A,
        "xor16": 0x3908,
        "identity": 0x3132333435363738,
        "based": 100 + 0xBB3D % 7,  # base + hash mod max: 104
    }
