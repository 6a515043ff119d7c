"""One direction of a full-duplex link: the sending port's egress queue, its serializer and the wire.

A frame handed to a `Channel` at time t waits behind the frames before it (FIFO), is serialized at
the link's rate, and reaches the far end `delay` seconds after its last bit left:

    wire bits     = (max(len(frame), MIN_FRAME) + ETHERNET_OVERHEAD) * 8
    serialization = wire bits / rate
    start         = max(t, when the previous frame's last bit left)
    arrival       = start + serialization + delay

The queue holds the frames waiting for the wire (the one being serialized has left it), counted in
their frame bytes; a frame that would take it past `capacity` is dropped (drop-tail). A frame that
finds more than `ecn` bytes waiting would be marked (counted: the protocol has no ECN bit). Loss on
the wire (uniform or Gilbert-Elliott, each channel with its own seeded generator) takes a frame
after it was serialized: it used the link and never arrives. docs/simulation.md has the model's
assumptions.

The queue is kept without events: a frame's start time is known when it is queued, so frames
whose start has passed leave the queue the next time a frame comes. A channel of unlimited rate
and capacity never queues and adds exactly `delay`.

A channel's `tap`, when set, is called as tap(start, frame) for each frame that goes onto the wire,
at the time its first bit does (`start` above), lost frames included: what a capture on the sending
port would see (sim/pcap.py writes it, sim/plots.py measures utilisation from it). A frame dropped
at a full queue never reaches the wire or the tap. Frames reach the tap in their order on the wire.
"""

import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from ina.controller.aggregation import BurstLoss

MIN_FRAME = 60  # bytes: Ethernet pads shorter frames (before the FCS) to this
ETHERNET_OVERHEAD = (
    24  # bytes each frame costs on the wire beyond its own: preamble + SFD 8, FCS 4, IFG 12
)
SAME_INSTANT = 1e-12  # seconds: a frame that finds the wire busy for less waits for nothing (float
# sums along two paths to one instant differ in their last bits; a bit takes 10 ps at 100 Gbit/s)


def wire_bits(frame_len: int) -> int:
    """The bits a frame of `frame_len` bytes occupies the wire for: padded to MIN_FRAME, plus the
    Ethernet overhead (its serialization time is this / the rate)."""
    return ((frame_len if frame_len > MIN_FRAME else MIN_FRAME) + ETHERNET_OVERHEAD) * 8


class UniformLoss:
    """Each frame lost with probability `p`, independently."""

    __slots__ = ("_random", "p")

    def __init__(self, p: float, rng: random.Random):
        self.p, self._random = p, rng.random

    def __call__(self) -> bool:
        return self._random() < self.p


class GilbertElliottLoss:
    """Bursty loss as the switch's drop simulator does it (BurstLoss, docs/protocol.md): a frame is
    lost with its state's probability, then the state moves good->bad with probability p_gb or
    bad->good with p_bg. Starts good; the long-run loss rate is
    (p_bg * loss_good + p_gb * loss_bad) / (p_gb + p_bg)."""

    __slots__ = ("_random", "bad", "spec")

    def __init__(self, spec: BurstLoss, rng: random.Random):
        self.spec, self._random, self.bad = spec, rng.random, False

    def __call__(self) -> bool:
        spec, draw = self.spec, self._random
        lost = draw() < (spec.loss_bad if self.bad else spec.loss_good)
        if draw() < (spec.p_bg if self.bad else spec.p_gb):
            self.bad = not self.bad
        return lost


@mypyc_attr(native_class=False)  # compiled too, it stays picklable: see ina/compiled.py
@dataclass(frozen=True)
class LinkSpec:
    """A full-duplex link, both directions alike: rate (bit/s), propagation delay (s), each end's
    egress queue (bytes of waiting frames), ECN marking threshold (bytes; None: none) and loss on
    the wire (a probability per frame, or Gilbert-Elliott)."""

    rate: float = math.inf
    delay: float = 0.0
    queue: float = math.inf
    ecn: float | None = None
    loss: float | BurstLoss = 0.0


