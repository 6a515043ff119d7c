from stf_render import W1, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]

LINES = [
    "# A pool index at or beyond the job's num_slots is dropped and counted.",
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
    "# relative index 4 of a 4-slot job would be absolute slot 4, which belongs to the next job",
    update(W1, epoch=0x5EED0001, values=A, job=1, index=4),
    update(W1, epoch=0x5EED0001, values=A, job=1, index=32767, round_=1),
    "check_counter job_out_of_range(1) packets == 2",
    "# ina: register slot_bitmap[4] == 0",
    "check_counter job_accepted(1) packets == 0",
]
