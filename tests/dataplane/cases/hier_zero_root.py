from stf_render import Host, result, update

from ina.p4src.protocol import FLAG_ZERO

L1 = Host(1, "02:cc:00:00:00:01", "10.0.2.1")  # a leaf switch holding 2 workers
L2 = Host(2, "02:cc:00:00:00:02", "10.0.2.2")  # a leaf switch holding 3 workers
Y = [-10, 20, -30, 40, -50, 60, -70, 80]
E = 0x5EED0001
Z = {"flags": FLAG_ZERO, "values": []}  # a ZERO packet: the header alone

LINES = [
    "# The root of a hierarchical job (as hier_root_of_switches): a child switch's ZERO partial sum",
    "# weighs its count and adds nothing; two of them complete the use with a ZERO RESULT.",
    "setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)",
    "mc_mgrp_create 257",
    "add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x2cc00000001 hdr.ipv4.src_addr:0xa000201 hdr.agg.job_id:1 hdr.agg.rank:0 admit_switch(workers:2)",
    "add result_rewrite sm.egress_rid:33 to_worker(mac:0x2cc00000001, ip:0xa000201, udp_port:0xbee0)",
    "mc_node_create 33 1",
    "mc_node_associate 257 0",
    "add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x2cc00000002 hdr.ipv4.src_addr:0xa000202 hdr.agg.job_id:1 hdr.agg.rank:1 admit_switch(workers:3)",
    "add result_rewrite sm.egress_rid:34 to_worker(mac:0x2cc00000002, ip:0xa000202, udp_port:0xbee0)",
    "mc_node_create 34 2",
    "mc_node_associate 257 1",
    "add jobs hdr.agg.job_id:1 set_job(base:0, num_slots:4, num_workers:2, mgid:257, epoch:0x5eed0001, quorum:5, timeout:0, staleness:0)",
    update(L1, epoch=E, job=1, count=2, exponent=5, **Z),
    "# ina: register slot_count[0] == 2",
    update(L2, epoch=E, rank=1, job=1, count=3, exponent=2, **Z),
    result(L1, epoch=E, rank=1, job=1, exponent=5, count=5, bitmap=0b11, **Z),
    result(L2, epoch=E, rank=1, job=1, exponent=5, count=5, bitmap=0b11, **Z),
    "# slot 1: a ZERO partial sum and one in full",
    update(L1, epoch=E, job=1, index=1, count=2, **Z),
    update(L2, epoch=E, values=Y, rank=1, job=1, index=1, count=3),
    result(L1, epoch=E, values=Y, rank=1, job=1, index=1, count=5, bitmap=0b11),
    result(L2, epoch=E, values=Y, rank=1, job=1, index=1, count=5, bitmap=0b11),
    "check_counter job_completed(1) packets == 2",
]
