// Macro-generated register read-add-write per element, the shape of an aggregation switch.
#include <core.p4>
#include <v1model.p4>

#ifndef ELEMS
#define ELEMS 8
#endif
#define POOL_SIZE 16

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header values_t {
    bit<16> slot;
    bit<32> v0; bit<32> v1; bit<32> v2; bit<32> v3;
    bit<32> v4; bit<32> v5; bit<32> v6; bit<32> v7;
}
struct headers { ethernet_t ethernet; values_t values; }
struct metadata { bit<32> index; bit<8> count; bit<32> rand; }

#define REG(i) register<bit<32>>(POOL_SIZE) acc_##i;
#define ADD(i) { bit<32> old_##i; acc_##i.read(old_##i, meta.index); \
                 old_##i = old_##i + hdr.values.v##i; acc_##i.write(meta.index, old_##i); \
                 hdr.values.v##i = old_##i; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: parse_values;
            0x8800 &&& 0xff00: accept;
            default: reject;
        }
    }
    state parse_values { pkt.extract(hdr.values); transition accept; }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control MainIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    REG(0) REG(1) REG(2) REG(3) REG(4) REG(5) REG(6) REG(7)
    register<bit<8>>(POOL_SIZE) counts;
    counter(POOL_SIZE, CounterType.packets) seen;

    action set_port(bit<9> port) { sm.egress_spec = port; }
    action multicast(bit<16> group) { sm.mcast_grp = group; }
    action drop() { mark_to_drop(sm); }

    table forward {
        key = { hdr.ethernet.dst: exact; sm.ingress_port: ternary; }
        actions = { set_port; multicast; drop; }
        default_action = drop();
        const entries = {
            (48w0xffffffffffff, _): multicast(1);
            (48w0x000000000001, 9w2 &&& 9w0x1ff): set_port(2);
        }
    }

    apply {
        if (hdr.values.isValid()) {
            meta.index = (bit<32>) hdr.values.slot;
#if ELEMS >= 8
            ADD(0) ADD(1) ADD(2) ADD(3) ADD(4) ADD(5) ADD(6) ADD(7)
#endif
            counts.read(meta.count, meta.index);
            meta.count = meta.count + 1;
            counts.write(meta.index, meta.count);
            seen.count(meta.index);
            random(meta.rand, 0, 32w0xfffffffe);
            if (meta.count == 2) {
                sm.egress_spec = sm.ingress_port;
            } else {
                drop();
            }
        } else if (!forward.apply().hit) {
            drop();
        }
    }
}

control MainEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_rid != 0) {
            hdr.ethernet.src = 48w0x020000000001;
        }
    }
}

control NoCompute(inout headers hdr, inout metadata meta) { apply { } }

control Deparse(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(P(), NoVerify(), MainIngress(), MainEgress(), NoCompute(), Deparse()) main;
