from stf_render import LEAF_SETUP, PARENT, W1, W2, from_parent, result, update, upstream

from ina.p4src.protocol import FLAG_ZERO, MSG_STATUS

B = [1032738, -120567, 823280, 330025, -613822, 539483, 404364, -748941]
OTHERS = [-5, 6, -7, 8, 2**31 - 1, 0, 1, -1]  # the other leaf's partial sum, as the root adds it
E = 0x5EED0001
Z = {"flags": FLAG_ZERO, "values": []}  # a ZERO packet: the header alone

LINES = [
    "# A leaf whose workers' contributions were all ZERO sends its partial sum up ZERO (header",
    "# only, count 2); the parent's ZERO RESULT comes down ZERO and is answered ZERO from the",
    "# registers; the parent's full RESULT over a ZERO partial sum comes down in full.",
    *LEAF_SETUP,
    update(W1, epoch=E, job=1, exponent=3, **Z),
    update(W2, epoch=E, rank=1, job=1, exponent=5, **Z),
    upstream(PARENT, epoch=E, rank=1, job=1, exponent=5, count=2, **Z),
    "# a worker's resend into the forwarded use sends the ZERO partial sum up again, and so does",
    "# the parent's STATUS lacking this leaf (its partial sum lost on the way up)",
    update(W1, epoch=E, job=1, exponent=3, **Z),
    upstream(PARENT, epoch=E, rank=1, job=1, exponent=5, count=2, **Z),
    from_parent(PARENT, epoch=E, msg_type=MSG_STATUS, job=1, count=1, bitmap=0b01, **Z),
    upstream(PARENT, epoch=E, rank=1, job=1, exponent=5, count=2, **Z),
    from_parent(PARENT, epoch=E, job=1, exponent=5, count=4, bitmap=0b11, **Z),
    result(W1, epoch=E, job=1, exponent=5, count=4, bitmap=0b11, **Z),
    result(W2, epoch=E, job=1, exponent=5, count=4, bitmap=0b11, **Z),
    "# ina: register slot_nonzero[0] == 0",
    update(W2, epoch=E, rank=1, job=1, exponent=5, **Z),
    result(W2, epoch=E, rank=1, job=1, exponent=5, count=4, bitmap=0b11, **Z),
    "# slot 1: ZERO and values: the partial sum goes up in full",
    update(W1, epoch=E, job=1, index=1, **Z),
    update(W2, epoch=E, values=B, rank=1, job=1, index=1),
    upstream(PARENT, epoch=E, values=B, rank=1, job=1, index=1, count=2),
    "# slot 2: a ZERO partial sum, but the other leaf's was not: the RESULT comes down in full",
    update(W1, epoch=E, job=1, index=2, **Z),
    update(W2, epoch=E, rank=1, job=1, index=2, **Z),
    upstream(PARENT, epoch=E, rank=1, job=1, index=2, count=2, **Z),
    from_parent(PARENT, epoch=E, values=OTHERS, job=1, index=2, count=4, bitmap=0b11),
    result(W1, epoch=E, values=OTHERS, job=1, index=2, count=4, bitmap=0b11),
    result(W2, epoch=E, values=OTHERS, job=1, index=2, count=4, bitmap=0b11),
    "# ina: register slot_nonzero[2] == 1",
    "check_counter job_partials_sent(1) packets == 5",
    "check_counter job_parent_results(1) packets == 2",
]
