"""Stateful externs: registers, counters and meters, stored as plain lists the generated code indexes,
and parser value sets."""

import time
from dataclasses import dataclass

GREEN, YELLOW, RED = 0, 1, 2


class Register:
    def __init__(self, name: str, size: int, bitwidth: int):
        self.name, self.size, self.bitwidth = name, size, bitwidth
        self.cells = [0] * size

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise IndexError(
                f"register '{self.name}' has {self.size} cells; index {index} is out of range"
            )

    def read(self, index: int) -> int:
        self._check(index)
        return self.cells[index]

    def read_range(self, start: int, count: int) -> list[int]:
        """`count` cells from `start`, in one call (a whole array's state)."""
        if count:  # an empty range reads nothing, of any array (one of 0 cells too)
            self._check(start)
            self._check(start + count - 1)
        return self.cells[start : start + count]

    def write(self, index: int, value: int) -> None:
        self._check(index)
        if not 0 <= value < (1 << self.bitwidth):
            raise ValueError(
                f"value {value} does not fit register '{self.name}' ({self.bitwidth} bits)"
            )
        self.cells[index] = value

    def reset(self) -> None:
        self.cells[:] = [0] * self.size


class Counter:
    """An indirect counter array: packets and bytes per index."""

    def __init__(self, name: str, size: int):
        self.name, self.size = name, size
        self.packets = [0] * size
        self.bytes = [0] * size

    def _check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise IndexError(
                f"counter '{self.name}' has {self.size} cells; index {index} is out of range"
            )

    def read(self, index: int) -> tuple[int, int]:
        self._check(index)
        return self.packets[index], self.bytes[index]

    def read_range(self, start: int, count: int) -> list[tuple[int, int]]:
        """`count` cells' (packets, bytes) from `start`, in one call (a whole array's state)."""
        if count:  # an empty range reads nothing, of any array (one of 0 cells too)
            self._check(start)
            self._check(start + count - 1)
        end = start + count
        return list(zip(self.packets[start:end], self.bytes[start:end], strict=True))

    def write(self, index: int, packets: int, bytes_: int) -> None:
        self._check(index)
        self.packets[index], self.bytes[index] = packets, bytes_

    def reset(self) -> None:
        self.packets[:] = [0] * self.size
        self.bytes[:] = [0] * self.size


@dataclass
class MeterState:
    cir: float
    cburst: int
    pir: float
    pburst: int
    committed: float
    peak: float
    last: float


class Meter:
    """A two-rate three-color marker (RFC 2698, color-blind) per index or per table entry.

    Rates are in units per second, bursts in units; units are packets or bytes as the meter's type
    says. An index without configuration marks everything GREEN, as BMv2 does.
    """

    def __init__(self, name: str, size: int, unit: str):
        self.name, self.size, self.unit = name, size, unit
        self.states: dict[object, MeterState] = {}

    def set(self, index: object, cir: float, cburst: int, pir: float, pburst: int) -> None:
        """Configure a cell: an int index of an indirect meter, or ("entry", handle)."""
        if isinstance(index, int) and not 0 <= index < self.size:
            raise IndexError(
                f"meter '{self.name}' has {self.size} cells; index {index} is out of range"
            )
        if pir < cir:
            raise ValueError(f"meter '{self.name}': peak rate {pir} is below committed rate {cir}")
        self.states[index] = MeterState(cir, cburst, pir, pburst, cburst, pburst, time.monotonic())

    def get(self, index: object) -> tuple[float, int, float, int] | None:
        s = self.states.get(index)
        return None if s is None else (s.cir, s.cburst, s.pir, s.pburst)

    def reset(self, index: object) -> None:
        self.states.pop(index, None)

    def execute(self, index: object, length: int) -> int:
        state = self.states.get(index)
        if state is None:
            return GREEN
        now = time.monotonic()
        elapsed, state.last = now - state.last, now
        state.committed = min(state.cburst, state.committed + state.cir * elapsed)
        state.peak = min(state.pburst, state.peak + state.pir * elapsed)
        amount = length if self.unit == "bytes" else 1
        if state.peak < amount:
            return RED
        state.peak -= amount
        if state.committed < amount:
            return YELLOW
        state.committed -= amount
        return GREEN

    def execute_entry(self, entry, length: int) -> int:
        return self.execute(("entry", entry.handle), length)


class ValueSet(set):
    """A parser value set's members (ints, 0 <= v < 2**127), changed in place by the control plane;
    a backend whose data path keeps its own copy (native/views.py) overrides `_changed`, which
    runs after every change."""

    def _changed(self) -> None:
        """The members changed."""

    @staticmethod
    def _check(value: object) -> int:
        if not isinstance(value, int) or not 0 <= value < (1 << 127):
            raise ValueError(f"value set member {value!r} is not an int in 0..2**127-1")
        return value

    def add(self, value: int) -> None:
        super().add(self._check(value))
        self._changed()

    def update(self, *others) -> None:
        super().update(self._check(v) for other in others for v in other)
        self._changed()

    def __ior__(self, other):
        self.update(other)
        return self

    def _mutate(name: str):  # builds the mutators below that report their change, then is deleted
        def method(self, *args):
            result = getattr(set, name)(self, *args)
            self._changed()
            return self if name.startswith("__i") else result

        method.__name__ = name
        return method

    discard = _mutate("discard")
    remove = _mutate("remove")
    pop = _mutate("pop")
    clear = _mutate("clear")
    difference_update = _mutate("difference_update")
    intersection_update = _mutate("intersection_update")
    __iand__ = _mutate("__iand__")
    __isub__ = _mutate("__isub__")

    def symmetric_difference_update(self, other) -> None:
        super().symmetric_difference_update({self._check(v) for v in other})
        self._changed()

    def __ixor__(self, other):
        self.symmetric_difference_update(other)
        return self

    del _mutate
