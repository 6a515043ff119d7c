from stf_render import LEAF_SETUP, PARENT, W1, W2, from_parent, result, total, update, upstream

A = [1, 1, 1, 1, 1, 1, 1, 1]
B = [2, 2, 2, 2, 2, 2, 2, 2]
C = [3, 3, 3, 3, 3, 3, 3, 3]
D = [4, 4, 4, 4, 4, 4, 4, 4]
OLD = [9, 9, 9, 9, 9, 9, 9, 9]
NEW = [-9, -9, -9, -9, -9, -9, -9, -9]
E = 0x5EED0001

LINES = [
    "# Rounds are never mixed between switches: a copy of the parent's RESULT for round 0 arriving",
    "# when the slot's set waits for round 2 is refused; round 2's RESULT is taken.",
    *LEAF_SETUP,
    update(W1, epoch=E, values=A, job=1),
    update(W2, epoch=E, values=B, rank=1, job=1),
    upstream(PARENT, epoch=E, values=total(A, B), rank=1, job=1, count=2),
    from_parent(PARENT, epoch=E, values=OLD, job=1, count=4, bitmap=0b11),
    result(W1, epoch=E, values=OLD, job=1, count=4, bitmap=0b11),
    result(W2, epoch=E, values=OLD, job=1, count=4, bitmap=0b11),
    update(W1, epoch=E, values=C, job=1, round_=2),
    update(W2, epoch=E, values=D, rank=1, job=1, round_=2),
    upstream(PARENT, epoch=E, values=total(C, D), rank=1, job=1, round_=2, count=2),
    from_parent(PARENT, epoch=E, values=OLD, job=1, count=4, bitmap=0b11),
    "check_counter job_parent_refused(1) packets == 1",
    "# ina: register slot_forwarded[0] == 1",
    "# ina: register slot_done[0] == 0",
    from_parent(PARENT, epoch=E, values=NEW, job=1, round_=2, count=4, bitmap=0b11),
    result(W1, epoch=E, values=NEW, job=1, round_=2, count=4, bitmap=0b11),
    result(W2, epoch=E, values=NEW, job=1, round_=2, count=4, bitmap=0b11),
    "check_counter job_parent_results(1) packets == 2",
    "# ina: register slot_round[0] == 2",
]
