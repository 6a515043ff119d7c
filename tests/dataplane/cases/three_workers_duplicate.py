from stf_render import W1, W2, W3, result, status, total, update

A = [735312, 287229, 23354, -482793, -403011, -962649, -890786, -1013916]
B = [-56228, 24791, 535125, 944690, -975485, -746252, 677261, 940886]
C = [707947, -499936, -819346, -422595, -180746, 658979, -102195, -855815]

LINES = [
    "# Three workers; a duplicate before completion gets a STATUS, multicast to all three, and is not",
    "# added twice.",
    "setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)",
    "mc_mgrp_create 258",
    "add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x20000000001 hdr.ipv4.src_addr:0xa000001 hdr.agg.job_id:2 hdr.agg.rank:0 admit()",
    "add result_rewrite sm.egress_rid:65 to_worker(mac:0x20000000001, ip:0xa000001, udp_port:0xbee0)",
    "mc_node_create 65 1",
    "mc_node_associate 258 0",
    "add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x20000000002 hdr.ipv4.src_addr:0xa000002 hdr.agg.job_id:2 hdr.agg.rank:1 admit()",
    "add result_rewrite sm.egress_rid:66 to_worker(mac:0x20000000002, ip:0xa000002, udp_port:0xbee0)",
    "mc_node_create 66 2",
    "mc_node_associate 258 1",
    "add admission sm.ingress_port:3 hdr.ethernet.src_addr:0x20000000003 hdr.ipv4.src_addr:0xa000003 hdr.agg.job_id:2 hdr.agg.rank:2 admit()",
    "add result_rewrite sm.egress_rid:67 to_worker(mac:0x20000000003, ip:0xa000003, udp_port:0xbee0)",
    "mc_node_create 67 3",
    "mc_node_associate 258 2",
    "add jobs hdr.agg.job_id:2 set_job(base:4, num_slots:4, num_workers:3, mgid:258, epoch:0x5eed0002, quorum:3, timeout:0, staleness:0)",
    update(W1, epoch=0x5EED0002, values=A, job=2, round_=1),
    update(W1, epoch=0x5EED0002, values=A, job=2, round_=1),
    status(W1, epoch=0x5EED0002, values=A, job=2, round_=1, count=1, bitmap=0b1),
    status(W2, epoch=0x5EED0002, values=A, job=2, round_=1, count=1, bitmap=0b1),
    status(W3, epoch=0x5EED0002, values=A, job=2, round_=1, count=1, bitmap=0b1),
    update(W2, epoch=0x5EED0002, values=B, rank=1, job=2, round_=1),
    update(W3, epoch=0x5EED0002, values=C, rank=2, job=2, round_=1),
    result(
        W1, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, round_=1, count=3, bitmap=0b111
    ),
    result(
        W2, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, round_=1, count=3, bitmap=0b111
    ),
    result(
        W3, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, round_=1, count=3, bitmap=0b111
    ),
    "check_counter job_duplicates(2) packets == 1",
]
