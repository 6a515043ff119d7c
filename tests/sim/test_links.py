"""One direction of a link: serialization and propagation to the exact formula of
docs/simulation.md, drop-tail and ECN counts for known bursts, the occupancy trace, and seeded loss."""

import math
import random

import pytest

from ina.controller.aggregation import BurstLoss
from ina.sim.links import (
    ETHERNET_OVERHEAD,
    MIN_FRAME,
    Channel,
    GilbertElliottLoss,
    LinkSpec,
    UniformLoss,
    loss_model,
)

GBPS = 1e9


def test_a_frame_arrives_exactly_its_serialization_and_propagation_after_it_was_sent():
    channel = Channel("h1->s1", 100 * GBPS, 1e-6)
    assert (ETHERNET_OVERHEAD, MIN_FRAME) == (24, 60)
    # (318 frame bytes + 24: preamble, SFD, FCS, gap) * 8 bits / 100 Gbit/s, then 1 us of wire.
    assert channel.send(0.5, bytes(318)) == 0.5 + (318 + 24) * 8 / 100e9 + 1e-6
    # Long after: the wire is free again, the frame waits for nothing.
    assert channel.send(2.0, bytes(1500)) == 2.0 + (1500 + 24) * 8 / 100e9 + 1e-6
    # A frame shorter than Ethernet's minimum is padded to 60 bytes.
    assert channel.send(3.0, bytes(42)) == 3.0 + (60 + 24) * 8 / 100e9 + 1e-6
    assert (channel.stats.frames, channel.stats.bytes, channel.stats.peak_queue) == (
        3,
        318 + 1500 + 42,
        0,
    )


def test_frames_sent_together_leave_back_to_back():
    channel = Channel("h1->s1", 10e6, 5e-6)
    s = (318 + 24) * 8 / 10e6
    arrivals = [channel.send(0.0, bytes(318)) for _ in range(3)]
    assert arrivals == [0.0 + s + 5e-6, (0.0 + s) + s + 5e-6, ((0.0 + s) + s) + s + 5e-6]
    # Sent while the third is still on the wire: it follows the third.
    assert channel.send(2 * s, bytes(318)) == (((0.0 + s) + s) + s) + s + 5e-6


def test_drop_tail_drops_exactly_the_frames_past_the_capacity_and_the_trace_follows_the_queue():
    channel = Channel("s1->h1", 1 * GBPS, 0.0, capacity=1000, trace=True)
    s = (300 + 24) * 8 / 1e9
    burst = [channel.send(0.0, bytes(300)) for _ in range(6)]
    # The first goes on the wire; three wait (900 bytes); 900 + 300 > 1000: the last two are dropped.
    assert [a is not None for a in burst] == [True, True, True, True, False, False]
    assert (
        channel.stats.frames,
        channel.stats.dropped,
        channel.queued,
        channel.stats.peak_queue,
    ) == (4, 2, 900, 900)
    # Half a frame after the second began: it left the queue, so one more fits.
    assert channel.send(1.5 * s, bytes(300)) is not None
    assert (channel.queued, channel.stats.dropped, channel.stats.peak_queue) == (900, 2, 900)
    channel.settle()
    t1 = 0.0 + s
    t2, t3, t4 = t1 + s, t1 + s + s, t1 + s + s + s
    assert channel.trace == [
        (0.0, 300),
        (0.0, 600),
        (0.0, 900),
        (t1, 600),
        (1.5 * s, 900),
        (t2, 600),
        (t3, 300),
        (t4, 0),
    ]
    assert channel.queued == 0


def test_a_queue_of_no_bytes_takes_only_the_frame_the_wire_is_free_for():
    channel = Channel("s1->h1", 1 * GBPS, 0.0, capacity=0)
    assert [channel.send(0.0, bytes(100)) is not None for _ in range(3)] == [True, False, False]
    assert channel.stats.dropped == 2


def test_ecn_counts_the_frames_that_find_more_than_the_threshold_waiting():
    channel = Channel("s1->h1", 1 * GBPS, 0.0, ecn=200)
    for _ in range(6):
        channel.send(0.0, bytes(100))
    # Waiting ahead of frames 1..5: 0, 100, 200, 300, 400 bytes (frame 0 took the wire): two find more than 200.
    assert channel.stats.marked == 2
    assert channel.stats.dropped == 0


def test_an_unlimited_channel_adds_exactly_its_delay_and_never_queues():
    channel = Channel("h1->s1", math.inf, 10e-6)
    for now in (0.0, 0.0, 1e-6, 1e-6, 7.25e-3):
        assert channel.send(now, bytes(318)) == now + 10e-6
    assert (channel.stats.frames, channel.stats.peak_queue, channel.queued) == (5, 0, 0)


def test_a_frame_lost_on_the_wire_used_it():
    lost = iter([True, False])
    channel = Channel("h1->s1", 1 * GBPS, 0.0, loss=lambda: next(lost))
    s = (100 + 24) * 8 / 1e9
    assert channel.send(0.0, bytes(100)) is None
    assert channel.send(0.0, bytes(100)) == (0.0 + s) + s  # it waited for the lost one's bits
    assert (channel.stats.frames, channel.stats.lost, channel.stats.delivered) == (2, 1, 1)


class Draws:
    """A generator that returns the given values in turn."""

    def __init__(self, values):
        self.random = iter(values).__next__


def test_gilbert_elliott_loses_with_the_state_it_is_in_then_moves():
    spec = BurstLoss(loss_good=0.1, loss_bad=0.9, p_gb=0.2, p_bg=0.3)
    # (loss draw, move draw) per frame: good keeps 0.5 (no loss), moves on 0.15 < p_gb; bad loses
    # 0.5 < 0.9 and stays on 0.35 >= p_bg; then 0.95: kept, and 0.25 < p_bg: good again; good: 0.05 lost.
    model = GilbertElliottLoss(spec, Draws([0.5, 0.15, 0.5, 0.35, 0.95, 0.25, 0.05, 0.9]))
    assert [model() for _ in range(4)] == [False, True, False, True]
    assert model.bad is False


@pytest.mark.parametrize(
    ("model", "seed", "lost", "rate"),
    [
        (BurstLoss(0.0, 0.5, 0.01, 0.1), 7, 9326, (0.1 * 0.0 + 0.01 * 0.5) / (0.01 + 0.1)),
        (0.01, 7, 2006, 0.01),
    ],
)
def test_seeded_loss_is_the_same_for_the_seed_and_near_its_long_run_rate(model, seed, lost, rate):
    frames = 200_000
    runs = [
        [m() for _ in range(frames)]
        for m in (loss_model(model, random.Random(seed)) for _ in range(2))
    ]
    assert runs[0] == runs[1]
    assert sum(runs[0]) == lost  # this seed's exact count
    assert abs(sum(runs[0]) / frames - rate) < 0.1 * rate
    other = loss_model(model, random.Random(seed + 1))
    assert [other() for _ in range(frames)] != runs[0]


def test_a_link_without_loss_has_no_model():
    assert loss_model(0.0, random.Random(1)) is None
    assert isinstance(loss_model(0.5, random.Random(1)), UniformLoss)
    assert LinkSpec().rate == math.inf and LinkSpec().queue == math.inf
