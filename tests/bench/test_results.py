"""bench/results.py's progress line on a terminal: redrawn in place, or one line per step when the
steps print lines of their own (the stragglers bench's `ina run`s)."""

import sys

import pytest

from ina.bench import results


def steps(own_lines: bool, capsys: pytest.CaptureFixture[str]) -> str:
    """stderr of two steps, each followed by a line the step's work printed to stderr."""
    progress = results.Progress(2, "stragglers", own_lines=own_lines)
    for what in ("sync", "quorum:3"):
        progress.step(what)
        print("[ina run] next", file=sys.stderr)
    return capsys.readouterr().err


def test_steps_that_print_get_a_line_per_bar(monkeypatch, capsys):
    monkeypatch.setattr(results.os, "isatty", lambda fd: True)
    assert steps(True, capsys) == (
        f"stragglers [{'#' * 10:<20}] 1/2 sync\n[ina run] next\n"
        f"stragglers [{'#' * 20}] 2/2 quorum:3\n[ina run] next\n"
    )


def test_quiet_steps_redraw_one_line_and_end_it(monkeypatch, capsys):
    monkeypatch.setattr(results.os, "isatty", lambda fd: True)
    progress = results.Progress(2, "compile")
    progress.step("a")
    progress.step("b")
    assert capsys.readouterr().err == (
        "\r"
        + f"compile [{'#' * 10:<20}] 1/2 a".ljust(100)
        + "\r"
        + f"compile [{'#' * 20}] 2/2 b".ljust(100)
        + "\n"
    )
