from stf_render import SWITCH_CONFIG, W1, W2, W3, job, status, update

A = [334982, 139970, -187534, 742345, -290604, 304836, -842164, -186318]

LINES = [
    "# A deadline that has not passed (0xffffffff us): a retransmission into the waiting slot gets a STATUS",
    "# (to every worker of the job).",
    SWITCH_CONFIG,
    *job(6, [W1, W2, W3], epoch=0x5EED0006, slots=1, timeout=4294967295),
    update(W1, epoch=0x5EED0006, values=A, job=6),
    update(W1, epoch=0x5EED0006, values=A, job=6),
    status(W1, epoch=0x5EED0006, values=A, job=6, count=1, bitmap=0b1),
    status(W2, epoch=0x5EED0006, values=A, job=6, count=1, bitmap=0b1),
    status(W3, epoch=0x5EED0006, values=A, job=6, count=1, bitmap=0b1),
    "check_counter job_timeouts(6) packets == 0",
    "check_counter job_duplicates(6) packets == 1",
    "check_counter job_completed(6) packets == 0",
]
