"""The progress line: what it says, when it draws, and that a run too short for it shows nothing."""

import io

from ina.sim import progress
from ina.sim.progress import Progress


def test_the_line_says_how_far_in_virtual_and_wall_time():
    bar = Progress(200, io.StringIO())
    for n in range(50):
        bar(n * 1e-6, b"")
    bar(3e-6, b"")  # an earlier frame on another wire: the clock stays
    assert bar.line(1.25) == "ina sim [######..................]  26%  49 us simulated  1.2 s wall"
    for _ in range(500):
        bar(60e-6, b"")
    assert bar.line(2.0) == "ina sim [########################] 100%  60 us simulated  2.0 s wall"


def test_it_redraws_in_place_every_so_many_frames_once_the_wall_clock_allows(monkeypatch):
    monkeypatch.setattr(progress, "REFRESH_S", 0.0)
    stream = io.StringIO()
    bar = Progress(1000, stream)
    for _ in range(progress.CHECK_EVERY * 3 - 1):
        bar(1e-6, b"")
    assert stream.getvalue().count("\r") == 2
    bar.close()
    text = stream.getvalue()
    assert (
        text.count("\r") == 3
        and text.endswith("\n")
        and "  19%  1 us simulated" in text.splitlines()[-1]
    )


def test_a_run_shorter_than_the_refresh_shows_nothing():
    stream = io.StringIO()
    bar = Progress(10, stream)
    for _ in range(progress.CHECK_EVERY * 2):
        bar(1e-6, b"")
    bar.close()
    assert stream.getvalue() == ""
