// Calling conventions: copy-in/copy-out with aliased arguments, exit inside a called action,
// short-circuit and ?: with side-effecting functions, compound assignment evaluating its target once.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> mode; bit<8> a; bit<8> b; bit<8> i; }
header w_t { bit<8> x; }
struct headers { h_t h; w_t[4] w; }
struct metadata { bit<8> c; }

bit<8> bump(inout bit<8> v) {
    v = v + 1;
    return v;
}

bool flag_and_bump(inout bit<8> v) {
    v = v + 1;
    return true;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.w[0]); pkt.extract(hdr.w[1]); pkt.extract(hdr.w[2]); pkt.extract(hdr.w[3]);
        transition accept;
    }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action copy_twice(inout bit<8> v) {
        hdr.h.a = v;
        meta.c = 24;
    }
    action stop(inout bit<8> v) {
        v = 3;
        exit;
        hdr.h.b = 0xee;
    }
    action outer() {
        stop(hdr.h.a);
        hdr.h.b = 0xdd;
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.mode == 0) {
            meta.c = 12;
            copy_twice(meta.c);
            copy_twice(meta.c);
        } else if (hdr.h.mode == 1) {
            outer();
        } else if (hdr.h.mode == 2) {
            bool r = false && flag_and_bump(hdr.h.a);
            r = true || flag_and_bump(hdr.h.a);
            hdr.h.b = hdr.h.i == 0 ? bump(hdr.h.i) : 8w9;
        } else {
            hdr.w[bump(hdr.h.i) & 3].x |= 0x80;
        }
    }
}

control Egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), NoVerify(), Ingress(), Egress(), NoCompute(), Deparse()) main;
