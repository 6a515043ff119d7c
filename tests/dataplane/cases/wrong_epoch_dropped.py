from stf_render import SWITCH_CONFIG, W1, W2, update

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [10, 20, 30, 40, 50, 60, 70, 80]

LINES = [
    "# An UPDATE whose epoch is not its job's (a packet of an earlier run, or a forgery that passed",
    "# admission) is dropped and counted; it touches no slot. The right epoch is then accepted.",
    SWITCH_CONFIG,
    "mc_mgrp_create 257",
    "add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x20000000001 hdr.ipv4.src_addr:0xa000001 hdr.agg.job_id:1 hdr.agg.rank:0 admit()",
    "add result_rewrite sm.egress_rid:33 to_worker(mac:0x20000000001, ip:0xa000001, udp_port:0xbee0)",
    "mc_node_create 33 1",
    "add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x20000000002 hdr.ipv4.src_addr:0xa000002 hdr.agg.job_id:1 hdr.agg.rank:1 admit()",
    "add result_rewrite sm.egress_rid:34 to_worker(mac:0x20000000002, ip:0xa000002, udp_port:0xbee0)",
    "mc_node_create 34 2",
    "mc_node_associate 257 0",
    "mc_node_associate 257 1",
    "add jobs hdr.agg.job_id:1 set_job(base:0, num_slots:4, num_workers:2, mgid:257, epoch:0x5eed0001, quorum:2, timeout:0, staleness:0)",
    update(W1, epoch=0x5EED0002, values=A, job=1),
    update(W2, epoch=0x0, values=B, rank=1, job=1),
    "check_counter job_wrong_epoch(1) packets == 2",
    "check_counter job_accepted(1) packets == 0",
    "# ina: register slot_bitmap[0] == 0",
    "# ina: register slot_epoch[0] == 0",
    update(W1, epoch=0x5EED0001, values=A, job=1),
    "check_counter job_accepted(1) packets == 1",
    "# ina: register slot_bitmap[0] == 1",
    "# ina: register slot_epoch[0] == 0x5eed0001",
]
