from stf_render import SWITCH_CONFIG, W1, W2, W3, W4, job, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860]
C = [-1001062, 152243, 791604, -361701, 582146, 571159, -372688, 780617]
D = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]

LINES = [
    "# Jobs 1 (slots 0-3, ranks 0-1) and 2 (slots 4-7, ranks 0-1 on ports 3-4) at relative slot 0, interleaved.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    *job(2, [W3, W4], epoch=0x5EED0002, base=4, first_node=2),
    update(W1, epoch=0x5EED0001, values=A, job=1),
    update(W3, epoch=0x5EED0002, values=B, job=2),
    update(W4, epoch=0x5EED0002, values=C, rank=1, job=2),
    update(W2, epoch=0x5EED0001, values=D, rank=1, job=1),
    result(W3, epoch=0x5EED0002, values=total(B, C), rank=1, job=2, count=2, bitmap=0b11),
    result(W4, epoch=0x5EED0002, values=total(B, C), rank=1, job=2, count=2, bitmap=0b11),
    result(W1, epoch=0x5EED0001, values=total(A, D), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, D), rank=1, job=1, count=2, bitmap=0b11),
    "# ina: register slot_bitmap[0] == 3",
    "# ina: register slot_bitmap[4] == 3",
    "check_counter job_completed(1) packets == 1",
    "check_counter job_completed(2) packets == 1",
    "check_counter job_results_sent(2) packets == 2",
]
