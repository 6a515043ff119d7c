"""Run the C preprocessor over a P4 program, as p4c does, and keep the map back to original lines.

The system `cpp` expands #include/#define/#if; its line markers are turned into a table so that
every line of the expanded text knows the file and line it came from.
"""

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ina.compiler.errors import CompileError, Location

P4INCLUDE = Path(__file__).resolve().parent / "p4include"
_LINE_MARKER = re.compile(r'^#\s*(?:line\s+)?(\d+)\s+"((?:\\.|[^"\\])*)"')
_CPP_DIAGNOSTIC = re.compile(r"^(.*?):(\d+):(?:(\d+):)?\s*(?:fatal )?error:\s*(.*)$")


@dataclass
class Preprocessed:
    """Expanded program text; origins[i] is the (file, line) of text line i + 1."""

    text: str
    origins: list[tuple[str, int]]

    def locate(self, line: int, col: int) -> Location:
        if 0 < line <= len(self.origins):
            file, original = self.origins[line - 1]
            return Location(file, original, col)
        return Location(self.origins[-1][0] if self.origins else "<input>", line, col)


def preprocess(
    path: Path, include_dirs: Sequence[str] = (), defines: Mapping[str, str] = {}
) -> Preprocessed:
    """Expand `path` with cpp; <core.p4> and <v1model.p4> resolve to ina's own p4include."""
    cpp = shutil.which("cpp")
    if cpp is None:
        raise CompileError(
            "the C preprocessor `cpp` is not installed; install it (apt-get install cpp)",
            Location(str(path), 0, 0),
        )
    command = [cpp, "-x", "c", "-undef", "-nostdinc", "-Wno-comment", "-w"]
    command += [f"-I{d}" for d in include_dirs] + [f"-I{P4INCLUDE}"]
    command += [f"-D{name}={value}" for name, value in defines.items()]
    command.append(str(path))
    result = subprocess.run(
        command, capture_output=True, encoding="utf-8", errors="replace", check=False
    )
    if result.returncode != 0:
        raise _cpp_error(result.stderr, path)
    return _split_markers(result.stdout, str(path))


def _cpp_error(stderr: str, path: Path) -> CompileError:
    for line in stderr.splitlines():
        match = _CPP_DIAGNOSTIC.match(line)
        if match:
            file, lineno, col, message = match.groups()
            return CompileError(
                f"preprocessor: {message}", Location(file, int(lineno), int(col or 1))
            )
    return CompileError(f"preprocessor failed: {stderr.strip()}", Location(str(path), 1, 1))


def _split_markers(output: str, default_file: str) -> Preprocessed:
    """Blank out cpp's line markers, recording for each remaining line where it came from."""
    lines = output.split("\n")
    origins: list[tuple[str, int]] = []
    file, line = default_file, 1
    for i, text in enumerate(lines):
        match = _LINE_MARKER.match(text) if text.startswith("#") else None
        if match:
            line = int(match.group(1))
            file = match.group(2).encode().decode("unicode_escape")
            lines[i] = ""
            origins.append((file, 0))
            continue
        origins.append((file, line))
        line += 1
    return Preprocessed("\n".join(lines), origins)
