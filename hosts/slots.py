"""A worker core's per-slot state as one record, and its waiting slots in the order sent
(docs/protocol.md, "Worker loss recovery").

Compiled (ina/compiled.py), `Slot` is a native class: each field is a C struct member read in a
few instructions, where a list per field (the core's layout before) boxed and bounds-checked every
read on the per-answer path. The waiting slots are a list linked through the records: its oldest
is found at once, where a dict (before) that had its oldest keys deleted and put back at the end
was scanned past their holes for it. ina.hosts.core writes both; ina.hosts.expiry reads them.
"""

import math
from collections.abc import Iterator


class Slot:
    """One slot of a core's window. `round` and `held` last across all-reduces; `begin` resets the
    rest for a new one."""

    __slots__ = (
        "behind",
        "blind",
        "chunk",
        "done",
        "first_sent",
        "held",
        "index",
        "last_round",
        "newer",
        "older",
        "pkt",
        "probe_at",
        "retries",
        "round",
        "sent_at",
        "seq",
        "status",
        "timeouts",
        "waiting",
    )

    def __init__(self, index: int) -> None:
        self.index = index  # its place in the core's window
        self.waiting = False  # in the core's Waiting list: sent, not answered
        self.older: Slot | None = None  # its neighbours there
        self.newer: Slot | None = None
        self.round = 0  # its use number since the epoch began (the header's round)
        self.held: dict[int, bytes] = {}  # RESULTs of later uses: round -> the datagram
        self.pkt = bytearray()
        self.last_round = 0
        self.begin(bytearray(), 0, 0.0)
        self.done = True  # no all-reduce yet

    def begin(self, pkt: bytearray, last_round: int, now: float) -> None:
        """A new all-reduce: `pkt` is the slot's datagram buffer, `last_round` its final use."""
        self.pkt = pkt
        self.last_round = last_round
        self.chunk = 0  # the chunk the current use carries (< 0: a float slot's first use)
        self.done = False
        self.blind = False  # the current use's scale came with a RESULT never had: no sum
        self.status = 0  # a STATUS's bitmap: the switch counted the current use (0: not known)
        self.probe_at = math.inf  # when that STATUS came, until the one resend it allows
        self.behind = False  # the current use left late, after a resent one (see core's _take)
        self.retries = 0  # resends of the current use (Karn's rule, turns)
        self.timeouts = 0  # ... of which timed out: max_retries bounds these
        self.sent_at = now  # the current use's latest transmission
        self.first_sent = now  # when the current use was first sent (RTT samples)
        self.seq = 0  # the slot's latest transmission, in order


class Waiting:
    """The slots waiting for an answer, oldest transmission first: `append` puts a slot last
    (sent or resent), `remove` takes it out (answered, or done)."""

    __slots__ = ("newest", "oldest")

    def __init__(self) -> None:
        self.oldest: Slot | None = None
        self.newest: Slot | None = None

    def append(self, slot: Slot) -> None:
        if slot.waiting:
            self.remove(slot)
        slot.waiting, slot.older, slot.newer = True, self.newest, None
        if self.newest is None:
            self.oldest = slot
        else:
            self.newest.newer = slot
        self.newest = slot

    def remove(self, slot: Slot) -> None:
        if not slot.waiting:
            return
        older, newer = slot.older, slot.newer
        if older is None:
            self.oldest = newer
        else:
            older.newer = newer
        if newer is None:
            self.newest = older
        else:
            newer.older = older
        slot.waiting, slot.older, slot.newer = False, None, None

    def __iter__(self) -> Iterator[Slot]:
        slot = self.oldest
        while slot is not None:
            following = slot.newer  # read first: the caller may remove `slot`
            yield slot
            slot = following
