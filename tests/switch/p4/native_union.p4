// Header unions and a stack of unions for the native engine, compared against the Python engine:
// extracting members (two members of one union may both be valid), setValid invalidating the
// other members, setInvalid, union and union-stack copies, header copies into a member,
// isValid of a union, union members as table keys and deparsing unions member by member.
#include <core.p4>
#include <v1model.p4>

header kind_t { bit<8> kind; bit<8> op; }
header a_t { bit<8> data; }
header b_t { bit<16> data; }
header c_t { bit<4> hi; bit<12> lo; }
header st_t { bit<8> valid; bit<8> pad; }
header_union u_t { a_t a; b_t b; c_t c; }
struct headers { kind_t kind; u_t u; u_t u2; u_t[2] us; u_t[2] us2; st_t st; }
struct metadata { bit<8> seen; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.kind);
        transition select(hdr.kind.kind) {
            0: one_a;
            1: one_b;
            2: both;
            3: stack;
            4: short_c;
            default: accept;
        }
    }
    state one_a { pkt.extract(hdr.u.a); transition accept; }
    state one_b { pkt.extract(hdr.u.b); transition accept; }
    state both { pkt.extract(hdr.u.a); pkt.extract(hdr.u.b); transition accept; }
    state stack { pkt.extract(hdr.us[0].a); pkt.extract(hdr.us[1].b); transition accept; }
    state short_c {
        pkt.extract(hdr.u.c);
        transition select(hdr.u.c.hi) {
            1: one_a;
            default: accept;
        }
    }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<16>>(8) seen;
    counter(4, CounterType.packets_and_bytes) by_member;

    action to_port(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table route {
        key = { hdr.u.b.data: exact; hdr.u.a.isValid(): exact; }
        actions = { to_port; drop; }
        default_action = to_port(1);
        const entries = {
            (16w0x0102, false) : to_port(2);
            (16w0x0103, true) : to_port(3);
            (16w0xdead, false) : drop();
        }
    }

    apply {
        if (hdr.u.a.isValid()) { by_member.count(0); }
        if (hdr.u.b.isValid()) { by_member.count(1); }
        if (hdr.u.isValid()) { by_member.count(2); }
        if ((hdr.kind.op & 1) != 0) {
            hdr.u.b.setValid();  // keeps its fields when already valid, zeroes them otherwise
            hdr.u.b.data = hdr.u.b.data + 1;
        }
        if ((hdr.kind.op & 2) != 0) {
            hdr.u2 = hdr.u;
        }
        if ((hdr.kind.op & 4) != 0) {
            hdr.u.a.setInvalid();
        }
        if ((hdr.kind.op & 8) != 0) {
            hdr.u.a = hdr.us[0].a;  // a header copy: the other members keep their validity
        }
        if ((hdr.kind.op & 16) != 0) {
            hdr.us2 = hdr.us;
        }
        if ((hdr.kind.op & 32) != 0) {
            hdr.us[1].a.setValid();
            hdr.us[1].a.data = 7;
        }
        if ((hdr.kind.op & 64) != 0) {
            hdr.u.c.setValid();
            hdr.u.c.lo = 12w0xabc;
        }
        route.apply();
        seen.write((bit<32>)hdr.kind.kind & 7, hdr.u.b.data);
        hdr.st.setValid();
        hdr.st.valid = (hdr.u.isValid() ? 8w1 : 0) | (hdr.u2.isValid() ? 8w2 : 0)
                     | (hdr.us[0].isValid() ? 8w4 : 0) | (hdr.us[1].isValid() ? 8w8 : 0)
                     | (hdr.us2[0].isValid() ? 8w16 : 0) | (hdr.us2[1].isValid() ? 8w32 : 0)
                     | (hdr.u.a.isValid() ? 8w64 : 0) | (hdr.u.b.isValid() ? 8w128 : 0);
    }
}

control Egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.kind);
        pkt.emit(hdr.u);
        pkt.emit(hdr.u2);
        pkt.emit(hdr.us);
        pkt.emit(hdr.us2);
        pkt.emit(hdr.st);
    }
}

V1Switch(P(), NoVerify(), Ingress(), Egress(), NoCompute(), Deparse()) main;
