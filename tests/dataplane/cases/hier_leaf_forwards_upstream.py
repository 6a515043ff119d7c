from stf_render import LEAF_SETUP, PARENT, W1, W2, from_parent, result, total, update, upstream

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]
OTHERS = [-5, 6, -7, 8, 2**31 - 1, 0, 1, -1]  # the other leaf's partial sum, as the root adds it
SUM = total(A, B, OTHERS)
E = 0x5EED0001

LINES = [
    "# A leaf of a hierarchical job (job_parent: its parent on port 5, its rank there 1): when its",
    "# two workers have contributed it sends the partial sum up as an UPDATE (count = workers summed,",
    "# exponent = max) and waits; the parent's RESULT is stored and multicast to the workers (count",
    "# job-wide); a retransmission into the done slot gets the stored RESULT.",
    *LEAF_SETUP,
    "# a worker host's count field is never its weight: it counts 1",
    update(W1, epoch=E, values=A, job=1, exponent=3, count=9),
    update(W2, epoch=E, values=B, rank=1, job=1, exponent=7),
    upstream(PARENT, epoch=E, values=total(A, B), rank=1, job=1, exponent=7, count=2),
    "check_counter job_accepted(1) packets == 2",
    "check_counter job_completed(1) packets == 1",
    "check_counter job_partials_sent(1) packets == 1",
    "check_counter job_results_sent(1) packets == 0",
    "# ina: register slot_count[0] == 2",
    "# ina: register slot_forwarded[0] == 1",
    "# ina: register slot_done[0] == 0",
    from_parent(PARENT, epoch=E, values=SUM, job=1, exponent=9, count=4, bitmap=0b11),
    result(W1, epoch=E, values=SUM, job=1, exponent=9, count=4, bitmap=0b11),
    result(W2, epoch=E, values=SUM, job=1, exponent=9, count=4, bitmap=0b11),
    "check_counter job_parent_results(1) packets == 1",
    "check_counter job_results_sent(1) packets == 2",
    "# ina: register slot_done[0] == 1",
    "# ina: register slot_count[0] == 4",
    "# ina: register slot_exponent[0] == 9",
    "# worker 1 lost its copy: its retransmission gets the stored RESULT, with its own rank",
    update(W2, epoch=E, values=B, rank=1, job=1, exponent=7),
    result(W2, epoch=E, values=SUM, rank=1, job=1, exponent=9, count=4, bitmap=0b11),
    "check_counter job_retrans_answered(1) packets == 1",
    "check_counter job_partials_sent(1) packets == 1",
    "check_counter job_accepted(1) packets == 2",
]
