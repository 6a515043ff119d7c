"""p4c-bm2-ss as p4c's STF runner calls it, compiling each distinct command once per test session.

The runner compiles its program before every STF file: 56 aggregation files at a handful of `-D`
sets were 56 compilations of the same program (about 7 s of CPU each), most of the runner's time.
test_p4c_runner.py gives the runner a build directory (`-bd`) whose p4c-bm2-ss runs this script:
the real compiler runs once per command (its arguments but the output file), its JSON is kept
beside this build directory's config.h, and each later call copies it. The runner itself is p4c's,
unchanged, and the compiler is the real one; a failed compilation is not kept, so its errors reach
every runner that asks.

    python p4c_once.py REAL_P4C CACHE_DIR -o OUT.json [compiler arguments]
"""

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    real, cache, *arguments = argv
    at = arguments.index("-o")
    out, command = arguments[at + 1], arguments[:at] + arguments[at + 2 :]
    key = hashlib.sha256("\0".join(command).encode()).hexdigest()[:20]
    kept = Path(cache) / f"{key}.json"
    with open(Path(cache) / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second runner on this command waits for the first
        if not kept.exists():
            partial = kept.with_suffix(".partial")
            done = subprocess.run([real, "-o", str(partial), *command])
            if done.returncode:
                return done.returncode
            os.replace(partial, kept)
    shutil.copyfile(kept, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
