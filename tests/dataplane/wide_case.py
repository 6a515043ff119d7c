"""The case each wide ELEMS renders (cases/elems128/, cases/elems256/: SwitchML's 1 KB packets),
written once for any width: three workers fill one slot in set 1 with values distinct in every
element, the first and last wrapping past int32, then one of them retransmits and its RESULT reads
every accumulator back. The accumulators are read by name at both ends of every group of eight
(elements.p4's unit), so macros that skip, repeat or reorder a group fail on `ina stf` even where
the packets would still sum right.
"""

import ipaddress

from stf_render import W1, W2, W3, Host, result, total, update

EPOCH = 0x5EED0002
INT32_MAX = 2**31 - 1
POOL_SIZE = 16  # the dataplane cases' -DPOOL_SIZE: set 1 of slot a is register index 16 + a


def vector(elems: int, seed: int) -> list[int]:
    """`elems` values, distinct per element and per seed, both signs, int32's extremes at the ends."""
    values = [(-1) ** i * (seed * 1_000_003 + i * 7_919) for i in range(elems)]
    values[0], values[-1] = -(2**31), INT32_MAX
    return values


def addresses(host: Host) -> tuple[str, str]:
    """A host's MAC and IPv4 address as STF's table keys and action parameters write them."""
    return f"{int(host.mac.replace(':', ''), 16):#x}", f"{int(ipaddress.IPv4Address(host.ip)):#x}"


def wrapped(value: int) -> int:
    """`value` as the switch's bit<32> register holds it (unsigned)."""
    return value % 2**32


def reduction_and_retransmission(elems: int) -> list[str]:
    """The case's STF lines at ELEMS = `elems`."""
    a, b, c = (vector(elems, seed) for seed in (1, 2, 3))
    cell = POOL_SIZE + 2  # slot 2, set 1
    fields = {"job": 1, "index": 2, "round_": 1}
    answer = {"epoch": EPOCH, "values": total(a, b, c), "exponent": 7, "count": 3, "bitmap": 0b111}
    return [
        f"# ELEMS={elems} ({4 * elems}-byte payload): three workers, set 1, a retransmission.",
        "setdefault switch_config set_switch_addr(mac:0x2aa00000001, ip:0xa0000fe)",
        "mc_mgrp_create 257",
        *(
            line
            for rank, host in enumerate((W1, W2, W3))
            for mac, ip in [addresses(host)]
            for line in (
                f"add admission sm.ingress_port:{host.port} hdr.ethernet.src_addr:{mac} "
                f"hdr.ipv4.src_addr:{ip} hdr.agg.job_id:1 hdr.agg.rank:{rank} admit()",
                f"add result_rewrite sm.egress_rid:{33 + rank} "
                f"to_worker(mac:{mac}, ip:{ip}, udp_port:0xbee0)",
                f"mc_node_create {33 + rank} {host.port}",
                f"mc_node_associate 257 {rank}",
            )
        ),
        "add jobs hdr.agg.job_id:1 set_job(base:0, num_slots:4, num_workers:3, mgid:257, "
        f"epoch:{EPOCH:#x}, quorum:3, timeout:0, staleness:0)",
        update(W1, epoch=EPOCH, values=a, exponent=7, **fields),
        update(W2, epoch=EPOCH, values=b, rank=1, exponent=3, **fields),
        update(W3, epoch=EPOCH, values=c, rank=2, **fields),
        *(result(host, rank=2, **answer, **fields) for host in (W1, W2, W3)),
        update(W2, epoch=EPOCH, values=b, rank=1, exponent=3, **fields),
        result(W2, rank=1, **answer, **fields),
        "check_counter job_retrans_answered(1) packets == 1",
        *(
            f"# ina: register slot_acc_{i}[{cell}] == {wrapped(a[i] + b[i] + c[i])}"
            for i in sorted({*range(0, elems, 8), *range(7, elems, 8)})
        ),
    ]
