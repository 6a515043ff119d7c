from stf_render import W1, W2, W3, W4, result, total, update

A = [-381929, 589180, 929282, -326510, 1002523, -865191, -119104, -564178]
B = [-968752, 307933, -553996, 343765, -343838, -985868, 91572, -675637]
C = [-658347, -322359, -152521, -118163, -513868, 662186, -551246, 393198]
D = [-420344, 1029143, -767701, 76825, 818260, -24450, 575684, 192884]

LINES = [
    '# Quorum 3 of 4: ranks 3, 0, 2 complete slot 1; rank 1 is late: answered with the RESULT, never added.',
    'setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)',
    'mc_mgrp_create 258',
    'add admission sm.ingress_port:1 hdr.ethernet.src_addr:0x20000000001 hdr.ipv4.src_addr:0xa000001 hdr.agg.job_id:2 hdr.agg.rank:0 admit()',
    'add result_rewrite sm.egress_rid:65 to_worker(mac:0x20000000001, ip:0xa000001, udp_port:0xbee0)',
    'mc_node_create 65 1',
    'mc_node_associate 258 0',
    'add admission sm.ingress_port:2 hdr.ethernet.src_addr:0x20000000002 hdr.ipv4.src_addr:0xa000002 hdr.agg.job_id:2 hdr.agg.rank:1 admit()',
    'add result_rewrite sm.egress_rid:66 to_worker(mac:0x20000000002, ip:0xa000002, udp_port:0xbee0)',
    'mc_node_create 66 2',
    'mc_node_associate 258 1',
    'add admission sm.ingress_port:3 hdr.ethernet.src_addr:0x20000000003 hdr.ipv4.src_addr:0xa000003 hdr.agg.job_id:2 hdr.agg.rank:2 admit()',
    'add result_rewrite sm.egress_rid:67 to_worker(mac:0x20000000003, ip:0xa000003, udp_port:0xbee0)',
    'mc_node_create 67 3',
    'mc_node_associate 258 2',
    'add admission sm.ingress_port:4 hdr.ethernet.src_addr:0x20000000004 hdr.ipv4.src_addr:0xa000004 hdr.agg.job_id:2 hdr.agg.rank:3 admit()',
    'add result_rewrite sm.egress_rid:68 to_worker(mac:0x20000000004, ip:0xa000004, udp_port:0xbee0)',
    'mc_node_create 68 4',
    'mc_node_associate 258 3',
    'add jobs hdr.agg.job_id:2 set_job(base:0, num_slots:2, num_workers:4, mgid:258, epoch:0x5eed0002, quorum:3, timeout:0, staleness:0)',
    update(W4, epoch=0x5EED0002, values=A, rank=3, job=2, index=1, exponent=3),
    update(W1, epoch=0x5EED0002, values=B, job=2, index=1),
    update(W3, epoch=0x5EED0002, values=C, rank=2, job=2, index=1, exponent=2),
    result(W1, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, index=1, exponent=3, count=3, bitmap=0b1101),
    result(W2, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, index=1, exponent=3, count=3, bitmap=0b1101),
    result(W3, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, index=1, exponent=3, count=3, bitmap=0b1101),
    result(W4, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, index=1, exponent=3, count=3, bitmap=0b1101),
    '# rank 1 late, with a larger exponent: the RESULT back to it alone, exponent unchanged',
    update(W2, epoch=0x5EED0002, values=D, rank=1, job=2, index=1, exponent=9),
    result(W2, epoch=0x5EED0002, values=total(A, B, C), rank=1, job=2, index=1, exponent=3, count=3, bitmap=0b1101),
    'check_counter job_accepted(2) packets == 3',
    'check_counter job_completed(2) packets == 1',
    'check_counter job_late(2) packets == 1',
    'check_counter job_results_sent(2) packets == 4',
    '# ina: register slot_count[1] == 3',
    '# ina: register slot_bitmap[1] == 13',
    '# ina: register slot_done[1] == 1',
]
