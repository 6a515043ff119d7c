"""sim/tcp.py: a TCP connection between two hosts over two channels, with chosen frames lost: the
real frame bytes, delayed ACKs, slow start, fast retransmit, the RTO; exact counts and virtual
times; and the ring's int32 sums bit-exact over it with and without loss."""

import numpy as np
import pytest
from wire_pair import WirePair

from ina.sim.allreduce import AllReduceConfig, job_arrays
from ina.sim.frames import TCP_HEADERS, TCP_MSS
from ina.sim.links import LinkSpec, wire_bits
from ina.sim.ring import simulate_ring
from ina.sim.tcp import LISTEN_PORT, SOURCE_PORT, Host, TcpSpec, connect

RATE, DELAY = 1e9, 1e-6
SPEC = TcpSpec()
SEGMENT = wire_bits(TCP_HEADERS + TCP_MSS) / RATE  # 12.304 us
ACK = wire_bits(TCP_HEADERS) / RATE


class Pair(WirePair):
    """TCP host a sends to host b (wire_pair.py); `acks` are b's acknowledgment numbers in order."""

    def __init__(self, drop: set[tuple[str, int]] = frozenset(), spec: TcpSpec = SPEC):
        super().__init__(
            lambda sim, address, send: Host(sim, address, send, RATE, spec),
            connect,
            spec,
            RATE,
            DELAY,
            drop,
        )

    def acks(self) -> list[int]:
        return [int.from_bytes(f[42:46], "big") for _t, f in self.frames["ba"]]


def data(segments: int) -> bytes:
    return bytes(i % 251 for i in range(segments * TCP_MSS))


def test_one_segment_is_a_real_tcp_frame_and_its_ack_waits_for_the_delayed_ack_timer():
    pair = Pair()
    pair.run(b"x" * 1000)
    assert pair.delivered == [
        (pytest.approx(wire_bits(TCP_HEADERS + 1000) / RATE + DELAY, abs=1e-15), b"x" * 1000)
    ]
    [(sent, frame)] = pair.frames["ab"]
    assert sent == 0.0 and len(frame) == TCP_HEADERS + 1000 == 1066
    assert (
        frame[:6] == bytes.fromhex("020000000002")
        and frame[12:14] == b"\x08\x00"
        and frame[23] == 6
    )  # IPv4, TCP
    assert frame[16:18] == (20 + 32 + 1000).to_bytes(2, "big")
    assert frame[34:36] == (SOURCE_PORT + 5).to_bytes(2, "big") and frame[
        36:38
    ] == LISTEN_PORT.to_bytes(2, "big")
    assert (
        frame[38:42] == bytes(4) and frame[46] == 0x80 and frame[47] == 0x18
    )  # seq 0; 32-byte header; ACK, PSH
    assert frame[54:58] == b"\x01\x01\x08\x0a" and frame[66:] == b"x" * 1000  # NOP, NOP, timestamps
    [(acked_at, ack)] = pair.frames["ba"]
    assert len(ack) == 66 and pair.acks() == [1000]
    assert acked_at == pytest.approx(pair.delivered[0][0] + SPEC.delayed_ack, abs=1e-15)
    assert (pair.sender.frames_sent, pair.sender.retransmissions, pair.sender.una) == (1, 0, 1000)


def test_the_initial_window_goes_back_to_back_acked_every_second_segment():
    pair = Pair()
    pair.run(data(10))
    assert pair.delivered == [(pytest.approx(10 * SEGMENT + DELAY, abs=1e-15), data(10))]
    assert [t for t, _f in pair.frames["ab"]] == [
        0.0
    ] * 10  # IW10: all at once into the host's queue
    assert [len(f) for _t, f in pair.frames["ab"]] == [1514] * 10
    assert pair.acks() == [2 * k * TCP_MSS for k in range(1, 6)]
    assert [t for t, _f in pair.frames["ba"]] == pytest.approx(
        [2 * k * SEGMENT + DELAY for k in range(1, 6)], abs=1e-15
    )
    assert pair.sender.cwnd == 20  # slow start: a segment per segment acknowledged


def test_past_the_initial_window_the_sender_waits_for_acks_and_slow_start_grows_the_window():
    pair = Pair()
    pair.run(data(30))
    sent = [t for t, _f in pair.frames["ab"]]
    assert sent[:10] == [0.0] * 10
    first_ack = 2 * SEGMENT + DELAY + ACK + DELAY  # the ACK of segments 0 and 1 back at a
    assert sent[10:12] == pytest.approx(
        [first_ack] * 2, abs=1e-15
    )  # two segments acknowledged: two more, two new
    assert len(pair.frames["ba"]) == 15 and pair.sender.cwnd == 40
    assert pair.delivered[0][1] == data(30)


