// Header stacks: extract into next, select on last, constant and run-time indices, push/pop,
// size/lastIndex; a header union with isValid.
#include <core.p4>
#include <v1model.p4>

header label_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header v4_t { bit<8> a; }
header v6_t { bit<16> b; }
header_union ip_u { v4_t v4; v6_t v6; }
struct headers { ethernet_t ethernet; label_t[4] labels; ip_u ip; }
struct metadata { bit<32> depth; bit<2> index; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8847: parse_label;
            0x0800: parse_v4;
            0x86dd: parse_v6;
            default: accept;
        }
    }
    state parse_label {
        pkt.extract(hdr.labels.next);
        transition select(hdr.labels.last.bos) {
            0: parse_label;
            1: accept;
        }
    }
    state parse_v4 { pkt.extract(hdr.ip.v4); transition accept; }
    state parse_v6 { pkt.extract(hdr.ip.v6); transition accept; }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control MainIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action pop_one() { hdr.labels.pop_front(1); }
    action push_one() {
        hdr.labels.push_front(1);
        hdr.labels[0].setValid();
        hdr.labels[0].label = 20w100;
        hdr.labels[0].ttl = 64;
    }
    action decrement(bit<2> i) { hdr.labels[i].ttl = hdr.labels[i].ttl - 1; }
    apply {
        sm.egress_spec = 1;
        if (hdr.labels[0].isValid() && hdr.labels[0].label == 1) {
            pop_one();
        } else if (hdr.labels[0].isValid()) {
            decrement(0);
        } else {
            push_one();
        }
        meta.depth = hdr.labels.size;
        if (hdr.ip.isValid()) {
            sm.egress_spec = 2;
        }
    }
}

control MainEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.labels); pkt.emit(hdr.ip); }
}

V1Switch(P(), NoVerify(), MainIngress(), MainEgress(), NoCompute(), Deparse()) main;
