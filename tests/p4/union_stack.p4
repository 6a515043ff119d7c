// A stack of header unions reached with constant indices.
#include <core.p4>
#include <v1model.p4>

header byte_t { bit<8> data; }
header short_t { bit<16> data; }
header_union u_t { byte_t byte; short_t short; }
header kind_t { bit<8> kinds; }
struct headers { kind_t kind; u_t[2] u; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.kind);
        transition select(hdr.kind.kinds) {
            0: two_bytes;
            1: byte_short;
            default: accept;
        }
    }
    state two_bytes { pkt.extract(hdr.u[0].byte); pkt.extract(hdr.u[1].byte); transition accept; }
    state byte_short { pkt.extract(hdr.u[0].byte); pkt.extract(hdr.u[1].short); transition accept; }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }
control MainIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.u[1].short.isValid()) {
            hdr.u[1].short.data = 0xffff;
        }
        if (hdr.u[0].byte.isValid()) {
            hdr.u[0].byte.data = 0xaa;
        }
    }
}
control MainEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), NoVerify(), MainIngress(), MainEgress(), NoCompute(), Deparse()) main;
