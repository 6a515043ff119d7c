"""Theory of what a worker's link carries per iteration (train/traffic.py), counted by hand."""

from ina.p4src.protocol import HEADER_LEN
from ina.train.traffic import expected_bytes

FRAME = 14 + 20 + 8 + HEADER_LEN + 4 * 64  # one UPDATE or RESULT of 64 float32 elements
ZERO = 14 + 20 + 8 + HEADER_LEN  # a ZERO UPDATE or RESULT: the header alone


def test_switch_sends_a_packet_per_chunk_and_one_exponent_announcement_per_slot_used():
    # 10,000 elements: 157 chunks of 64 (the last one partial); 64 slots used once more for the
    # exponents, each a ZERO UPDATE answered by a ZERO RESULT; 100 elements: 2 chunks, 2 slots
    assert expected_bytes("switch", [10_000, 100], 4, 64, 64) == {
        "worker_link": (157 + 2) * FRAME + (64 + 2) * ZERO,
        "busiest_link": (157 + 2) * FRAME + (64 + 2) * ZERO,
    }


def test_parameter_server_link_carries_every_workers_packets():
    # 2 chunks and 2 ZERO announcements up; the server answers each with a whole RESULT
    up, down = 2 * FRAME + 2 * ZERO, 4 * FRAME
    assert expected_bytes("ps", [100], 4, 64, 64) == {
        "worker_link": (up + down) / 2,
        "busiest_link": 4 * down,
    }


def test_ring_sends_two_n_minus_one_segments_in_tcp_frames():
    # 4 workers, 1,000 float32: segments of 1,000 bytes (one TCP frame each), 2 x 3 sent per rank
    assert expected_bytes("ring", [1000], 4, 64, 64) == {
        "worker_link": 6 * (1000 + 66),
        "busiest_link": 6 * (1000 + 66),
    }
    # 4,000 float32: segments of 4,000 bytes, 3 frames each (1,448 + 1,448 + 1,104)
    assert expected_bytes("ring", [4000], 4, 64, 64)["worker_link"] == 6 * (4000 + 3 * 66)


def test_a_group_announces_one_window_and_the_ring_sends_the_concatenation():
    # grouped: the same 157 + 2 chunks (each bucket in whole chunks), one window of 64 slots in all
    assert (
        expected_bytes("switch", [10_000, 100], 4, 64, 64, grouped=True)["worker_link"]
        == (157 + 2) * FRAME + 64 * ZERO
    )
    # window 2, two buckets of 2 chunks: 2 slots announced once, not 2 per bucket
    assert expected_bytes("switch", [100, 100], 4, 64, 2, grouped=True)["worker_link"] == (
        4 * FRAME + 2 * ZERO
    )
    assert expected_bytes("switch", [100, 100], 4, 64, 2)["worker_link"] == 4 * FRAME + 4 * ZERO
    # the ring: 1,000 + 3,000 float32 as one array of 4,000 (3 frames per segment, not 1 + 3)
    assert expected_bytes("ring", [1000, 3000], 4, 64, 64, grouped=True) == expected_bytes(
        "ring", [4000], 4, 64, 64
    )
