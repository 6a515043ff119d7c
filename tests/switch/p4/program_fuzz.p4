// The part of test_program_fuzz.py's generated programs that stays: headers of narrow, wide and
// signed fields, a stack, registers, counters and meters of several sizes, the parser and the
// deparser. The test adds the generated actions, the table that picks one per packet by
// `p.sel`, and the conditional each action leads to.
#include <core.p4>
#include <v1model.p4>

header probe_t {
    bit<16> sel; bit<8> flags; bit<1> b1; bit<7> b7; bit<13> b13; bit<3> b3;
    bit<32> a; bit<32> b; bit<48> m48; bit<64> w64; bit<96> w96; int<16> s16; int<8> s8; bit<8> out;
}
header tag_t { bit<8> v; bit<8> more; }
struct headers { probe_t p; tag_t[3] tags; }
struct metadata { bit<32> m32; bit<8> m8; bit<8> color; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.p);
        transition select(hdr.p.flags & 1) { 1: tags; default: accept; }
    }
    state tags {
        pkt.extract(hdr.tags.next);
        transition select(hdr.tags.last.more) { 1: tags; default: accept; }
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<8>>(1) r8;
    register<bit<32>>(4) r32;
    register<bit<64>>(7) r64;
    register<bit<1>>(16) r1;
    counter(3, CounterType.packets_and_bytes) c3;
    counter(8, CounterType.packets) c8;
    meter(2, MeterType.packets) m2;
    meter(5, MeterType.bytes) m5;
    action keep() {  // names every array, so the compiler keeps them; the test replaces it
        r8.write(0, 0); r32.write(0, 0); r64.write(0, 0); r1.write(0, 0);
        c3.count(0); c8.count(0);
        m2.execute_meter(0, meta.color); m5.execute_meter(0, meta.color);
    }
    table pick {
        key = { hdr.p.sel: exact; }
        actions = { keep; NoAction; }
        default_action = NoAction();
        size = 4096;
    }
    apply { sm.egress_spec = 1; pick.apply(); }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.p); pkt.emit(hdr.tags); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
