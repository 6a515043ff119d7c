"""A progress line for long `ina sim` runs, on a terminal's stderr: how far, in virtual and wall time.

It counts the frames going onto the wires toward the workers (each answers one of a worker's
packets: RESULTs and STATUS copies) against the packets the workers send without loss, from those
channels' taps, and redraws itself in place at most every `REFRESH_S` wall seconds. It only reads:
a run with it gives the same results as one without (tests/sim/test_sim_cli.py). Written by hand
rather than with tqdm, which is not among ina's pinned requirements (train/progress.py uses it
when it is installed).
"""

import time
from typing import TextIO

from ina.sim.units import format_seconds

REFRESH_S = 0.2  # wall seconds between redraws
CHECK_EVERY = 64  # frames between looks at the wall clock
WIDTH = 24  # the bar's characters


class Progress:
    """The line on `stream`; a tap of every channel toward a worker (call(start, frame)), then close()."""

    __slots__ = ("_check", "_drawn", "_shown", "_started", "_stream", "frames", "now", "total")

    def __init__(self, total: int, stream: TextIO):
        self.total, self._stream = max(total, 1), stream
        self.frames, self.now = 0, 0.0
        self._check = CHECK_EVERY
        self._started = self._drawn = time.monotonic()
        self._shown = False  # a run shorter than REFRESH_S shows nothing

    def __call__(self, start: float, frame: bytes | bytearray) -> None:
        self.frames += 1
        if start > self.now:
            self.now = start
        if self.frames >= self._check:
            self._check = self.frames + CHECK_EVERY
            wall = time.monotonic()
            if wall - self._drawn >= REFRESH_S:
                self._drawn = wall
                self._draw(wall)

    def line(self, wall: float) -> str:
        """The line as it reads `wall` seconds into the run."""
        done = min(self.frames / self.total, 1.0)
        filled = round(done * WIDTH)
        return (
            f"ina sim [{'#' * filled}{'.' * (WIDTH - filled)}] {done:4.0%}  {format_seconds(self.now)} simulated"
            f"  {wall:.1f} s wall"
        )

    def _draw(self, wall: float) -> None:
        self._shown = True
        self._stream.write("\r" + self.line(wall - self._started).ljust(79))
        self._stream.flush()

    def close(self) -> None:
        """The line as the run ended, and a new line (if it was shown)."""
        if not self._shown:
            return
        self._draw(time.monotonic())
        self._stream.write("\n")
        self._stream.flush()
