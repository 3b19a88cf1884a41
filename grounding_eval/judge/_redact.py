r"""Finding an API key in what a server sent back, in each form servers echo it, so it can be scrubbed.

A judge API that echoes the key (an error body, a debugging proxy, a model repeating a header) must not
get it into a reply, an error message or a cache file. Servers do not always echo it verbatim, so
:func:`secret_pattern` builds one regular expression that matches, anywhere in a text:

* the key as written, and URL-encoded (``urllib.parse.quote`` with any ``safe`` set, ``quote_plus``):
  each character that needs it may appear as itself or as ``%XX`` (either hex case, UTF-8 bytes), or a
  space as ``+``, in any mix; and JSON-escaped, as in an error body quoted undecoded (``\/``,
  ``\u00e9``);
* base64 of the key, standard (``+/``) or URL-safe (``-_``), with or without ``=`` padding; and base64
  of a longer string with the key inside, such as ``Authorization: Basic base64(user:key)``. There a
  character's value depends on its neighbours, so the key has three encodings, one per alignment of its
  first byte in a 3-byte group; each is matched by the run of characters that depends on the key's
  bytes alone. What is left beside the match are the one or two boundary characters that mix a few bits
  of the key with bits of its neighbours: at most 4 bits of the key on each side, never a character of it;
* shortened echoes, as many APIs print a rejected key: at least the first 3 characters, then ``…``
  (or ``\u2026``, JSON's escape of it), two or more dots or two or more ``*``, then at least the last
  3 characters (``sk-ab...wxyz``, ``sk-proj-****wxyz``); or at least the first 8 characters then such a
  separator with nothing after (``sk-ant-api03-…``).

Limits (what is not found): the key in another case, or reversed; base64 wrapped across lines (MIME's
76 columns), or of the key after another transform (URL-encoded, then base64); base64 or a URL-encoding
nested twice; a shortened echo that shows only the end (``key ending in wxyz``). The base64 and shortened
forms are only looked for when the key has at least :data:`MIN_FORM_CHARS` characters: for shorter ones
they would match ordinary text.

Budget: the alternatives are literals, character classes, a chain of optional literals (the prefixes)
and one separator run followed by an alternation of literals (the suffixes); nothing can match one text
in two ways, so an attempt costs at most the length of the separator run plus a few times the key's
length: O(len(text) x len(key)) at worst, and in practice one pass, since an attempt dies at its first
character unless the text there looks like the key.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any, Final

__all__ = ["MIN_FORM_CHARS", "REDACTED", "redact", "secret_pattern"]

REDACTED: Final = "[REDACTED]"
MIN_FORM_CHARS: Final = 12
"""Shortest key whose base64 and shortened forms are looked for (real API keys are 20 and more)."""

_PREFIX_MIN: Final = 3  # characters of the key shown before "…" in a shortened echo with a suffix
_SUFFIX_MIN: Final = 3  # characters shown after it
_PREFIX_ALONE_MIN: Final = 8  # characters shown before a trailing "…" with no suffix
# "…" also as JSON writes it in an error body it did not decode (ensure_ascii: "\u2026").
_ELLIPSIS: Final = r"(?:…|\\u2026|\.{2,}|\*{2,})"
# RFC 3986 unreserved characters: the ones urllib.parse.quote never encodes.
_UNRESERVED: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def secret_pattern(secret: str) -> re.Pattern[str] | None:
    """Return one pattern matching ``secret`` in every form listed in the module docstring.

    Returns ``None`` for an empty secret (nothing to scrub).
    """
    if not secret:
        return None
    forms = [_url_encoded(secret)]
    if len(secret) >= MIN_FORM_CHARS:
        forms += _base64_forms(secret.encode("utf-8"))
        forms += _shortened(secret)
    # In this order: where two forms match at the same place, the one covering more of the key wins.
    return re.compile("|".join(forms))


def redact(value: Any, pattern: re.Pattern[str] | None) -> Any:
    """Return ``value`` with every match of ``pattern`` in its strings (keys too) replaced by ``[REDACTED]``.

    Dicts and lists are rebuilt; other values come back as they are.
    """
    if pattern is None:
        return value
    if isinstance(value, str):
        return pattern.sub(REDACTED, value)
    if isinstance(value, dict):
        return {redact(k, pattern): redact(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, pattern) for v in value]
    return value


def _url_encoded(secret: str) -> str:
    parts = []
    for ch in secret:
        if ch in _UNRESERVED:
            parts.append(re.escape(ch))
            continue
        encoded = "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
        alternatives = [re.escape(ch), _any_hex_case(encoded)]
        if ch == " ":
            alternatives.append(r"\+")
        # As JSON may write it in a body no one decoded: "\/", "\"", "\\", or "\u00e9".
        if ch in '/"\\':
            alternatives.append(re.escape("\\" + ch))
        elif not ch.isascii() or not ch.isprintable():
            alternatives.append(_any_hex_case(re.escape(json.dumps(ch)[1:-1])))
        parts.append(f"(?:{'|'.join(alternatives)})")
    return "".join(parts)


def _any_hex_case(pattern: str) -> str:
    return re.sub(r"[A-Fa-f]", lambda m: f"[{m.group().upper()}{m.group().lower()}]", pattern)


def _b64_class(text: str) -> str:
    # One pattern for both alphabets: "+" or "-" at 62, "/" or "_" at 63.
    return "".join({"+": "[+-]", "/": "[/_]"}.get(ch, ch) for ch in text)


def _base64_forms(data: bytes) -> list[str]:
    alone = base64.b64encode(data).decode("ascii").rstrip("=")
    forms = [_b64_class(alone) + "={0,2}"]
    for offset in range(3):
        # The characters fully determined by the key's bits when it starts `offset` bytes into a group.
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii")
        first = (4 * offset + 2) // 3
        last = (8 * (offset + len(data))) // 6
        forms.append(_b64_class(encoded[first:last]))
    return forms


def _shortened(secret: str) -> list[str]:
    prefix = _prefixes(secret, _PREFIX_MIN)
    suffix = _suffixes(secret, _SUFFIX_MIN)
    alone = _prefixes(secret, _PREFIX_ALONE_MIN)
    return [f"{prefix}{_ELLIPSIS}{suffix}", f"{alone}{_ELLIPSIS}"]


def _prefixes(secret: str, minimum: int) -> str:
    """Any proper prefix of ``secret`` with at least ``minimum`` characters, longest first.

    Written as a chain of optional groups (``abc(?:d(?:e)?)?``): each starts with a literal, so a given
    text matches it in one way per length, and backing off to a shorter prefix costs one step.
    """
    core, rest = secret[:minimum], secret[minimum:-1]
    tail = ""
    for ch in reversed(rest):
        tail = f"(?:{re.escape(ch)}{tail})?"
    return re.escape(core) + tail


def _suffixes(secret: str, minimum: int) -> str:
    """Any proper suffix of ``secret`` with at least ``minimum`` characters, longest first.

    An alternation, not nested groups: nested optional groups growing leftwards could match one text in
    many ways for a key that repeats itself, and backtrack exponentially.
    """
    return "(?:" + "|".join(re.escape(secret[i:]) for i in range(1, len(secret) - minimum + 1)) + ")"
