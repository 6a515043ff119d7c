// Tuple-typed local variables (declared, initialized, assigned, indexed, compared) and a varbit
// local variable (p4c's BMv2 back end keeps it in a $varbit32 metadata header, copied by assign_VL).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<8> len; }
header opt_t { varbit<32> v; }
struct headers { h_t h; opt_t x; opt_t y; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.x, (bit<32>)hdr.h.len * 8);
        pkt.extract(hdr.y, (bit<32>)hdr.h.len * 8);
        transition accept;
    }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    tuple<bit<8>, bit<8>> pair;

    action copy_through_tuples() {
        tuple<bit<8>, bit<16>> t = { hdr.h.a, hdr.h.c };
        tuple<bit<8>, bit<16>> u;
        u = t;
        hdr.h.b = u[0];
        hdr.h.c = u[1] + 1;
    }
    action swap_options() {
        varbit<32> tmp = hdr.x.v;
        hdr.x.v = hdr.y.v;
        hdr.y.v = tmp;
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.a == 0xcc) {
            copy_through_tuples();
            exit;
        }
        pair = { hdr.h.b, hdr.h.a };
        if (pair == { 8w2, 8w1 }) {
            hdr.h.c = 0xeeee;
        }
        hdr.h.a = pair[0];
        hdr.h.b = pair[1];
        if (hdr.h.len != 0) {
            swap_options();
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.x); pkt.emit(hdr.y); } }

V1Switch(P(), NoVerify(), Ing(), Eg(), NoCompute(), Deparse()) main;
