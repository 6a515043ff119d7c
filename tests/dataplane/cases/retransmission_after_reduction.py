from stf_render import SWITCH_CONFIG, W1, W2, job, result, total, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]

LINES = [
    "# A retransmission to a complete slot is answered to that worker alone, not added again.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    update(W1, epoch=0x5EED0001, values=A, job=1),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1),
    result(W1, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    "# worker 0 lost its copy and sends again: only worker 0 gets the result, with its own rank",
    update(W1, epoch=0x5EED0001, values=A, job=1),
    result(W1, epoch=0x5EED0001, values=total(A, B), job=1, count=2, bitmap=0b11),
    "check_counter job_retrans_answered(1) packets == 1",
    "check_counter job_accepted(1) packets == 2",
    "check_counter job_results_sent(1) packets == 2",
]
