from stf_render import SWITCH_CONFIG, W1, W2, job, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]
C = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860]
D = [1016900, 136405, -807442, 345863, 597984, -555321, 388526, 764779]
E = [1008981, -144324, 799523, 353782, -590065, 563240, 380607, -772698]

LINES = [
    "# One slot used set 0, set 1, set 0 (rounds 0, 1, 2): each use starts fresh with no reset message.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    update(W1, epoch=0x5EED0001, values=A, job=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1),
    result(W1, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    update(W2, epoch=0x5EED0001, values=C, rank=1, job=1, round_=1),
    update(W1, epoch=0x5EED0001, values=D, job=1, round_=1),
    result(W1, epoch=0x5EED0001, values=total(C, D), job=1, round_=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(C, D), job=1, round_=1, count=2, bitmap=0b11),
    "# set 0 again, round 2: round 0 is done, so the first contribution overwrites the old sum",
    update(W1, epoch=0x5EED0001, values=E, job=1, round_=2),
    update(W2, epoch=0x5EED0001, values=A, rank=1, job=1, round_=2),
    result(W1, epoch=0x5EED0001, values=total(A, E), rank=1, job=1, round_=2, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, E), rank=1, job=1, round_=2, count=2, bitmap=0b11),
    "# ina: register slot_bitmap[0] == 3",
    "# ina: register slot_round[0] == 2",
    "# ina: register slot_bitmap[16] == 3",
    "# ina: register slot_round[16] == 1",
    "check_counter job_completed(1) packets == 3",
]
