from stf_render import SWITCH_CONFIG, W1, W2, W3, job, result, update

A = [334982, 139970, -187534, 742345, -290604, 304836, -842164, -186318]
A2 = [1, 2, 3, 4, 5, 6, 7, 8]

LINES = [
    "# Timeout 1 us, quorum 3: the first contribution (age 0) is stored; a retransmission from the",
    "# same rank after the deadline completes the slot with what it holds. The RESULT carries the",
    "# stored sum, never the retransmission's own values (here not a copy: A2 differs from A).",
    SWITCH_CONFIG,
    *job(5, [W1, W2, W3], epoch=0x5EED0005, slots=1, timeout=1),
    update(W1, epoch=0x5EED0005, values=A, job=5),
    update(W1, epoch=0x5EED0005, values=A2, job=5),
    result(W1, epoch=0x5EED0005, values=A, job=5, count=1, bitmap=0b1),
    result(W2, epoch=0x5EED0005, values=A, job=5, count=1, bitmap=0b1),
    result(W3, epoch=0x5EED0005, values=A, job=5, count=1, bitmap=0b1),
    "check_counter job_accepted(5) packets == 1",
    "check_counter job_timeouts(5) packets == 1",
    "check_counter job_completed(5) packets == 1",
    "check_counter job_duplicates(5) packets == 0",
    "# ina: register slot_done[0] == 1",
]
