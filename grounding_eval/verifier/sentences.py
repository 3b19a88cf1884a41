"""Sentence spans, for the checks that pair a phone number or URL with the organization named beside it.

Pairing is only trusted inside one sentence (or one line of a list): "Call Legal Aid Chicago. For
Texas, dial 800-…" must not pair the Texas number with Chicago. URLs and phone numbers contain dots, so
their spans are masked before splitting; a few abbreviations common in legal-aid prose do not end a
sentence.

Budget: :func:`sentence_spans` is linear in the text (one pass of a regex that never backtracks
within a run of punctuation, one binary search per candidate end, a look-behind of at most a few
characters for abbreviations); :func:`sentence_of` is one binary search. No input limit is needed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable

from grounding_eval.verifier.spans import SpanSet

__all__ = ["sentence_of", "sentence_spans"]

# A sentence ends at terminal punctuation followed by white space, at a blank line, or at a line break
# that starts a list item, heading, block quote or table row; a single line break inside a paragraph is a
# soft wrap, not a boundary. A punctuation run is matched only from its first character and
# possessively: "....." with no space after fails once, not once per position with every shorter run
# retried (that was quadratic in the run's length).
# Written so that it opens with the one character class every end starts with: the regex engine then
# skips, in C, every position holding none of ``.!?`` or a line break (one match attempt per character
# before: 130 -> 25 µs on a 600-word answer). The same matches as the plain form
# ``(?<![.!?])[.!?]++[\"'”’)\]]*+\s+|\n[ \t]*+\n\s*|\n[ \t]*+(?=(?:[-*+]|\d{1,3}[.)])\s|#|>|\|)``
# (tests/verifier/test_linear_equivalence.py compares the two): the look-behinds say which character
# was read, and that no ``.!?`` stands before a punctuation run.
_END = re.compile(
    r"[.!?\n](?:(?<=[.!?])(?<![.!?][.!?])[.!?]*+[\"'”’)\]]*+\s+"
    r"|(?<=\n)[ \t]*+(?:\n\s*|(?=(?:[-*+]|\d{1,3}[.)])\s|#|>|\|)))"
)
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "no",
        "nos",
        "inc",
        "co",
        "corp",
        "ltd",
        "jr",
        "sr",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "u.s",
        "ill",
        "tex",
        "mich",
        "ore",
        "w.va",
        "sec",
        "ch",
        "art",
        "ann",
        "stat",
        "rev",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "p.m",
        "a.m",
    ]
)


def sentence_spans(text: str, masked: Iterable[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Split ``text`` into ``(start, end)`` sentence spans covering it, never cutting a masked span."""
    blocked = SpanSet(masked)
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _END.finditer(text):
        if blocked.covers(m.start()):
            continue
        if text[m.start()] == "." and _ends_with_abbreviation(text, start, m.start()):
            continue
        if m.start() > start:
            spans.append((start, m.start() + len(m.group(0).rstrip())))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def sentence_of(spans: list[tuple[int, int]], position: int) -> tuple[int, int]:
    """Return the span containing ``position`` (or the nearest one before it; ``(0, 0)`` if none).

    ``spans`` are in order, as :func:`sentence_spans` returns them.
    """
    i = bisect_right(spans, position, key=_start) - 1
    return spans[i] if i >= 0 else (0, 0)


def _start(span: tuple[int, int]) -> int:
    return span[0]


_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.")
_LONGEST = max(len(a) for a in _ABBREVIATIONS)


def _ends_with_abbreviation(text: str, start: int, dot: int) -> bool:
    """True when the full stop ``text[dot]`` ends an abbreviation or an initial ("e.g.", "Q.").

    The word is the run of ASCII letters and dots before the full stop (within the sentence that began
    at ``start``), from its first letter. Only its last few characters are read: a word longer than the
    longest abbreviation is not one, however long it is. Each full stop reads back at most to the
    white space before it, so the whole text is read at most once.
    """
    i = dot
    first_letter = -1
    while i > start and text[i - 1] in _WORD_CHARS:
        i -= 1
        if text[i] != ".":
            if dot - i > _LONGEST:
                return False
            first_letter = i
    if first_letter < 0:
        return False
    token = text[first_letter:dot].lower()
    return token in _ABBREVIATIONS or len(token) == 1  # a single letter is an initial: "John Q. Public"
