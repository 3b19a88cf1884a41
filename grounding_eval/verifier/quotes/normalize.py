"""Normalization: the text a quote and its source are compared on, with a map back to the original offsets."""

from __future__ import annotations

import re
import unicodedata
from array import array
from dataclasses import dataclass
from functools import lru_cache

# Every dash becomes "-" while folding (so Markdown link targets can still be recognized), and "-"
# becomes a space afterwards: "30-day" == "30 day", and the chunker's missing lead-in em-dash
# ("may not" vs "may not—") disappears into whitespace.
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\u2e3a\u2e3b\ufe58\ufe63\uff0d"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb\u301d\u301e\u301f\uff02"
_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u2035\u2039\u203a\uff07"
_CHAR_MAP = str.maketrans(
    {
        **dict.fromkeys(_DASHES, "-"),
        **dict.fromkeys(_DOUBLE_QUOTES, '"'),
        **dict.fromkeys(_SINGLE_QUOTES, "'"),
    }
)


@lru_cache(maxsize=8192)
def _fold_char(ch: str) -> str:
    """Fold one character: compatibility-decompose, case-fold, drop accents and invisible characters.

    Folding character by character (rather than NFKC over the whole string) keeps a map from every
    normalized character back to its source offset, which the matched excerpt needs. Combining marks
    are dropped instead of composed, so "é", "e\\u0301" and "e" all agree however they were encoded.
    """
    category = unicodedata.category(ch)
    if category in ("Cf", "Cs"):  # zero-width spaces/joiners, soft hyphen, BOM, bidi marks; surrogates
        return ""
    if category in ("Cc", "Zs", "Zl", "Zp"):
        return " "
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", ch).casefold())
    kept = []
    for c in decomposed:
        cat = unicodedata.category(c)
        if cat in ("Mn", "Me", "Cf", "Cs"):
            continue
        kept.append(" " if cat in ("Cc", "Zs", "Zl", "Zp") else c)
    return "".join(kept).translate(_CHAR_MAP)


# ASCII folds one-to-one, so ASCII runs take a translate() fast path with an identity offset map.
_ASCII_FOLD = str.maketrans({chr(i): _fold_char(chr(i)) for i in range(128)})
_NON_ASCII = re.compile(r"[^\x00-\x7f]")

# Link targets "](url)" go first (a URL contains "_" and "-"), then brackets and emphasis markers.
_MARKUP = re.compile(r"\]\([^()\s]*\)|[\[\]*_`]")
# A quote mark inside a word is an apostrophe ("tenant's") and stays; any other quote mark goes, so
# that 'covered dwelling', "covered dwelling" and “covered dwelling” inside a quotation all agree.
# (A quote mark with no word character before it, or none after it.) These patterns start with a
# literal where they can ("  +", not " {2,}"): the regex engine then skips in C to the places where one
# may match instead of trying every position, 5-20 times faster on a long source (~2 ms of the ~11 ms
# a 46,000-character source takes to prepare).
_LOOSE_QUOTE = re.compile(r"['\"](?:(?<!\w['\"])|(?!\w))")
_SPACES = re.compile(r"  +")
# The chunker's stray spaces ("February 1, 2020 ,", "title 34 )"), and "( a )" written either way.
_SPACE_BEFORE_PUNCT = re.compile(r" (?=[,.;:!?)])")
_SPACE_AFTER_PAREN = re.compile(r"\( ")
_ELLIPSIS = re.compile(r"\.\.\.+")


@dataclass(frozen=True)
class _Mapped:
    """Normalized text plus, for each of its characters, the offset of the original it came from.

    Folding works one original character at a time, so a normalized character that can end a match
    (a word character or punctuation, never a replacement space) came from exactly one original
    character, ``starts[i]``, and the match ends in the original at ``starts[i] + 1``. ``array`` makes
    the per-step copies memcpy-fast: a 40,000-character statute is normalized in a few milliseconds.
    """

    text: str
    starts: array[int]


