"""Where a job's slots go in the switch's pool: allocation policies behind one small protocol.

The switch's tables are the only record of who holds what (controller/aggregation.py keeps no
state), so a policy is a pure function of the ranges held now: `place(held, want, pool_size)`
returns the range a new job gets, or raises `PoolFull` having changed nothing. The same objects
serve the controller, the property tests and the pool-level churn simulation (sim/pool.py), so a
policy is written once.

- first-fit (the default, as ina always did): the lowest free range long enough.
- best-fit: the shortest free range long enough (lowest base on a tie), so long ranges stay whole.
- buddy: the request rounded up to a power of two, placed at a multiple of its size inside the
  smallest free buddy block (a block is free when every slot is and its buddy is not); the job gets
  the whole block, so `num_slots` may exceed the request (internal fragmentation); free blocks can
  still be scattered (external).
- partition[:N]: the pool cut into N equal parts (default 8); a job gets one whole free part, and a
  request larger than a part is refused.

`best_effort` places a job with a host fallback server that no policy could: on fewer slots, or
on a hashed range shared with other jobs.

`plan_preemption` picks a lower-priority job to shrink for a new one, or, with a host fallback
server, to give all its slots and go on through that server (controller/pool.py `preempt`).

`plan_compaction` moves jobs down to close the gaps (the order kept), and `Pinned` places a job on
one given range if it is free (a move, or a resize in place): plans the controller carries out
between iterations through remove + add with a fresh epoch (controller/pool.py; docs/protocol.md,
"Moving a job's range").
"""

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from ina.controller.client import ControllerError

DEFAULT_PARTS = 8


class PoolFull(ControllerError):
    """No range for the request under the policy: nothing was changed."""


@dataclass(frozen=True, order=True)
class Range:
    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size

    def overlaps(self, other: "Range") -> bool:
        return self.base < other.end and other.base < self.end


class Allocator(Protocol):
    name: str

    def place(self, held: Sequence[Range], want: int, pool_size: int) -> Range:
        """The range a new job asking for `want` slots gets beside `held`; PoolFull if none."""
        ...

    def fits_empty(self, want: int, pool_size: int) -> bool:
        """Whether `want` could ever be placed in this pool (an empty one)."""
        ...


def free_ranges(held: Iterable[Range], pool_size: int) -> list[Range]:
    """The gaps between the held ranges, lowest first."""
    gaps, cursor = [], 0
    for r in sorted(held):
        if r.base > cursor:
            gaps.append(Range(cursor, r.base - cursor))
        cursor = max(cursor, r.end)
    if cursor < pool_size:
        gaps.append(Range(cursor, pool_size - cursor))
    return gaps


def fragmentation(held: Iterable[Range], pool_size: int) -> float:
    """External fragmentation: 1 - largest free range / free slots (0 with nothing free)."""
    gaps = free_ranges(held, pool_size)
    free = sum(g.size for g in gaps)
    return 1 - max(g.size for g in gaps) / free if free else 0.0


def _full(want: int, held: Sequence[Range], pool_size: int, why: str = "") -> PoolFull:
    free = pool_size - sum(r.size for r in held)
    return PoolFull(
        f"the slot pool is full: {want} slots wanted, {free} free of {pool_size}{why} "
        "(remove a job or ask for fewer slots)"
    )


def _check_want(want: int) -> None:
    if want <= 0:
        raise ControllerError("a job needs at least one slot")


@dataclass(frozen=True)
class FirstFit:
    name: ClassVar[str] = "first-fit"

    def place(self, held: Sequence[Range], want: int, pool_size: int) -> Range:
        _check_want(want)
        for gap in free_ranges(held, pool_size):
            if gap.size >= want:
                return Range(gap.base, want)
        raise _full(want, held, pool_size)

    def fits_empty(self, want: int, pool_size: int) -> bool:
        return want <= pool_size


