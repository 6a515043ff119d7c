from stf_render import SWITCH_CONFIG, W1, W2, W3, job, result, update

from ina.p4src.protocol import FLAG_ZERO

A = [-381929, 589180, 929282, -326510, 1002523, -865191, -119104, -564178]
Z = {"flags": FLAG_ZERO, "values": []}  # a ZERO packet: the header alone

LINES = [
    "# ZERO contributions under a quorum and a timeout count as any: job 2 (quorum 2 of 3)",
    "# completes with two ZERO UPDATEs, and the late one, with values, is answered with the ZERO",
    "# RESULT and never added; job 5 (timeout 1 us) completes with two of three, both ZERO.",
    SWITCH_CONFIG,
    *job(2, [W1, W2, W3], epoch=0x5EED0002, slots=2, quorum=2),
    *job(5, [W1, W2, W3], epoch=0x5EED0005, slots=1, timeout=1, first_node=3),
    update(W3, epoch=0x5EED0002, rank=2, job=2, index=1, exponent=4, **Z),
    update(W1, epoch=0x5EED0002, job=2, index=1, exponent=2, **Z),
    *(
        result(host, epoch=0x5EED0002, job=2, index=1, exponent=4, count=2, bitmap=0b101, **Z)
        for host in (W1, W2, W3)
    ),
    update(W2, epoch=0x5EED0002, values=A, rank=1, job=2, index=1, exponent=9),
    result(W2, epoch=0x5EED0002, rank=1, job=2, index=1, exponent=4, count=2, bitmap=0b101, **Z),
    "check_counter job_late(2) packets == 1",
    "# ina: register slot_nonzero[1] == 0",
    "# ina: register slot_acc_0[1] == 0",
    "# job 5's slot is slot 0 too (base 0): its epoch makes it empty for job 5",
    update(W1, epoch=0x5EED0005, job=5, **Z),
    update(W2, epoch=0x5EED0005, rank=1, job=5, **Z),
    *(
        result(host, epoch=0x5EED0005, rank=1, job=5, count=2, bitmap=0b11, **Z)
        for host in (W1, W2, W3)
    ),
    "check_counter job_timeouts(5) packets == 1",
    "check_counter job_completed(5) packets == 1",
]
