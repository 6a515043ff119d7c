// assign_VL copies a varbit's length with its value, as BMv2 does: y takes x's bytes and x's length,
// longer or shorter than y's own.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> l1; bit<8> l2; }
header opt_t { varbit<32> v; }
struct headers { h_t h; opt_t x; opt_t y; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.x, (bit<32>)hdr.h.l1 * 8);
        pkt.extract(hdr.y, (bit<32>)hdr.h.l2 * 8);
        transition accept;
    }
}
control NoVerify(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; hdr.y.v = hdr.x.v; }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.x); pkt.emit(hdr.y); } }
V1Switch(P(), NoVerify(), Ing(), Eg(), NoCompute(), Deparse()) main;
