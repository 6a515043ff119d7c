// A program naming one of each thing a BMv2 JSON can refer to, for the load checks of every
// reference and index (tests/switch/test_references.py mutates its JSON one reference at a time):
// action parameters, registers, counters and meters (indirect and direct), stacks of two sizes,
// unions of two shapes, varbit fields of two sizes, a value set, a checksum and a log message.
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> v; bit<8> more; }
header a_t { bit<8> x; }
header b_t { bit<16> y; }
header ip_t { bit<8> len; bit<8> ttl; bit<16> csum; }
header opt_t { bit<8> kind; varbit<32> data; }
header long_t { bit<8> kind; varbit<64> data; }
header_union ab_t { a_t a; b_t b; }
header_union aa_t { a_t first; a_t second; }
struct headers { eth_t eth; tag_t[3] tags; tag_t[2] pair; ab_t u; aa_t u2; ip_t ip; opt_t opt; long_t lng; }
struct metadata { bit<32> idx; bit<8> color; bit<8> key; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) tagged;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { tagged: tags; 0x0800: ip; default: accept; }
    }
    state tags { pkt.extract(hdr.tags.next); transition select(hdr.tags.last.more) { 1: tags; default: accept; } }
    state ip {
        pkt.extract(hdr.ip);
        pkt.extract(hdr.opt, (bit<32>) hdr.ip.len);
        pkt.extract(hdr.lng, 16);
        transition select(pkt.lookahead<bit<8>>()) { 1: union_a; default: accept; }
    }
    state union_a { pkt.extract(hdr.u.a); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(4) cells;
    counter(4, CounterType.packets) hits;
    meter(4, MeterType.packets) rate;
    direct_counter(CounterType.packets) per_entry;
    direct_meter<bit<8>>(MeterType.packets) per_key;
    action set(bit<9> port, bit<32> idx) { sm.egress_spec = port; meta.idx = idx; }
    action touch() {
        cells.read(meta.idx, 1);
        cells.write(2, meta.idx);
        hits.count(3);
        rate.execute_meter(0, meta.color);
        hdr.tags.push_front(1);
        hdr.tags[meta.key].v = 7;
        hdr.pair[0] = hdr.tags[1];
        hdr.lng.data = hdr.opt.data;
        hdr.u.a = hdr.u2.first;
        log_msg("idx {}", {meta.idx});
    }
    action metered() { per_key.read(meta.color); }
    table route {
        key = { hdr.eth.dst: exact; }
        actions = { set; touch; }
        default_action = set(1, 0);
        const entries = { 0x020000000001: set(2, 3); }
    }
    table keyed {
        key = { hdr.eth.src: exact; }
        actions = { metered; NoAction; }
        counters = per_entry;
        meters = per_key;
    }
    apply {
        route.apply();
        keyed.apply();
        if (hdr.u.a.isValid() && hdr.tags.size == 3) { hdr.ip.ttl = hdr.ip.ttl |-| 1; }
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) {
    apply { update_checksum(hdr.ip.isValid(), { hdr.ip.len, hdr.ip.ttl }, hdr.ip.csum, HashAlgorithm.csum16); }
}
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
