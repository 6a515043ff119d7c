from stf_render import SWITCH_CONFIG, W1, W2, W3, result, total, update

A = [334982, 139970, -187534, 742345, -290604, 304836, -842164, -186318]
B = [837298, 1041081, -142719, 292692, -106812, -170056, -1019253, 124438]
C = [-608944, -755825, -334545, -255898, 893081, 660298, 144770, -71311]

LINES = [
    "# A slot's deadline counts from its use's first contribution, stored then: a start left in the",
    "# register (2**47 us, from another use) is replaced, so the second contribution, well within",
    "# the 71-minute timeout, is stored and the slot waits for the third, which completes it by",
    "# quorum: no timeout counted.",
    SWITCH_CONFIG,
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
    "add jobs hdr.agg.job_id:5 set_job(base:0, num_slots:1, num_workers:3, mgid:261, epoch:0x5eed0005, quorum:3, timeout:0xffffffff, staleness:0)",
    "register_write InaIngress.slot_started 0 140737488355328",
    update(W1, epoch=0x5EED0005, values=A, job=5),
    update(W2, epoch=0x5EED0005, values=B, rank=1, job=5),
    "# ina: register slot_started[0] == 0",
    "# ina: register slot_count[0] == 2",
    update(W3, epoch=0x5EED0005, values=C, rank=2, job=5),
    result(W1, epoch=0x5EED0005, values=total(A, B, C), rank=2, job=5, count=3, bitmap=0b111),
    result(W2, epoch=0x5EED0005, values=total(A, B, C), rank=2, job=5, count=3, bitmap=0b111),
    result(W3, epoch=0x5EED0005, values=total(A, B, C), rank=2, job=5, count=3, bitmap=0b111),
    "check_counter job_accepted(5) packets == 3",
    "check_counter job_timeouts(5) packets == 0",
    "check_counter job_completed(5) packets == 1",
]