def _fold(text: str) -> _Mapped:
    if text.isascii():
        return _Mapped(text.translate(_ASCII_FOLD), array("q", range(len(text))))
    pieces: list[str] = []
    starts = array("q")
    pos = 0
    for m in _NON_ASCII.finditer(text):
        i = m.start()
        if i > pos:
            pieces.append(text[pos:i].translate(_ASCII_FOLD))
            starts.extend(range(pos, i))
        folded = _fold_char(text[i])
        pieces.append(folded)
        starts.extend([i] * len(folded))
        pos = i + 1
    if pos < len(text):
        pieces.append(text[pos:].translate(_ASCII_FOLD))
        starts.extend(range(pos, len(text)))
    return _Mapped("".join(pieces), starts)


def _sub(pattern: re.Pattern[str], repl: str, mapped: _Mapped) -> _Mapped:
    """``pattern.sub(repl, ...)`` that keeps the offset map (``repl`` maps to the match's start)."""
    text, starts = mapped.text, mapped.starts
    pieces: list[str] = []
    new_starts = array("q")
    pos = 0
    for m in pattern.finditer(text):
        a, b = m.span()
        pieces.append(text[pos:a])
        new_starts.extend(starts[pos:a])
        if repl:
            pieces.append(repl)
            new_starts.extend(array("q", [starts[a]]) * len(repl))
        pos = b
    if pos == 0:
        return mapped
    pieces.append(text[pos:])
    new_starts.extend(starts[pos:])
    return _Mapped("".join(pieces), new_starts)


def _normalize_mapped(text: str) -> _Mapped:
    mapped = _fold(text)
    mapped = _sub(_MARKUP, "", mapped)
    # (str.replace, not translate: translate looks every character of a non-ASCII text up in its table)
    mapped = _Mapped(mapped.text.replace("-", " "), mapped.starts)
    mapped = _sub(_LOOSE_QUOTE, "", mapped)
    mapped = _sub(_SPACES, " ", mapped)
    mapped = _tidy_punctuation(mapped)
    # Only now can ". . ." (spaces just removed) be recognized as the "..." it is; an ellipsis in a
    # source is a gap, not text, exactly as in a quote.
    mapped = _sub(_ELLIPSIS, " ", mapped)
    mapped = _sub(_SPACES, " ", mapped)
    mapped = _tidy_punctuation(mapped)
    text, starts = mapped.text, mapped.starts
    first = 1 if text.startswith(" ") else 0
    last = len(text) - 1 if text.endswith(" ") and len(text) > first else len(text)
    return mapped if (first, last) == (0, len(text)) else _Mapped(text[first:last], starts[first:last])


def _tidy_punctuation(mapped: _Mapped) -> _Mapped:
    mapped = _sub(_SPACE_BEFORE_PUNCT, "", mapped)
    return _sub(_SPACE_AFTER_PAREN, "(", mapped)  # the "(" keeps its own offset: it starts the match


def normalize_for_quote(text: str) -> str:
    """Normalize text so that a faithful quotation and its source compare equal.

    Applied to quotes and sources alike; idempotent. Steps: Unicode compatibility folding (NFKD,
    case-fold, combining marks dropped, so the result agrees with NFKC + case-fold up to accents);
    zero-width and other invisible format characters removed; curly quotes and primes made straight;
    every dash variant and the hyphen turned into a space; Markdown emphasis markers, brackets and
    link targets removed; quote marks that are not apostrophes inside a word removed; whitespace
    collapsed; spaces before ``, . ; : ! ? )`` and after ``(`` removed; an ellipsis (``...``, ``…``,
    ``. . .``) turned into a space, since it marks an elision, not text.

    Args:
        text: Any text.

    Returns:
        The normalized text (possibly empty).
    """
    return _normalize_mapped(text).text
