from stf_render import W1, W2, W3, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860]
C = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]

LINES = [
    "# Three workers on ports 1-3, slot 1 of a job based at 4 (register index 5); any arrival order.",
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
    update(W1, epoch=0x5EED0002, values=A, job=2, index=1),
    update(W3, epoch=0x5EED0002, values=B, rank=2, job=2, index=1),
    update(W2, epoch=0x5EED0002, values=C, rank=1, job=2, index=1),
    result(
        W1, epoch=0x5EED0002, values=total(A, B, C), rank=1, job=2, index=1, count=3, bitmap=0b111
    ),
    result(
        W2, epoch=0x5EED0002, values=total(A, B, C), rank=1, job=2, index=1, count=3, bitmap=0b111
    ),
    result(
        W3, epoch=0x5EED0002, values=total(A, B, C), rank=1, job=2, index=1, count=3, bitmap=0b111
    ),
    "check_counter job_accepted(2) packets == 3",
    "check_counter job_completed(2) packets == 1",
    "check_counter job_results_sent(2) packets == 3",
    "# ina: register slot_count[5] == 3",
    "# ina: register slot_bitmap[5] == 7",
]
