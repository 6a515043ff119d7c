"""Remove what a crashed ina run left behind: its switch processes, Mininet hosts and interfaces.

Only what ina created is touched: processes recorded in the state file of a run, Mininet host
shells of ina's host names, and interfaces named like ina's nodes (h1-eth0, s1-eth1).
"""

import json
import os
import re
import signal
import subprocess
from pathlib import Path

STATE_DIR = Path("/run/ina")
INTERFACE = re.compile(r"^(h|s)\d+-eth\d+$")


def record(run_id: str, pids: list[int], hosts: list[str]) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    (STATE_DIR / f"{run_id}.json").write_text(json.dumps({"pids": pids, "hosts": hosts}))


def forget(run_id: str) -> None:
    (STATE_DIR / f"{run_id}.json").unlink(missing_ok=True)


def _kill(pid: int) -> bool:
    try:
        os.killpg(pid, signal.SIGKILL)
        return True
    except OSError:
        try:
            os.kill(pid, signal.SIGKILL)
            return True
        except OSError:
            return False


def cleanup() -> list[str]:
    """Remove leftovers of earlier runs; returns what was removed, for the user to see."""
    removed = []
    for state in STATE_DIR.glob("*.json") if STATE_DIR.exists() else []:
        try:
            data = json.loads(state.read_text())
        except (OSError, ValueError):
            data = {}
        for pid in data.get("pids", []):
            if _kill(pid):
                removed.append(f"process {pid}")
        for host in data.get("hosts", []):
            out = subprocess.run(["pkill", "-9", "-f", f"mininet:{host}$"], capture_output=True)
            if out.returncode == 0:
                removed.append(f"host shell {host}")
        state.unlink(missing_ok=True)
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    for line in links.splitlines():
        name = line.split(":")[1].strip().split("@")[0]
        if INTERFACE.match(name):
            subprocess.run(["ip", "link", "del", name], capture_output=True)
            removed.append(f"interface {name}")
    return removed
