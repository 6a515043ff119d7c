// hash, direct counter and direct meter, indexed meter, clone/resubmit/recirculate with field
// lists, digest, truncate, log_msg, assert/assume.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t ethernet; }
struct learn_t { bit<48> src; bit<9> port; }
struct metadata {
    @field_list(1) bit<16> flow;
    @field_list(1, 2) bit<8> color;
    bit<32> hashed;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.ethernet); transition accept; }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) hits;
    direct_meter<bit<8>>(MeterType.bytes) rate;
    meter(32, MeterType.packets) port_meter;

    action forward(bit<9> port) {
        sm.egress_spec = port;
        hits.count();
        rate.read(meta.color);
    }
    table mac {
        key = { hdr.ethernet.dst: exact; }
        actions = { forward; @defaultonly NoAction; }
        counters = hits;
        meters = rate;
        default_action = NoAction();
    }
    apply {
        hash(meta.hashed, HashAlgorithm.crc32, 32w0, { hdr.ethernet.src, hdr.ethernet.dst }, 32w65536);
        port_meter.execute_meter((bit<32>) sm.ingress_port, meta.color);
        mac.apply();
        if (hdr.ethernet.etherType == 0x0001) {
            clone(CloneType.I2E, 5);
        } else if (hdr.ethernet.etherType == 0x0002) {
            clone_preserving_field_list(CloneType.I2E, 6, 1);
        } else if (hdr.ethernet.etherType == 0x0003) {
            resubmit_preserving_field_list(2);
        } else if (hdr.ethernet.etherType == 0x0004) {
            digest<learn_t>(1, { hdr.ethernet.src, sm.ingress_port });
        }
        log_msg("ingress port {} color {}", { sm.ingress_port, meta.color });
        assert(sm.ingress_port != 511);
        assume(meta.color <= 2);
    }
}

control Egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) {
            truncate(32);
            recirculate_preserving_field_list(1);
        }
    }
}
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.ethernet); } }

V1Switch(P(), NoVerify(), Ingress(), Egress(), NoCompute(), Deparse()) main;
