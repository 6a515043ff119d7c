// The P4Runtime rules of tests/switch/test_p4runtime_rules.py: a table with ternary and range keys,
// a direct counter and scoped actions (@tableonly, @defaultonly), a keyless table, a register and
// a counter.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> k; bit<16> r; bit<8> x; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(4) cells;
    counter(4, CounterType.packets_and_bytes) seen;
    direct_counter(CounterType.packets_and_bytes) hits;
    action set_x(bit<8> v) { hdr.h.x = v; }
    action pick(bit<8> v) { hdr.h.x = v + 1; }
    action miss() { hdr.h.x = 0xFF; }
    table ranged {
        key = { hdr.h.k: ternary; hdr.h.r: range; }
        actions = { set_x; @tableonly pick; @defaultonly miss; }
        default_action = miss();
        counters = hits;
    }
    table keyless {
        actions = { set_x; }
        default_action = set_x(7);
    }
    apply {
        sm.egress_spec = 1;
        ranged.apply();
        keyless.apply();
        cells.write(0, (bit<32>)hdr.h.x);
        seen.count(0);
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
