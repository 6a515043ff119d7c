"""The discrete-event core: one clock and one heap of events, for every runner in virtual time.

An event is a tuple (time, sequence, handler, args); the heap orders by time, and events at the
same time run in the order they were queued (the sequence), so a run is deterministic. `run`
calls handler(time, *args) for each in turn.

The clock (`now`) is the time of the last event that did something: a handler that acts sets
`sim.now = time`, and one that finds it has nothing to do (a timer that a later deadline
superseded) leaves it. So work a caller starts after `run` starts when the last thing happened,
not when the last stale timer lapsed.
"""

import heapq
from collections.abc import Callable

_push, _pop = heapq.heappush, heapq.heappop


class Simulator:
    """A virtual clock and the events waiting on it."""

    __slots__ = ("_queue", "_sequence", "now")

    def __init__(self) -> None:
        self.now = 0.0
        self._queue: list[tuple] = []
        self._sequence = 0

    def at(self, time: float, handler: Callable, *args) -> None:
        """Run handler(time, *args) at `time` (after the events already queued for that time)."""
        self._sequence += 1
        _push(self._queue, (time, self._sequence, handler, args))

    def run(self, until: Callable[[], bool] | None = None) -> None:
        """Run events in order until `until()` holds (checked before each) or none is left."""
        queue = self._queue
        if until is None:
            while queue:
                time, _sequence, handler, args = _pop(queue)
                handler(time, *args)
            return
        while queue and not until():
            time, _sequence, handler, args = _pop(queue)
            handler(time, *args)

    @property
    def scheduled(self) -> int:
        """Events queued so far, run or not."""
        return self._sequence
