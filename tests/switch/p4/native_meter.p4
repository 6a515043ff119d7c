// Meters for the native engine's differential tests: an indirect packet meter indexed from the
// packet (unconfigured cells are GREEN; an index past the array leaves the colour as it was, 0)
// and a direct byte meter on a table (run on hits only). The colors are written into the packet.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> idx; bit<8> key; bit<8> color; bit<8> dcolor; }
struct headers_t { h_t h; }
struct metadata_t { bit<8> color; bit<8> dcolor; }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    meter(8, MeterType.packets) per_idx;
    direct_meter<bit<8>>(MeterType.bytes) per_key;
    action hit() { per_key.read(meta.dcolor); }
    table keyed {
        key = { hdr.h.key: exact; }
        actions = { hit; NoAction; }
        meters = per_key;
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        meta.dcolor = 0xFF;
        per_idx.execute_meter((bit<32>)hdr.h.idx, meta.color);
        keyed.apply();
        hdr.h.color = meta.color;
        hdr.h.dcolor = meta.dcolor;
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
