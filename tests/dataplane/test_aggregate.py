"""The aggregation program (p4src/aggregate.p4) on the built-in switch: exact packets in and out.

Each test programs the switch the way docs/protocol.md says the controller does, sends UPDATE
packets built byte by byte, and checks the exact RESULT bytes and the counters.
"""

import functools
import struct

import numpy as np
import pytest

from ina.compiler import compile_file
from ina.hosts.packets import datagram
from ina.p4src import AGGREGATE_P4
from ina.p4src.protocol import (
    MSG_RESULT,
    MSG_STATUS,
    MSG_UPDATE,
    UDP_PORT,
    job_group,
    worker_rid,
)
from ina.switch.engine import Switch

ELEMS, POOL = 8, 16
SWITCH_MAC, SWITCH_IP = 0x02AA00000001, 0x0A0000FE  # 10.0.0.254
WORKERS = [  # (rank, port, mac, ip)
    (0, 1, 0x020000000001, 0x0A000001),
    (1, 2, 0x020000000002, 0x0A000002),
    (2, 3, 0x020000000003, 0x0A000003),
]


def epoch_of(job: int) -> int:
    return 0x5EED0000 + job


@functools.cache
def _program(elems: int, pool: int) -> dict:
    return compile_file(AGGREGATE_P4, defines={"ELEMS": str(elems), "POOL_SIZE": str(pool)}).bmv2


def csum16(data: bytes) -> int:
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4(src: int, dst: int, proto: int, payload_len: int, ttl: int = 64) -> bytes:
    head = struct.pack("!BBHHHBBHII", 0x45, 0, 20 + payload_len, 0, 0, ttl, proto, 0, src, dst)
    return head[:10] + struct.pack("!H", csum16(head)) + head[12:]


def udp_frame(
    src_mac, dst_mac, src_ip, dst_ip, sport, dport, body, ttl=64, udp_checksum=0x1234
) -> bytes:
    udp = struct.pack("!HHHH", sport, dport, 8 + len(body), udp_checksum) + body
    eth = dst_mac.to_bytes(6, "big") + src_mac.to_bytes(6, "big") + b"\x08\x00"
    return eth + ipv4(src_ip, dst_ip, 17, len(udp), ttl) + udp


def agg_body(
    msg, rank, job, pool_set, index, exponent, values, round_=None, count=0, bitmap=0
) -> bytes:
    """The datagram by field name (hosts/packets.py `datagram`: a header field added later keeps
    its default); round_ defaults to the set: a slot's first use of that set."""
    round_ = pool_set if round_ is None else round_
    assert round_ & 1 == pool_set, "a datagram's set is its round's parity"
    return datagram(
        msg,
        epoch_of(job),
        values,
        rank=rank,
        job=job,
        index=index,
        round_=round_,
        exponent=exponent,
        count=count,
        bitmap=bitmap,
    )


def agg_packet(
    src_mac,
    dst_mac,
    src_ip,
    dst_ip,
    sport,
    dport,
    msg,
    rank,
    job,
    pool_set,
    index,
    exponent,
    values,
    ttl=64,
    udp_checksum=0x1234,
    round_=None,
    count=0,
    bitmap=0,
) -> bytes:
    return udp_frame(
        src_mac,
        dst_mac,
        src_ip,
        dst_ip,
        sport,
        dport,
        agg_body(msg, rank, job, pool_set, index, exponent, values, round_, count, bitmap),
        ttl,
        udp_checksum,
    )


def update(worker, job, pool_set, index, values, exponent=0, round_=None) -> tuple[int, bytes]:
    rank, port, mac, ip = worker
    return port, agg_packet(
        mac,
        SWITCH_MAC,
        ip,
        SWITCH_IP,
        UDP_PORT,
        UDP_PORT,
        MSG_UPDATE,
        rank,
        job,
        pool_set,
        index,
        exponent,
        values,
        ttl=64,
        round_=round_,
    )


