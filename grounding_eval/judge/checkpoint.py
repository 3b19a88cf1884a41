"""Where a configuration check stops: the last point before a model is asked (or a verdict is reached).

promptfoo's ``beforeAll`` hook checks each pack assertion by running it on a placeholder answer
(:mod:`grounding_eval.promptfoo.preflight`). The judges' one loop and the replay check call
:func:`checkpoint`: inside :func:`checking` it raises :class:`Checked`, so nothing past it runs;
outside, it does nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

__all__ = ["Checked", "checking", "checkpoint"]


class Checked(BaseException):  # not an Exception: the adapters catch every Exception
    """The check reached the first model call (or verdict): nothing was wrong up to there."""


_checking: contextvars.ContextVar[bool] = contextvars.ContextVar("grounding_eval_checking", default=False)


@contextlib.contextmanager
def checking() -> Iterator[None]:
    """A configuration check of the code run inside."""
    token = _checking.set(True)
    try:
        yield
    finally:
        _checking.reset(token)


def checkpoint() -> None:
    """Stop here when checking a configuration (a model is about to be asked); otherwise nothing."""
    if _checking.get():
        raise Checked