def loss_model(
    loss: float | BurstLoss, rng: random.Random
) -> UniformLoss | GilbertElliottLoss | None:
    """The model of a link spec's `loss` (None when nothing is lost)."""
    if isinstance(loss, BurstLoss):
        return GilbertElliottLoss(loss, rng)
    return UniformLoss(loss, rng) if loss else None


@dataclass
class ChannelStats:
    """What one direction of a link carried: frames and bytes (frame bytes) put on the wire,
    dropped at its full queue, lost on the wire, marked past the ECN threshold, and the queue's
    peak in bytes."""

    frames: int = 0
    bytes: int = 0
    dropped: int = 0
    lost: int = 0
    marked: int = 0
    peak_queue: int = 0

    @property
    def delivered(self) -> int:
        """Frames that reached the far end."""
        return self.frames - self.lost


class Channel:
    """The egress port of one end of a link and the link's direction away from it."""

    __slots__ = (
        "_busy_until",
        "_loss",
        "_serialization",
        "_waiting",
        "capacity",
        "delay",
        "ecn",
        "name",
        "queued",
        "rate",
        "stats",
        "tap",
        "trace",
    )

    def __init__(
        self,
        name: str,
        rate: float,
        delay: float,
        capacity: float = math.inf,
        ecn: float | None = None,
        loss: Callable[[], bool] | None = None,  # True: this frame is lost (loss_model's)
        trace: bool = False,
    ):
        self.name, self.rate, self.delay, self.capacity, self.ecn = name, rate, delay, capacity, ecn
        self._loss = loss
        self.stats = ChannelStats()
        self.queued = 0  # frame bytes waiting for the wire
        self._waiting: deque[tuple[float, int]] = (
            deque()
        )  # (start of serialization, frame bytes), FIFO
        self._busy_until = -math.inf  # when the last frame queued leaves the wire
        self._serialization: dict[
            int, float
        ] = {}  # frame length -> wire_bits / rate: a run has few lengths
        self.trace: list[tuple[float, int]] | None = (
            [] if trace else None
        )  # (time, bytes queued) per change
        self.tap: Callable[[float, bytes | bytearray], None] | None = (
            None  # tap(start, frame) per frame on the wire
        )

    def send(self, now: float, frame: bytes | bytearray) -> float | None:
        """Queue `frame` at `now`; returns when it reaches the far end, or None when it is dropped
        (queue full) or lost on the wire. Calls come in time order."""
        size, stats, instant = len(frame), self.stats, now + SAME_INSTANT
        start = self._busy_until
        if (
            start <= instant
        ):  # the wire is free: the frame never waits, and all that waited has left
            if self._waiting:
                self._leave(instant)
            start = now
        else:
            waiting = self._waiting
            if waiting and waiting[0][0] <= instant:
                self._leave(instant)
            if self.queued + size > self.capacity:
                stats.dropped += 1
                return None
            if self.ecn is not None and self.queued > self.ecn:
                stats.marked += 1
            waiting.append((start, size))
            self.queued += size
            if self.queued > stats.peak_queue:
                stats.peak_queue = self.queued
            if self.trace is not None:
                self.trace.append((now, self.queued))
        serialization = self._serialization.get(size)
        if serialization is None:
            serialization = self._serialization[size] = wire_bits(size) / self.rate
        finish = start + serialization
        self._busy_until = finish
        stats.frames += 1
        stats.bytes += size
        if self.tap is not None:
            self.tap(start, frame)
        if self._loss is not None and self._loss():
            stats.lost += 1
            return None
        return finish + self.delay

    def settle(self) -> None:
        """Let every queued frame leave (the end of a run): the trace then ends at an empty queue."""
        self._leave(math.inf)

    def _leave(self, now: float) -> None:
        """The frames that began serializing by `now` leave the queue (and enter the trace then)."""
        waiting, trace = self._waiting, self.trace
        while waiting and waiting[0][0] <= now:
            started, size = waiting.popleft()
            self.queued -= size
            if trace is not None:
                trace.append((started, self.queued))
