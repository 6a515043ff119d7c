// A sub-parser instance applied mid-state, direct type invocation, lookahead of a header type
// used in an extract length, and extract(_) to skip a header.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header len_t { bit<4> words; bit<4> kind; }
header opts_t { varbit<120> data; }
header inner_t { bit<16> value; }
struct headers { ethernet_t ethernet; len_t len; opts_t opts; inner_t inner; }
struct metadata { bit<8> seen; }

parser InnerParser(packet_in pkt, inout headers hdr, inout metadata meta) {
    state start {
        pkt.extract(hdr.inner);
        meta.seen = meta.seen + 1;
        transition select(hdr.inner.value) {
            0xdead: reject;
            default: accept;
        }
    }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    InnerParser() inner_parser;
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x1234: parse_len;
            0x5678: skip_len;
            default: accept;
        }
    }
    state parse_len {
        pkt.extract(hdr.opts, (bit<32>) pkt.lookahead<len_t>().words * 8);
        inner_parser.apply(pkt, hdr, meta);
        meta.seen = meta.seen + 16;
        transition accept;
    }
    state skip_len {
        pkt.extract<len_t>(_);
        InnerParser.apply(pkt, hdr, meta);
        transition accept;
    }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }
control MainIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = (bit<9>) meta.seen; }
}
control MainEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), NoVerify(), MainIngress(), MainEgress(), NoCompute(), Deparse()) main;