@dataclass(frozen=True)
class BestFit(FirstFit):
    name: ClassVar[str] = "best-fit"

    def place(self, held: Sequence[Range], want: int, pool_size: int) -> Range:
        _check_want(want)
        fits = [g for g in free_ranges(held, pool_size) if g.size >= want]
        if not fits:
            raise _full(want, held, pool_size)
        best = min(fits, key=lambda g: (g.size, g.base))
        return Range(best.base, want)


def _top_blocks(pool_size: int) -> list[Range]:
    """The pool as aligned power-of-two blocks, largest first (24 slots: 16 at 0, 8 at 16)."""
    blocks, base = [], 0
    for bit in reversed(range(pool_size.bit_length())):
        if pool_size >> bit & 1:
            blocks.append(Range(base, 1 << bit))
            base += 1 << bit
    return blocks


@dataclass(frozen=True)
class Buddy:
    name: ClassVar[str] = "buddy"

    def place(self, held: Sequence[Range], want: int, pool_size: int) -> Range:
        _check_want(want)
        size = 1 << (want - 1).bit_length()
        taken = sorted(held)

        def used(block: Range) -> bool:
            return any(r.overlaps(block) for r in taken)

        free_blocks: list[Range] = []

        def walk(block: Range) -> None:
            """Collect the free blocks whose buddy is not free (the buddy system's free lists)."""
            if not used(block):
                free_blocks.append(block)
            elif block.size > size:
                half = block.size // 2
                walk(Range(block.base, half))
                walk(Range(block.base + half, half))

        for top in _top_blocks(pool_size):
            if top.size >= size:
                walk(top)
        fits = [b for b in free_blocks if b.size >= size]
        if not fits:
            raise _full(want, held, pool_size, f" in aligned blocks of {size}")
        best = min(fits, key=lambda b: (b.size, b.base))
        return Range(best.base, size)

    def fits_empty(self, want: int, pool_size: int) -> bool:
        return want > 0 and 1 << (want - 1).bit_length() <= _top_blocks(pool_size)[0].size


@dataclass(frozen=True)
class Partition:
    """N equal parts; a part's slots beyond N * (pool_size // N) stay unused."""

    parts: int = DEFAULT_PARTS

    def __post_init__(self) -> None:
        if self.parts < 1:
            raise ControllerError(f"a static partition has at least 1 part; got {self.parts}")

    @property
    def name(self) -> str:
        return "partition" if self.parts == DEFAULT_PARTS else f"partition:{self.parts}"

    def place(self, held: Sequence[Range], want: int, pool_size: int) -> Range:
        _check_want(want)
        part = pool_size // self.parts
        if want > part:
            raise _full(want, held, pool_size, f" in parts of {part}")
        for i in range(self.parts):
            block = Range(i * part, part)
            if not any(r.overlaps(block) for r in held):
                return block
        raise _full(want, held, pool_size, f" in parts of {part}")

    def fits_empty(self, want: int, pool_size: int) -> bool:
        return 0 < want <= pool_size // self.parts


@dataclass(frozen=True)
class Pinned:
    """One given range, if it is free: how the controller moves or resizes a job (controller/pool.py)
    through the same `add_job` as any placement."""

    target: Range
    name: ClassVar[str] = "pinned"

    def place(self, held: Sequence[Range], want: int, pool_size: int) -> Range:
        _check_want(want)
        if want != self.target.size:
            raise ControllerError(f"{want} slots wanted, the pinned range has {self.target.size}")
        if self.target.end > pool_size or any(r.overlaps(self.target) for r in held):
            raise _full(
                want, held, pool_size, f" at slots {self.target.base}..{self.target.end - 1}"
            )
        return self.target

    def fits_empty(self, want: int, pool_size: int) -> bool:
        return want == self.target.size and self.target.end <= pool_size


# Half the request: below it a best-effort job shares a hashed range rather than take a free one
BEST_EFFORT_MIN_SHARE = 0.5
_HASH = 2654435761  # Knuth's multiplicative hash: jobs' shared ranges spread over the pool


