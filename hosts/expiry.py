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

PACE_BURST = 4  # resends that leave at once; more are spread over one srtt per window

Due = Callable[
    [int], tuple[float, bool, bool]
]  # slot -> (due time, timed out, a probe): the turn's rules


class DueIndex:
    """One all-reduce's waiting transmissions, (seq, slot) each, ordered for `expire`. It reads the
    core's per-slot state and never writes it: each slot's latest transmission (`seq_of`), the
    waiting slots (`unanswered`), a STATUS's bitmap, resends and the time sent. The core appends
    every transmission to `order` itself (the per-packet path)."""

    __slots__ = (
        "_counted",
        "_n_workers",
        "_overtaken",
        "_rank",
        "_retries",
        "_sent_at",
        "_seq_of",
        "_status",
        "_unanswered",
        "order",
    )

    def __init__(
        self,
        rank: int,
        n_workers: int,
        seq_of: list[int],
        unanswered: dict[int, None],
        status: list[int],
        retries: list[int],
        sent_at: list[float],
    ):
        self._rank, self._n_workers = rank, n_workers
        self._seq_of, self._unanswered, self._status, self._retries, self._sent_at = (
            seq_of,
            unanswered,
            status,
            retries,
            sent_at,
        )
        self.order: deque[tuple[int, int]] = deque()  # sent after the latest answered one
        self._overtaken: list[deque[tuple[int, int]]] = [
            deque() for _ in range(n_workers + 1)
        ]  # per turn position, then resent
        self._counted: list[tuple[float, int, int]] = []  # (sent, seq, slot), counted by a STATUS

    def _current(self, seq: int, index: int, counted: bool | None) -> bool:
        """Whether transmission `seq` of slot `index` still waits (and, unless `counted` is None,
        whether a STATUS counted it, as `counted` says)."""
        return (
            index in self._unanswered
            and self._seq_of[index] == seq
            and (counted is None or bool(self._status[index]) == counted)
        )

    def overtake(self, rack_seq: int) -> None:
        """Transmission `rack_seq` was answered: the waiting ones sent before it join their class."""
        order, status, seq_of, unanswered = self.order, self._status, self._seq_of, self._unanswered
        while order and order[0][0] <= rack_seq:
            seq, index = order.popleft()
            if seq_of[index] == seq and index in unanswered:
                if status[index]:
                    heappush(self._counted, (self._sent_at[index], seq, index))
                elif self._retries[index]:
                    self._overtaken[-1].append((seq, index))
                else:
                    self._overtaken[(self._rank + index) % self._n_workers].append((seq, index))

    def count(self, index: int) -> None:
        """A STATUS counted overtaken slot `index`: it joins the counted class."""
        heappush(self._counted, (self._sent_at[index], self._seq_of[index], index))

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
        while order and not self._current(*order[0], None):
            order.popleft()
        if len(due_now) <= PACE_BURST:
            self._order_due(now, due, timer, due_now, waits)
        unanswered, seq_of = self._unanswered, self._seq_of
        for index in probing:
            seq = seq_of[index]
            if index in unanswered and seq not in waits and seq not in due_now:
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
        unanswered, status, seq_of, current = (
            self._unanswered,
            self._status,
            self._seq_of,
            self._current,
        )
        for queue in self._overtaken:
            while queue and not current(*queue[0], False):
                queue.popleft()
            for seq, index in queue:
                if index in unanswered and seq_of[index] == seq and not status[index]:
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
        unanswered, seq_of, sent_at = self._unanswered, self._seq_of, self._sent_at
        soonest = min(waits.values(), default=math.inf)
        for seq, index in self.order:
            if index in unanswered and seq_of[index] == seq:
                earliest = sent_at[index] + timer  # sent after the latest answer: the RTO at least
                if now < earliest and soonest <= earliest:
                    break
                when, timed_out, probe = due(index)
                if now < when:
                    waits[seq] = when
                    soonest = min(soonest, when)
                else:
                    due_now[seq] = (index, timed_out, probe)
