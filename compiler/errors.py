"""Compile errors that point at the user's source: file, line, column, message, source line, caret."""

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Location:
    """A position in an original (not preprocessed) source file; line and col count from 1."""

    file: str
    line: int
    col: int

    def source_line(self) -> str | None:
        try:
            lines = Path(self.file).read_text(errors="replace").splitlines()
        except OSError:
            return None
        return lines[self.line - 1] if 0 < self.line <= len(lines) else None


class CompileError(Exception):
    """A program the compiler rejects; str() is `file:line:col: error: message` plus the line and a caret.

    The location is required: every refusal points at the construct (or, for file-level problems
    such as a missing preprocessor, at the file), never at an unknown place."""

    def __init__(self, message: str, location: Location):
        self.location = location
        self.file = self.location.file
        self.line = self.location.line
        self.col = self.location.col
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        head = f"{self.file}:{self.line}:{self.col}: error: {self.message}"
        text = self.location.source_line()
        if text is None:
            return head
        caret = "".join(c if c == "\t" else " " for c in text[: max(self.col - 1, 0)]) + "^"
        return f"{head}\n{text}\n{caret}"
