// Arithmetic corners for the native engine's differential tests: signed fields, shifts by
// amounts from the packet (up to 255), division and modulo by packet values (0 drops the
// packet), wide constants, saturating arithmetic and casts. Every result goes out in `r`.
#include <core.p4>
#include <v1model.p4>

header in_t { bit<64> a; bit<64> b; int<16> s; int<16> t; bit<8> n; bit<8> d; int<8> c; bit<8> op; }
header res_t {
    bit<64> shl; bit<64> shr; int<16> sshr; bit<64> div; bit<64> mod; bit<64> mul;
    bit<64> sum; int<16> ssum; int<16> sprod; bit<8> sat; int<8> ssat; bit<8> cmp;
    bit<32> narrow; int<32> widened; bit<64> wide; bit<8> usat_sub;
}
struct headers_t { in_t i; res_t r; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.r.setValid();
        hdr.r.shl = hdr.i.a << hdr.i.n;
        hdr.r.shr = hdr.i.a >> hdr.i.n;
        hdr.r.sshr = hdr.i.s >> hdr.i.n;
        hdr.r.mul = hdr.i.a * hdr.i.b;
        hdr.r.sum = hdr.i.a + hdr.i.b + 64w0xFFFFFFFFFFFFFFFF;
        hdr.r.ssum = hdr.i.s + hdr.i.t;
        hdr.r.sprod = hdr.i.s * hdr.i.t;
        hdr.r.sat = hdr.i.n |+| hdr.i.d;
        hdr.r.usat_sub = hdr.i.n |-| hdr.i.d;
        hdr.r.ssat = hdr.i.c |+| (int<8>)hdr.i.d;
        hdr.r.cmp = 0;
        if (hdr.i.s < hdr.i.t) { hdr.r.cmp = hdr.r.cmp | 1; }
        if (hdr.i.a > hdr.i.b) { hdr.r.cmp = hdr.r.cmp | 2; }
        if (hdr.i.c < 0) { hdr.r.cmp = hdr.r.cmp | 4; }
        if (hdr.i.s == -1) { hdr.r.cmp = hdr.r.cmp | 8; }
        if (hdr.i.a + hdr.i.b < hdr.i.a) { hdr.r.cmp = hdr.r.cmp | 16; }
        hdr.r.narrow = (bit<32>)hdr.i.a;
        hdr.r.widened = (int<32>)hdr.i.s;
        hdr.r.wide = (bit<64>)hdr.i.c ^ 64w0x8000000000000001;
        if (hdr.i.op == 1) {
            hdr.r.div = hdr.i.a / (bit<64>)hdr.i.d;
            hdr.r.mod = hdr.i.a % (bit<64>)hdr.i.d;
        }
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.r); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