def answer_for(
    worker, job, pool_set, index, values, exponent, rank, bitmap, msg=MSG_RESULT, round_=None
) -> tuple[int, bytes]:
    """A RESULT (values = the sums) or STATUS (values = the request's) for `worker`, holding the
    contributions of the ranks in `bitmap`."""
    _rank, port, mac, ip = worker
    wrapped = [(int(s) + 2**31) % 2**32 - 2**31 for s in values]
    return port, agg_packet(
        SWITCH_MAC,
        mac,
        SWITCH_IP,
        ip,
        UDP_PORT,
        UDP_PORT,
        msg,
        rank,
        job,
        pool_set,
        index,
        exponent,
        wrapped,
        udp_checksum=0,
        round_=round_,
        count=bitmap.bit_count(),
        bitmap=bitmap,
    )


def status_to_all(
    workers, job, pool_set, index, values, exponent, rank, bitmap
) -> list[tuple[int, bytes]]:
    """The STATUS a retransmission to a collecting slot gets: a copy to every worker of the job, so a
    worker missing from `bitmap` learns it must resend."""
    return [
        answer_for(w, job, pool_set, index, values, exponent, rank, bitmap, msg=MSG_STATUS)
        for w in workers
    ]


def result_for(
    worker, job, pool_set, index, sums, exponent, rank, bitmap=None, round_=None
) -> tuple[int, bytes]:
    """The RESULT `worker` gets; bitmap defaults to every rank of WORKERS up to the completing one."""
    bitmap = (1 << (rank + 1)) - 1 if bitmap is None else bitmap
    return answer_for(worker, job, pool_set, index, sums, exponent, rank, bitmap, round_=round_)


def add_job(
    sw: Switch,
    job: int,
    workers,
    base: int,
    num_slots: int,
    quorum: int | None = None,
    timeout_us: int = 0,
    staleness: int = 0,
) -> None:
    mgid = job_group(job)
    for rank, port, mac, ip in workers:
        sw.tables["InaIngress.admission"].add([port, mac, ip, job, rank], "InaIngress.admit", [])
        sw.tables["InaEgress.result_rewrite"].add(
            [worker_rid(job, rank)], "InaEgress.to_worker", [mac, ip, UDP_PORT]
        )
    n = len(workers)
    sw.tables["InaIngress.jobs"].add(
        [job],
        "InaIngress.set_job",
        [
            base,
            num_slots,
            n,
            mgid,
            epoch_of(job),
            n if quorum is None else quorum,
            timeout_us,
            staleness,
        ],
    )
    sw.multicast.set_group(mgid, [(port, worker_rid(job, rank)) for rank, port, _m, _i in workers])


@pytest.fixture(params=["python", "native"])
def switch(request):
    sw = Switch(engine=request.param)
    sw.load(_program(ELEMS, POOL))
    sw.tables["InaIngress.switch_config"].set_default(
        "InaIngress.set_switch_addr", [SWITCH_MAC, SWITCH_IP]
    )
    sw.multicast.set_group(1, [(1, 0), (2, 0), (3, 0), (4, 0)])
    return sw


def counter(sw: Switch, name: str, index: int) -> int:
    return sw.counters[name].read(index)[0]


def values_of(rank: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed * 100 + rank)
    return rng.integers(-(2**20), 2**20, ELEMS)


@pytest.mark.parametrize("n", [2, 3])
def test_basic_reduction_multicasts_the_exact_sum(switch, n):
    workers = WORKERS[:n]
    add_job(switch, 5, workers, base=0, num_slots=4)
    arrays = [values_of(r) for r in range(n)]
    for w in workers[:-1]:
        assert switch.process(*update(w, 5, 0, 2, arrays[w[0]], exponent=3 + w[0])) == []
    out = switch.process(*update(workers[-1], 5, 0, 2, arrays[-1], exponent=1))
    total = np.sum(arrays, axis=0)
    assert out == [result_for(w, 5, 0, 2, total, 3 + n - 2, workers[-1][0]) for w in workers]
    assert counter(switch, "InaIngress.job_accepted", 5) == n
    assert counter(switch, "InaIngress.job_completed", 5) == 1
    assert counter(switch, "InaEgress.job_results_sent", 5) == n


