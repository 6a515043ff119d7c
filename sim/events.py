"""The discrete-event core: one clock and one queue of events, for every runner in virtual time.

An event is a handler and its arguments at a time; events run in time order, and events at the
same time in the order they were queued, so a run is deterministic. `run` calls
handler(time, *args) for each in turn.

The queue is a heap of the distinct times events wait for, each time's events in a list in the
order queued: the heap compares floats (not (time, sequence) tuples, two comparisons of boxed
items each), and events that share an instant (a multicast's copies, a host's sends) share one
heap entry. An event queued for a time before the one running runs next, as in any heap.

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

    __slots__ = ("_events", "_sequence", "_times", "now")

    def __init__(self) -> None:
        self.now = 0.0
        self._times: list[float] = []  # a heap: the times events wait for, each once
        # time -> its events not run yet, in the order queued (from `_ran` on: see `run`)
        self._events: dict[float, list[tuple[Callable, tuple]]] = {}
        self._sequence = 0

    def at(self, time: float, handler: Callable, *args) -> None:
        """Run handler(time, *args) at `time` (after the events already queued for that time)."""
        self._sequence += 1
        waiting = self._events.get(time)
        if waiting is None:
            self._events[time] = [(handler, args)]
            _push(self._times, time)
        else:
            waiting.append((handler, args))

    def run(self, until: Callable[[], bool] | None = None) -> None:
        """Run events in order until `until()` holds (checked before each) or none is left."""
        times, events = self._times, self._events
        while times:
            time = times[0]
            waiting = events[time]
            ran = 0  # the events of `time` run so far (a handler may queue more for it)
            while ran < len(waiting):
                if until is not None and until():
                    del waiting[:ran]
                    return
                handler, args = waiting[ran]
                ran += 1
                handler(time, *args)
                if times[0] != time:  # a handler queued an event before `time`: that runs first
                    break
            if ran == len(waiting) and times[0] == time:
                _pop(times)
                del events[time]
            else:  # stopped for an earlier event: the rest (maybe none) waits, `time` in the heap
                del waiting[:ran]

    def last(self, time: float) -> tuple | None:
        """The arguments of the event queued last for `time` (None: none is), for a caller that
        may add its work to that event's instead of queueing its own (`joined`); it may have run
        already (a time's events are kept until all have run), which the caller's arguments say."""
        waiting = self._events.get(time)
        return None if waiting is None else waiting[-1][1]

    def joined(self) -> None:
        """Count an event its caller added to the one queued last for its time (`last`) instead of
        queueing it: `scheduled` counts it as `at` would have."""
        self._sequence += 1

    @property
    def scheduled(self) -> int:
        """Events queued so far, run or not (those `joined` to one queued included)."""
        return self._sequence
