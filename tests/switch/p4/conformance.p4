// Corner cases of simple_switch semantics: const LPM entries pick the longest prefix whatever their
// order; header equality compares validity and fields; a parser error keeps consumed bytes out of
// the payload.
#include <core.p4>
#include <v1model.p4>

header pair_t { bit<8> a; bit<8> b; }
header out_t { bit<8> route; bit<8> same; }
struct headers_t { out_t out; pair_t x; pair_t y; pair_t z; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.out);
        pkt.extract(hdr.x);
        pkt.extract(hdr.y);
        transition select(hdr.x.a) { 0xEE: more; default: accept; }
    }
    state more { pkt.extract(hdr.z); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action route(bit<8> r) { hdr.out.route = r; }
    table lpm {
        key = { hdr.x.b: lpm; }
        actions = { route; }
        const entries = {
            0x00 &&& 0x00: route(1);
            0x10 &&& 0xF0: route(2);
            0x12 &&& 0xFF: route(3);
        }
        default_action = route(0);
    }
    apply {
        sm.egress_spec = 1;
        lpm.apply();
        hdr.out.same = (hdr.x == hdr.y) ? 8w1 : 8w0;
        if (sm.parser_error != error.NoError) { hdr.out.same = 0xEE; }
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.out); pkt.emit(hdr.x); pkt.emit(hdr.y); pkt.emit(hdr.z); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