def test_retransmission_after_completion_answers_only_that_worker(switch):
    add_job(switch, 1, WORKERS[:2], base=0, num_slots=4)
    a, b = values_of(0), values_of(1)
    switch.process(*update(WORKERS[0], 1, 0, 0, a))
    switch.process(*update(WORKERS[1], 1, 0, 0, b))
    out = switch.process(*update(WORKERS[0], 1, 0, 0, a))
    assert out == [result_for(WORKERS[0], 1, 0, 0, a + b, 0, 0, bitmap=0b11)]
    assert counter(switch, "InaIngress.job_retrans_answered", 1) == 1


def test_retransmission_to_incomplete_slot_gets_a_status_to_every_worker_and_is_not_added(switch):
    add_job(switch, 1, WORKERS[:3], base=0, num_slots=4)
    a = values_of(0)
    switch.process(*update(WORKERS[0], 1, 0, 0, a, exponent=6))
    status = status_to_all(WORKERS[:3], 1, 0, 0, a, 6, 0, 0b001)
    assert switch.process(*update(WORKERS[0], 1, 0, 0, a, exponent=6)) == status
    assert counter(switch, "InaIngress.job_duplicates", 1) == 1
    b, c = values_of(1), values_of(2)
    switch.process(*update(WORKERS[1], 1, 0, 0, b))
    out = switch.process(*update(WORKERS[2], 1, 0, 0, c))
    assert out[0] == result_for(WORKERS[0], 1, 0, 0, a + b + c, 6, 2)  # the duplicate was not added


def test_both_sets_in_flight_and_slot_reuse(switch):
    add_job(switch, 2, WORKERS[:2], base=4, num_slots=2)
    a0, b0, a1, b1, a2, b2 = (values_of(r, s) for s in range(3) for r in range(2))
    switch.process(*update(WORKERS[0], 2, 0, 1, a0))
    out0 = switch.process(*update(WORKERS[1], 2, 0, 1, b0))
    assert out0[1] == result_for(WORKERS[1], 2, 0, 1, a0 + b0, 0, 1)
    # Worker 0 moves on to set 1 (round 1) while worker 1 still waits for set 0: both sets are in use.
    assert switch.process(*update(WORKERS[0], 2, 1, 1, a1)) == []
    assert switch.process(*update(WORKERS[1], 2, 0, 1, b0)) == [
        result_for(WORKERS[1], 2, 0, 1, a0 + b0, 0, 1)
    ]
    out1 = switch.process(*update(WORKERS[1], 2, 1, 1, b1))
    assert out1[0] == result_for(WORKERS[0], 2, 1, 1, a1 + b1, 0, 1)
    # Round 2 reuses set 0: its round 0 is done, so the old sums are gone.
    switch.process(*update(WORKERS[0], 2, 0, 1, a2, round_=2))
    out2 = switch.process(*update(WORKERS[1], 2, 0, 1, b2, round_=2))
    assert out2[0] == result_for(WORKERS[0], 2, 0, 1, a2 + b2, 0, 1, round_=2)
    assert switch.registers["InaIngress.slot_round"].read(0 * POOL + 4 + 1) == 2
    assert switch.registers["InaIngress.slot_round"].read(1 * POOL + 4 + 1) == 1


def test_retransmission_from_previous_set_still_answered(switch):
    add_job(switch, 3, WORKERS[:2], base=0, num_slots=1)
    a, b, a1 = values_of(0), values_of(1), values_of(0, 1)
    switch.process(*update(WORKERS[0], 3, 0, 0, a))
    switch.process(*update(WORKERS[1], 3, 0, 0, b))
    switch.process(*update(WORKERS[0], 3, 1, 0, a1))  # worker 0 got its result and moved on
    out = switch.process(*update(WORKERS[1], 3, 0, 0, b))  # worker 1 lost its copy
    assert out == [result_for(WORKERS[1], 3, 0, 0, a + b, 0, 1)]


