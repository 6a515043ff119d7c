from stf_render import W1, W2, W3, status, update

A = [334982, 139970, -187534, 742345, -290604, 304836, -842164, -186318]

LINES = [
    "# A deadline that has not passed (0xffffffff us): a retransmission into the waiting slot gets a STATUS",
    "# (to every worker of the job).",
    "setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)",
    "mc_mgrp_create 262",
    "add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x20000000001 hdr.ipv4.src_addr:0xa000001 hdr.agg.job_id:6 hdr.agg.rank:0 admit()",
    "add result_rewrite sm.egress_rid:193 to_worker(mac:0x20000000001, ip:0xa000001, udp_port:0xbee0)",
    "mc_node_create 193 1",
    "mc_node_associate 262 0",
    "add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x20000000002 hdr.ipv4.src_addr:0xa000002 hdr.agg.job_id:6 hdr.agg.rank:1 admit()",
    "add result_rewrite sm.egress_rid:194 to_worker(mac:0x20000000002, ip:0xa000002, udp_port:0xbee0)",
    "mc_node_create 194 2",
    "mc_node_associate 262 1",
    "add admission sm.ingress_port:3 hdr.ethernet.src_addr:0x20000000003 hdr.ipv4.src_addr:0xa000003 hdr.agg.job_id:6 hdr.agg.rank:2 admit()",
    "add result_rewrite sm.egress_rid:195 to_worker(mac:0x20000000003, ip:0xa000003, udp_port:0xbee0)",
    "mc_node_create 195 3",
    "mc_node_associate 262 2",
    "add jobs hdr.agg.job_id:6 set_job(base:0, num_slots:1, num_workers:3, mgid:262, epoch:0x5eed0006, quorum:3, timeout:4294967295, staleness:0)",
    update(W1, epoch=0x5EED0006, values=A, job=6),
    update(W1, epoch=0x5EED0006, values=A, job=6),
    status(W1, epoch=0x5EED0006, values=A, job=6, count=1, bitmap=0b1),
    status(W2, epoch=0x5EED0006, values=A, job=6, count=1, bitmap=0b1),
    status(W3, epoch=0x5EED0006, values=A, job=6, count=1, bitmap=0b1),
    "check_counter job_timeouts(6) packets == 0",
    "check_counter job_duplicates(6) packets == 1",
    "check_counter job_completed(6) packets == 0",
]
