from stf_render import (
    FLAG_FALLBACK,
    SHARED_SETUP,
    W1,
    W2,
    W3,
    W4,
    result,
    status,
    to_host,
    total,
    update,
)

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]
C = [-1024819, 128486, 815361, -337944, 605903, 547402, -396445, 756860]
D = [1016900, 136405, -807442, 345863, 597984, -555321, 388526, 764779]
E1, E2 = 0x5EED0001, 0x5EED0002
NOTICE = {"flags": FLAG_FALLBACK, "count": 0, "bitmap": 0}

LINES = [
    "# Best effort: jobs 1 and 2 share slots 0-3, each with a host fallback server. Job 1 holds slot 0",
    "# set 0 (a use not done); job 2's UPDATEs there never touch it: each gets a FALLBACK STATUS to",
    "# every worker of job 2, and their FALLBACK-flagged UPDATEs go on to the server. Job 1 completes",
    "# as if alone.",
    *SHARED_SETUP,
    update(W1, epoch=E1, values=A, job=1),
    update(W3, epoch=E2, values=C, job=2, exponent=5),
    status(W3, epoch=E2, values=C, job=2, exponent=5, **NOTICE),
    status(W4, epoch=E2, values=C, job=2, exponent=5, **NOTICE),
    update(W4, epoch=E2, values=D, rank=1, job=2),
    status(W3, epoch=E2, values=D, rank=1, job=2, **NOTICE),
    status(W4, epoch=E2, values=D, rank=1, job=2, **NOTICE),
    "check_counter job_fallback_notices(2) packets == 2",
    "# the flagged UPDATEs go to the server; the slot held by job 1 records nothing",
    update(W3, epoch=E2, values=C, job=2, exponent=5, flags=FLAG_FALLBACK),
    to_host(W3, epoch=E2, values=C, job=2, exponent=5),
    update(W4, epoch=E2, values=D, rank=1, job=2, flags=FLAG_FALLBACK),
    to_host(W4, epoch=E2, values=D, rank=1, job=2),
    "check_counter job_fallback_forwarded(2) packets == 2",
    "# ina: register slot_epoch[0] == 0x5eed0001",
    "# ina: register slot_fallback[0] == 0",
    update(W2, epoch=E1, values=B, rank=1, job=1),
    result(W1, epoch=E1, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    result(W2, epoch=E1, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    "# done, but held until job 1's next use is done (a worker whose RESULT copy was lost asks again)",
    update(W3, epoch=E2, values=C, job=2, exponent=5),
    status(W3, epoch=E2, values=C, job=2, exponent=5, **NOTICE),
    status(W4, epoch=E2, values=C, job=2, exponent=5, **NOTICE),
    update(W2, epoch=E1, values=B, rank=1, job=1),
    result(W2, epoch=E1, values=total(A, B), rank=1, job=1, count=2, bitmap=0b11),
    "check_counter job_fallback_notices(2) packets == 3",
    "check_counter job_accepted(1) packets == 2",
    "check_counter job_accepted(2) packets == 0",
    "check_counter job_fallback_notices(1) packets == 0",
    "# a job's slot/set another run holds is never held for it: job 2 on set 1 of slot 0 aggregates",
    update(W3, epoch=E2, values=C, job=2, round_=1),
    update(W4, epoch=E2, values=D, rank=1, job=2, round_=1),
    result(W3, epoch=E2, values=total(C, D), rank=1, job=2, round_=1, count=2, bitmap=0b11),
    result(W4, epoch=E2, values=total(C, D), rank=1, job=2, round_=1, count=2, bitmap=0b11),
]
