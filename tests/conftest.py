"""Options and markers shared by every test folder.

`--fuzz-scale X` (or INA_FUZZ_SCALE=X) multiplies the case count of every fuzz test: the default
run stays bounded and seeded, a longer hunt is `pytest -m fuzz --fuzz-scale 50`.

Tests marked `netns` need root (namespaces, veth pairs, raw sockets, Mininet): as root (CI) they
all run; otherwise each is skipped with the reason, and `-m "not netns"` selects the rest. They
hold the machine lock while the session lasts (`held_machine`).
"""

import os
import queue
import socket
import threading
from collections.abc import Callable, Iterator
from typing import IO

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz-scale",
        type=float,
        default=None,
        help="multiply the case count of fuzz tests (default 1, or INA_FUZZ_SCALE)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fuzz: seeded, bounded fuzzing; longer with --fuzz-scale")


NETNS_SKIP = (
    "needs root: network namespaces, veth pairs and raw sockets (run `make test` as root, "
    'as CI does; `-m "not netns"` deselects it)'
)


@pytest.hookimpl(trylast=True)  # after folder conftests (tests/e2e) have added their markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip `netns` tests with the reason when not root, instead of letting them error half-way."""
    if os.geteuid() == 0:
        return
    for item in items:
        if item.get_closest_marker("netns"):
            item.add_marker(pytest.mark.skip(reason=NETNS_SKIP))


@pytest.fixture(scope="session")
def held_machine() -> Iterator[None]:
    """The machine lock (topologies/lock.py) for the session's netns tests, shared with the `ina`
    processes they start: beside a live `ina run` the suite stops at once, exit 2, naming it."""
    from ina.topologies import lock

    try:
        with lock.machine(share=True):
            yield
    except lock.MachineBusy as err:
        pytest.exit(f"netns tests: {err}", returncode=2)


@pytest.fixture(autouse=True)
def netns_holds_the_machine(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("netns"):
        request.getfixturevalue("held_machine")


@pytest.fixture
def fuzz_cases(request: pytest.FixtureRequest):
    """fuzz_cases(n) -> the number of cases to run: n times the fuzz scale, at least 1."""
    scale = request.config.getoption("--fuzz-scale")
    if scale is None:
        scale = float(os.environ.get("INA_FUZZ_SCALE", "1"))
    return lambda n: max(1, int(n * scale))


@pytest.fixture
def line_reader() -> Callable[[IO[str]], Callable[..., str]]:
    """line_reader(stream) -> next_line(timeout=30): the stream's next line ('' at its end), or the
    test fails naming the wait; a bare readline() on a child that never prints hangs the suite."""

    def reader(stream: IO[str]) -> Callable[..., str]:
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            for line in stream:
                lines.put(line)
            lines.put("")

        threading.Thread(target=pump, daemon=True).start()

        def next_line(timeout: float = 30) -> str:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                pytest.fail(f"no line from the process within {timeout} s")
            if not line:
                lines.put(line)  # the end stays the end
            return line

        return next_line

    return reader


@pytest.fixture
def taken_address() -> Iterator[str]:
    """A loopback HOST:PORT something else listens on: a server told to listen there fails to start."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield f"127.0.0.1:{taken.getsockname()[1]}"
