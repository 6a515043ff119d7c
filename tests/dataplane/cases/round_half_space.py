from stf_render import W1, W2, result, status, total, update

A = [417, -3, 88, 1 << 20, -(1 << 19), 5, 0, -1]
B = [-17, 3, 12, 1 << 20, 1 << 19, -5, 7, 1]
C = [9, 8, 7, 6, 5, 4, 3, 2]

LINES = [
    "# Rounds compare in serial arithmetic over 2**32: a round exactly 2**31 past the done round 4",
    "# is an earlier one, refused with a STATUS naming round 4; 2**31 - 2 past it is a later one and",
    "# starts a new use of the slot.",
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
    "add jobs hdr.agg.job_id:1 set_job(base:0, num_slots:1, num_workers:2, mgid:257, epoch:0x5eed0001, quorum:2, timeout:0, staleness:0)",
    update(W1, epoch=0x5EED0001, values=A, job=1, round_=4),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1, round_=4),
    result(W1, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, round_=4, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, round_=4, count=2, bitmap=0b11),
    update(W1, epoch=0x5EED0001, values=C, job=1, round_=4 + 0x80000000),
    status(W1, epoch=0x5EED0001, values=C, job=1, round_=4, count=2, bitmap=0b11),
    update(W1, epoch=0x5EED0001, values=C, job=1, round_=4 + 0x7FFFFFFE),
    "check_counter job_stale(1) packets == 1",
    "check_counter job_accepted(1) packets == 3",
    "check_counter job_completed(1) packets == 1",
    "# ina: register slot_round[0] == 0x80000002",
    "# ina: register slot_count[0] == 1",
    "# ina: register slot_bitmap[0] == 1",
    "# ina: register slot_done[0] == 0",
]
