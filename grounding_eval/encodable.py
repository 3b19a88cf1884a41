"""Make a GradingResult safe for promptfoo to write: every string UTF-8 encodable.

A model answer may hold a lone surrogate (half of an emoji cut by a token limit, or ``"\\ud83d"`` in JSON).
Node carries such strings, and so does Python's ``json``, but promptfoo's Python wrapper writes our
result with ``json.dump(..., ensure_ascii=False)`` into a UTF-8 file, which raises ``UnicodeEncodeError``
on a lone surrogate: the row ends in a stack trace and the composite sees no assertion at all.

So every string we *return* — reasons, metadata, named-score keys — has each lone surrogate replaced by
U+FFFD (the replacement character). The answer's own text is never changed before the checks: they see
exactly what the model wrote, and only what we report about it is made writable.

Cost: one ``json.dumps`` + ``encode`` of the result to find out whether anything needs replacing (the
common case returns the result untouched), then one walk over it when something does.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar, cast

__all__ = ["sendable", "utf8_encodable"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_REPLACEMENT = "\ufffd"
_T = TypeVar("_T")


def utf8_encodable(value: _T) -> _T:
    """Return ``value`` with every lone surrogate in its strings and mapping keys replaced by U+FFFD.

    Mappings, lists and tuples are rebuilt only when something inside them changes; other values
    (numbers, booleans, None) pass through.
    """
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError, RecursionError):
        return cast(_T, _walk(value))  # (a value json cannot write at all is walked too)
    return value


def sendable(text: str) -> tuple[str, int]:
    """``text`` as a model can be sent it, and how many lone surrogates were replaced by U+FFFD.

    A judge's prompt holds the answer under judgment, and an answer may hold half an emoji: no model API
    takes a string UTF-8 cannot encode (and the reply cache keys on the prompt's bytes). The judge is sent
    U+FFFD where the answer has a lone surrogate, and the row says how many (the checks that read the
    answer itself, and its SHA-256, still see the answer as written).
    """
    replaced = _SURROGATE.subn(_REPLACEMENT, text)
    return replaced


def _walk(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub(_REPLACEMENT, value)
    if isinstance(value, dict):
        return {_walk(k) if isinstance(k, str) else k: _walk(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(v) for v in value]
    return value
