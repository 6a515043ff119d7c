// Parser value sets for the native engine's differential tests: two sets (the test adds a mask to
// the second's transition in the JSON), constants after a set, and a default branch. The program writes which state it reached.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> kind; bit<8> sub; bit<8> path; }
header tail_t { bit<8> v; }
struct headers_t { h_t h; tail_t t; }
struct metadata_t { bit<8> path; }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) kinds;
    value_set<bit<8>>(4) subs;
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) { kinds: one; default: two; }
    }
    state one { meta.path = 1; pkt.extract(hdr.t); transition accept; }
    state two {
        transition select(hdr.h.sub) { subs: three; 0xFF: four; default: accept; }
    }
    state three { meta.path = 3; transition accept; }
    state four { meta.path = 4; transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; hdr.h.path = meta.path; }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.t); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
