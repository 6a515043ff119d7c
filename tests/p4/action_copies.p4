// One action specialised per table (its out parameter bound to another field in each table's
// actions list), a global action specialised in two tables, an action shared by two tables, the
// same local name in two controls and in two instances of a nested control, and NoAction: BMv2
// JSON names every copy as p4c does (the name the user wrote), so `table_add tbl3 setbyte ...`
// finds each table's own copy. action_copies.stf adds entries by those names.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<8> g; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

action gset(out bit<8> x, bit<8> v) { x = v; }

control Sub(inout headers hdr, inout bit<8> target) {
    action setbyte(out bit<8> x, bit<8> v) { x = v; }
    table sub_tbl {
        key = { hdr.h.a : exact; }
        actions = { setbyte(target); NoAction; }
    }
    apply { sub_tbl.apply(); }
}

control MyIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action setbyte(out bit<8> x, bit<8> v) { x = v; }
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table tbl1 {
        key = { hdr.h.a : exact; }
        actions = { setbyte(hdr.h.b); fwd; NoAction; }
    }
    table tbl2 {
        key = { hdr.h.a : exact; }
        actions = { setbyte(hdr.h.c); gset(hdr.h.f); fwd; }
        default_action = fwd(1);
    }
    table tbl3 {
        key = { hdr.h.a : exact; }
        actions = { setbyte(hdr.h.d); gset(hdr.h.g); NoAction; }
    }
    Sub() s1;
    Sub() s2;
    apply {
        tbl1.apply();
        tbl2.apply();
        switch (tbl3.apply().action_run) {
            setbyte: { hdr.h.e = hdr.h.d + 1; }
            default: { }
        }
        s1.apply(hdr, hdr.h.f);
        s2.apply(hdr, hdr.h.g);
    }
}

control MyEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action setbyte(out bit<8> x, bit<8> v) { x = v; }
    table etbl {
        key = { hdr.h.a : exact; }
        actions = { setbyte(hdr.h.a); NoAction; }
    }
    apply { etbl.apply(); }
}

control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), NoVerify(), MyIngress(), MyEgress(), NoCompute(), Deparse()) main;
