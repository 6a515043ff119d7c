from stf_render import SWITCH_CONFIG, W1, W2, job, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]
C = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860]
D = [1016900, 136405, -807442, 345863, 597984, -555321, 388526, 764779]
E = [1008981, -144324, 799523, 353782, -590065, 563240, 380607, -772698]

LINES = [
    "# After reuse a retransmission gets the current round's result.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    update(W1, epoch=0x5EED0001, values=A, job=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1),
    result(W1, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    update(W1, epoch=0x5EED0001, values=C, job=1, round_=1),
    update(W2, epoch=0x5EED0001, values=D, rank=1, job=1, round_=1),
    result(W1, epoch=0x5EED0001, values=total(C, D), rank=1, job=1, round_=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(C, D), rank=1, job=1, round_=1, count=2, bitmap=0b11),
    update(W2, epoch=0x5EED0001, values=E, rank=1, job=1, round_=2),
    update(W1, epoch=0x5EED0001, values=A, job=1, round_=2),
    result(W1, epoch=0x5EED0001, values=total(A, E), job=1, round_=2, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, E), job=1, round_=2, count=2, bitmap=0b11),
    "# worker 1 retransmits its newest set-0 packet: the newest sum comes back, not the first round's",
    update(W2, epoch=0x5EED0001, values=E, rank=1, job=1, round_=2),
    result(W2, epoch=0x5EED0001, values=total(A, E), rank=1, job=1, round_=2, count=2, bitmap=0b11),
    "check_counter job_retrans_answered(1) packets == 1",
]
