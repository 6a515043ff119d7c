// Plain and serializable enums, custom errors with verify, parser_error in ingress, casts.
#include <core.p4>
#include <v1model.p4>

error { BadVersion }
enum Color { Red, Green, Blue }
enum bit<8> Kind { Data = 1, Control = 2, Other = 0xff }

header h_t { Kind kind; bit<8> version; bit<16> value; int<8> delta; }
struct headers { h_t h; }
struct metadata { Color color; bit<1> flag; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        verify(hdr.h.version == 4, error.BadVersion);
        transition select(hdr.h.kind) {
            Kind.Data: accept;
            Kind.Control: accept;
            default: reject;
        }
    }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control MainIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.BadVersion) {
            hdr.h.value = 16w0xbad;
            sm.egress_spec = 2;
        } else if (sm.parser_error != error.NoError) {
            mark_to_drop(sm);
        }
        meta.color = Color.Green;
        if (hdr.h.kind == Kind.Control) {
            meta.color = Color.Blue;
        }
        if (meta.color == Color.Blue) {
            hdr.h.value = (bit<16>) (bit<8>) hdr.h.kind + 16w0x100;
        }
        hdr.h.delta = hdr.h.delta - 8s3;
        meta.flag = (bit<1>) (hdr.h.value > 10);
        hdr.h.version = (bit<8>) ((int<8>) hdr.h.version);
    }
}

control MainEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), NoVerify(), MainIngress(), MainEgress(), NoCompute(), Deparse()) main;
