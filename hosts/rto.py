"""A worker core's RTT estimate and retransmission timeout (docs/protocol.md, "Worker loss recovery").

RFC 6298's estimator, fed by a window of answers per RTT, with a floor from the fastest answer seen
and a host's scheduling noise, a backoff shared by every slot (the RTO of the path, not of a
packet), and RACK's reordering window, widened per spurious retransmission (which undoes the backoff).
"""

import math
from typing import Final

# Final: compiled (ina/compiled.py), literals inlined where any other module-level name is a lookup
# in the module's dict per use (`sample` runs per answer)
MIN_RTO: Final = 300e-6  # a host's RTO floor in seconds, whatever the measured RTT: its scheduling noise (`min_rto`)
RTO_MIN_RTTS: Final = (
    2  # ... and in minimum RTTs: a timeout never fires within the fastest answer seen
)
SAME_TIME: Final = (
    1e-9  # seconds: RTTs closer than this are equal (in virtual time two sums of the same
)
# terms in another order differ in their last bits; a host's clock reads no finer than 1 ns)
MAX_RTO: Final = 2.0
MAX_BACKOFF: Final = 6  # the RTO doubles per timed-out retry up to 2**6 times


class RttEstimator:
    """The path's round trip as the core's answers measure it. The core reads its fields directly
    (the per-packet path): `srtt` (None before the first sample; `smoothed` the same as a machine
    float, 0 before it, so that compiled a sample boxes no float), `min_rtt`, `rto`, `timer` (the RTO
    times 2 ** backoff: how long a slot waits for its timeout) and `reo_wnd` (RACK's reordering
    window: reo_mult x min_rtt / 4, widened up to srtt). `timeout` is the RTO until the first sample."""

    __slots__ = (
        "_floor",
        "_min_rto",
        "_reo_mult",
        "_shrink",
        "backoff",
        "min_rtt",
        "reo_wnd",
        "rto",
        "rttvar",
        "sampled",
        "smoothed",
        "timer",
    )

    def __init__(self, timeout: float, min_rto: float, window: int):
        self.smoothed = 0.0
        self.sampled = False
        self.rttvar = 0.0
        self.min_rtt = math.inf
        self.rto = self.timer = timeout
        self.backoff = 0
        self.reo_wnd = 0.0
        self._reo_mult = 1
        self._min_rto = min_rto
        self._floor = min_rto  # max(min_rto, RTO_MIN_RTTS * min_rtt)
        # RFC 6298 assumes a sample per RTT; a window of answers gives `window`. The deviation grows
        # with the RFC's gain but shrinks `window` times slower, so a scheduling spike is remembered
        # for about an RTT, not forgotten after a few answers.
        self._shrink = 0.25 / window

    @property
    def srtt(self) -> float | None:
        """The smoothed RTT (None before the first sample)."""
        return self.smoothed if self.sampled else None

    def sample(self, rtt: float) -> None:
        """An RTT sample: RFC 6298's estimator and the RTO (its floor from the fastest answer seen);
        a fresh sample ends the backoff."""
        if not self.sampled:
            srtt, rttvar = rtt, rtt / 2
        else:
            srtt = self.smoothed
            err, rttvar = abs(srtt - rtt), self.rttvar
            rttvar += (err - rttvar) * (0.25 if err > rttvar else self._shrink)
            srtt = 0.875 * srtt + 0.125 * rtt
        if rtt < self.min_rtt:
            self.min_rtt = rtt
            self._floor = max(self._min_rto, RTO_MIN_RTTS * rtt)
            self.reo_wnd = self._reo_mult * rtt / 4
        rto = srtt + 4 * rttvar
        if rto < self._floor:
            rto = self._floor
        self.smoothed, self.sampled, self.rttvar, self.backoff = srtt, True, rttvar, 0
        self.rto = self.timer = rto if rto < MAX_RTO else MAX_RTO

    def spurious(self) -> None:
        """The answer to a slot's original, after it was resent: the resend was not needed. Undo the
        backoff and widen the reordering window (at most srtt) so the next delay is not called a
        loss. The original's time is no sample: it ran past the timer by the timer's own wait, and a
        use that waited on the others' recovery measures theirs (a sample of it lifted the RTO of
        a BMv2 run to its 2 s cap)."""
        if self.sampled and self.reo_wnd < self.smoothed:  # a sample came before
            self._reo_mult += 1
            self.reo_wnd = self._reo_mult * self.min_rtt / 4
        self.backoff, self.timer = 0, self.rto

    def timed_out(self, timeouts: int) -> None:
        """A slot timed out for the `timeouts`-th time in a row: the RTO doubles that many times (at
        most MAX_BACKOFF), for every slot, until a fresh sample."""
        if timeouts > self.backoff:
            self.backoff = min(timeouts, MAX_BACKOFF)
            self.timer = self.rto * (1 << self.backoff)
