// STF entry syntax: ternary keys on a header stack element (written tag$0.v in STF), overlapping
// entries decided by priority, and one action bound to different fields in two tables.
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<16> v; bit<8> out1; bit<8> out2; }
struct headers { tag_t[2] tag; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.tag.next); pkt.extract(hdr.tag.next); transition accept; }
}
control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action put(out bit<8> target, bit<8> value) { target = value; sm.egress_spec = 1; }
    table first {
        key = { hdr.tag[0].v : ternary; }
        actions = { put(hdr.tag[0].out1); NoAction; }
        default_action = NoAction();
    }
    table second {
        key = { hdr.tag[1].v : ternary; }
        actions = { put(hdr.tag[1].out2); NoAction; }
        default_action = NoAction();
    }
    apply { first.apply(); second.apply(); }
}

control Egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.tag); } }

V1Switch(P(), NoVerify(), Ingress(), Egress(), NoCompute(), Deparse()) main;
