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
C = [2, 2, 2, 2, 2, 2, 2, 2]
D = [-1, -1, -1, -1, -1, -1, -1, 5]
ANY = [9, 9, 9, 9, 9, 9, 9, 9]
SUM2 = [40, 41, 42, 43, 44, 45, 46, 47]
E = 0x5EED0001

LINES = [
    "# Under a quorum or timeout the parent completes a use without this switch and, its RESULT",
    "# to this switch lost, replaces it with a later round of the set. Its STATUS saying so (a",
    "# refused partial sum, or a resend's answer) is relayed down as it came, with count and",
    "# bitmap 0, and the use is marked gone (done with count 0): a retransmission of it learns the",
    "# same, the later round starts a new use here, and the parent's RESULT of that round is",
    "# taken. A STATUS of an earlier round than the use's is refused.",
    *LEAF_SETUP,
    update(W1, epoch=E, values=A, job=1),
    update(W2, epoch=E, values=B, rank=1, job=1, exponent=3),
    upstream(PARENT, epoch=E, values=total(A, B), rank=1, job=1, exponent=3, count=2),
    "# the parent's set 0 holds round 2: round 0 is gone",
    from_parent(
        PARENT, epoch=E, values=ANY, job=1, round_=2, count=3, bitmap=0b01, msg_type=MSG_STATUS
    ),
    status(W1, epoch=E, values=ANY, job=1, round_=2),
    status(W2, epoch=E, values=ANY, job=1, round_=2),
    "check_counter job_status_relayed(1) packets == 1",
    "# ina: register slot_done[0] == 1",
    "# ina: register slot_forwarded[0] == 0",
    "# ina: register slot_count[0] == 0",
    "# ina: register slot_exponent[0] == 0",
    "# ina: register slot_round[0] == 2",
    "# a resend of round 0 is told round 2, nothing sent up",
    update(W1, epoch=E, values=A, job=1),
    status(W1, epoch=E, values=A, job=1, round_=2),
    "check_counter job_stale(1) packets == 1",
    "check_counter job_partials_sent(1) packets == 1",
    "# round 2 is a new use here: summed from empty and sent up",
    update(W1, epoch=E, values=C, job=1, round_=2),
    update(W2, epoch=E, values=D, rank=1, job=1, round_=2, exponent=1),
    upstream(PARENT, epoch=E, values=total(C, D), rank=1, job=1, round_=2, exponent=1, count=2),
    "check_counter job_accepted(1) packets == 4",
    from_parent(PARENT, epoch=E, values=SUM2, job=1, round_=2, exponent=1, count=3, bitmap=0b11),
    result(W1, epoch=E, values=SUM2, job=1, round_=2, exponent=1, count=3, bitmap=0b11),
    result(W2, epoch=E, values=SUM2, job=1, round_=2, exponent=1, count=3, bitmap=0b11),
    "# slot 1: gone while still collecting here, then the parent's RESULT of round 2 is taken",
    update(W1, epoch=E, values=A, job=1, index=1),
    from_parent(
        PARENT,
        epoch=E,
        values=ANY,
        job=1,
        index=1,
        round_=2,
        count=1,
        bitmap=0b01,
        msg_type=MSG_STATUS,
    ),
    status(W1, epoch=E, values=ANY, job=1, index=1, round_=2),
    status(W2, epoch=E, values=ANY, job=1, index=1, round_=2),
    from_parent(PARENT, epoch=E, values=SUM2, job=1, index=1, round_=2, count=3, bitmap=0b01),
    result(W1, epoch=E, values=SUM2, job=1, index=1, round_=2, count=3),
    result(W2, epoch=E, values=SUM2, job=1, index=1, round_=2, count=3),
    "check_counter job_parent_results(1) packets == 2",
    "check_counter job_status_relayed(1) packets == 2",
    "# slot 3 collecting round 2 here: the parent's STATUS of round 0 is refused",
    update(W1, epoch=E, values=A, job=1, index=3, round_=2),
    from_parent(
        PARENT, epoch=E, values=ANY, job=1, index=3, count=1, bitmap=0b01, msg_type=MSG_STATUS
    ),
    "check_counter job_parent_refused(1) packets == 1",
    "check_counter job_status_relayed(1) packets == 2",
]
