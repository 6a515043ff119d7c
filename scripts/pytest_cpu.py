"""A pytest plugin: the CPU seconds each test took, the most expensive first.

On a shared, loaded machine a test's wall time says more of the load than of the test; its CPU
seconds (this process's threads, and the child processes it waited for) are what a quiet CI
machine spends on it. docs/testing.md ("Test time") has the command and the figures.

    PYTHONPATH=scripts .venv/bin/python -m pytest tests -m "not netns" -q -p pytest_cpu
"""

import resource
import time

import pytest

SHOWN = 60  # tests listed
_spent: list[tuple[float, float, str]] = []  # (CPU s, wall s, test id)


def _cpu() -> float:
    own, children = (
        resource.getrusage(r) for r in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu(), time.monotonic()
    yield
    _spent.append((_cpu() - cpu, time.monotonic() - wall, item.nodeid))


def pytest_terminal_summary(terminalreporter) -> None:
    total = sum(cpu for cpu, _wall, _test in _spent)
    terminalreporter.write_line(f"CPU s total {total:.1f} over {len(_spent)} tests")
    for cpu, wall, test in sorted(_spent, reverse=True)[:SHOWN]:
        terminalreporter.write_line(f"{cpu:7.2f} cpu {wall:7.2f} wall  {test}")
