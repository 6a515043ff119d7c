// varbit with extract(hdr, len), lookahead in select and assignment, advance, value_set,
// multi-key select with ranges and don't-cares.
#include <core.p4>
#include <v1model.p4>

header fixed_t { bit<8> kind; bit<8> len; }
header options_t { varbit<320> data; }
header tail_t { bit<16> value; }
struct headers { fixed_t fixed; options_t options; tail_t tail; }
struct metadata { bit<8> peek; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) special_kinds;
    state start {
        meta.peek = pkt.lookahead<bit<8>>();
        transition select(pkt.lookahead<bit<8>>()) {
            0xff: skip;
            default: parse_fixed;
        }
    }
    state skip {
        pkt.advance(16);
        transition parse_fixed;
    }
    state parse_fixed {
        pkt.extract(hdr.fixed);
        transition select(hdr.fixed.kind) {
            special_kinds: accept;
            default: check_len;
        }
    }
    state check_len {
        transition select(hdr.fixed.kind, hdr.fixed.len) {
            (1, 0): parse_tail;
            (2 .. 3, _): parse_options;
            (_, 8w0 &&& 8w0x80): parse_options;
            default: accept;
        }
    }
    state parse_options {
        pkt.extract(hdr.options, (bit<32>) hdr.fixed.len * 8);
        transition parse_tail;
    }
    state parse_tail { pkt.extract(hdr.tail); transition accept; }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }
control MainIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control MainEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), NoVerify(), MainIngress(), MainEgress(), NoCompute(), Deparse()) main;
