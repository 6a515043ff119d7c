from stf_render import W1, W2, W3, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022, -202825, 950480, 1041943, -111362, 832485, 320820, -623027, 530278, 413569, -739736, 204111, 949194, -1043229, 110076, 833771, -319534, 624313, 528992, -414855, 738450, 205397, -947908, 1044515, 108790, -835057, 318248, 625599, -527706, 416141, 737164, -206683, 946622, 1045801, -107504, 836343, 316962, -626885, 526420, 417427, -735878, 207969, 945336, -1047087, 106218, 837629, -315676, 628171, 525134, -418713, 734592, 209255, -944050, 1048373, 104932, -838915, 314390]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941, 194906, 958399, -1034024, 119281, 824566, -328739, 615108, 538197, -405650, 747655, 196192, -957113, 1035310, 117995, -825852, 327453, 616394, -536911, 406936, 746369, -197478, 955827, 1036596, -116709, 827138, 326167, -617680, 535625, 408222, -745083, 198764, 954541, -1037882, 115423, 828424, -324881, 618966, 534339, -409508, 743797, 200050, -953255, 1039168, 114137, -829710, 323595, 620252, -533053, 410794, 742511, -201336, 951969, 1040454, -112851, 830996, 322309]
C = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860, 186987, -966318, 1026105, 127200, -816647, 336658, 607189, -546116, 397731, 755574, -188273, 965032, 1027391, -125914, 817933, 335372, -608475, 544830, 399017, -754288, 189559, 963746, -1028677, 124628, 819219, -334086, 609761, 543544, -400303, 753002, 190845, -962460, 1029963, 123342, -820505, 332800, 611047, -542258, 401589, 751716, -192131, 961174, 1031249, -122056, 821791, 331514, -612333, 540972, 402875, -750430, 193417, 959888, -1032535, 120770, 823077, -330228]

LINES = [
    '# ELEMS=64 (256-byte payload): three workers and a retransmission.',
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
    update(W1, epoch=0x5EED0001, values=A, job=1, index=2, exponent=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1, index=2, exponent=2),
    update(W3, epoch=0x5EED0001, values=C, rank=2, job=1, index=2),
    result(W1, epoch=0x5EED0001, values=total(A, B, C), rank=2, job=1, index=2, exponent=2, count=3, bitmap=0b111),
    result(W2, epoch=0x5EED0001, values=total(A, B, C), rank=2, job=1, index=2, exponent=2, count=3, bitmap=0b111),
    result(W3, epoch=0x5EED0001, values=total(A, B, C), rank=2, job=1, index=2, exponent=2, count=3, bitmap=0b111),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1, index=2, exponent=2),
    result(W2, epoch=0x5EED0001, values=total(A, B, C), rank=1, job=1, index=2, exponent=2, count=3, bitmap=0b111),
    'check_counter job_retrans_answered(1) packets == 1',
]
