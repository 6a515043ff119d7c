from stf_render import SWITCH_CONFIG, W1, W2, job, result, status, total, update

A = [417, -3, 88, 1 << 20, -(1 << 19), 5, 0, -1]
B = [-17, 3, 12, 1 << 20, 1 << 19, -5, 7, 1]
C = [9, 8, 7, 6, 5, 4, 3, 2]

LINES = [
    "# Rounds compare in serial arithmetic over 2**32: a round exactly 2**31 past the done round 4",
    "# is an earlier one, refused with a STATUS naming round 4; 2**31 - 2 past it is a later one and",
    "# starts a new use of the slot.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001, slots=1),
    update(W1, epoch=0x5EED0001, values=A, job=1, round_=4),
    update(W2, epoch=0x5EED0001, values=B, rank=1, job=1, round_=4),
    result(W1, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, round_=4, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0001, values=total(A, B), rank=1, job=1, round_=4, count=2, bitmap=0b11),
    update(W1, epoch=0x5EED0001, values=C, job=1, round_=4 + 0x80000000),
    status(W1, epoch=0x5EED0001, values=C, job=1, round_=4, count=2, bitmap=0b11),
    update(W1, epoch=0x5EED0001, values=C, job=1, round_=4 + 0x7FFFFFFE),
    "check_counter job_stale(1) packets == 1",
    "check_counter job_accepted(1) packets == 3",
    "check_counter job_completed(1) packets == 1",
    "# ina: register slot_round[0] == 0x80000002",
    "# ina: register slot_count[0] == 1",
    "# ina: register slot_bitmap[0] == 1",
    "# ina: register slot_done[0] == 0",
]