def test_int32_sums_wrap_around(switch):
    add_job(switch, 4, WORKERS[:2], base=0, num_slots=1)
    big = np.full(ELEMS, 2**31 - 1)
    switch.process(*update(WORKERS[0], 4, 0, 0, big))
    out = switch.process(*update(WORKERS[1], 4, 0, 0, np.full(ELEMS, 5)))
    sums = struct.unpack(f"!{ELEMS}i", out[0][1][-ELEMS * 4 :])
    assert sums == tuple([-(2**31) + 4] * ELEMS)


def test_two_jobs_interleaved_do_not_interfere(switch):
    add_job(switch, 7, WORKERS[:2], base=0, num_slots=4)
    others = [
        (rank, port, mac, ip) for rank, (_r, port, mac, ip) in enumerate(WORKERS[1:3])
    ]  # ranks 0, 1
    add_job(switch, 8, others, base=4, num_slots=4)
    x0, x1, y0, y1 = values_of(0, 7), values_of(1, 7), values_of(0, 8), values_of(1, 8)
    switch.process(*update(WORKERS[0], 7, 0, 0, x0))
    switch.process(*update(others[0], 8, 0, 0, y0))
    out_x = switch.process(*update(WORKERS[1], 7, 0, 0, x1))
    out_y = switch.process(*update(others[1], 8, 0, 0, y1))
    assert out_x[0] == result_for(WORKERS[0], 7, 0, 0, x0 + x1, 0, 1)
    assert out_y[1] == result_for(others[1], 8, 0, 0, y0 + y1, 0, 1)


def test_rank_beyond_the_jobs_workers_is_refused_even_if_admitted(switch):
    add_job(switch, 1, WORKERS[:2], base=0, num_slots=2)
    rank, port, mac, ip = 2, *WORKERS[2][1:]
    switch.tables["InaIngress.admission"].add([port, mac, ip, 1, rank], "InaIngress.admit", [])
    assert switch.process(*update(WORKERS[2], 1, 0, 0, values_of(2))) == []
    assert counter(switch, "InaIngress.port_refused", port) == 1
    assert counter(switch, "InaIngress.job_accepted", 1) == 0


def test_unknown_worker_wrong_job_and_out_of_range_are_refused(switch):
    add_job(switch, 1, WORKERS[:2], base=0, num_slots=2)
    stranger = (1, 3, 0x02000000BEEF, 0x0A000063)
    assert switch.process(*update(stranger, 1, 0, 0, values_of(0))) == []
    assert switch.process(*update(WORKERS[0], 9, 0, 0, values_of(0))) == []  # not admitted to job 9
    assert counter(switch, "InaIngress.port_refused", 3) == 1
    assert counter(switch, "InaIngress.port_refused", 1) == 1
    assert switch.process(*update(WORKERS[0], 1, 0, 2, values_of(0))) == []
    assert counter(switch, "InaIngress.job_out_of_range", 1) == 1
    assert counter(switch, "InaIngress.job_accepted", 1) == 0


def test_ordinary_traffic_forwarded_and_broadcast_flooded_except_ingress(switch):
    switch.tables["InaIngress.l2_forward"].add([0x020000000002], "InaIngress.forward", [2])
    frame = bytes.fromhex("02000000000202000000000188b5") + b"hello"
    assert switch.process(1, frame) == [(2, frame)]
    broadcast = bytes.fromhex("ffffffffffff02000000000188b5") + b"hello"
    assert switch.process(1, broadcast) == [(2, broadcast), (3, broadcast), (4, broadcast)]


def test_arp_request_for_switch_ip_is_answered(switch):
    request = (
        bytes.fromhex("ffffffffffff02000000000108060001080006040001020000000001")
        + struct.pack("!I", 0x0A000001)
        + bytes(6)
        + struct.pack("!I", SWITCH_IP)
    )
    reply = (
        bytes.fromhex("020000000001")
        + SWITCH_MAC.to_bytes(6, "big")
        + bytes.fromhex("08060001080006040002")
        + SWITCH_MAC.to_bytes(6, "big")
        + struct.pack("!I", SWITCH_IP)
        + bytes.fromhex("020000000001")
        + struct.pack("!I", 0x0A000001)
    )
    assert switch.process(1, request) == [(1, reply)]


