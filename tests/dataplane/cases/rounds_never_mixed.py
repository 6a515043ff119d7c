from stf_render import SWITCH_CONFIG, W1, W2, W3, job, result, status, total, update

A = [-945991, 357291, 529981, 125676, 512568, -252105, 876659, -520545]
B = [-550929, -208162, -733786, -628547, -135557, -319549, -295390, 895217]
C = [631162, 544727, 765736, 431918, -616168, 1044947, 250194, 118291]

LINES = [
    "# Rounds never mix. Round 6 over the collecting round 4 is refused with a STATUS naming round 4;",
    "# once round 4 is done round 6 starts fresh, and round 4 from a late rank is refused, told round 6.",
    SWITCH_CONFIG,
    *job(3, [W1, W2, W3], epoch=0x5EED0003, slots=1, quorum=2),
    update(W1, epoch=0x5EED0003, values=A, job=3, round_=4),
    update(W2, epoch=0x5EED0003, values=B, rank=1, job=3, round_=6),
    status(W2, epoch=0x5EED0003, values=B, rank=1, job=3, round_=4, count=1, bitmap=0b1),
    update(W2, epoch=0x5EED0003, values=B, rank=1, job=3, round_=4),
    result(W1, epoch=0x5EED0003, values=total(A, B), rank=1, job=3, round_=4, count=2, bitmap=0b11),
    result(W2, epoch=0x5EED0003, values=total(A, B), rank=1, job=3, round_=4, count=2, bitmap=0b11),
    result(W3, epoch=0x5EED0003, values=total(A, B), rank=1, job=3, round_=4, count=2, bitmap=0b11),
    update(W2, epoch=0x5EED0003, values=C, rank=1, job=3, round_=6),
    update(W3, epoch=0x5EED0003, values=C, rank=2, job=3, round_=4),
    status(W3, epoch=0x5EED0003, values=C, rank=2, job=3, round_=6, count=1, bitmap=0b10),
    "check_counter job_stale(3) packets == 2",
    "check_counter job_accepted(3) packets == 3",
    "# ina: register slot_round[0] == 6",
    "# ina: register slot_bitmap[0] == 2",
    "# ina: register slot_done[0] == 0",
]
