from stf_render import LEAF_SETUP, PARENT, W1, W2, from_parent, result, update

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
SUM = [100, 100, 100, 100, 100, 100, 100, 100]
E = 0x5EED0001

LINES = [
    "# Under a quorum the parent may complete without this leaf: its RESULT, arriving while the",
    "# leaf's slot still collects (worker 1 is slow), completes the use there with an empty bitmap;",
    "# worker 1's contribution is then late: never added, answered with that RESULT.",
    *LEAF_SETUP,
    update(W1, epoch=E, values=A, job=1, index=3),
    from_parent(PARENT, epoch=E, values=SUM, job=1, index=3, count=3, bitmap=0b101),
    result(W1, epoch=E, values=SUM, job=1, index=3, count=3, bitmap=0),
    result(W2, epoch=E, values=SUM, job=1, index=3, count=3, bitmap=0),
    "check_counter job_parent_results(1) packets == 1",
    "check_counter job_partials_sent(1) packets == 0",
    update(W2, epoch=E, values=B, rank=1, job=1, index=3),
    result(W2, epoch=E, values=SUM, rank=1, job=1, index=3, count=3, bitmap=0),
    "check_counter job_late(1) packets == 1",
    "check_counter job_accepted(1) packets == 1",
    "check_counter job_partials_sent(1) packets == 0",
    "# ina: register slot_count[3] == 3",
    "# the parent's RESULT of a later round over a done use starts and completes that use",
    from_parent(PARENT, epoch=E, values=A, job=1, index=3, round_=2, count=3, bitmap=0b101),
    result(W1, epoch=E, values=A, job=1, index=3, round_=2, count=3, bitmap=0),
    result(W2, epoch=E, values=A, job=1, index=3, round_=2, count=3, bitmap=0),
    "check_counter job_parent_results(1) packets == 2",
    "# ina: register slot_round[3] == 2",
]
