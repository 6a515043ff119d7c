// MAC learning by digest: every frame sends (source MAC, ingress port) to the controller.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { ethernet_t ethernet; }
struct learn_t { bit<48> src; bit<9> port; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        digest<learn_t>(1, { hdr.ethernet.src, sm.ingress_port });
        sm.egress_spec = 2;
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.ethernet); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
