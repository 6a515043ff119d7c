from stf_render import SWITCH_CONFIG, W1, W2, W3, job, result, status, total, update

A = [735312, 287229, 23354, -482793, -403011, -962649, -890786, -1013916]
B = [-56228, 24791, 535125, 944690, -975485, -746252, 677261, 940886]
C = [707947, -499936, -819346, -422595, -180746, 658979, -102195, -855815]

LINES = [
    "# Three workers; a duplicate before completion gets a STATUS, multicast to all three, and is not",
    "# added twice.",
    SWITCH_CONFIG,
    *job(2, [W1, W2, W3], epoch=0x5EED0002, base=4),
    update(W1, epoch=0x5EED0002, values=A, job=2, round_=1),
    update(W1, epoch=0x5EED0002, values=A, job=2, round_=1),
    status(W1, epoch=0x5EED0002, values=A, job=2, round_=1, count=1, bitmap=0b1),
    status(W2, epoch=0x5EED0002, values=A, job=2, round_=1, count=1, bitmap=0b1),
    status(W3, epoch=0x5EED0002, values=A, job=2, round_=1, count=1, bitmap=0b1),
    update(W2, epoch=0x5EED0002, values=B, rank=1, job=2, round_=1),
    update(W3, epoch=0x5EED0002, values=C, rank=2, job=2, round_=1),
    result(
        W1, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, round_=1, count=3, bitmap=0b111
    ),
    result(
        W2, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, round_=1, count=3, bitmap=0b111
    ),
    result(
        W3, epoch=0x5EED0002, values=total(A, B, C), rank=2, job=2, round_=1, count=3, bitmap=0b111
    ),
    "check_counter job_duplicates(2) packets == 1",
]
