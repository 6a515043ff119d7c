"""Benchmark results: repetitions summarised (median and spread) with the machine and git revision."""

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
    }


def git_revision() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    return done.stdout.strip() or "unknown"


def summarise(values: list[float]) -> dict:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "reps": len(values),
        "values": values,
    }


def write(out_dir: Path, name: str, rows: list[dict]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "benchmark": name,
                "machine": machine(),
                "git": git_revision(),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "results": rows,
            },
            indent=2,
        )
    )
    return path


class Progress:
    """One line per step on a terminal's stderr, plain lines otherwise (CI has no tty). A bench whose
    steps print nothing redraws its line in place; one whose steps print (an `ina run` or `ina train`
    per step: `own_lines`) ends each bar's line, so the step's output never shares it."""

    def __init__(self, total: int, label: str, own_lines: bool = False):
        self.total, self.label, self.done = total, label, 0
        self.in_place = os.isatty(2) and not own_lines

    def step(self, what: str) -> None:
        self.done += 1
        bar = "#" * (20 * self.done // max(self.total, 1))
        line = f"{self.label} [{bar:<20}] {self.done}/{self.total} {what}"
        last = self.done == self.total
        print(
            ("\r" + line.ljust(100)) if self.in_place else line,
            end="\n" if last or not self.in_place else "",
            file=sys.stderr,
            flush=True,
        )
