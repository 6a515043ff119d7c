// switch on action_run, exit, return, nested control instances, functions, actions calling
// actions, if inside actions, @atomic blocks, slices on the left, ++, saturating arithmetic.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<32> d; }
struct headers { h_t h; }
struct metadata { bit<8> sat; bit<16> joined; }

bit<8> max8(in bit<8> x, in bit<8> y) {
    if (x > y) {
        return x;
    }
    return y;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Stamp(inout h_t h, in bit<8> value) {
    register<bit<8>>(1) last;
    action stamp() { h.b = value; last.write(0, value); }
    table stamper { actions = { stamp; } default_action = stamp(); }
    apply {
        if (h.a == 0) {
            return;
        }
        stamper.apply();
    }
}

control MainIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Stamp() stamp_in;

    action set_port(bit<9> port) { sm.egress_spec = port; }
    action to_port_one() { set_port(1); }
    action bump() {
        if (hdr.h.a == 7) {
            hdr.h.a = 8;
        } else {
            hdr.h.b = 9;
        }
        hdr.h.c[7:0] = hdr.h.a;
        hdr.h.d[31:24] = 0xab;
    }
    table choose {
        key = { hdr.h.a: exact; }
        actions = { set_port; to_port_one; bump; NoAction; }
        default_action = NoAction();
    }
    apply {
        switch (choose.apply().action_run) {
            set_port: { hdr.h.c = 1; }
            to_port_one:
            bump: { hdr.h.c = 2; }
            default: { hdr.h.c = 3; }
        }
        if (hdr.h.b == 0xff) {
            mark_to_drop(sm);
            exit;
        }
        @atomic {
            meta.sat = hdr.h.a |+| hdr.h.b;
            hdr.h.a = hdr.h.a |-| 8w200;
        }
        meta.joined = hdr.h.a ++ hdr.h.b;
        hdr.h.b = max8(hdr.h.a, hdr.h.b);
        stamp_in.apply(hdr.h, 8w42);
    }
}

control MainEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), NoVerify(), MainIngress(), MainEgress(), NoCompute(), Deparse()) main;
