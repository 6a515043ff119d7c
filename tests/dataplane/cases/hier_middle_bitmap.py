from stf_render import (
    PARENT,
    SWITCH_CONFIG,
    Host,
    Parent,
    from_parent,
    job,
    result,
    total,
    update,
    upstream,
)

L1 = Host(1, "02:cc:00:00:00:01", "10.0.2.1")  # a leaf switch holding 2 workers
L2 = Host(2, "02:cc:00:00:00:02", "10.0.2.2")  # a leaf switch holding 2 workers
X = [1, 2, 3, 4, 5, 6, 7, 8]
Y = [8, 7, 6, 5, 4, 3, 2, 1]
OTHERS = [1000, 0, 0, 0, 0, 0, 0, -1000]
E = 0x5EED0001

LINES = [
    "# A middle switch (children: two leaf switches; a parent): the leaves' partial sums add up by",
    "# their counts and go up as one (count 4). Its parent completed under a quorum without it (its",
    "# bitmap lacks rank 1): the RESULT goes down with the job-wide count and an empty bitmap, so",
    "# every worker below knows its contribution is not in the sum.",
    SWITCH_CONFIG,
    *job(1, [L1, L2], epoch=E, below=[2, 2], parent=Parent(PARENT, 1, job_workers=8, job_quorum=4)),
    "# quorum 2 of its 4 workers (its share of the job's 4 of 8), so the first leaf's sum completes",
    update(L1, epoch=E, values=X, job=1, count=2, index=1, round_=1),
    upstream(PARENT, epoch=E, values=X, rank=1, job=1, count=2, index=1, round_=1),
    "# the second leaf's is late: never added, the partial sum goes up again",
    update(L2, epoch=E, values=Y, rank=1, job=1, count=2, index=1, round_=1),
    upstream(PARENT, epoch=E, values=X, rank=1, job=1, count=2, index=1, round_=1),
    "check_counter job_late(1) packets == 1",
    "check_counter job_partials_sent(1) packets == 2",
    "# ina: register slot_count[17] == 2",
    "# the parent's quorum completed with its other children (bit 1 missing)",
    from_parent(PARENT, epoch=E, values=OTHERS, job=1, index=1, round_=1, count=4, bitmap=0b101),
    result(L1, epoch=E, values=OTHERS, job=1, index=1, round_=1, count=4, bitmap=0),
    result(L2, epoch=E, values=OTHERS, job=1, index=1, round_=1, count=4, bitmap=0),
    "check_counter job_parent_results(1) packets == 1",
    "# ina: register slot_bitmap[17] == 0",
    "# ina: register slot_count[17] == 4",
    "# the same with its bit: the slot's own bitmap goes down (set 0 of the slot this time)",
    update(L1, epoch=E, values=X, job=1, count=2, index=1),
    upstream(PARENT, epoch=E, values=X, rank=1, job=1, count=2, index=1),
    from_parent(PARENT, epoch=E, values=total(X, OTHERS), job=1, index=1, count=6, bitmap=0b111),
    result(L1, epoch=E, values=total(X, OTHERS), job=1, index=1, count=6, bitmap=0b01),
    result(L2, epoch=E, values=total(X, OTHERS), job=1, index=1, count=6, bitmap=0b01),
    "# ina: register slot_bitmap[1] == 1",
]
