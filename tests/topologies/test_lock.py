"""The machine lock: a second run, `--clean`, `ina train`, a bench or the netns tests beside a live
run are refused in one line naming it (exit 2); a dead holder never keeps the machine."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ina.bench import cli as bench_cli
from ina.topologies import cli, lock, runner
from ina.train import cli as train_cli

REPO = Path(__file__).resolve().parents[2]
HOLD = """
import os, subprocess, sys
from ina.topologies import lock
with lock.machine({command!r}, share={share}):
    print("held", flush=True)
    if {child!r}:
        print(subprocess.run([sys.executable, "-c", {child!r}], capture_output=True, text=True).stdout, flush=True)
    sys.stdin.read()
"""
TRY = """
from ina.topologies import lock
try:
    with lock.machine():
        print("inside")
except lock.MachineBusy as err:
    print("refused:", err)
"""


@pytest.fixture
def lock_file(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "machine.lock"
    monkeypatch.setenv(lock.PATH_VARIABLE, str(path))
    monkeypatch.delenv(lock.HOLDER_VARIABLE, raising=False)
    return path


def hold(command: str = "ina run --cli", share: bool = False, child: str = "") -> subprocess.Popen:
    """A process holding the machine until its stdin closes; its first line says it holds it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD.format(command=command, share=share, child=child)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "held\n"
    return proc


@pytest.fixture
def holder(lock_file):
    proc = hold()
    yield proc
    proc.kill()
    proc.wait()


def refusal(proc: subprocess.Popen) -> str:
    since = json.loads(Path(os.environ[lock.PATH_VARIABLE]).read_text())["since"]
    return (
        f"this machine is in use by `ina run --cli` (pid {proc.pid}, since {since}): a second run would "
        f"delete its interfaces and take its ports; wait for it to end, or stop it (kill {proc.pid}) and "
        "run `ina run --clean`"
    )


def test_a_second_hold_names_the_live_one_and_a_dead_one_holds_nothing(holder):
    with pytest.raises(lock.MachineBusy) as busy, lock.machine():
        pass
    assert str(busy.value) == refusal(holder)
    holder.send_signal(signal.SIGKILL)  # a crash: no release, the kernel drops the lock
    holder.wait()
    with lock.machine("mine"):
        assert lock.holder()["command"] == "mine"
        with lock.machine():  # this process nests
            pass


@pytest.mark.parametrize(
    ("share", "says"), [(True, "inside"), (False, "refused: this machine is in use by")]
)
def test_a_descendant_runs_under_its_holder_only_when_shared(lock_file, share, says):
    proc = hold(share=share, child=TRY)
    try:
        assert proc.stdout.readline().startswith(says)
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def as_root(monkeypatch):
    """Root as far as the commands' checks go, and nothing past the lock runs."""

    def refuse(*args, **kwargs):
        raise AssertionError("went past the machine lock")

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    for module, name in (
        (runner, "_run_on_machine"),
        (cli.clean, "cleanup"),
        (train_cli, "train"),
        (train_cli, "run"),
        (bench_cli, "measure"),
    ):
        monkeypatch.setattr(module, name, refuse)


@pytest.mark.parametrize(
    ("main", "argv", "prefix"),
    [
        (cli.main, ["--workers", "2"], "ina run"),
        (cli.main, ["--clean"], "ina run --clean"),
        (train_cli.main, ["--workers", "2"], "ina train"),
        (bench_cli.main, ["train"], "ina bench"),
    ],
    ids=["run", "clean", "train", "bench"],
)
def test_commands_beside_a_live_run_exit_2_in_one_line(
    holder, as_root, tmp_path, capsys, main, argv, prefix
):
    out = ["--out", str(tmp_path / "out")] if main is not cli.main else []
    assert main([*argv, *out]) == 2
    assert capsys.readouterr().err == f"{prefix}: {refusal(holder)}\n"


def test_clean_on_a_free_machine_removes_the_leftovers(lock_file, as_root, monkeypatch, capsys):
    monkeypatch.setattr(cli.clean, "cleanup", lambda: ["interface h9-eth0"])
    assert cli.main(["--clean"]) == 0
    assert capsys.readouterr().out == "removed: interface h9-eth0\n"


def interface_exists(name: str) -> bool:
    return subprocess.run(["ip", "link", "show", name], capture_output=True).returncode == 0


@pytest.mark.netns
def test_clean_never_removes_a_live_runs_interfaces(lock_file):
    """A live holder's h9-eth0 survives `ina run --clean` (exit 2); once the holder is gone it is stale."""
    subprocess.run(
        ["ip", "link", "add", "h9-eth0", "type", "veth", "peer", "name", "s9-eth9"], check=True
    )
    try:
        proc = hold()
        done = subprocess.run(
            [sys.executable, "-m", "ina", "run", "--clean"],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=60,
        )
        assert (done.returncode, done.stderr) == (2, f"ina run --clean: {refusal(proc)}\n")
        assert interface_exists("h9-eth0")
        proc.kill()
        proc.wait()
        done = subprocess.run(
            [sys.executable, "-m", "ina", "run", "--clean"],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "interface h9-eth0" in done.stdout
        assert not interface_exists("h9-eth0")
    finally:
        subprocess.run(["ip", "link", "del", "h9-eth0"], capture_output=True)


@pytest.mark.netns
def test_the_suites_netns_tests_stop_beside_a_live_run(holder):
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", "netns", "tests/switch/test_cli.py"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout
    assert f"netns tests: {refusal(holder)}" in done.stdout
    assert " passed" not in done.stdout