def test_a_lost_segment_is_recovered_by_fast_retransmit_on_the_third_duplicate_ack():
    pair = Pair(drop={("ab", 2)})
    pair.run(data(20))
    assert pair.delivered[0][1] == data(20)
    assert (pair.sender.fast_retransmits, pair.sender.timeouts, pair.sender.retransmissions) == (
        1,
        0,
        1,
    )
    # the ACK of 0-1, a duplicate at once for each of segments 3-13 (those after the ACK too), then the
    # hole filled (ACKed at once: 0-13), then every second segment
    assert [a // TCP_MSS for a in pair.acks()] == [2] * 12 + [14, 16, 18, 20]
    third_duplicate = [t for t, _f in pair.frames["ba"]][3] + ACK + DELAY
    resent = [
        (t, f) for t, f in pair.frames["ab"] if int.from_bytes(f[38:42], "big") == 2 * TCP_MSS
    ]
    assert len(resent) == 2 and resent[1][0] == pytest.approx(third_duplicate, abs=1e-15)
    assert len(pair.frames["ab"]) == 21
    assert pair.delivered[0][0] < SPEC.min_rto  # no timeout on the way


def test_a_lost_last_segment_waits_for_the_first_rto():
    pair = Pair(drop={("ab", 0)})
    pair.run(b"y" * 100)
    assert pair.delivered == [
        (
            pytest.approx(
                SPEC.initial_rto + wire_bits(TCP_HEADERS + 100) / RATE + DELAY, abs=1e-12
            ),
            b"y" * 100,
        )
    ]
    assert (
        pair.sender.timeouts,
        pair.sender.retransmissions,
        pair.sender.cwnd,
        pair.sender.ssthresh,
    ) == (1, 1, 2.0, 2.0)
    assert pair.sender.rto == 2 * SPEC.initial_rto


def test_messages_are_cut_from_the_stream_in_order_an_empty_one_with_those_before_it():
    pair = Pair()
    pair.run(b"a" * 3000, b"", b"b" * 10)
    assert [d for _t, d in pair.delivered] == [b"a" * 3000, b"", b"b" * 10]
    assert pair.delivered[0][0] == pair.delivered[1][0]


@pytest.mark.parametrize(
    ("workers", "size", "loss"), [(4, 40_000, 0.0), (4, 40_000, 0.01), (3, 2, 0.0)]
)
def test_the_ring_over_tcp_sums_int32_bit_exact_with_and_without_loss(workers, size, loss):
    config = AllReduceConfig(
        workers=workers, size=size, link=LinkSpec(1e9, 2e-6, 1 << 20, loss=loss), seed=5
    )
    result = simulate_ring(config, SPEC)
    expected = np.sum([np.asarray(a) for a in _arrays(config)], axis=0, dtype=np.int32)
    assert result.verified and all(
        np.array_equal(r.reshape(-1), expected.reshape(-1)) for r in result.results
    )
    lost = sum(up.lost + down.lost for _n, up, down in result.links)
    assert (
        (lost > 0 and sum(result.retransmissions) > 0)
        if loss
        else result.retransmissions == [0] * workers
    )


def _arrays(config: AllReduceConfig) -> list[np.ndarray]:
    [arrays] = job_arrays(config, config.topology()).values()
    return arrays


def test_the_host_holds_data_back_once_host_queue_bytes_wait_for_its_link_and_acks_go_at_once():
    pair = Pair(spec=TcpSpec(host_queue=2 * 1514))
    pair.run(data(4))
    sent = [t for t, _f in pair.frames["ab"]]
    room = 2 * 1514 * 8 / RATE  # the link's time for the bytes the host lets wait
    assert sent == pytest.approx([0.0, 0.0, 2 * SEGMENT - room, 3 * SEGMENT - room], abs=1e-15)
    assert pair.delivered[0][0] == pytest.approx(
        4 * SEGMENT + DELAY, abs=1e-15
    )  # the link never idled


def test_two_connections_between_the_same_hosts_take_turns_at_the_host_queue():
    pair = Pair(spec=TcpSpec(host_queue=1514))
    other: list[tuple[float, bytes]] = []
    second = connect(pair.a, pair.b, 6, pair.sender.spec, lambda t, d: other.append((t, d)))
    pair.sender.post(0.0, data(3))
    second.post(0.0, b"z" * 3 * TCP_MSS)
    pair.sim.run()
    ports = [int.from_bytes(f[34:36], "big") - SOURCE_PORT for _t, f in pair.frames["ab"]]
    assert ports == [5, 6, 5, 6, 5, 6]
    assert [d for _t, d in pair.delivered] == [data(3)] and [d for _t, d in other] == [
        b"z" * 3 * TCP_MSS
    ]
