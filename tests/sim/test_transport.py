"""sim/transport.py: RoCE's reliable connection between two NICs over two channels, with chosen
frames lost: the real frame bytes, go-back-N on a NAK, the timeout for a tail loss, duplicates
re-ACKed, exact counts and virtual times."""

import pytest
from wire_pair import WirePair

from ina.hosts.inprocess import FRAME_HEADERS
from ina.sim.links import wire_bits
from ina.sim.transport import (
    ACK_FRAME,
    DATA_OVERHEAD,
    ROCE_PORT,
    SEND_FIRST,
    SEND_ONLY,
    Nic,
    TransportError,
    TransportSpec,
    connect,
)

RATE, DELAY = 1e9, 1e-6
SPEC = TransportSpec(mtu=1000, window=64, ack_every=4, timeout=1e-3, retries=2)
FRAME = wire_bits(DATA_OVERHEAD + 1000) / RATE  # 8.656 us
ACK = wire_bits(ACK_FRAME) / RATE


class Pair(WirePair):
    """RoCE NIC a sends to NIC b (wire_pair.py); `receiver` is b's end of the connection."""

    def __init__(self, drop: set[tuple[str, int]] = frozenset(), spec: TransportSpec = SPEC):
        super().__init__(
            lambda sim, address, send: Nic(sim, address, send, RATE),
            connect,
            spec,
            RATE,
            DELAY,
            drop,
        )
        self.receiver = self.b.receivers[5]


DATA = bytes(range(256)) * 39 + bytes(16)  # 10,000 bytes: ten frames


def test_a_message_travels_in_real_roce_frames_acked_every_fourth_and_the_last():
    pair = Pair()
    pair.run(DATA)
    assert pair.delivered == [(pytest.approx(10 * FRAME + DELAY, abs=1e-15), DATA)]
    frames = [f for _t, f in pair.frames["ab"]]
    assert [len(f) for f in frames] == [DATA_OVERHEAD + 1000] * 10
    first = frames[0]
    assert first[:6] == bytes.fromhex("020000000002") and first[6:12] == bytes.fromhex(
        "020000000001"
    )
    assert first[36:38] == ROCE_PORT.to_bytes(2, "big") and first[38:40] == (
        8 + 12 + 1000 + 4
    ).to_bytes(2, "big")
    assert (
        first[FRAME_HEADERS] == SEND_FIRST
        and first[FRAME_HEADERS + 5 : FRAME_HEADERS + 8] == b"\0\0\x05"
    )
    assert first[FRAME_HEADERS + 12 : FRAME_HEADERS + 1012] == DATA[:1000] and first[-4:] == bytes(
        4
    )
    asked = [f[FRAME_HEADERS + 8] >> 7 for f in frames]
    assert asked == [0, 0, 0, 1, 0, 0, 0, 1, 0, 1]
    assert (
        [len(f) for _t, f in pair.frames["ba"]]
        == [ACK_FRAME] * 3
        == [ACK_FRAME] * SPEC.acks(len(DATA))
    )
    assert (pair.sender.frames_sent, pair.sender.retransmissions, pair.sender.una) == (10, 0, 10)
    assert sum(wire_bits(len(f)) for f in frames) == SPEC.wire_bits(len(DATA))[0]
    assert sum(wire_bits(len(f)) for _t, f in pair.frames["ba"]) == SPEC.wire_bits(len(DATA))[1]


def test_a_lost_frame_is_nakked_once_and_the_sender_goes_back_to_it():
    pair = Pair(drop={("ab", 3)})
    pair.run(DATA)
    # Frame 4 reaches b at 5 FRAME + DELAY: one NAK naming PSN 3 is back at a an ACK later, while
    # a serializes frame 5; from its end a resends 3, 4, 5 and sends 6..9.
    nak_back = 5 * FRAME + DELAY + ACK + DELAY
    assert 5 * FRAME < nak_back < 6 * FRAME
    assert pair.delivered == [(pytest.approx(6 * FRAME + 7 * FRAME + DELAY, abs=1e-15), DATA)]
    assert (pair.sender.frames_sent, pair.sender.retransmissions, pair.sender.timeouts) == (
        13,
        3,
        0,
    )
    assert (pair.receiver.naks, pair.receiver.out_of_order, pair.receiver.duplicates) == (1, 2, 0)
    psns = [
        int.from_bytes(f[FRAME_HEADERS + 9 : FRAME_HEADERS + 12], "big")
        for _t, f in pair.frames["ab"]
    ]
    assert psns == [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7, 8, 9]


def test_a_lost_last_frame_waits_for_the_timeout_and_a_resent_duplicate_is_acked():
    pair = Pair(drop={("ab", 9)})
    pair.run(DATA)
    last_ack = 8 * FRAME + DELAY + ACK + DELAY  # the ACK of PSN 7: the last answer before the stall
    fired = last_ack + SPEC.timeout
    assert pair.delivered == [(pytest.approx(fired + 2 * FRAME + DELAY, abs=1e-12), DATA)]
    assert (pair.sender.timeouts, pair.sender.retransmissions, pair.receiver.duplicates) == (
        1,
        2,
        1,
    )
    assert [len(f) for _t, f in pair.frames["ba"]] == [
        ACK_FRAME
    ] * 4  # PSN 3, 7, the duplicate 8, and 9


def test_messages_arrive_in_order_and_an_empty_one_takes_one_padded_frame():
    pair = Pair(drop={("ab", 1), ("ba", 0)})
    pair.run(b"x" * 10, b"", DATA[:2500])
    assert [data for _t, data in pair.delivered] == [b"x" * 10, b"", DATA[:2500]]
    empty = pair.frames["ab"][1][1]
    assert len(empty) == DATA_OVERHEAD and empty[FRAME_HEADERS] == SEND_ONLY
    assert SPEC.frames(0) == 1 and SPEC.wire_bits(0)[0] == wire_bits(60)


def test_a_connection_gives_up_after_its_retries():
    pair = Pair(
        drop={("ab", i) for i in range(1, 10)}
    )  # PSN 0 arrives, unacknowledged: 1 asks for the ACK
    with pytest.raises(
        TransportError, match=r"QP 5 to 10.0.0.2: PSN 0 unacknowledged after 2 retries of 1 ms"
    ):
        pair.run(b"x" * 1500)
    assert pair.sender.timeouts == 3


def test_the_window_bounds_the_frames_in_flight_and_the_frame_filling_it_asks_for_an_ack():
    pair = Pair(spec=TransportSpec(mtu=1000, window=2, ack_every=4, timeout=1e-3))
    pair.run(DATA)
    round_trip = 2 * FRAME + DELAY + ACK + DELAY  # two frames out, the second's ACK back
    assert pair.delivered == [(pytest.approx(4 * round_trip + 2 * FRAME + DELAY, abs=1e-15), DATA)]
    assert (pair.sender.frames_sent, pair.sender.timeouts) == (10, 0)
    assert [t for t, _f in pair.frames["ab"]][::2] == pytest.approx(
        [k * round_trip for k in range(5)], abs=1e-15
    )