def test_ping_of_switch_ip_is_answered_with_a_valid_checksum(switch):
    icmp_body = struct.pack("!BBHHH", 8, 0, 0, 0x1234, 1) + b"ping-data"
    icmp = icmp_body[:2] + struct.pack("!H", csum16(icmp_body + b"\x00")) + icmp_body[4:]
    request = (
        SWITCH_MAC.to_bytes(6, "big")
        + bytes.fromhex("0200000000010800")
        + ipv4(0x0A000001, SWITCH_IP, 1, len(icmp), ttl=63)
        + icmp
    )
    [(port, reply)] = switch.process(1, request)
    assert port == 1
    echo = reply[34:]
    assert echo[0] == 0 and csum16(echo + b"\x00") == 0
    assert reply[:34] == bytes.fromhex("020000000001") + SWITCH_MAC.to_bytes(
        6, "big"
    ) + b"\x08\x00" + ipv4(SWITCH_IP, 0x0A000001, 1, len(icmp), ttl=64)


def test_drop_probability_one_drops_everything_and_zero_nothing(switch):
    switch.tables["InaIngress.l2_forward"].add([0x020000000002], "InaIngress.forward", [2])
    frame = bytes.fromhex("02000000000202000000000188b5") + b"x" * 50
    switch.tables["InaIngress.drop_sim_in"].add([1], "InaIngress.set_drop_rate", [0xFFFFFFFF])
    assert all(switch.process(1, frame) == [] for _ in range(200))
    assert counter(switch, "InaIngress.port_drop_sim_in", 1) == 200
    handle = switch.tables["InaIngress.drop_sim_in"].entries()[0].handle
    switch.tables["InaIngress.drop_sim_in"].modify(handle, "InaIngress.set_drop_rate", [0])
    assert all(switch.process(1, frame) == [(2, frame)] for _ in range(200))


def test_elems_64_reduction():
    sw = Switch()
    sw.load(_program(64, 64))
    sw.tables["InaIngress.switch_config"].set_default(
        "InaIngress.set_switch_addr", [SWITCH_MAC, SWITCH_IP]
    )
    add_job(sw, 0, WORKERS[:2], base=0, num_slots=8)
    rng = np.random.default_rng(64)
    a, b = rng.integers(-(2**31), 2**31, 64), rng.integers(-(2**31), 2**31, 64)  # sums wrap
    assert sw.process(*update(WORKERS[0], 0, 1, 7, a)) == []
    out = sw.process(*update(WORKERS[1], 0, 1, 7, b))
    assert out == [result_for(w, 0, 1, 7, a + b, 0, 1) for w in WORKERS[:2]]
    assert sw.registers["InaIngress.slot_acc_63"].read(1 * 64 + 7) == int(a[63] + b[63]) % 2**32


def test_every_port_from_0xbee0_to_0xbeef_aggregates_and_its_neighbours_are_forwarded(switch):
    """docs/protocol.md: the switch recognises UDP ports 0xBEE0-0xBEEF, only to its own IP."""
    add_job(switch, 6, WORKERS[:2], base=0, num_slots=16)
    for index, dport in enumerate(range(0xBEE0, 0xBEF0)):
        sent = []
        for w in WORKERS[:2]:
            rank, port, mac, ip = w
            values = values_of(rank, index)
            sent.append(values)
            out = switch.process(
                port,
                agg_packet(
                    mac, SWITCH_MAC, ip, SWITCH_IP, UDP_PORT, dport, 1, rank, 6, 0, index, 0, values
                ),
            )
        assert out == [result_for(w, 6, 0, index, sent[0] + sent[1], 0, 1) for w in WORKERS[:2]], (
            hex(dport)
        )
    assert counter(switch, "InaIngress.job_completed", 6) == 16
    # Outside the range, or to another IP, an UPDATE is ordinary traffic: the switch's MAC is not
    # in l2_forward, so it is flooded (not back out of its ingress port) and no slot changes.
    _rank, port, mac, ip = WORKERS[0]
    for dport, dst_ip in [(0xBEDF, SWITCH_IP), (0xBEF0, SWITCH_IP), (UDP_PORT, 0x0A000063)]:
        packet = agg_packet(
            mac, SWITCH_MAC, ip, dst_ip, UDP_PORT, dport, 1, 0, 6, 1, 0, 0, values_of(0)
        )
        assert switch.process(port, packet) == [(p, packet) for p in (2, 3, 4)], hex(dport)
    assert counter(switch, "InaIngress.job_accepted", 6) == 32
    assert switch.registers["InaIngress.slot_bitmap"].read(1 * POOL + 0) == 0


