from stf_render import SWITCH_CONFIG, W1, W2, job, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860]
C = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]

LINES = [
    "# Slot 0 set 0 and slot 1 set 1 partially filled at once; each completes with its own sum.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    update(W1, epoch=0x5EED0001, values=A, job=1),
    update(W1, epoch=0x5EED0001, values=B, job=1, index=1, round_=1),
    update(W2, epoch=0x5EED0001, values=C, rank=1, job=1, index=1, round_=1),
    result(
        W1,
        epoch=0x5EED0001,
        values=total(B, C),
        rank=1,
        job=1,
        index=1,
        round_=1,
        count=2,
        bitmap=0b11,
    ),
    result(
        W2,
        epoch=0x5EED0001,
        values=total(B, C),
        rank=1,
        job=1,
        index=1,
        round_=1,
        count=2,
        bitmap=0b11,
    ),
    update(W2, epoch=0x5EED0001, values=C, rank=1, job=1),
    result(W1, epoch=0x5EED0001, values=total(A, C), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, C), rank=1, job=1, count=2, bitmap=0b11),
    "# ina: register slot_count[0] == 2",
    "# ina: register slot_count[17] == 2",
    "check_counter job_completed(1) packets == 2",
]
