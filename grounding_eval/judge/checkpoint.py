"""Where a configuration check stops: the last point before a model is asked (or a verdict is reached).

promptfoo's ``beforeAll`` hook checks each pack assertion by running it on a placeholder answer
(:mod:`grounding_eval.promptfoo.preflight`). The judges' one loop and the replay check call
:func:`checkpoint`: inside :func:`checking` it raises :class:`Checked`, so nothing past it runs;
outside, it does nothing. What the run chose on the way (its judges) is noted with :func:`note`.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

__all__ = ["Checked", "checking", "checkpoint", "note"]


class Checked(BaseException):  # not an Exception: the adapters catch every Exception
    """The check reached the first model call (or verdict): nothing was wrong up to there."""


_notes: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "grounding_eval_checking", default=None
)


@contextlib.contextmanager
def checking() -> Iterator[list[dict[str, Any]]]:
    """A configuration check of the code run inside; yields what it notes."""
    notes: list[dict[str, Any]] = []
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def checkpoint() -> None:
    """Stop here when checking a configuration (a model is about to be asked); otherwise nothing."""
    if _notes.get() is not None:
        raise Checked


def note(entry: dict[str, Any]) -> None:
    """Remember ``entry`` while checking; otherwise nothing."""
    notes = _notes.get()
    if notes is not None:
        notes.append(entry)
