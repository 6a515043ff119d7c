from stf_render import W1, W2, W3, result, status, total, update

A = [-945991, 357291, 529981, 125676, 512568, -252105, 876659, -520545]
B = [-550929, -208162, -733786, -628547, -135557, -319549, -295390, 895217]
C = [631162, 544727, 765736, 431918, -616168, 1044947, 250194, 118291]

LINES = [
    "# Rounds never mix. Round 6 over the collecting round 4 is refused with a STATUS naming round 4;",
    "# once round 4 is done round 6 starts fresh, and round 4 from a late rank is refused, told round 6.",
    "setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)",
    "mc_mgrp_create 259",
    "add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x20000000001 hdr.ipv4.src_addr:0xa000001 hdr.agg.job_id:3 hdr.agg.rank:0 admit()",
    "add result_rewrite sm.egress_rid:97 to_worker(mac:0x20000000001, ip:0xa000001, udp_port:0xbee0)",
    "mc_node_create 97 1",
    "mc_node_associate 259 0",
    "add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x20000000002 hdr.ipv4.src_addr:0xa000002 hdr.agg.job_id:3 hdr.agg.rank:1 admit()",
    "add result_rewrite sm.egress_rid:98 to_worker(mac:0x20000000002, ip:0xa000002, udp_port:0xbee0)",
    "mc_node_create 98 2",
    "mc_node_associate 259 1",
    "add admission sm.ingress_port:3 hdr.ethernet.src_addr:0x20000000003 hdr.ipv4.src_addr:0xa000003 hdr.agg.job_id:3 hdr.agg.rank:2 admit()",
    "add result_rewrite sm.egress_rid:99 to_worker(mac:0x20000000003, ip:0xa000003, udp_port:0xbee0)",
    "mc_node_create 99 3",
    "mc_node_associate 259 2",
    "add jobs hdr.agg.job_id:3 set_job(base:0, num_slots:1, num_workers:3, mgid:259, epoch:0x5eed0003, quorum:2, timeout:0, staleness:0)",
    update(W1, epoch=0x5EED0003, values=A, job=3, round_=4),
    update(W2, epoch=0x5EED0003, values=B, rank=1, job=3, round_=6),
    status(W2, epoch=0x5EED0003, values=B, rank=1, job=3, round_=4, count=1, bitmap=0b1),
    update(W2, epoch=0x5EED0003, values=B, rank=1, job=3, round_=4),
    result(W1, epoch=0x5EED0003, values=total(A, B), rank=1, job=3, round_=4, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0003, values=total(A, B), rank=1, job=3, round_=4, count=2, bitmap=0b11),
    result(W3, epoch=0x5EED0003, values=total(A, B), rank=1, job=3, round_=4, count=2, bitmap=0b11),
    update(W2, epoch=0x5EED0003, values=C, rank=1, job=3, round_=6),
    update(W3, epoch=0x5EED0003, values=C, rank=2, job=3, round_=4),
    status(W3, epoch=0x5EED0003, values=C, rank=2, job=3, round_=6, count=1, bitmap=0b10),
    "check_counter job_stale(3) packets == 2",
    "check_counter job_accepted(3) packets == 3",
    "# ina: register slot_round[0] == 6",
    "# ina: register slot_bitmap[0] == 2",
    "# ina: register slot_done[0] == 0",
]
