from stf_render import (
    LEAF_SETUP,
    PARENT,
    SWITCH,
    W1,
    W2,
    W4,
    frame,
    from_parent,
    packet,
    result,
    total,
    update,
    upstream,
)

from ina.hosts.packets import datagram
from ina.p4src.protocol import MSG_STATUS

A = [5, 4, 3, 2, 1, 0, -1, -2]
B = [-5, -4, -3, -2, -1, 0, 1, 2]
SUM = [7, 7, 7, 7, 7, 7, 7, 7]
E = 0x5EED0001

LINES = [
    "# Only the job's parent may complete a forwarded use: a RESULT from another port, another",
    "# address, another epoch, or for another round is refused and counted, and changes nothing;",
    "# as is a STATUS not from the parent; its RESULT is taken once, later copies refused.",
    *LEAF_SETUP,
    update(W1, epoch=E, values=A, job=1),
    update(W2, epoch=E, values=B, rank=1, job=1),
    upstream(PARENT, epoch=E, values=total(A, B), rank=1, job=1, count=2),
    "# the parent's addresses on a worker's port; a worker's address on the parent's port",
    from_parent(PARENT, epoch=E, values=SUM, job=1, count=4, bitmap=0b11, port=4),
    from_parent(W4, epoch=E, values=SUM, job=1, count=4, bitmap=0b11, port=5),
    "# a worker's RESULT to the switch, another epoch, a later round of the set",
    from_parent(W1, epoch=E, values=SUM, job=1, count=4, bitmap=0b11),
    from_parent(PARENT, epoch=E + 1, values=SUM, job=1, count=4, bitmap=0b11),
    from_parent(PARENT, epoch=E, values=SUM, job=1, round_=2, count=4, bitmap=0b11),
    "check_counter job_parent_refused(1) packets == 5",
    "check_counter job_parent_results(1) packets == 0",
    "# ina: register slot_done[0] == 0",
    "# ina: register slot_forwarded[0] == 1",
    "# a STATUS from a worker's address on the parent's port is refused as well",
    packet(5, frame(W4, SWITCH, datagram(MSG_STATUS, E, SUM, job=1, count=2, bitmap=0b10))),
    "check_counter job_parent_refused(1) packets == 6",
    "check_counter job_status_relayed(1) packets == 0",
    "check_counter port_malformed(5) packets == 0",
    from_parent(PARENT, epoch=E, values=SUM, job=1, count=4, bitmap=0b11),
    result(W1, epoch=E, values=SUM, job=1, count=4, bitmap=0b11),
    result(W2, epoch=E, values=SUM, job=1, count=4, bitmap=0b11),
    "# a second copy (the parent answered a resend too) is refused: the use is done",
    from_parent(PARENT, epoch=E, values=B, job=1, count=4, bitmap=0b11),
    "check_counter job_parent_refused(1) packets == 7",
    "check_counter job_parent_results(1) packets == 1",
    "check_counter job_results_sent(1) packets == 2",
]
