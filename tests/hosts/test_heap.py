"""keep_freed_memory: a freed large block stays in the process (no page faults next time)."""

import subprocess
import sys

# A fresh process (glibc's thresholds move with what a process freed before): a 16 MB block, its
# pages touched, then freed; prints how much of it the process's resident set kept.
KEPT = """
import sys
import numpy as np
from ina.hosts.heap import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1])
block = np.ones(16 << 20, np.uint8)
touched = resident()
del block
print((resident() - touched) * 4096 // (1 << 20))
"""


def kept_mb(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", KEPT, mode], capture_output=True, text=True, check=True
    )
    return int(done.stdout)


def test_a_freed_block_stays_resident_only_when_kept() -> None:
    assert kept_mb("keep") == 0  # nothing returned: the next all-reduce reuses its pages
    assert kept_mb("default") <= -15  # glibc unmaps it: the next one faults every page in again
