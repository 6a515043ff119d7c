// Table results inside expressions, functions in conditions, compound assignment, switch on a
// value, actions with arguments bound in the actions list, header equality.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers { h_t h; h_t g; }
struct metadata { bit<8> x; }

bit<8> bump(inout bit<8> v) {
    v = v + 1;
    return v;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.g); transition accept; }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action copy_to(out bit<8> target, bit<8> value) { target = value; }
    table t1 {
        key = { hdr.h.a: exact; }
        actions = { copy_to(hdr.h.b); NoAction; }
        default_action = NoAction();
    }
    table t2 {
        key = { hdr.h.b: exact; }
        actions = { NoAction; }
    }
    apply {
        bool both = t1.apply().hit && !t2.apply().miss;
        if (both) {
            hdr.h.c = 1;
        }
        if (bump(meta.x) == 1) {
            hdr.h.c = hdr.h.c + 2;
        }
        hdr.h.c += 16w0x10;
        hdr.h.a |+|= 8w250;
        switch (hdr.h.b) {
            1: { sm.egress_spec = 1; }
            2:
            3: { sm.egress_spec = 2; }
            default: { sm.egress_spec = 3; }
        }
        if (hdr.h == hdr.g) {
            hdr.g.setInvalid();
        }
    }
}

control Egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), NoVerify(), Ingress(), Egress(), NoCompute(), Deparse()) main;
