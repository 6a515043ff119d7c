// Controller packet metadata: @controller_header packet_in / packet_out headers and a CPU port.
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 64

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }

@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> _pad; }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { packet_out_t packet_out; packet_in_t packet_in; ethernet_t ethernet; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out { pkt.extract(hdr.packet_out); transition parse_ethernet; }
    state parse_ethernet { pkt.extract(hdr.ethernet); transition accept; }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }
control MainIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in._pad = 0;
            sm.egress_spec = CPU_PORT;
        }
    }
}
control MainEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.packet_in); pkt.emit(hdr.ethernet); }
}

V1Switch(P(), NoVerify(), MainIngress(), MainEgress(), NoCompute(), Deparse()) main;
