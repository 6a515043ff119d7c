from stf_render import SWITCH_CONFIG, W1, W2, job, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]
C = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860]

LINES = [
    "# A retransmission into the previous set is still answered while the next set fills.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    update(W1, epoch=0x5EED0001, values=A, job=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1),
    result(W1, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    "# worker 0 moves on to set 1 (round 1); worker 1 lost the result and asks for set 0 (round 0) again",
    update(W1, epoch=0x5EED0001, values=C, job=1, round_=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    "# ina: register slot_bitmap[0] == 3",
    "# ina: register slot_round[0] == 0",
    "# ina: register slot_bitmap[16] == 1",
    "# ina: register slot_round[16] == 1",
    "check_counter job_retrans_answered(1) packets == 1",
]
