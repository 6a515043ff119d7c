// Parser and header corners for the native engine's differential tests: lookahead, a header
// stack filled by `next` extracts (StackOutOfBounds when full), verify, errors with the bytes
// already consumed, a two-field select with masks, header copies, add/remove, push/pop and a
// stack index taken from the packet (out of range drops the packet).
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kind; bit<8> val; }
header opt_t { bit<4> hi; bit<4> lo; bit<8> idx; }
header note_t { bit<16> v; }
struct headers_t { tag_t first; tag_t[3] tags; opt_t opt; note_t note; note_t copy; }
struct metadata_t { bit<8> peek; }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.first);
        meta.peek = pkt.lookahead<bit<8>>();
        transition select(hdr.first.kind, meta.peek) {
            (0x01, 0x01 &&& 0x0F): tags;
            (0x02, _): opt;
            (0x03, _): bad;
            (0x04, _): skip;
            default: accept;
        }
    }
    state tags {
        pkt.extract(hdr.tags.next);
        transition select(hdr.tags.last.kind) { 0x01: tags; default: opt; }
    }
    state opt {
        pkt.extract(hdr.opt);
        verify(hdr.opt.hi != 0xF, error.ParserInvalidArgument);
        transition select(hdr.opt.lo) { 0x1 &&& 0x1: note; default: accept; }
    }
    state note { pkt.extract(hdr.note); transition accept; }
    state bad { pkt.extract(hdr.note); verify(false, error.NoMatch); transition accept; }
    state skip { pkt.advance(24); pkt.extract(hdr.note); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (sm.parser_error == error.PacketTooShort) { hdr.first.val = 0xE1; }
        else if (sm.parser_error == error.StackOutOfBounds) { hdr.first.val = 0xE2; }
        else if (sm.parser_error == error.ParserInvalidArgument) { hdr.first.val = 0xE3; }
        else if (sm.parser_error == error.NoMatch) { hdr.first.val = 0xE4; }
        if (hdr.opt.isValid()) {
            if (hdr.opt.hi == 1) { hdr.copy = hdr.note; }
            if (hdr.opt.hi == 2) { hdr.note.setInvalid(); }
            if (hdr.opt.hi == 3) { hdr.copy.setValid(); hdr.copy.v = 0xABCD; }
            if (hdr.opt.hi == 4) { hdr.tags.push_front(1); hdr.tags[0].setValid(); hdr.tags[0].kind = 7; }
            if (hdr.opt.hi == 5) { hdr.tags.pop_front(1); }
            if (hdr.opt.hi == 6) { hdr.tags[hdr.opt.idx].val = hdr.tags[hdr.opt.idx].val + 1; }
            if (hdr.opt.hi == 7) { hdr.tags[hdr.opt.idx] = hdr.first; }
            if (hdr.opt.hi == 8) { hdr.first.val = (bit<8>)hdr.tags.lastIndex; }
        }
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.first); pkt.emit(hdr.tags); pkt.emit(hdr.opt); pkt.emit(hdr.note); pkt.emit(hdr.copy); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
