"""The due-time index of a worker core's waiting transmissions: which slots `expire` resends now,
and when the next is due, found without a scan of the window (docs/protocol.md, "Loss detection
and retransmission").

Within a class of waiting transmissions the due times follow the order sent, so each class is read
up to its first one not due. The classes: those sent after the latest answered one, in the order
sent (each is due no sooner than the RTO after it was sent, so their walk stops at the first whose
RTO is past both now and the next due time found); and those sent before it (RACK's evidence of
loss), per turn position, resent, and counted by a STATUS (a heap by time sent). Entries of
transmissions answered or superseded since stay until they come first. The few slots a STATUS
lets ask early (probing) are looked at apart. The result is that of a scan of every waiting slot.
"""

import math
from collections import deque
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Final

from ina.hosts.slots import Slot
from ina.p4src.protocol import MAX_SLOTS

PACE_BURST = 4  # resends that leave at once; more are spread over one srtt per window
# `order` holds a transmission as one integer, seq << SEQ_SHIFT | slot (a tuple per packet was an
# object to allocate, free and track for the collector); slots are below MAX_SLOTS
SEQ_SHIFT: Final = MAX_SLOTS.bit_length() - 1
SLOT_MASK: Final = (1 << SEQ_SHIFT) - 1

Due = Callable[
    [int], tuple[float, bool, bool]
]  # slot -> (due time, timed out, a probe): the turn's rules


class DueIndex:
    """One all-reduce's waiting transmissions (seq, slot), ordered for `expire`. It reads the
    core's per-slot records (ina.hosts.slots) and never writes them: each slot's latest
    transmission (`seq`), a STATUS's bitmap, resends and the time sent, and whether it is waiting
    (`waiting`). The core appends every transmission to `order` itself (the per-packet path)."""

    __slots__ = ("_counted", "_n_workers", "_overtaken", "_rank", "_slots", "order")

    def __init__(self, rank: int, n_workers: int, slots: list[Slot]):
        self._rank, self._n_workers, self._slots = rank, n_workers, slots
        self.order: deque[int] = deque()  # sent after the latest answered one (SEQ_SHIFT)
        self._overtaken: list[deque[tuple[int, int]]] = [
            deque() for _ in range(n_workers + 1)
        ]  # per turn position, then resent
        self._counted: list[tuple[float, int, int]] = []  # (sent, seq, slot), counted by a STATUS

    def _current(self, seq: int, index: int, counted: bool | None) -> bool:
        """Whether transmission `seq` of slot `index` still waits (and, unless `counted` is None,
        whether a STATUS counted it, as `counted` says)."""
        slot = self._slots[index]
        return (
            slot.waiting and slot.seq == seq and (counted is None or bool(slot.status) == counted)
        )

    def overtake(self, rack_seq: int) -> None:
        """Transmission `rack_seq` was answered: the waiting ones sent before it join their class."""
        order, slots = self.order, self._slots
        while order and order[0] >> SEQ_SHIFT <= rack_seq:
            entry = order.popleft()
            seq, index = entry >> SEQ_SHIFT, entry & SLOT_MASK
            slot = slots[index]
            if slot.seq == seq and slot.waiting:
                if slot.status:
                    heappush(self._counted, (slot.sent_at, seq, index))
                elif slot.retries:
                    self._overtaken[-1].append((seq, index))
                else:
                    self._overtaken[(self._rank + index) % self._n_workers].append((seq, index))

    def count(self, index: int) -> None:
        """A STATUS counted overtaken slot `index`: it joins the counted class."""
        slot = self._slots[index]
        heappush(self._counted, (slot.sent_at, slot.seq, index))

    def due(
        self, now: float, due: Due, timer: float, probing: set[int]
    ) -> tuple[dict[int, tuple[int, bool, bool]], dict[int, float]]:
        """The transmissions due at `now`, seq -> (slot, timed out, probe), and those found waiting,
        seq -> due time (each class's first not due, and all the walk saw). `due` gives a slot's
        due time, `timer` is the RTO with its backoff; the walk of `order` is skipped when more
        than PACE_BURST are due already (they fill the next pacing gaps)."""
        due_now: dict[int, tuple[int, bool, bool]] = {}
        waits: dict[int, float] = {}
        self._overtaken_due(now, due, due_now, waits)
        self._counted_due(now, due, due_now, waits)
        order = self.order
        while order and not self._current(order[0] >> SEQ_SHIFT, order[0] & SLOT_MASK, None):
            order.popleft()
        if len(due_now) <= PACE_BURST:
            self._order_due(now, due, timer, due_now, waits)
        slots = self._slots
        for index in probing:
            seq = slots[index].seq
            if slots[index].waiting and seq not in waits and seq not in due_now:
                when, timed_out, probe = due(index)
                if now < when:
                    waits[seq] = when
                else:
                    due_now[seq] = (index, timed_out, probe)
        return due_now, waits

    def _overtaken_due(
        self,
        now: float,
        due: Due,
        due_now: dict[int, tuple[int, bool, bool]],
        waits: dict[int, float],
    ) -> None:
        """Those overtaken and not counted, per turn position and resent: each queue up to its first not due."""
        slots, current = self._slots, self._current
        for queue in self._overtaken:
            while queue and not current(*queue[0], False):
                queue.popleft()
            for seq, index in queue:
                slot = slots[index]
                if slot.waiting and slot.seq == seq and not slot.status:
                    when, timed_out, probe = due(index)
                    if now < when:
                        waits[seq] = when
                        break
                    due_now[seq] = (index, timed_out, probe)

    def _counted_due(
        self,
        now: float,
        due: Due,
        due_now: dict[int, tuple[int, bool, bool]],
        waits: dict[int, float],
    ) -> None:
        """Those overtaken and counted by a STATUS, by time sent, up to the first not due."""
        counted, taken = self._counted, []
        while counted:
            _sent, seq, index = counted[0]
            if not self._current(seq, index, True):
                heappop(counted)
                continue
            when, timed_out, probe = due(index)
            if now < when:
                waits[seq] = when
                break
            due_now[seq] = (index, timed_out, probe)
            taken.append(heappop(counted))
        for entry in taken:  # read in order, kept: those not resent now stay due
            heappush(counted, entry)

    def _order_due(
        self,
        now: float,
        due: Due,
        timer: float,
        due_now: dict[int, tuple[int, bool, bool]],
        waits: dict[int, float],
    ) -> None:
        """Those sent after the latest answered one, in the order sent, until one whose RTO (the
        least it waits) is past both now and the soonest due time found."""
        slots = self._slots
        soonest = min(waits.values(), default=math.inf)
        for entry in self.order:
            seq, index = entry >> SEQ_SHIFT, entry & SLOT_MASK
            slot = slots[index]
            if slot.waiting and slot.seq == seq:
                earliest = slot.sent_at + timer  # sent after the latest answer: the RTO at least
                if now < earliest and soonest <= earliest:
                    break
                when, timed_out, probe = due(index)
                if now < when:
                    waits[seq] = when
                    soonest = min(soonest, when)
                else:
                    due_now[seq] = (index, timed_out, probe)
