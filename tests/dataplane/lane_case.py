"""The lane cases (cases/lanes16/, cases/lanes8/: -DLANE_BITS=16 or 8 at ELEMS=8; the 32-bit
switch's refusal of narrow UPDATEs in cases/lane_width_refused.py), written
once for any width: values at and past each lane's limits, so a sum that crosses into the next lane,
wraps instead of saturating, or loses the slot's OVERFLOW flag fails on `ina stf` and on p4c's runner.
"""

from collections.abc import Sequence

from stf_render import LEAF_SETUP, PARENT, W1, W2, W3, from_parent, result, update, upstream

from ina.p4src.protocol import FLAG_OVERFLOW, LANE_BITS_CHOICES, lane_flags, lane_values

ELEMS = 8  # the lane cases' -DELEMS
POOL_SIZE = 16  # ... and -DPOOL_SIZE: set 1 of slot a is register index 16 + a
EPOCH = 0x5EED0001  # LEAF_SETUP's epoch too


def limits(bits: int) -> tuple[int, int]:
    """A `bits`-bit lane's smallest and largest value."""
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def saturated(bits: int, *vectors: Sequence[int]) -> list[int]:
    """The switch's lane sums of `vectors` added in order, each step saturated at the lane's range."""
    low, high = limits(bits)
    sums = list(vectors[0])
    for vector in vectors[1:]:
        sums = [min(high, max(low, s + v)) for s, v in zip(sums, vector, strict=True)]
    return sums


