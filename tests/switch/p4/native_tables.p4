// Tables, externs and hashes for the native engine's differential tests: ternary, LPM and
// range keys with priorities, a direct counter, a register indexed from the packet (past its
// last cell nothing is read or written, as on simple_switch), an indirect counter, and every
// deterministic hash algorithm over packet fields (the results go out in the packet).
#include <core.p4>
#include <v1model.p4>

header in_t { bit<16> k; bit<32> addr; bit<8> idx; bit<8> pad; bit<32> x; bit<16> y; }
header res_t {
    bit<8> route; bit<8> tern; bit<32> reg; bit<16> crc16; bit<32> crc32; bit<16> csum;
    bit<16> xor; bit<16> ccitt; bit<48> ident; bit<16> based;
}
struct headers_t { in_t i; res_t r; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) acc;
    counter(4, CounterType.packets_and_bytes) seen;
    direct_counter(CounterType.packets_and_bytes) hits;
    action set_route(bit<8> r) { hdr.r.route = r; hits.count(); }
    action set_tern(bit<8> t) { hdr.r.tern = t; }
    table lpm {
        key = { hdr.i.addr: lpm; }
        actions = { set_route; }
        default_action = set_route(0xFF);
        counters = hits;
    }
    table mixed {
        key = { hdr.i.k: ternary; hdr.i.y: range; }
        actions = { set_tern; }
        default_action = set_tern(0xFF);
    }
    apply {
        sm.egress_spec = 3;
        hdr.r.setValid();
        lpm.apply();
        mixed.apply();
        bit<32> old;
        acc.read(old, (bit<32>)hdr.i.idx);
        acc.write((bit<32>)hdr.i.idx, old + hdr.i.x);
        hdr.r.reg = old;
        seen.count((bit<32>)(hdr.i.idx & 3));
        hash(hdr.r.crc16, HashAlgorithm.crc16, 16w0, { hdr.i.x, hdr.i.y }, 32w65536);
        hash(hdr.r.crc32, HashAlgorithm.crc32, 32w0, { hdr.i.x, hdr.i.y, hdr.i.k }, 64w4294967296);
        hash(hdr.r.csum, HashAlgorithm.csum16, 16w0, { hdr.i.x, hdr.i.idx }, 32w65536);
        hash(hdr.r.xor, HashAlgorithm.xor16, 16w0, { hdr.i.x, hdr.i.y, hdr.i.pad }, 32w65536);
        hash(hdr.r.ccitt, HashAlgorithm.crc16_custom, 16w0, { hdr.i.addr }, 32w65536);
        hash(hdr.r.ident, HashAlgorithm.identity, 48w0, { hdr.i.x, hdr.i.y }, 64w0);
        hash(hdr.r.based, HashAlgorithm.crc16, 16w100, { hdr.i.addr }, 32w7);
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
