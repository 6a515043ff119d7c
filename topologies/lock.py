"""The machine lock: one run at a time builds networks on this machine.

Every `ina run` and `ina train` uses the same interface names (h1-eth0, s1-eth1), the same gRPC
ports and the same state directory, and starts by removing what an earlier run left; two at once
would destroy each other. So each holds an exclusive flock(2) on LOCK_PATH for as long as it runs
and writes who it is into the file (command, pid, start time); a second one is refused with that
line. The kernel drops the lock when its holder exits, however it exits: a crashed run never
leaves the machine held, and whatever a run finds when it gets the lock is stale.

The test suite holds the lock for its netns tests with `share=True`: the `ina run` processes those
tests start (its descendants, told by INA_MACHINE_HOLDER) go on under their parent's lock. A
holder's Mininet hosts are its descendants too, so an `ina` started from a `--cli` run's host is
refused unless the holder shared.
"""

import contextlib
import fcntl
import json
import os
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

DEFAULT_PATH = (
    "/run/ina/machine.lock"  # beside clean.STATE_DIR's run records; root's, as the runs are
)
PATH_VARIABLE = "INA_MACHINE_LOCK"  # another lock file (tests use their own)
HOLDER_VARIABLE = (
    "INA_MACHINE_HOLDER"  # the pid of a holder that shares the lock with its descendants
)


class MachineBusy(Exception):
    """Another live run holds the machine; the message names it (command, pid, since when)."""


def lock_path() -> Path:
    return Path(os.environ.get(PATH_VARIABLE, DEFAULT_PATH))


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _is_ancestor(pid: int) -> bool:
    """Whether `pid` is this process or one of its ancestors."""
    current = os.getpid()
    while current > 0:
        if current == pid:
            return True
        current = _parent(current)
    return False


def command_line() -> str:
    """This process's command as its user typed it: `ina run ...`, `pytest ...` (`python -m X` as X)."""
    program = Path(sys.argv[0])
    return shlex.join(
        [program.parent.name if program.name == "__main__.py" else program.name, *sys.argv[1:]]
    )


def holder() -> dict:
    """What the holder wrote into the lock file ({} while it has not yet, or with no holder)."""
    try:
        return json.loads(lock_path().read_text() or "{}")
    except (OSError, ValueError):
        return {}


def describe(info: dict) -> str:
    if not info:
        return "another ina process (it has not written its name yet)"
    return (
        f"`{info.get('command', '?')}` (pid {info.get('pid', '?')}, since {info.get('since', '?')})"
    )


def _inside(info: dict) -> bool:
    """Whether this process runs under the holder's lock: it is the holder, or a descendant of a
    holder that shared the lock."""
    pid = info.get("pid")
    if pid == os.getpid():
        return True
    return str(pid) == os.environ.get(HOLDER_VARIABLE) and _is_ancestor(pid)


@contextlib.contextmanager
def machine(command: str | None = None, share: bool = False) -> Iterator[None]:
    """Hold the machine for the block, or raise MachineBusy naming the live run that holds it.
    Nested holds (the holder itself, or a descendant of a sharing holder) pass through."""
    path = lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            info = holder()
            if _inside(info):
                yield
                return
            raise MachineBusy(
                f"this machine is in use by {describe(info)}: a second run would delete its "
                f"interfaces and take its ports; wait for it to end, or stop it "
                f"(kill {info.get('pid', '<pid>')}) and run `ina run --clean`"
            ) from None
        info = {
            "command": command or command_line(),
            "pid": os.getpid(),
            "since": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        }
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(info).encode())
        if share:
            os.environ[HOLDER_VARIABLE] = str(os.getpid())
        try:
            yield
        finally:
            if share:
                os.environ.pop(HOLDER_VARIABLE, None)
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)
