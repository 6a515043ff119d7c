// Fields, keys and action parameters of 128 bits (IPv6-like) for the native engine's differential
// tests: exact and LPM tables on addresses, 128-bit action parameters, copies (fields and whole
// headers), unsigned comparisons, wrapping arithmetic stored into 128 bits, setValid zeroing, and
// hashes and a checksum over 128-bit fields, slices and right shifts by constants.
#include <core.p4>
#include <v1model.p4>

header ip6_t {
    bit<4> version; bit<8> tc; bit<20> flow; bit<16> len; bit<8> nh; bit<8> hop;
    bit<128> src; bit<128> dst;
}
header res_t {
    bit<128> nexthop; bit<8> route; bit<8> flags; bit<16> csum; bit<32> crc; bit<128> mix;
    bit<100> odd; bit<4> pad; bit<16> ck;
}
struct headers_t { ip6_t ip6; ip6_t copy; res_t r; }
struct metadata_t { bit<128> m; bit<72> n; }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ip6); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action set_nh(bit<128> nh, bit<8> r) { hdr.r.nexthop = nh; hdr.r.route = r; }
    action set_mix(bit<8> r, bit<128> v) { hdr.r.mix = hdr.ip6.dst ^ v; hdr.r.route = hdr.r.route + r; }
    table by_src {
        key = { hdr.ip6.src: exact; hdr.ip6.nh: exact; }
        actions = { set_nh; NoAction; }
        default_action = set_nh(128w0xfe800000000000000000000000000001, 0xEE);
    }
    table by_dst {
        key = { hdr.ip6.dst: lpm; }
        actions = { set_mix; }
        default_action = set_mix(0x10, 128w0xffffffffffffffffffffffffffffffff);
    }
    table tern {
        key = { hdr.ip6.src: ternary; hdr.ip6.hop: exact; }
        actions = { set_nh; }
        default_action = set_nh(0, 0);
    }
    apply {
        sm.egress_spec = 2;
        hdr.r.setValid();
        by_src.apply();
        by_dst.apply();
        if (hdr.ip6.hop == 7) { tern.apply(); }
        meta.m = hdr.ip6.src;
        meta.n = (bit<72>)hdr.ip6.dst + 72w0xFF;
        bit<8> f = 0;
        if (hdr.ip6.src == hdr.ip6.dst) { f = f | 1; }
        if (hdr.ip6.src > hdr.ip6.dst) { f = f | 2; }
        if (hdr.ip6.src <= 128w0x80000000000000000000000000000000) { f = f | 4; }
        if (meta.m != hdr.r.nexthop) { f = f | 8; }
        if ((hdr.ip6.dst & 128w0xffff0000000000000000000000000000) == 128w0xff020000000000000000000000000000) {
            f = f | 16;
        }
        if (hdr.r.mix >= hdr.ip6.src) { f = f | 32; }
        if ((hdr.ip6.src | hdr.ip6.dst) < 128w0x100) { f = f | 64; }
        if (hdr.ip6.dst[127:120] == 8w0xff) { f = f | 128; }
        hdr.r.flags = f;
        if (hdr.ip6.tc == 1) { hdr.r.mix = hdr.ip6.src + hdr.ip6.dst; }
        if (hdr.ip6.tc == 2) { hdr.r.mix = hdr.ip6.src - hdr.ip6.dst; }
        if (hdr.ip6.tc == 3) { hdr.r.mix = ~hdr.ip6.src | (hdr.ip6.dst << 4); }
        if (hdr.ip6.tc == 4) { hdr.r.mix = (bit<128>)meta.n; }
        if (hdr.ip6.tc == 5) { hdr.copy = hdr.ip6; hdr.copy.src = hdr.ip6.dst; }
        if (hdr.ip6.tc == 6) { hdr.copy.setValid(); hdr.copy.hop = 1; }
        if (hdr.ip6.tc == 8) { hdr.r.mix = hdr.ip6.src >> 3; hdr.r.pad = hdr.ip6.dst[67:64]; }
        if (hdr.ip6.tc == 7) { hdr.copy = hdr.ip6; hdr.copy.setInvalid(); hdr.copy.setValid(); }
        hdr.r.odd = (bit<100>)(hdr.ip6.src ^ meta.m ^ hdr.ip6.dst);
        hash(hdr.r.csum, HashAlgorithm.csum16, 16w0,
             { hdr.ip6.src, hdr.ip6.dst, hdr.ip6.len, 24w0, hdr.ip6.nh }, 32w65536);
        hash(hdr.r.crc, HashAlgorithm.crc32, 32w0, { hdr.ip6.flow, hdr.ip6.src, hdr.r.odd, 4w3 }, 64w4294967296);
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.r.isValid(), { hdr.ip6.src, hdr.r.nexthop, hdr.r.odd, 4w0 },
                        hdr.r.ck, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ip6); pkt.emit(hdr.copy); pkt.emit(hdr.r); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
