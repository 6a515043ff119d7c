from stf_render import W1, W2, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]

LINES = [
    "# Two workers, one slot: the sum is multicast to both, each copy addressed to its worker.",
    "setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)",
    "mc_mgrp_create 257",
    "add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x20000000001 hdr.ipv4.src_addr:0xa000001 hdr.agg.job_id:1 hdr.agg.rank:0 admit()",
    "add result_rewrite sm.egress_rid:33 to_worker(mac:0x20000000001, ip:0xa000001, udp_port:0xbee0)",
    "mc_node_create 33 1",
    "mc_node_associate 257 0",
    "add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x20000000002 hdr.ipv4.src_addr:0xa000002 hdr.agg.job_id:1 hdr.agg.rank:1 admit()",
    "add result_rewrite sm.egress_rid:34 to_worker(mac:0x20000000002, ip:0xa000002, udp_port:0xbee0)",
    "mc_node_create 34 2",
    "mc_node_associate 257 1",
    "add jobs hdr.agg.job_id:1 set_job(base:0, num_slots:4, num_workers:2, mgid:257, epoch:0x5eed0001, quorum:2, timeout:0, staleness:0)",
    update(W1, epoch=0x5EED0001, values=A, job=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1),
    result(W1, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    "check_counter job_accepted(1) packets == 2",
    "check_counter job_completed(1) packets == 1",
    "check_counter job_results_sent(1) packets == 2",
    "# ina: register slot_count[0] == 2",
    "# ina: register slot_bitmap[0] == 3",
]
