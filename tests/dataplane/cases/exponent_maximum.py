from stf_render import W1, W2, W3, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]
C = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860]
D = [3121971, 337944, -2493597, 966318, 1865223, -1594692, 1236849, 2223066]
E = [3098214, -361701, 2469840, 990075, -1841466, 1618449, 1213092, -2246823]

LINES = [
    "# The RESULT carries the maximum exponent of the slot's contributions.",
    'setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)',
    'mc_mgrp_create 257',
    'add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x20000000001 hdr.ipv4.src_addr:0xa000001 hdr.agg.job_id:1 hdr.agg.rank:0 admit()',
    'add result_rewrite sm.egress_rid:33 to_worker(mac:0x20000000001, ip:0xa000001, udp_port:0xbee0)',
    'mc_node_create 33 1',
    'mc_node_associate 257 0',
    'add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x20000000002 hdr.ipv4.src_addr:0xa000002 hdr.agg.job_id:1 hdr.agg.rank:1 admit()',
    'add result_rewrite sm.egress_rid:34 to_worker(mac:0x20000000002, ip:0xa000002, udp_port:0xbee0)',
    'mc_node_create 34 2',
    'mc_node_associate 257 1',
    'add admission sm.ingress_port:3 hdr.ethernet.src_addr:0x20000000003 hdr.ipv4.src_addr:0xa000003 hdr.agg.job_id:1 hdr.agg.rank:2 admit()',
    'add result_rewrite sm.egress_rid:35 to_worker(mac:0x20000000003, ip:0xa000003, udp_port:0xbee0)',
    'mc_node_create 35 3',
    'mc_node_associate 257 2',
    'add jobs hdr.agg.job_id:1 set_job(base:0, num_slots:4, num_workers:3, mgid:257, epoch:0x5eed0001, quorum:3, timeout:0, staleness:0)',
    update(W1, epoch=0x5EED0001, values=A, job=1, index=3, exponent=3),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1, index=3, exponent=9),
    update(W3, epoch=0x5EED0001, values=C, rank=2, job=1, index=3, exponent=5),
    result(W1, epoch=0x5EED0001, values=total(A, B, C), rank=2, job=1, index=3, exponent=9, count=3, bitmap=0b111),
    result(W2, epoch=0x5EED0001, values=total(A, B, C), rank=2, job=1, index=3, exponent=9, count=3, bitmap=0b111),
    result(W3, epoch=0x5EED0001, values=total(A, B, C), rank=2, job=1, index=3, exponent=9, count=3, bitmap=0b111),
    '# ina: register slot_exponent[3] == 9',
    '# next round in set 0 after set 1: the maximum starts from the first contribution, not the old 9',
    update(W1, epoch=0x5EED0001, values=A, job=1, index=3, round_=1, exponent=1),
    update(W2, epoch=0x5EED0001, values=A, rank=1, job=1, index=3, round_=1, exponent=1),
    update(W3, epoch=0x5EED0001, values=A, rank=2, job=1, index=3, round_=1, exponent=2),
    result(W1, epoch=0x5EED0001, values=D, rank=2, job=1, index=3, round_=1, exponent=2, count=3, bitmap=0b111),
    result(W2, epoch=0x5EED0001, values=D, rank=2, job=1, index=3, round_=1, exponent=2, count=3, bitmap=0b111),
    result(W3, epoch=0x5EED0001, values=D, rank=2, job=1, index=3, round_=1, exponent=2, count=3, bitmap=0b111),
    update(W1, epoch=0x5EED0001, values=B, job=1, index=3, round_=2, exponent=4),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1, index=3, round_=2, exponent=2),
    update(W3, epoch=0x5EED0001, values=B, rank=2, job=1, index=3, round_=2),
    result(W1, epoch=0x5EED0001, values=E, rank=2, job=1, index=3, round_=2, exponent=4, count=3, bitmap=0b111),
    result(W2, epoch=0x5EED0001, values=E, rank=2, job=1, index=3, round_=2, exponent=4, count=3, bitmap=0b111),
    result(W3, epoch=0x5EED0001, values=E, rank=2, job=1, index=3, round_=2, exponent=4, count=3, bitmap=0b111),
]
