from stf_render import SWITCH_CONFIG, W1, W2, W3, job, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860]
C = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]

LINES = [
    "# Three workers on ports 1-3, slot 1 of a job based at 4 (register index 5); any arrival order.",
    SWITCH_CONFIG,
    *job(2, [W1, W2, W3], epoch=0x5EED0002, base=4),
    update(W1, epoch=0x5EED0002, values=A, job=2, index=1),
    update(W3, epoch=0x5EED0002, values=B, rank=2, job=2, index=1),
    update(W2, epoch=0x5EED0002, values=C, rank=1, job=2, index=1),
    result(
        W1, epoch=0x5EED0002, values=total(A, B, C), rank=1, job=2, index=1, count=3, bitmap=0b111
    ),
    result(
        W2, epoch=0x5EED0002, values=total(A, B, C), rank=1, job=2, index=1, count=3, bitmap=0b111
    ),
    result(
        W3, epoch=0x5EED0002, values=total(A, B, C), rank=1, job=2, index=1, count=3, bitmap=0b111
    ),
    "check_counter job_accepted(2) packets == 3",
    "check_counter job_completed(2) packets == 1",
    "check_counter job_results_sent(2) packets == 3",
    "# ina: register slot_count[5] == 3",
    "# ina: register slot_bitmap[5] == 7",
]
