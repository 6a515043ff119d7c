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

from ina.p4src.protocol import MSG_STATUS

A = [1, -2, 3, -4, 5, -6, 7, -8]
B = [10, 20, 30, 40, 50, 60, 70, 80]
ANY = [9, 9, 9, 9, 9, 9, 9, 9]  # a STATUS's values say nothing; relayed as they came
SUM = [111, 218, 333, 436, 555, 654, 777, 872]
E = 0x5EED0001

LINES = [
    "# The parent's STATUS (its answer to a child's resent partial sum while it waits) reaches the",
    "# workers it concerns. This switch's bit set: the STATUS goes down with this switch's count,",
    "# bitmap and exponent, so the counted workers stop resending. Without its bit, while the use",
    "# waits on the parent: the partial sum was lost and goes up again at once. While the use is",
    "# still collecting here: down with this switch's bitmap, so a missing worker resends now. A",
    "# use already done here sends nothing.",
    *LEAF_SETUP,
    update(W1, epoch=E, values=A, job=1),
    update(W2, epoch=E, values=B, rank=1, job=1, exponent=3),
    upstream(PARENT, epoch=E, values=total(A, B), rank=1, job=1, exponent=3, count=2),
    "# counted by the parent (bit 1), which waits for another child",
    from_parent(PARENT, epoch=E, values=ANY, job=1, count=2, bitmap=0b10, msg_type=MSG_STATUS),
    status(W1, epoch=E, values=ANY, job=1, exponent=3, count=2, bitmap=0b11),
    status(W2, epoch=E, values=ANY, job=1, exponent=3, count=2, bitmap=0b11),
    "check_counter job_status_relayed(1) packets == 1",
    "# not counted by the parent: the partial sum, lost on the way up, is sent again",
    from_parent(PARENT, epoch=E, values=ANY, job=1, count=2, bitmap=0b01, msg_type=MSG_STATUS),
    upstream(PARENT, epoch=E, values=total(A, B), rank=1, job=1, exponent=3, count=2),
    "check_counter job_partials_sent(1) packets == 2",
    "check_counter job_status_relayed(1) packets == 1",
    "check_counter job_accepted(1) packets == 2",
    "# slot 1 still collecting here (worker 1's UPDATE lost): relayed with bitmap 0b01",
    update(W1, epoch=E, values=A, job=1, index=1, exponent=2),
    from_parent(
        PARENT, epoch=E, values=ANY, job=1, index=1, count=2, bitmap=0b01, msg_type=MSG_STATUS
    ),
    status(W1, epoch=E, values=ANY, job=1, index=1, exponent=2, count=1, bitmap=0b01),
    status(W2, epoch=E, values=ANY, job=1, index=1, exponent=2, count=1, bitmap=0b01),
    "check_counter job_status_relayed(1) packets == 2",
    "check_counter job_partials_sent(1) packets == 2",
    "# ina: register slot_forwarded[1] == 0",
    "# slot 0 done by the parent's RESULT: a STATUS of that use afterwards sends nothing",
    from_parent(PARENT, epoch=E, values=SUM, job=1, exponent=3, count=4, bitmap=0b11),
    result(W1, epoch=E, values=SUM, job=1, exponent=3, count=4, bitmap=0b11),
    result(W2, epoch=E, values=SUM, job=1, exponent=3, count=4, bitmap=0b11),
    from_parent(PARENT, epoch=E, values=ANY, job=1, count=3, bitmap=0b01, msg_type=MSG_STATUS),
    "check_counter job_status_relayed(1) packets == 2",
    "check_counter job_partials_sent(1) packets == 2",
    "check_counter job_parent_refused(1) packets == 0",
    "# a set this switch never used (slot 2): nothing",
    from_parent(
        PARENT, epoch=E, values=ANY, job=1, index=2, count=1, bitmap=0b01, msg_type=MSG_STATUS
    ),
    "check_counter job_status_relayed(1) packets == 2",
]
