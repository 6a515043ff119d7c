"""Captures in virtual time: read back with scapy, a channel's pcap holds exactly the frames, bytes
and first-bit times the channel put on its wire (lost frames in, dropped ones out), and a whole
run's captures agree with every link's counters and the workers' packets."""

import struct

from scapy.layers.inet import UDP
from scapy.utils import rdpcap

from ina.p4src.protocol import UDP_PORT
from ina.sim import pcap
from ina.sim.allreduce import AllReduceConfig, simulate
from ina.sim.cli import main
from ina.sim.links import Channel, LinkSpec
from ina.sim.output import Outputs


def frame(n: int, size: int) -> bytes:
    return bytes([n]) * size


def test_a_channel_capture_has_its_wire_frames_at_their_first_bit_in_nanoseconds(tmp_path):
    lost = iter([False, True, False, False, False])
    channel = Channel("h1:0->s1:1", 1e9, 3e-6, capacity=700, loss=lambda: next(lost), trace=True)
    [channel.tap] = pcap.capture([channel], tmp_path)
    s = (300 + 24) * 8 / 1e9
    sent = [
        channel.send(1.5e-6, frame(n, 300)) for n in range(4)
    ]  # the fourth finds 600 + 300 > 700 queued
    later = channel.send(1.0, frame(9, 1500))  # long after: the wire is free
    channel.tap.flush()
    assert [a is not None for a in sent] == [True, False, True, False] and later is not None
    assert (channel.stats.frames, channel.stats.lost, channel.stats.dropped) == (4, 1, 1)
    packets = rdpcap(str(tmp_path / "h1-0_to_s1-1.pcap"))
    starts = [
        1.5e-6,
        1.5e-6 + s,
        (1.5e-6 + s) + s,
        1.0,
    ]  # the second frame was lost on the wire: captured
    assert [bytes(p) for p in packets] == [
        frame(0, 300),
        frame(1, 300),
        frame(2, 300),
        frame(9, 1500),
    ]
    assert [round(p.time * 10**9) for p in packets] == [round(t * 1e9) for t in starts]
    assert (len(packets), sum(len(p) for p in packets)) == (
        channel.stats.frames,
        channel.stats.bytes,
    )
    channel.settle()
    leaving = {
        t
        for (t, queued), (_t0, before) in zip(channel.trace[1:], channel.trace, strict=False)
        if queued < before
    }
    assert {round(t * 1e9) for t in leaving} <= {round(p.time * 10**9) for p in packets}


def test_the_file_is_classic_pcap_with_nanosecond_magic_and_records_past_the_buffer(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(pcap, "FLUSH_BYTES", 100)
    channel = Channel("s1:2->h2:0", 1e9, 0.0)
    [capture] = pcap.capture([channel], tmp_path / "made")
    channel.tap = capture
    for n in range(5):
        channel.send(n * 1.0 + 0.25, frame(n, 64))
    capture.flush()
    data = (tmp_path / "made" / "s1-2_to_h2-0.pcap").read_bytes()
    assert struct.unpack("<IHHiIII", data[:24]) == (0xA1B23C4D, 2, 4, 0, 0, 65535, 1)
    record = struct.unpack("<IIII", data[24 + 2 * (16 + 64) : 24 + 2 * (16 + 64) + 16])
    assert record == (2, 250_000_000, 64, 64)
    assert len(data) == 24 + 5 * (16 + 64)


def test_a_runs_captures_agree_with_every_link_and_the_workers_packets(tmp_path):
    config = AllReduceConfig(
        workers=3, size=2000, link=LinkSpec(10e9, 2e-6, 20000, loss=0.02), seed=7
    )
    outputs = Outputs(config, plot=tmp_path / "plots", pcap_dir=tmp_path / "pcap")
    result = simulate(config, watch=outputs.watch)
    outputs.close()
    assert result.verified and sum(up.lost + down.lost for _n, up, down in result.links) > 0
    assert (
        len(outputs.captures) == 2 * len(result.links) == len(list((tmp_path / "pcap").iterdir()))
    )
    for channel, capture, log in zip(outputs.channels, outputs.captures, outputs.logs, strict=True):
        packets = rdpcap(str(capture.path))
        assert (len(packets), sum(len(p) for p in packets)) == (
            channel.stats.frames,
            channel.stats.bytes,
        )
        assert [round(p.time * 10**9) for p in packets] == [round(t * 1e9) for t in log.starts]
    for rank, (_job, _rank, host) in enumerate(result.workers):
        uplink = rdpcap(str(tmp_path / "pcap" / f"{host}-0_to_s1-{rank + 1}.pcap"))
        assert sum(p[UDP].dport == UDP_PORT for p in uplink) == result.packets_sent[rank]


def test_a_run_that_fails_still_leaves_whole_captures(tmp_path, capsys):
    argv = [
        "--workers",
        "2",
        "--size",
        "256",
        "--loss",
        "1",
        "--timeout",
        "10us",
        "--pcap",
        str(tmp_path),
    ]
    assert main(argv) == 1
    assert "ina sim: the all-reduce failed" in capsys.readouterr().err
    uplink = rdpcap(
        str(tmp_path / "h1-0_to_s1-1.pcap")
    )  # every UPDATE and resend, lost on the wire
    assert len(uplink) > 4 and all(p[UDP].dport == UDP_PORT for p in uplink)
