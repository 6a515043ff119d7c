from dataclasses import replace

from stf_render import SWITCH_CONFIG, W1, W2, job, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]
B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]

LINES = [
    "# Admission needs port, MAC, IP, job and rank to match an entry.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    "# worker 0's MAC but another IP (10.0.0.99): refused",
    update(replace(W1, ip="10.0.0.99"), epoch=0x5EED0001, values=A, job=1),
    "# rank 1 claimed from worker 0's port: refused",
    update(W2, port=1, epoch=0x5EED0001, values=B, rank=1, job=1),
    "check_counter port_refused(1) packets == 2",
    "check_counter port_refused(2) packets == 0",
    "# ina: register slot_bitmap[0] == 0",
    "check_counter job_accepted(1) packets == 0",
]