def best_effort(
    held: Sequence[Range], want: int, pool_size: int, key: int, exclusive: Sequence[Range] = ()
) -> Range:
    """ATP-style best effort, for a job with a host fallback server that no policy could place:
    the largest free range (lowest first) if it holds at least BEST_EFFORT_MIN_SHARE of `want`
    (fewer slots than asked), else `want` slots (at most the room) at a base hashed from `key` (the
    job id), shared with the jobs that hold them: the switch sends a chunk whose slot/set another
    job holds to the job's server (docs/protocol.md, "Best effort and the host fallback"). The
    shared range avoids the `exclusive` ranges, those of jobs without a server (such a job
    overwrites another run's use in its range, which could strand a worker of the sharing job that
    lost a RESULT): its room is the slots outside them, and PoolFull if there are none."""
    _check_want(want)
    gaps = free_ranges(held, pool_size)
    largest = max(gaps, key=lambda g: (g.size, -g.base), default=None)
    if largest is not None and largest.size >= BEST_EFFORT_MIN_SHARE * want:
        return Range(largest.base, min(largest.size, want))
    room = free_ranges(exclusive, pool_size)
    size = min(want, max((g.size for g in room), default=0))
    if not size:
        raise _full(
            want,
            held,
            pool_size,
            " (a best-effort job shares slots only with jobs that have a host fallback server)",
        )
    bases = [b for g in room for b in range(g.base, g.end - size + 1)]
    return Range(bases[key * _HASH % len(bases)], size)


FIRST_FIT = FirstFit()  # the default everywhere: the placements ina always made
ALLOCATORS = ("first-fit", "best-fit", "buddy", "partition")


def allocator(text: str) -> Allocator:
    """An allocator by name (`ALLOCATORS`, partition as `partition:N`); ValueError naming the
    choices otherwise: the argparse type of every `--allocator`."""
    name, _, arg = text.partition(":")
    if name == "partition":
        if not arg:
            return Partition()
        if arg.isdigit() and 1 <= int(arg) <= 1 << 15:
            return Partition(int(arg))
        raise ValueError(f"partition:N takes N parts in 1..{1 << 15}; got {arg!r}")
    if not arg:
        for cls in (FirstFit, BestFit, Buddy):
            if cls.name == name:
                return cls()
    shown = text if len(text) <= 40 else text[:40] + "..."
    raise ValueError(f"unknown allocator {shown!r}: one of {', '.join(ALLOCATORS)}, partition:N")


def plan_preemption(
    victims: dict[int, Range], want: int, hosted: Collection[int] = ()
) -> tuple[int, Range | None, Range]:
    """ESA-style preemption (docs/protocol.md, "Preemption"): of the `victims` (the running jobs of
    lower priority, by id), one gives the new job the top `want` slots of its range. A victim
    shrinks, keeping the rest: the one with the shortest range longer than `want` (ties: the lowest
    base). Only when no victim can shrink does one of the `hosted` victims (those with a host
    fallback server) give its whole range, of exactly `want` slots (ties: the lowest base), and go
    on through its server. Returns (victim, its kept range or None when it gave all, the new job's
    range); PoolFull, having changed nothing, when no victim qualifies."""
    _check_want(want)
    shrink = [(r.size, r.base, job) for job, r in victims.items() if r.size > want]
    if shrink:
        size, base, victim = min(shrink)
        return victim, Range(base, size - want), Range(base + size - want, want)
    whole = [(r.base, job) for job, r in victims.items() if job in hosted and r.size == want]
    if not whole:
        raise PoolFull(
            f"no job of lower priority holds more than {want} slots, nor exactly {want} with a "
            "host fallback server: nothing to preempt (a job without one keeps at least one slot)"
        )
    base, victim = min(whole)
    return victim, None, Range(base, want)


def plan_compaction(held: Sequence[Range]) -> dict[int, int]:
    """Moves that close every gap, keeping the order: {old base: new base} for each range that
    moves. Each new range starts at or below its old one and never overlaps a range placed before
    it, so the moves done lowest first never collide."""
    moves, cursor = {}, 0
    for r in sorted(held):
        if r.base != cursor:
            moves[r.base] = cursor
        cursor += r.size
    return moves
