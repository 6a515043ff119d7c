from stf_render import SWITCH_CONFIG, W1, W2, job, update

A = [1040657, 112648, -831199, 322106, 621741, -531564, 412283, 741022]

LINES = [
    "# A pool index at or beyond the job's num_slots is dropped and counted.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=0x5EED0001),
    "# relative index 4 of a 4-slot job would be absolute slot 4, which belongs to the next job",
    update(W1, epoch=0x5EED0001, values=A, job=1, index=4),
    update(W1, epoch=0x5EED0001, values=A, job=1, index=32767, round_=1),
    "check_counter job_out_of_range(1) packets == 2",
    "# ina: register slot_bitmap[4] == 0",
    "check_counter job_accepted(1) packets == 0",
]
