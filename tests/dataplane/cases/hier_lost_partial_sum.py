from stf_render import (
    LEAF_SETUP,
    PARENT,
    W1,
    W2,
    from_parent,
    result,
    status,
    total,
    update,
    upstream,
)

A = [1, -2, 3, -4, 5, -6, 7, -8]
B = [10, 20, 30, 40, 50, 60, 70, 2**31 - 1]
OTHERS = [100, 200, 300, 400, 500, 600, 700, 1]
SUM = total(A, B, OTHERS)
E = 0x5EED0001

LINES = [
    "# The leaf's partial sum, or the parent's RESULT, is lost between the switches: the workers'",
    "# retransmissions into the forwarded slot send the same partial sum up again (never added",
    "# twice); a worker's next round on that set is refused until the use is done (rounds never",
    "# mixed); the parent's RESULT then completes the use.",
    *LEAF_SETUP,
    update(W1, epoch=E, values=A, job=1, index=2),
    update(W2, epoch=E, values=B, rank=1, job=1, index=2, exponent=4),
    upstream(PARENT, epoch=E, values=total(A, B), rank=1, job=1, index=2, exponent=4, count=2),
    "# lost on the way: worker 0 resends, and so does worker 1",
    update(W1, epoch=E, values=A, job=1, index=2),
    upstream(PARENT, epoch=E, values=total(A, B), rank=1, job=1, index=2, exponent=4, count=2),
    update(W2, epoch=E, values=B, rank=1, job=1, index=2, exponent=4),
    upstream(PARENT, epoch=E, values=total(A, B), rank=1, job=1, index=2, exponent=4, count=2),
    "check_counter job_partials_sent(1) packets == 3",
    "check_counter job_duplicates(1) packets == 2",
    "check_counter job_accepted(1) packets == 2",
    "# ina: register slot_count[2] == 2",
    "# worker 0 runs ahead to round 2 of set 0: refused with the slot's round 0, nothing added",
    update(W1, epoch=E, values=B, job=1, index=2, round_=2),
    status(W1, epoch=E, values=B, job=1, index=2, exponent=4, count=2, bitmap=0b11),
    "check_counter job_stale(1) packets == 1",
    from_parent(PARENT, epoch=E, values=SUM, job=1, index=2, exponent=4, count=4, bitmap=0b11),
    result(W1, epoch=E, values=SUM, job=1, index=2, exponent=4, count=4, bitmap=0b11),
    result(W2, epoch=E, values=SUM, job=1, index=2, exponent=4, count=4, bitmap=0b11),
    "check_counter job_parent_results(1) packets == 1",
    "check_counter job_partials_sent(1) packets == 3",
    "# ina: register slot_done[2] == 1",
]
