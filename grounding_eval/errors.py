"""The one error type a user should ever see from grounding-eval's loaders and CLI.

Every problem with user-supplied data is reported as a single line that names the file and what is
wrong with it, so that a researcher swapping in their own dataset can fix it without reading a traceback.
A message may quote a short piece of the offending value (:func:`clip`), never a whole line: the file
may not be what it was named as (``--allowlist /etc/shadow``), and a message is often pasted into an
issue or a log.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["EXCERPT_CHARS", "DataError", "clip"]

EXCERPT_CHARS = 40
"""The most characters of a file's content an error message quotes."""


class DataError(Exception):
    """A problem with an input file, reported as ``<file>: <problem>`` on one line."""

    def __init__(self, path: str | Path | None, problem: str) -> None:
        self.path = str(path) if path is not None else None
        self.problem = " ".join(problem.split())  # one line, always
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """Return the message as ``file: problem`` (or just the problem when no file is involved)."""
        return f"{self.path}: {self.problem}" if self.path else self.problem


def clip(value: object, limit: int = EXCERPT_CHARS) -> str:
    """Quote at most ``limit`` characters of ``value`` for a message: ``'first chars…'``.

    The excerpt is ``repr``-quoted, so control characters, line breaks and invisible format characters
    (a right-to-left override) show as escapes instead of acting on the terminal or splitting the line.
    """
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(text)
    quoted = repr(text[:limit])
    return f"{quoted[:-1]}…{quoted[-1]}"
