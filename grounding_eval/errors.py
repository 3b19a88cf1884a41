"""The one error type a user should ever see from grounding-eval's loaders and CLI.

Every problem with user-supplied data is reported as a single line that names the file and what is
wrong with it, so that a researcher swapping in their own dataset can fix it without reading a traceback.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DataError"]


class DataError(Exception):
    """A problem with an input file, reported as ``<file>: <problem>`` on one line."""

    def __init__(self, path: str | Path | None, problem: str) -> None:
        self.path = str(path) if path is not None else None
        self.problem = " ".join(problem.split())  # one line, always
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """Return the message as ``file: problem`` (or just the problem when no file is involved)."""
        return f"{self.path}: {self.problem}" if self.path else self.problem
