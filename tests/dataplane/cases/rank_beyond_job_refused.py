from stf_render import SWITCH_CONFIG, W1, W2, W3, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]
C = [5, 6, 7, 8, 9, 10, 11, 12]

LINES = [
    "# An admitted rank must still be below the job's worker count: rank 2 of a 2-worker job is",
    "# refused (an admission entry left from a larger incarnation), and never enters the sum.",
    SWITCH_CONFIG,
    "mc_mgrp_create 257",
    "add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x20000000001 hdr.ipv4.src_addr:0xa000001 hdr.agg.job_id:1 hdr.agg.rank:0 admit()",
    "add result_rewrite sm.egress_rid:33 to_worker(mac:0x20000000001, ip:0xa000001, udp_port:0xbee0)",
    "mc_node_create 33 1",
    "mc_node_associate 257 0",
    "add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x20000000002 hdr.ipv4.src_addr:0xa000002 hdr.agg.job_id:1 hdr.agg.rank:1 admit()",
    "add result_rewrite sm.egress_rid:34 to_worker(mac:0x20000000002, ip:0xa000002, udp_port:0xbee0)",
    "mc_node_create 34 2",
    "mc_node_associate 257 1",
    "add admission sm.ingress_port:3 hdr.ethernet.src_addr:0x20000000003 hdr.ipv4.src_addr:0xa000003 hdr.agg.job_id:1 hdr.agg.rank:2 admit()",
    "add jobs hdr.agg.job_id:1 set_job(base:0, num_slots:4, num_workers:2, mgid:257, epoch:0x5eed0001, quorum:2, timeout:0, staleness:0)",
    update(W3, epoch=0x5EED0001, values=C, rank=2, job=1),
    update(W1, epoch=0x5EED0001, values=A, job=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1),
    result(W1, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    "check_counter port_refused(3) packets == 1",
    "check_counter job_accepted(1) packets == 2",
    "# ina: register slot_bitmap[0] == 3",
]
