"""Matching: sources prepared once, verbatim search on word boundaries, and word-level fuzzy alignment.

The alignment runs on word ids, not characters: legal boilerplate shares so many letters with any invented
sentence that a character-level score rates invented sentences like half-changed quotes, and a
character-level alignment of a long quote against a 40,000-character statute costs tens of milliseconds,
a word-level one well under one. rapidfuzz (~10 ms in a fresh process) is imported by the first fuzzy match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from grounding_eval.verifier.quotes.normalize import _Mapped, _normalize_mapped

_WORD = re.compile(r"\w+(?:'\w+)*")


def _fold_word(word: str) -> str:
    """Fold plurals and possessives ("tenants", "tenant's", "parties" -> "tenant", "party")."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@dataclass(frozen=True)
class _Source:
    """A source prepared once: normalized text with offset map, and its words as integer ids."""

    original: str
    mapped: _Mapped
    word_starts: list[int]
    word_ends: list[int]
    word_ids: list[int]
    vocab: dict[str, int]


_WORD_SPLIT = re.compile(r"(\w+(?:'\w+)*)")


@lru_cache(maxsize=32)
def _prepare(source: str) -> _Source:
    # Cached because in-process re-scoring checks many answers against the same few articles.
    mapped = _normalize_mapped(source)
    # split() with a capturing group alternates separator, word, separator, ...; the running sum of
    # the part lengths gives every word's start and end without a Python-level loop over matches.
    parts = _WORD_SPLIT.split(mapped.text)
    bounds = list(accumulate(map(len, parts)))
    words = parts[1::2]
    vocab: dict[str, int] = {}
    surface_ids: dict[str, int] = {}
    for word in dict.fromkeys(words):  # fold each distinct word once
        surface_ids[word] = vocab.setdefault(_fold_word(word), len(vocab))
    word_ids = [surface_ids[w] for w in words]
    return _Source(source, mapped, bounds[0::2][: len(words)], bounds[1::2], word_ids, vocab)


@dataclass(frozen=True)
class _Hit:
    similarity: float
    start: int  # normalized offsets into the source
    end: int


def _find_exact(needle: str, source: _Source, pos: int = 0) -> int:
    """First occurrence of ``needle`` at or after ``pos`` that starts and ends on word boundaries."""
    hay = source.mapped.text
    check_left = needle[:1].isalnum()
    check_right = needle[-1:].isalnum()
    while True:
        i = hay.find(needle, pos)
        if i < 0:
            return -1
        j = i + len(needle)
        left_ok = not check_left or i == 0 or not hay[i - 1].isalnum()
        right_ok = not check_right or j == len(hay) or not hay[j].isalnum()
        if left_ok and right_ok:
            return i
        pos = i + 1


@dataclass(frozen=True)
class _Window:
    """Where a quote was aligned in a source: its words ``[first, last)`` and the similarity."""

    similarity: float
    first: int
    last: int


def _word_ids(folded: list[str], source: _Source) -> list[int]:
    """The quote's folded words as the source's word ids; words the source lacks get ids of their
    own (negative, never equal to a source id)."""
    unknown: dict[str, int] = {}
    return [source.vocab.get(w, -1 - unknown.setdefault(w, len(unknown))) for w in folded]


def _fuzzy(folded: list[str], source: _Source) -> _Window | None:
    """Best word-level alignment of the quote's folded words in ``source`` (see the module docstring)."""
    if not folded or not source.word_ids:
        return None
    from rapidfuzz import fuzz

    ids = _word_ids(folded, source)
    if len(ids) >= len(source.word_ids):
        return _Window(fuzz.ratio(ids, source.word_ids), 0, len(source.word_ids))
    words = _encoded_words(source.original)
    if words is not None and len(source.vocab) + len(ids) <= _MAX_KEYS:
        # The same alignment on one character per word id: rapidfuzz reads a str in place but converts
        # a list element by element on every call (half of a quote's alignment time against a long
        # source). Unknown words (negative ids) get characters past every source id, so the encoding
        # is one-to-one, and the alignment reads nothing but which words are equal.
        base = len(source.vocab) - 1
        query = "".join(_key_char(i if i >= 0 else base - i) for i in ids)
        aligned = fuzz.partial_ratio_alignment(query, words)
    else:
        aligned = fuzz.partial_ratio_alignment(ids, source.word_ids)
    if aligned is None or aligned.dest_end <= aligned.dest_start:  # pragma: no cover - defensive
        return None
    return _Window(aligned.score, aligned.dest_start, aligned.dest_end)


@lru_cache(maxsize=32)
def _encoded_words(source: str) -> str | None:
    """The source's word ids, one character each (:func:`_key_char`); None past the characters there are."""
    prepared = _prepare(source)
    if len(prepared.vocab) > _MAX_KEYS:
        return None
    return "".join(map(_key_char, prepared.word_ids))


def _hit(source: _Source, window: _Window, similarity: float) -> _Hit:
    return _Hit(similarity, source.word_starts[window.first], source.word_ends[window.last - 1])


# Each distinct key becomes one character, so "is the quote's token sequence in the source's?" is a
# str.find (linear) rather than a scan over candidate positions. Surrogate code points are skipped.
_MAX_KEYS = 0x10FFFF - 0x800


def _key_char(key_id: int) -> str:
    return chr(key_id if key_id < 0xD800 else key_id + 0x800)


def _source_word(source: _Source, k: int) -> str:
    return source.mapped.text[source.word_starts[k] : source.word_ends[k]]
