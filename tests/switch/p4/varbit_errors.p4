// The parser error of a varbit extract: a length that is not whole bytes, one above the field's
// maximum, and a packet too short for a valid length. Ingress writes the error into hdr.len.err.
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> bits; bit<8> err; }
header opts_t { varbit<16> data; }
struct headers { len_t len; opts_t opts; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.opts, (bit<32>) hdr.len.bits);
        transition accept;
    }
}
control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.ParserInvalidArgument) {
            hdr.len.err = 1;
        } else if (sm.parser_error == error.HeaderTooShort) {
            hdr.len.err = 2;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.len.err = 3;
        }
    }
}

control Egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.len); } }

V1Switch(P(), NoVerify(), Ingress(), Egress(), NoCompute(), Deparse()) main;
