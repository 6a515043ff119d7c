from stf_render import SWITCH_CONFIG, W1, W2, W3, W4, job, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]

LINES = [
    "# A worker cannot write into another job's slots.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    *job(2, [W3, W4], epoch=0x5EED0002, base=4, ranks=[2, 3], first_node=2),
    "# worker 0 of job 1 claims job 2: it is not admitted to job 2, so job 2's slots stay untouched",
    update(W1, epoch=0x5EED0002, values=A, job=2),
    "check_counter port_refused(1) packets == 1",
    "# ina: register slot_bitmap[4] == 0",
    "check_counter job_accepted(2) packets == 0",
    "# a job without a jobs entry is refused too",
    update(W1, epoch=0x5EED0003, values=A, job=3),
    "check_counter port_refused(1) packets == 2",
]
