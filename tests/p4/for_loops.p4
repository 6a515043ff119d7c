// for loops (P4-16 1.2.4), unrolled at compile time: three-clause and for-in (range, list, header
// stack), in a function, an action and an apply block; break and continue decided at compile time
// and at run time; nested loops; a loop variable declared outside the loop keeps its last value.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> pop; bit<8> low; bit<8> idx; bit<8> sum; bit<8> lim; bit<8> dups;
             bit<8> listsum; }
header item_t { bit<8> v; }
struct headers { h_t h; item_t[4] items; }
struct metadata { }

bit<8> popcount(in bit<8> x) {
    bit<8> n = 0;
    for (bit<8> i = 0; i < 8; i = i + 1) {
        n = n + ((x >> i) & 1);
    }
    return n;
}

bit<8> lowest_set(in bit<8> x) {
    for (bit<8> i in 0 .. 7) {
        if (((x >> i) & 1) == 1) {
            return i;
        }
    }
    return 0xff;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        transition accept;
    }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action find() {
        hdr.h.idx = 0xff;
        for (bit<8> i = 0; i < 4; i = i + 1) {
            if (hdr.items[i].v == hdr.h.a) {
                hdr.h.idx = i;
                break;
            }
        }
    }
    apply {
        sm.egress_spec = 1;
        hdr.h.pop = popcount(hdr.h.a);
        hdr.h.low = lowest_set(hdr.h.a);
        find();
        for (item_t it in hdr.items) {
            hdr.h.sum = hdr.h.sum + it.v;
        }
        bit<8> k;
        for (k = 0; k < 10; k = k + 1) {
            if (k == hdr.h.b) {
                break;
            }
        }
        hdr.h.lim = k;
        for (bit<8> i = 0; i < 4; i = i + 1) {
            for (bit<8> j = i + 1; j < 4; j = j + 1) {
                if (hdr.items[i].v != hdr.items[j].v) {
                    continue;
                }
                hdr.h.dups = hdr.h.dups + 1;
            }
        }
        for (bit<8> x in { hdr.h.a, hdr.h.b }) {  // the list is evaluated once, before the loop
            hdr.h.listsum = hdr.h.listsum + x;
            hdr.h.b = hdr.h.b + 1;
        }
        for (bit<8> w in { 1, 2, 5 }) {
            hdr.h.listsum = hdr.h.listsum + w;
        }
        for (bit<8> i = 0, bit<8> j = 3; i < j; i = i + 1, j = j - 1) {
            item_t tmp = hdr.items[i];
            hdr.items[i] = hdr.items[j];
            hdr.items[j] = tmp;
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.items); } }

V1Switch(P(), NoVerify(), Ing(), Eg(), NoCompute(), Deparse()) main;
