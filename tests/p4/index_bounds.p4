// A register, a counter and a meter indexed from the packet, at and past their last cell. As
// simple_switch does, an index past an array skips the access: the read leaves its field as it
// was, the write and the count change nothing, the meter leaves its colour field as it was; the
// packet goes on (tests/p4/index_bounds.stf, on ina's engines and on simple_switch).
#include <core.p4>
#include <v1model.p4>

header probe_t {
    bit<32> index;  // the cell asked for
    bit<32> value;  // written to the register after the read
    bit<32> read;   // the register's cell before the write
    bit<8>  color;  // the meter's colour (an unconfigured cell: GREEN, 0)
}
struct headers_t { probe_t probe; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.probe); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(4) cells;
    counter(4, CounterType.packets) hits;
    meter(4, MeterType.packets) rate;
    apply {
        cells.read(hdr.probe.read, hdr.probe.index);
        cells.write(hdr.probe.index, hdr.probe.value);
        hits.count(hdr.probe.index);
        rate.execute_meter(hdr.probe.index, hdr.probe.color);
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.probe); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