def test_malformed_updates_are_dropped_and_counted_per_port(switch):
    """docs/protocol.md: an agg header without its complete value block, or a msg_type that is
    none of UPDATE, RESULT, STATUS, is dropped and counted in port_malformed[ingress port], before
    admission; a RESULT or STATUS from anyone but the job's parent switch is refused and counted
    in job_parent_refused[job]."""
    add_job(switch, 1, WORKERS[:2], base=0, num_slots=2)
    sent: dict[int, list[int]] = {}
    for w, body in [
        (WORKERS[0], agg_body(1, 0, 1, 0, 0, 0, values_of(0))[:-1]),  # one value byte short
        (WORKERS[0], agg_body(1, 0, 1, 0, 0, 0, [])),  # the header alone
        (WORKERS[1], agg_body(0, 1, 1, 0, 0, 0, values_of(1))),
        (WORKERS[1], agg_body(4, 1, 1, 0, 0, 0, values_of(1))),
        (
            WORKERS[2],
            agg_body(255, 2, 1, 0, 0, 0, values_of(2)),
        ),  # not even admitted: malformed first
    ]:
        _rank, port, mac, ip = w
        packet = udp_frame(mac, SWITCH_MAC, ip, SWITCH_IP, UDP_PORT, UDP_PORT, body)
        assert switch.process(port, packet) == []
        sent.setdefault(port, []).append(len(packet))
    for port in (1, 2, 3, 4):
        lengths = sent.get(port, [])
        assert switch.counters["InaIngress.port_malformed"].read(port) == (
            len(lengths),
            sum(lengths),
        )
        assert counter(switch, "InaIngress.port_refused", port) == 0
    assert counter(switch, "InaIngress.job_accepted", 1) == 0
    # a RESULT and a STATUS sent to the switch by a worker: the job has no parent to send them
    for msg in (MSG_RESULT, MSG_STATUS):
        _rank, port, mac, ip = WORKERS[1]
        body = agg_body(msg, 1, 1, 0, 0, 0, values_of(1))
        packet = udp_frame(mac, SWITCH_MAC, ip, SWITCH_IP, UDP_PORT, UDP_PORT, body)
        assert switch.process(port, packet) == []
    assert counter(switch, "InaIngress.job_parent_refused", 1) == 2
    assert counter(switch, "InaIngress.port_malformed", 2) == 2
    assert switch.registers["InaIngress.slot_bitmap"].read(0) == 0
    # the two short ones end the parser at the value block (PacketTooShort): still malformed
    assert (switch.stats["rx"], switch.stats["dropped"], switch.stats["parser_errors"]) == (7, 7, 2)


# --- completion policies (docs/protocol.md, "Completion policies") ---------------------------

FOUR = [*WORKERS, (3, 4, 0x020000000004, 0x0A000004)]


