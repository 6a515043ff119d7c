from stf_render import SWITCH, SWITCH_CONFIG, W1, W2, frame, job, packet, update

from ina.hosts.packets import datagram
from ina.p4src.protocol import FLAG_ZERO, MSG_UPDATE, lane_flags

A = [1, 2, 3, 4, 5, 6, 7, 8]
E = 0x5EED0001

LINES = [
    "# A ZERO packet is the header alone: one with a value block after it is malformed, and so is a",
    "# ZERO packet of another lane width (the width check holds without values too). Neither counts.",
    SWITCH_CONFIG,
    *job(1, [W1, W2], epoch=E),
    update(W1, epoch=E, values=A, job=1, flags=FLAG_ZERO),
    update(W1, epoch=E, values=[], job=1, flags=FLAG_ZERO | lane_flags(16)),
    "check_counter port_malformed(1) packets == 2",
    "check_counter job_accepted(1) packets == 0",
    "# ina: register slot_count[0] == 0",
    "# a ZERO packet with a header cut short is malformed as any",
    packet(2, frame(W2, SWITCH, datagram(MSG_UPDATE, E, [], job=1, rank=1, flags=FLAG_ZERO)[:11])),
    "check_counter port_malformed(2) packets == 1",
]
