from stf_render import SWITCH_CONFIG, W1, W2, W3, job, result, total, update

A = [334982, 139970, -187534, 742345, -290604, 304836, -842164, -186318]
B = [837298, 1041081, -142719, 292692, -106812, -170056, -1019253, 124438]
C = [-608944, -755825, -334545, -255898, 893081, 660298, 144770, -71311]

LINES = [
    "# Timeout 1 us: the second contribution, later than that, completes the slot with 2 of 3;",
    "# the third is late. Job 6's deadline (0xffffffff us) has not passed: a retransmission gets a STATUS.",
    SWITCH_CONFIG,
    *job(5, [W1, W2, W3], epoch=0x5EED0005, slots=1, timeout=1),
    update(W1, epoch=0x5EED0005, values=A, job=5),
    update(W2, epoch=0x5EED0005, values=B, rank=1, job=5),
    result(W1, epoch=0x5EED0005, values=total(A, B), rank=1, job=5, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0005, values=total(A, B), rank=1, job=5, count=2, bitmap=0b11),
    result(W3, epoch=0x5EED0005, values=total(A, B), rank=1, job=5, count=2, bitmap=0b11),
    update(W3, epoch=0x5EED0005, values=C, rank=2, job=5),
    result(W3, epoch=0x5EED0005, values=total(A, B), rank=2, job=5, count=2, bitmap=0b11),
    "check_counter job_timeouts(5) packets == 1",
    "check_counter job_completed(5) packets == 1",
    "check_counter job_late(5) packets == 1",
]