def test_quorum_completes_with_k_and_answers_the_late_contribution_without_adding_it(switch):
    add_job(switch, 2, FOUR, base=0, num_slots=2, quorum=3)
    vals = [values_of(r, 2) for r in range(4)]
    for r in (3, 0):
        assert switch.process(*update(FOUR[r], 2, 0, 1, vals[r], exponent=r)) == []
    out = switch.process(*update(FOUR[2], 2, 0, 1, vals[2], exponent=2))
    counted = 0b1101
    total = vals[0] + vals[2] + vals[3]
    assert out == [answer_for(w, 2, 0, 1, total, 3, 2, counted) for w in FOUR]
    late = switch.process(*update(FOUR[1], 2, 0, 1, vals[1], exponent=9))
    assert late == [
        answer_for(FOUR[1], 2, 0, 1, total, 3, 1, counted)
    ]  # not added, exponent not raised
    assert counter(switch, "InaIngress.job_late", 2) == 1
    assert counter(switch, "InaIngress.job_completed", 2) == 1
    assert switch.registers["InaIngress.slot_count"].read(1) == 3
    # a counted worker's retransmission gets the same RESULT
    assert switch.process(*update(FOUR[3], 2, 0, 1, vals[3], exponent=3)) == [
        answer_for(FOUR[3], 2, 0, 1, total, 3, 3, counted)
    ]
    assert counter(switch, "InaIngress.job_retrans_answered", 2) == 1


def test_a_later_round_starts_only_on_a_done_use_and_an_earlier_one_is_refused(switch):
    add_job(switch, 3, WORKERS[:3], base=0, num_slots=1, quorum=2)
    a, b, c = (values_of(r, 3) for r in range(3))
    switch.process(*update(WORKERS[0], 3, 0, 0, a, round_=4))
    # round 6 over the collecting round 4: refused, told round 4 (count 1, rank 0), nothing changes
    assert switch.process(*update(WORKERS[1], 3, 0, 0, b, round_=6)) == [
        answer_for(WORKERS[1], 3, 0, 0, b, 0, 1, 0b001, msg=MSG_STATUS, round_=4)
    ]
    assert counter(switch, "InaIngress.job_stale", 3) == 1
    out = switch.process(*update(WORKERS[1], 3, 0, 0, b, round_=4))
    assert out[0] == answer_for(WORKERS[0], 3, 0, 0, a + b, 0, 1, 0b011, round_=4)
    # round 4 is done: round 6 starts fresh; then round 4 from rank 2 is older: refused, told round 6
    assert switch.process(*update(WORKERS[1], 3, 0, 0, c, round_=6)) == []
    assert switch.process(*update(WORKERS[2], 3, 0, 0, c, round_=4)) == [
        answer_for(WORKERS[2], 3, 0, 0, c, 0, 2, 0b010, msg=MSG_STATUS, round_=6)
    ]
    assert counter(switch, "InaIngress.job_stale", 3) == 2
    assert counter(switch, "InaIngress.job_accepted", 3) == 3
    # rounds compare modulo 2^32: 1 is later than 0xFFFFFFFF
    add_job(switch, 4, WORKERS[:2], base=1, num_slots=1)
    switch.process(*update(WORKERS[0], 4, 1, 0, a, round_=0xFFFFFFFF))
    switch.process(*update(WORKERS[1], 4, 1, 0, b, round_=0xFFFFFFFF))
    assert switch.process(*update(WORKERS[0], 4, 1, 0, c, round_=1)) == []
    assert switch.registers["InaIngress.slot_round"].read(POOL + 1) == 1


def test_timeout_completes_a_slot_with_what_it_has_on_its_next_packet(switch):
    add_job(switch, 5, WORKERS[:3], base=0, num_slots=1, timeout_us=500)
    a, b, c = values_of(0, 5), values_of(1, 5), values_of(2, 5)
    switch.set_clock(1000)
    assert switch.process(*update(WORKERS[0], 5, 0, 0, a)) == []  # the first starts the clock
    assert switch.registers["InaIngress.slot_started"].read(0) == 1000
    switch.set_clock(1499)  # 499 us later: before the deadline, stored
    assert switch.process(*update(WORKERS[1], 5, 0, 0, b)) == []
    switch.set_clock(1500)  # the deadline: rank 0's retransmission completes it with 2 of 3
    assert switch.process(*update(WORKERS[0], 5, 0, 0, a)) == [
        answer_for(w, 5, 0, 0, a + b, 0, 0, 0b011) for w in WORKERS[:3]
    ]
    assert counter(switch, "InaIngress.job_timeouts", 5) == 1
    assert switch.process(*update(WORKERS[2], 5, 0, 0, c)) == [
        answer_for(WORKERS[2], 5, 0, 0, a + b, 0, 2, 0b011)
    ]
    assert counter(switch, "InaIngress.job_late", 5) == 1


