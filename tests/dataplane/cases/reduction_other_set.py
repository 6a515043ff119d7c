from stf_render import SWITCH_CONFIG, W1, W2, job, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]

LINES = [
    "# Reduction in set 1: state lives at register index POOL_SIZE + slot (16 + 2).",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    update(W1, epoch=0x5EED0001, values=A, job=1, index=2, round_=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1, index=2, round_=1),
    result(
        W1,
        epoch=0x5EED0001,
        values=total(A, B),
        rank=1,
        job=1,
        index=2,
        round_=1,
        count=2,
        bitmap=0b11,
    ),
    result(
        W2,
        epoch=0x5EED0001,
        values=total(A, B),
        rank=1,
        job=1,
        index=2,
        round_=1,
        count=2,
        bitmap=0b11,
    ),
    "# ina: register slot_count[18] == 2",
    "# ina: register slot_bitmap[18] == 3",
    "# ina: register slot_count[2] == 0",
]
