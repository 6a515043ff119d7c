// The traffic manager's re-entries for the native engine's differential tests: I2E and E2E clones
// (sessions with truncation, field lists, a session from the packet, unconfigured sessions),
// resubmit and recirculate with preserved metadata (and the loop guard of all three), digests with
// a signed field, and (op 17) a division by zero in a clone's or the original's egress. Each
// packet's `op` picks the case; `trace` records the instance types it passed.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> arg; bit<8> rounds; bit<8> mark; bit<16> kept; bit<32> trace; }
header extra_t { bit<16> v; }
struct headers_t { h_t h; extra_t extra; }
struct learn_t { bit<8> arg; bit<9> port; int<8> s; bit<16> kept; }
struct metadata_t {
    @field_list(1) bit<8> m1;
    @field_list(1, 2) bit<16> m2;
    int<8> s;
}

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.mark) { 0xEE: extra; default: accept; }
    }
    state extra { pkt.extract(hdr.extra); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.trace = (hdr.h.trace << 4) | (bit<32>)sm.instance_type;
        sm.egress_spec = 2;
        meta.s = -3;
        if (hdr.h.op == 1) {
            clone(CloneType.I2E, 1);
        } else if (hdr.h.op == 2) {
            meta.m1 = hdr.h.arg;
            meta.m2 = 0x1234;
            clone_preserving_field_list(CloneType.I2E, 2, 1);
        } else if (hdr.h.op == 3) {
            if (sm.instance_type == 0) {
                meta.m1 = 0x77;
                meta.m2 = (bit<16>)hdr.h.arg + 0x100;
                resubmit_preserving_field_list(2);
            } else {
                hdr.h.kept = meta.m2;
                hdr.h.mark = meta.m1;
                sm.egress_spec = 3;
            }
        } else if (hdr.h.op == 5) {
            meta.m2 = 0xBEEF;
            digest<learn_t>(1, { hdr.h.arg, sm.ingress_port, meta.s, meta.m2 });
        } else if (hdr.h.op == 7) {
            hdr.h.rounds = hdr.h.rounds + 1;
            resubmit_preserving_field_list(0);
        } else if (hdr.h.op == 9) {
            clone(CloneType.I2E, 9);
        } else if (hdr.h.op == 10) {
            clone(CloneType.I2E, (bit<32>)hdr.h.arg);
        } else if (hdr.h.op == 11) {
            clone(CloneType.I2E, 2);
            sm.mcast_grp = 1;
        } else if (hdr.h.op == 12) {
            clone(CloneType.I2E, 1);
            mark_to_drop(sm);
        } else if (hdr.h.op == 18) {
            sm.mcast_grp = 1;
            mark_to_drop(sm);  // v1model: the mark clears mcast_grp too, so nothing goes out
        } else if (hdr.h.op == 19) {
            mark_to_drop(sm);
            sm.mcast_grp = 1;  // a group set after the mark is replicated
        } else if (hdr.h.op == 17) {
            clone(CloneType.I2E, 1);
            digest<learn_t>(1, { hdr.h.arg, sm.ingress_port, meta.s, meta.m2 });
        } else if (hdr.h.op == 13) {
            digest<learn_t>(1, { hdr.h.arg, sm.ingress_port, meta.s, meta.m2 });
            meta.m2 = 0x55;
            resubmit_preserving_field_list(2);
            if (sm.instance_type == 6) { hdr.h.op = 0; }
        }
        if (hdr.h.op == 4 && sm.instance_type == 4) { hdr.h.kept = (bit<16>)meta.m1; }
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.trace = (hdr.h.trace << 4) | (bit<32>)sm.instance_type;
        if (sm.instance_type == 1 || sm.instance_type == 2) {
            hdr.h.mark = meta.m1;
            hdr.h.kept = meta.m2;
            hdr.h.rounds = (bit<8>)sm.egress_port;
        }
        if (hdr.h.op == 4 && hdr.h.rounds < hdr.h.arg) {
            hdr.h.rounds = hdr.h.rounds + 1;
            meta.m1 = hdr.h.rounds + 0x40;
            recirculate_preserving_field_list(1);
        } else if (hdr.h.op == 6 && sm.instance_type == 0) {
            meta.m2 = 0x4242;
            hdr.h.mark = 0x66;
            clone_preserving_field_list(CloneType.E2E, 3, 2);
        } else if (hdr.h.op == 8) {
            recirculate_preserving_field_list(0);
        } else if (hdr.h.op == 14 && sm.instance_type != 2) {
            clone(CloneType.E2E, 3);
        } else if (hdr.h.op == 15 && sm.instance_type == 0) {
            clone(CloneType.E2E, 3);
            mark_to_drop(sm);
        } else if (hdr.h.op == 17) {
            hdr.h.rounds = hdr.h.rounds / (hdr.h.arg - (bit<8>)sm.instance_type);
        } else if (hdr.h.op == 16) {
            hdr.h.arg = hdr.h.arg + 1;
            clone(CloneType.E2E, 3);
        }
    }
}
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.extra); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
