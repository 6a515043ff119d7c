"""The scapy layer decodes and crafts exactly the bytes ina.p4src.protocol's HEADER packs."""

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from ina.hosts import packets
from ina.hosts.scapy_layer import InaAgg
from ina.p4src.protocol import MSG_RESULT, MSG_STATUS, MSG_UPDATE, UDP_PORT


def test_scapy_decodes_what_the_worker_packs():
    buf = packets.datagram(
        MSG_UPDATE, 0x5EED0003, [-1, 2], rank=3, job=0x0102, index=5, round_=7, exponent=130
    )
    frame = Ether() / IP(dst="10.0.0.254") / UDP(sport=UDP_PORT, dport=UDP_PORT) / bytes(buf)
    agg = Ether(bytes(frame))[InaAgg]
    assert (
        agg.msg_type,
        agg.rank,
        agg.job_id,
        agg.pool_set,
        agg.pool_index,
        agg.exponent,
        agg.flags,
        agg.count,
        agg.epoch,
        agg.round,
        agg.bitmap,
        agg.values,
    ) == (1, 3, 0x0102, 1, 5, 130, 0, 0, 0x5EED0003, 7, 0, [-1, 2])
    assert agg.sprintf("%msg_type%") == "UPDATE"


def test_scapy_crafts_what_the_worker_parses():
    agg = InaAgg(
        msg_type=MSG_RESULT,
        rank=2,
        job_id=7,
        pool_set=0,
        pool_index=0x7FFF,
        exponent=9,
        count=3,
        epoch=0xFFFFFFFF,
        round=0xFFFFFFFE,
        bitmap=0x80000003,
        values=[7, -7],
    )
    assert packets.parse_header(bytes(agg)) == packets.Header(
        msg_type=MSG_RESULT,
        rank=2,
        job=7,
        pool_set=0,
        index=0x7FFF,
        exponent=9,
        flags=0,
        count=3,
        epoch=0xFFFFFFFF,
        round=0xFFFFFFFE,
        bitmap=0x80000003,
    )
    assert list(packets.values_of(bytes(agg), 2)) == [7, -7]
    assert InaAgg(msg_type=MSG_STATUS).sprintf("%msg_type%") == "STATUS"