def words(bits: int, values: Sequence[int]) -> list[int]:
    """The 32-bit words (unsigned, as the accumulators hold them) of `values` in `bits`-bit lanes."""
    per = 32 // bits
    mask = (1 << bits) - 1
    return [
        sum((values[w * per + k] & mask) << (32 - bits * (k + 1)) for k in range(per))
        for w in range(len(values) // per)
    ]


def setup(workers: int) -> list[str]:
    """Job 1 (epoch EPOCH, 4 slots, sync) with W1..W`workers` as ranks 0.."""
    lines = [
        "setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)",
        "mc_mgrp_create 257",
    ]
    for rank, host in enumerate((W1, W2, W3)[:workers]):
        mac, ip = f"0x2000000000{host.port}", f"0xa00000{host.port}"
        lines += [
            f"add admission sm.ingress_port:{host.port} hdr.ethernet.src_addr:{mac} "
            f"hdr.ipv4.src_addr:{ip} hdr.agg.job_id:1 hdr.agg.rank:{rank} admit()",
            f"add result_rewrite sm.egress_rid:{33 + rank} "
            f"to_worker(mac:{mac}, ip:{ip}, udp_port:0xbee0)",
            f"mc_node_create {33 + rank} {host.port}",
            f"mc_node_associate 257 {rank}",
        ]
    return [
        *lines,
        f"add jobs hdr.agg.job_id:1 set_job(base:0, num_slots:4, num_workers:{workers}, "
        f"mgid:257, epoch:{EPOCH:#x}, quorum:{workers}, timeout:0, staleness:0)",
    ]


def filler(bits: int, seed: int) -> list[int]:
    """Every lane's value, distinct per lane and seed, both signs, far from the limits."""
    scale = (1 << (bits - 1)) // 8
    return [
        (-1) ** (i + seed) * ((seed * 7 + i * 3) % scale) for i in range(lane_values(ELEMS, bits))
    ]


def saturation(bits: int) -> list[str]:
    """Three workers, set 1: lanes summing exactly to the limits, lanes whose unsigned carry must not
    cross into the next, and lanes saturating up and down; the RESULT says OVERFLOW, and so does the
    one a retransmission reads back from the registers."""
    low, high = limits(bits)
    a, b, c = (filler(bits, seed) for seed in (1, 2, 3))
    lanes = {  # lane: (a, b, c)
        0: (high - 1, 1, 0),  # exactly the top: no saturation
        1: (low + 1, -1, 0),  # exactly the bottom
        2: (-1, -1, -1),  # all ones: an unsigned carry out of every add
        3: (high, 1, -5),  # saturates up, then comes down: the flag stays
        4: (low, -1, -1),  # saturates down twice
        5: (high, high, high),
        -1: (low // 2, low // 2, -1),  # the last lane, down
    }
    for lane, (x, y, z) in lanes.items():
        a[lane], b[lane], c[lane] = x, y, z
    fields = {"job": 1, "index": 2, "round_": 1, "bits": bits}
    code = lane_flags(bits)
    sums = saturated(bits, a, b, c)
    answer = {"epoch": EPOCH, "values": sums, "count": 3, "bitmap": 0b111}
    cell = POOL_SIZE + 2
    return [
        f"# LANE_BITS={bits}: {lane_values(ELEMS, bits)} lanes in 8 words; three workers, set 1.",
        *setup(3),
        update(W1, epoch=EPOCH, values=a, flags=code, **fields),
        update(W2, epoch=EPOCH, values=b, rank=1, flags=code, **fields),
        update(W3, epoch=EPOCH, values=c, rank=2, flags=code, **fields),
        *(
            result(host, rank=2, flags=code | FLAG_OVERFLOW, **answer, **fields)
            for host in (W1, W2, W3)
        ),
        "# a retransmission reads the sums and the flag back from the registers",
        update(W2, epoch=EPOCH, values=b, rank=1, flags=code, **fields),
        result(W2, rank=1, flags=code | FLAG_OVERFLOW, **answer, **fields),
        "check_counter job_retrans_answered(1) packets == 1",
        f"# ina: register slot_overflow[{cell}] == 1",
        *(
            f"# ina: register slot_acc_{i}[{cell}] == {word}"
            for i, word in enumerate(words(bits, sums))
        ),
    ]


def overflow_per_use(bits: int) -> list[str]:
    """Two workers, slot 0 set 0: an overflowed use, then the set's next use summing exactly to the
    limits without the flag (a new use starts clear), then one whose sum came flagged from a child
    switch (an UPDATE's FLAG_OVERFLOW) though no lane saturates here."""
    low, high = limits(bits)
    a, b = filler(bits, 1), filler(bits, 2)
    over_a, over_b = list(a), list(b)
    over_a[0], over_b[0] = high, 1
    edge_a, edge_b = list(a), list(b)
    edge_a[0], edge_b[0], edge_a[-1], edge_b[-1] = high - 2, 2, low + 3, -3
    code = lane_flags(bits)
    lines = [
        f"# LANE_BITS={bits}: one slot's uses each start without OVERFLOW; a flagged UPDATE flags its use.",
        *setup(2),
    ]
    for round_, (x, y), x_flags, result_flags in [
        (0, (over_a, over_b), code, code | FLAG_OVERFLOW),
        (2, (edge_a, edge_b), code, code),
        (4, (a, b), code | FLAG_OVERFLOW, code | FLAG_OVERFLOW),
    ]:
        fields = {"job": 1, "round_": round_, "bits": bits}
        sums = saturated(bits, x, y)
        lines += [
            update(W1, epoch=EPOCH, values=x, flags=x_flags, **fields),
            update(W2, epoch=EPOCH, values=y, rank=1, flags=code, **fields),
            *(
                result(
                    host,
                    epoch=EPOCH,
                    values=sums,
                    rank=1,
                    count=2,
                    bitmap=0b11,
                    flags=result_flags,
                    **fields,
                )
                for host in (W1, W2)
            ),
            f"# ina: register slot_overflow[0] == {int(result_flags != code)}",
        ]
    return [*lines, "check_counter job_completed(1) packets == 3"]


def width_refused(bits: int) -> list[str]:
    """UPDATEs carrying another width's code are malformed: dropped and counted, never summed; one
    with this switch's code is taken."""
    others = [w for w in LANE_BITS_CHOICES if w != bits]
    fields = {"job": 1, "values": filler(bits, 1), "epoch": EPOCH, "bits": bits}
    return [
        f"# LANE_BITS={bits}: an UPDATE of another lane width ({', '.join(map(str, others))}) is malformed.",
        *setup(2),
        *(update(W1, flags=lane_flags(w), **fields) for w in others),
        "check_counter port_malformed(1) packets == 2",
        "check_counter job_accepted(1) packets == 0",
        update(W1, flags=lane_flags(bits), **fields),
        "check_counter port_malformed(1) packets == 2",
        "check_counter job_accepted(1) packets == 1",
    ]


def hier_overflow(bits: int) -> list[str]:
    """A leaf whose workers' sum saturates sends it up flagged (slot 0); a leaf whose own sum is exact
    sends it up clear, and the parent's flagged RESULT (another leaf saturated) goes to the workers
    and is stored with its flag, so a retransmission's RESULT says OVERFLOW too (slot 1)."""
    low, _high = limits(bits)
    a, b = filler(bits, 1), filler(bits, 2)
    over_a = list(a)
    over_a[1] = low
    code, flagged = lane_flags(bits), lane_flags(bits) | FLAG_OVERFLOW
    answer = {"epoch": EPOCH, "count": 4, "bitmap": 0b11, "exponent": 9, "job": 1, "bits": bits}
    lines = [
        f"# LANE_BITS={bits}: a leaf's saturated partial sum goes up flagged, a parent's flag comes down.",
        *LEAF_SETUP,
    ]
    for index, x, up_flags in [(0, over_a, flagged), (1, a, code)]:
        fields = {"job": 1, "bits": bits, "index": index}
        partial = saturated(bits, x, b)
        total = saturated(bits, partial, filler(bits, 3))
        lines += [
            update(W1, epoch=EPOCH, values=x, flags=code, **fields),
            update(W2, epoch=EPOCH, values=b, rank=1, flags=code, **fields),
            upstream(
                PARENT, epoch=EPOCH, values=partial, rank=1, count=2, flags=up_flags, **fields
            ),
            f"# ina: register slot_overflow[{index}] == {int(up_flags != code)}",
            from_parent(PARENT, flags=flagged, values=total, index=index, **answer),
            *(
                result(host, flags=flagged, values=total, index=index, **answer)
                for host in (W1, W2)
            ),
            f"# ina: register slot_overflow[{index}] == 1",
            update(W2, epoch=EPOCH, values=b, rank=1, flags=code, **fields),
            result(W2, rank=1, flags=flagged, values=total, index=index, **answer),
        ]
    return [*lines, "check_counter job_retrans_answered(1) packets == 2"]
