from lane_case import EPOCH, filler, setup
from stf_render import W1, W2, result, update

from ina.p4src.protocol import FLAG_ZERO, lane_flags

CODE = lane_flags(16)
A = filler(16, 1)
Z = {"flags": CODE | FLAG_ZERO, "values": []}  # a 16-bit worker's ZERO packet: the header alone

LINES = [
    "# LANE_BITS=16: a ZERO UPDATE carries the width code like any; the ZERO RESULT carries the",
    "# switch's code, and a sum with values its lanes (ZERO adds nothing, never saturates).",
    *setup(2),
    update(W1, epoch=EPOCH, job=1, **Z),
    update(W2, epoch=EPOCH, rank=1, job=1, **Z),
    *(result(h, epoch=EPOCH, rank=1, job=1, count=2, bitmap=0b11, **Z) for h in (W1, W2)),
    update(W1, epoch=EPOCH, job=1, index=1, **Z),
    update(W2, epoch=EPOCH, values=A, rank=1, job=1, index=1, bits=16, flags=CODE),
    *(
        result(
            h,
            epoch=EPOCH,
            values=A,
            rank=1,
            job=1,
            index=1,
            count=2,
            bitmap=0b11,
            bits=16,
            flags=CODE,
        )
        for h in (W1, W2)
    ),
    "check_counter port_malformed(1) packets == 0",
]
