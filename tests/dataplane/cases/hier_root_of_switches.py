from stf_render import Host, from_parent, result, total, update

L1 = Host(1, "02:cc:00:00:00:01", "10.0.2.1")  # a leaf switch holding 2 workers
L2 = Host(2, "02:cc:00:00:00:02", "10.0.2.2")  # a leaf switch holding 3 workers
X = [1, 2, 3, 4, 5, 6, 7, 8]
Y = [-10, 20, -30, 40, -50, 60, -70, 80]
E = 0x5EED0001

LINES = [
    "# The root of a hierarchical job whose children are two leaf switches (admit_switch: an",
    "# UPDATE's count is its weight, at most the workers below it): the job completes when the",
    "# partial sums hold all 5 workers, and the RESULT goes to both leaves; a leaf that lost it",
    "# resends its partial sum and gets the RESULT alone.",
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
    "# a partial sum of no worker, or of more than the leaf holds, is refused",
    update(L2, epoch=E, values=Y, rank=1, job=1, count=0),
    update(L2, epoch=E, values=Y, rank=1, job=1, count=4),
    "check_counter port_refused(2) packets == 2",
    update(L1, epoch=E, values=X, job=1, count=2, exponent=5),
    "# ina: register slot_count[0] == 2",
    update(L2, epoch=E, values=Y, rank=1, job=1, count=3, exponent=2),
    result(L1, epoch=E, values=total(X, Y), rank=1, job=1, exponent=5, count=5, bitmap=0b11),
    result(L2, epoch=E, values=total(X, Y), rank=1, job=1, exponent=5, count=5, bitmap=0b11),
    "check_counter job_completed(1) packets == 1",
    "check_counter job_results_sent(1) packets == 2",
    "check_counter job_partials_sent(1) packets == 0",
    "# ina: register slot_count[0] == 5",
    "# the RESULT to leaf 0 was lost: its resent partial sum is answered, never added",
    update(L1, epoch=E, values=X, job=1, count=2, exponent=5),
    result(L1, epoch=E, values=total(X, Y), job=1, exponent=5, count=5, bitmap=0b11),
    "check_counter job_retrans_answered(1) packets == 1",
    "# a job without a parent takes no RESULT: not from a child, not from port 0 and address",
    "# 0.0.0.0 (what a missing job_parent entry leaves)",
    from_parent(L1, epoch=E, values=X, job=1, index=1, count=5, bitmap=0b11),
    from_parent(Host(0, "02:00:00:00:00:00", "0.0.0.0"), epoch=E, values=X, job=1, index=1),
    "check_counter job_parent_refused(1) packets == 2",
    "check_counter job_accepted(1) packets == 2",
    "# ina: register slot_count[0] == 5",
]
