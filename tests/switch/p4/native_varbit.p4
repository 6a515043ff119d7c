// Varbit fields for the native engine, compared against the Python engine: extract with a length
// (whole bytes, zero, not whole bytes, above the maximum, past the packet's end), a varbit field
// between fixed fields, a stack of varbit headers, copies (with their length), setValid (length
// 0), header equality and emitting each header at its current length.
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> bits; bit<8> op; }
header opts_t { bit<8> tag; varbit<56> data; }
header mid_t { bit<4> a; varbit<32> v; bit<4> b; }
header res_t { bit<8> err; bit<8> eq; }
struct headers { len_t len; opts_t o1; opts_t o2; mid_t mid; opts_t[2] st; res_t res; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        transition select(hdr.len.op & 3) {
            0: one;
            1: stack;
            2: middle;
            default: accept;
        }
    }
    state one { pkt.extract(hdr.o1, (bit<32>) hdr.len.bits); transition accept; }
    state stack {
        pkt.extract(hdr.st.next, (bit<32>) hdr.len.bits);
        pkt.extract(hdr.st.next, 16);
        transition select(hdr.len.op & 4) {
            4: third;
            default: accept;
        }
    }
    state third { pkt.extract(hdr.st.next, 8); transition accept; }
    state middle { pkt.extract(hdr.mid, (bit<32>) hdr.len.bits); transition accept; }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        if (sm.parser_error == error.ParserInvalidArgument) {
            hdr.res.err = 1;
        } else if (sm.parser_error == error.HeaderTooShort) {
            hdr.res.err = 2;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.res.err = 3;
        } else if (sm.parser_error == error.StackOutOfBounds) {
            hdr.res.err = 4;
        }
        if ((hdr.len.op & 8) != 0) {
            hdr.o2 = hdr.o1;
        }
        if ((hdr.len.op & 16) != 0) {
            hdr.o2.setValid();  // an invalid header becomes valid with length 0
            hdr.o2.tag = 0x55;
        }
        if ((hdr.len.op & 32) != 0) {
            hdr.o1.setInvalid();
        }
        if ((hdr.len.op & 64) != 0) {
            hdr.st[1] = hdr.o1;
        }
        hdr.res.eq = hdr.o1 == hdr.o2 ? 8w1 : 8w0;
        if (hdr.mid.isValid() && hdr.mid.b == 4w0xf) {
            mark_to_drop(sm);
        }
    }
}

control Egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control NoCompute(inout headers hdr, inout metadata meta) { apply { } }
control Deparse(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), NoVerify(), Ingress(), Egress(), NoCompute(), Deparse()) main;