def test_a_contribution_after_the_deadline_completes_with_itself_counted(switch):
    add_job(switch, 5, WORKERS[:3], base=0, num_slots=1, timeout_us=500)
    a, b = values_of(0, 5), values_of(1, 5)
    switch.set_clock(0)
    switch.process(*update(WORKERS[0], 5, 0, 0, a))
    switch.set_clock(600)
    assert switch.process(*update(WORKERS[1], 5, 0, 0, b)) == [
        answer_for(w, 5, 0, 0, a + b, 0, 1, 0b011) for w in WORKERS[:3]
    ]


def test_the_clock_is_the_switchs_to_set_and_survives_a_reload(switch):
    switch.set_clock(123)
    switch.load(_program(ELEMS, POOL))
    switch.tables["InaIngress.switch_config"].set_default(
        "InaIngress.set_switch_addr", [SWITCH_MAC, SWITCH_IP]
    )
    add_job(switch, 1, WORKERS[:2], base=0, num_slots=1)
    switch.process(*update(WORKERS[0], 1, 0, 0, values_of(0)))
    assert switch.registers["InaIngress.slot_started"].read(0) == 123
    with pytest.raises(ValueError, match=r"clock 281474976710656 us is out of range 0\.\.2\^48-1"):
        switch.set_clock(1 << 48)


def test_timeout_fires_on_a_retransmission_and_not_before_the_deadline(switch):
    add_job(switch, 6, WORKERS[:3], base=0, num_slots=1, timeout_us=0xFFFFFFFF)  # 71 minutes
    a = values_of(0, 6)
    switch.process(*update(WORKERS[0], 6, 0, 0, a))
    assert switch.process(*update(WORKERS[0], 6, 0, 0, a)) == status_to_all(
        WORKERS[:3], 6, 0, 0, a, 0, 0, 0b001
    )
    handle = switch.tables["InaIngress.jobs"].entries()[0].handle
    n, mgid = 3, job_group(6)
    switch.tables["InaIngress.jobs"].modify(
        handle, "InaIngress.set_job", [0, 1, n, mgid, epoch_of(6), n, 1, 0]
    )
    assert switch.process(*update(WORKERS[0], 6, 0, 0, a)) == [
        answer_for(w, 6, 0, 0, a, 0, 0, 0b001) for w in WORKERS[:3]
    ]
    assert counter(switch, "InaIngress.job_timeouts", 6) == 1
    assert counter(switch, "InaIngress.job_duplicates", 6) == 1


def test_a_lowered_quorum_completes_a_collecting_slot_on_its_next_packet(switch):
    add_job(switch, 7, FOUR, base=0, num_slots=1)
    vals = [values_of(r, 7) for r in range(4)]
    for r in range(3):
        switch.process(*update(FOUR[r], 7, 0, 0, vals[r]))
    handle = switch.tables["InaIngress.jobs"].entries()[0].handle
    switch.tables["InaIngress.jobs"].modify(
        handle, "InaIngress.set_job", [0, 1, 4, job_group(7), epoch_of(7), 3, 0, 0]
    )
    out = switch.process(*update(FOUR[1], 7, 0, 0, vals[1]))
    assert out == [answer_for(w, 7, 0, 0, vals[0] + vals[1] + vals[2], 0, 1, 0b0111) for w in FOUR]
    assert counter(switch, "InaIngress.job_timeouts", 7) == 0
    assert counter(switch, "InaIngress.job_completed", 7) == 1
