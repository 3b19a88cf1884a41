"""The one error type a user should ever see from grounding-eval's loaders and CLI.

Every problem with user-supplied data is reported as a single line that names the file and what is
wrong with it, so that a researcher swapping in their own dataset can fix it without reading a traceback.
A message may quote a short piece of the offending value (:func:`clip`), never a whole line: the file
may not be what it was named as (``--allowlist /etc/shadow``), and a message is often pasted into an
issue or a log.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["EXCERPT_CHARS", "DataError", "clip", "terminal_safe"]

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


# C0 and C1 controls (ESC starts the terminal's escape sequences), DEL, the invisible format characters that
# reorder or hide text (bidi embeddings, overrides and isolates, zero-width marks) and lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
_UNSAFE_KEEPING_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(value: object, *, lines: bool = False) -> str:
    """``value`` as text that is safe to print: every control or invisible format character escaped.

    A results file is not ours: a provider label holding ``"\\x1b[2J"`` cleared the screen when the
    report printed it, and a right-to-left override can make a listing lie. Each such character is shown
    as its escape (``\\x1b``, ``\\u202e``), as are lone surrogates (which the terminal's encoding cannot
    write). Every value from a results file that ``report``, ``rescore`` or ``audit`` prints goes through
    here. Other text, accents and emoji included, is unchanged.

    Args:
        value: What to print (not a string: its ``str``).
        lines: Keep line breaks and tabs (a rendered prompt printed as a block); otherwise they are
            escaped too, so a value stays on its line of a table.
    """
    text = value if isinstance(value, str) else str(value)
    return (_UNSAFE_KEEPING_LINES if lines else _UNSAFE).sub(_escape, text)
