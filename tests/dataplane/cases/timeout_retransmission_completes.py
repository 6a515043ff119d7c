from stf_render import W1, W2, W3, result, update

A = [334982, 139970, -187534, 742345, -290604, 304836, -842164, -186318]
A2 = [1, 2, 3, 4, 5, 6, 7, 8]

LINES = [
    "# Timeout 1 us, quorum 3: the first contribution (age 0) is stored; a retransmission from the",
    "# same rank after the deadline completes the slot with what it holds. The RESULT carries the",
    "# stored sum, never the retransmission's own values (here not a copy: A2 differs from A).",
    "setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)",
    "mc_mgrp_create 261",
    "add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x20000000001 hdr.ipv4.src_addr:0xa000001 hdr.agg.job_id:5 hdr.agg.rank:0 admit()",
    "add result_rewrite sm.egress_rid:161 to_worker(mac:0x20000000001, ip:0xa000001, udp_port:0xbee0)",
    "mc_node_create 161 1",
    "mc_node_associate 261 0",
    "add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x20000000002 hdr.ipv4.src_addr:0xa000002 hdr.agg.job_id:5 hdr.agg.rank:1 admit()",
    "add result_rewrite sm.egress_rid:162 to_worker(mac:0x20000000002, ip:0xa000002, udp_port:0xbee0)",
    "mc_node_create 162 2",
    "mc_node_associate 261 1",
    "add admission sm.ingress_port:3 hdr.ethernet.src_addr:0x20000000003 hdr.ipv4.src_addr:0xa000003 hdr.agg.job_id:5 hdr.agg.rank:2 admit()",
    "add result_rewrite sm.egress_rid:163 to_worker(mac:0x20000000003, ip:0xa000003, udp_port:0xbee0)",
    "mc_node_create 163 3",
    "mc_node_associate 261 2",
    "add jobs hdr.agg.job_id:5 set_job(base:0, num_slots:1, num_workers:3, mgid:261, epoch:0x5eed0005, quorum:3, timeout:1, staleness:0)",
    update(W1, epoch=0x5EED0005, values=A, job=5),
    update(W1, epoch=0x5EED0005, values=A2, job=5),
    result(W1, epoch=0x5EED0005, values=A, job=5, count=1, bitmap=0b1),
    result(W2, epoch=0x5EED0005, values=A, job=5, count=1, bitmap=0b1),
    result(W3, epoch=0x5EED0005, values=A, job=5, count=1, bitmap=0b1),
    "check_counter job_accepted(5) packets == 1",
    "check_counter job_timeouts(5) packets == 1",
    "check_counter job_completed(5) packets == 1",
    "check_counter job_duplicates(5) packets == 0",
    "# ina: register slot_done[0] == 1",
]
