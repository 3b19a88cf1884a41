"""Sentence spans, for the checks that pair a phone number or URL with the organization named beside it.

Pairing is only trusted inside one sentence (or one line of a list): "Call Legal Aid Chicago. For
Texas, dial 800-…" must not pair the Texas number with Chicago. URLs and phone numbers contain dots, so
their spans are masked before splitting; a few abbreviations common in legal-aid prose do not end a
sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["sentence_of", "sentence_spans"]

# A sentence ends at terminal punctuation followed by white space, at a blank line, or at a line break
# that starts a list item, heading, block quote or table row; a single line break inside a paragraph is a
# soft wrap, not a boundary.
_END = re.compile(r"[.!?]+[\"'”’)\]]*\s+|\n[ \t]*\n\s*|\n[ \t]*(?=(?:[-*+]|\d{1,3}[.)])\s|#|>|\|)")
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
    blocked = sorted(masked)
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _END.finditer(text):
        if any(s <= m.start() < e for s, e in blocked):
            continue
        if m.group(0)[0] in ".!?" and _ends_with_abbreviation(text[start : m.start() + 1]):
            continue
        if m.start() > start:
            spans.append((start, m.start() + len(m.group(0).rstrip())))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def sentence_of(spans: list[tuple[int, int]], position: int) -> tuple[int, int]:
    """Return the span containing ``position`` (or the nearest one before it)."""
    best = (0, 0)
    for span in spans:
        if span[0] <= position:
            best = span
        else:
            break
    return best


def _ends_with_abbreviation(chunk: str) -> bool:
    word = re.search(r"([A-Za-z][A-Za-z.]*)\.$", chunk.rstrip("\"'”’)]"))
    if word is None:
        return False
    token = word.group(1).lower()
    return token in _ABBREVIATIONS or len(token) == 1  # a single letter is an initial: "John Q. Public"
