"""Forgiven differences and meaning changes: what the differing words of a quote are, not how many.

Quote and source are read as comparison tokens (folded words, each number one token keyed by its value,
articles dropped). Tokens found contiguously in a source mean only forgiven differences (``NEAR``);
otherwise an insert/delete diff of the quote's tokens against its aligned window (never the whole source)
gives the runs of differing tokens, each checked for a changed number, negation or modal. A source's tokens
are built once and only when some quote is not verbatim (about as costly as normalizing it).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise

from grounding_eval.verifier.quotes.findings import QuoteStatus, SegmentMatch
from grounding_eval.verifier.quotes.matching import (
    _MAX_KEYS,
    _WORD,
    _fold_word,
    _key_char,
    _prepare,
    _Source,
    _source_word,
    _Window,
    _word_ids,
)

# A quote that stops on one of these where its source goes on with "not" ("the lessor ... may" for
# "may not") drops the negation at its edge: a meaning change although every quoted word is there.
_NEGATED_VERBS = frozenset(
    {"is", "are", "was", "were", "be", "do", "does", "did", "has", "have", "had", "need"}
)
_EDGE_NEGATIONS = frozenset({"not", "never", "no"})


def _stops_before_negation(needle: str, source: _Source, end: int) -> str | None:
    """The meaning change of a match ending at normalized offset ``end`` that ends on a modal or auxiliary
    the source follows with a negation (see :data:`_NEGATED_VERBS`), or None."""
    words = _WORD.findall(needle)
    last = words[-1] if words else ""
    if last not in _MODALS and last not in _NEGATED_VERBS:
        return None
    k = bisect_left(source.word_starts, end)
    if not 0 < k < len(source.word_starts) or source.word_ends[k - 1] > end:
        return None
    following = _source_word(source, k)
    if _source_word(source, k - 1) != last or following not in _EDGE_NEGATIONS:
        return None
    if source.mapped.text[source.word_ends[k - 1] : source.word_starts[k]].strip():
        return None  # punctuation between them: the negation is not the quote's
    return f'negation "{last} {following}" → "{last}" (the quote stops before "{following}")'


_ARTICLES = frozenset({"a", "an", "the"})


def _word_values(words: str, first: int, step: int = 1) -> dict[str, int]:
    return {word: first + step * k for k, word in enumerate(words.split())}


_UNITS = _word_values("zero one two three four five six seven eight nine", 0)
_TEENS = _word_values("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen", 10)
_TENS = _word_values("twenty thirty forty fifty sixty seventy eighty ninety", 20, 10)
_ORDINALS = _word_values(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth", 1
)
_NUMBER_WORDS = frozenset(_UNITS.keys() | _TEENS.keys() | _TENS.keys() | _ORDINALS.keys())
_DIGIT_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
_NEGATIONS = frozenset({"not", "no", "never", "without", "neither", "nor", "cannot"})
_MODALS = frozenset({"must", "may", "shall", "should", "can", "could", "will", "would", "might"})
_CONTRACTED_MODALS = {"ca": "can", "wo": "will", "sha": "shall", "cannot": "can"}  # can't won't shan't


@dataclass(frozen=True, slots=True)
class _Tok:
    """One token of the comparison that decides the status: a word, or a number however written.

    Articles are not tokens (an article before a token sets ``after_indefinite`` when it is "a"/"an").

    Attributes:
        key: What is compared: the folded word, or ``#`` + the number's value ("#35", "#1st", "#2.5").
        surface: The normalized words it stands for ("thirty five", "2,400"), for messages.
        lo: Index of its first word among the text's words.
        hi: Index just past its last word.
        start: Offset of its first character in the normalized text.
        end: Offset just past its last character.
        number: The number's value, or ``None``.
        negations: 1 for a negation word ("not", "n't" contractions, "cannot", ...), else 0.
        modal: The modal verb it is or contains ("can" for "can't"), or ``None``.
        after_indefinite: Directly preceded by "a" or "an" ("a year" reads as "one year").
        label: A number that names a provision rather than a quantity: in parentheses ("(1)") or
            after a reference word ("paragraph 1", "section 8", "§ 3").
    """

    key: str
    surface: str
    lo: int
    hi: int
    start: int
    end: int
    number: str | None = None
    negations: int = 0
    modal: str | None = None
    after_indefinite: bool = False
    label: bool = False


# Words after which a number names a provision ("paragraph (1)", "section 8"), not a quantity.
_REFERENCE_WORDS = frozenset(
    [
        "article",
        "articles",
        "chapter",
        "chapters",
        "clause",
        "clauses",
        "division",
        "item",
        "items",
        "paragraph",
        "paragraphs",
        "part",
        "parts",
        "rule",
        "rules",
        "sec",
        "section",
        "sections",
        "subchapter",
        "subclause",
        "subdivision",
        "subparagraph",
        "subsection",
        "subsections",
        "title",
    ]
)


def _is_label(text: str, start: int, end: int, previous: str | None) -> bool:
    """A number at ``text[start:end]`` that names a provision (see :attr:`_Tok.label`)."""
    if text[start - 1 : start] == "(" and text[end : end + 1] == ")":
        return True
    return previous in _REFERENCE_WORDS or text[max(0, start - 2) : start].strip() == "§"


def _ordinal(digits: str) -> str:
    tens, last = digits[-2:-1], digits[-1]
    suffix = "th" if tens == "1" else {"1": "st", "2": "nd", "3": "rd"}.get(last, "th")
    return digits + suffix


def _ascii_digits(word: str) -> str:
    """Decimal digits of any script as ASCII digits. Values stay strings: ``int()`` refuses the
    5,000-digit numbers hostile input can hold."""
    return word if word.isascii() else "".join(str(unicodedata.decimal(c)) for c in word)


def _spelled_number(words: list[str], i: int, joined: Sequence[bool]) -> tuple[str, int] | None:
    """The value and end of a number in words starting at ``words[i]``, or ``None``.

    Covers zero to nine hundred ninety-nine ("thirty five" -- the hyphen is already a space --,
    "one hundred twenty") and the ordinals "first" to "twelfth", alone or after a tens word ("twenty
    first"). ``joined[k]`` says words ``k`` and ``k + 1`` are separated by one space only, so
    "twenty, one" stays two numbers.
    """

    def below_hundred(k: int) -> tuple[int, int, bool] | None:
        w = words[k]
        if w in _TENS:
            after = words[k + 1] if joined[k] else ""
            if _UNITS.get(after, 0) > 0:
                return _TENS[w] + _UNITS[after], k + 2, False
            if _ORDINALS.get(after, 10) < 10:
                return _TENS[w] + _ORDINALS[after], k + 2, True
            return _TENS[w], k + 1, False
        if w in _TEENS or w in _UNITS:
            return _TEENS.get(w, _UNITS.get(w, 0)), k + 1, False
        if w in _ORDINALS:
            return _ORDINALS[w], k + 1, True
        return None

    value: tuple[int, int, bool] | None
    if _UNITS.get(words[i], 0) > 0 and joined[i] and words[i + 1] == "hundred":
        hundreds = 100 * _UNITS[words[i]]
        rest = below_hundred(i + 2) if joined[i + 1] else None
        value = (hundreds + rest[0], rest[1], rest[2]) if rest and rest[0] > 0 else (hundreds, i + 2, False)
    else:
        value = below_hundred(i)
    if value is None:
        return None
    digits = str(value[0])
    return (_ordinal(digits) if value[2] else digits), value[1]


def _plain_word(word: str) -> tuple[str, int, str | None]:
    """Key, negation count and modal of a word that is not a number or an article."""
    base = word[:-3] if word.endswith("n't") else word
    base = _CONTRACTED_MODALS.get(base, base)
    negations = int(word in _NEGATIONS or word.endswith("n't"))
    return _fold_word(word), negations, base if base in _MODALS else None


def _tokens(text: str, starts: Sequence[int], ends: Sequence[int]) -> list[_Tok]:
    """The comparison tokens of normalized ``text`` whose words are ``text[starts[k]:ends[k]]``.

    Numbers become one token each, whether written in digits ("2,400", "1.5", "1/2", "1st") or in words;
    articles are dropped, except a letter in parentheses ("(a)" is a paragraph, not an article).
    """
    n = len(starts)
    words = [text[a:b] for a, b in zip(starts, ends, strict=True)]
    gaps = [text[ends[k] : starts[k + 1]] for k in range(n - 1)] + [""]
    joined = [g == " " for g in gaps]
    tokens: list[_Tok] = []
    plain: dict[str, tuple[str, int, str | None]] = {}  # each distinct word analysed once
    indefinite = False
    i = 0
    while i < n:
        w = words[i]
        nxt = i + 1
        number: str | None = None
        if w in _ARTICLES and not (
            text[starts[i] - 1 : starts[i]] == "(" and text[ends[i] : ends[i] + 1] == ")"
        ):
            indefinite = w != "the"
            i += 1
            continue
        if w.isdecimal():
            digits = w
            if len(w) <= 3:  # "2,400": thousands separators
                while gaps[nxt - 1] == "," and words[nxt].isdecimal() and len(words[nxt]) == 3:
                    digits += words[nxt]
                    nxt += 1
            number = _ascii_digits(digits).lstrip("0") or "0"
            if gaps[nxt - 1] == "." and words[nxt].isdecimal():  # "1.5"
                fraction = _ascii_digits(words[nxt]).rstrip("0")
                number += "." + fraction if fraction else ""
                nxt += 1
            elif gaps[nxt - 1] == "/" and words[nxt].isdecimal():  # "1/2"
                number += "/" + (_ascii_digits(words[nxt]).lstrip("0") or "0")
                nxt += 1
        elif w[0].isdecimal() and (ordinal := _DIGIT_ORDINAL.fullmatch(w)) is not None:
            number = _ordinal(_ascii_digits(ordinal.group(1)).lstrip("0") or "0")
        elif w in _NUMBER_WORDS and (spelled := _spelled_number(words, i, joined)) is not None:
            number, nxt = spelled
        if number is not None:
            start, end = starts[i], ends[nxt - 1]
            label = _is_label(text, start, end, words[i - 1] if i else None)
            tokens.append(
                _Tok("#" + number, text[start:end], i, nxt, start, end, number, 0, None, indefinite, label)
            )
        else:
            key, negations, modal = plain.get(w) or plain.setdefault(w, _plain_word(w))
            tokens.append(_Tok(key, w, i, nxt, starts[i], ends[i], None, negations, modal, indefinite))
        indefinite = False
        i = nxt
    return tokens


def _quote_tokens(needle: str) -> list[_Tok]:
    spans = [m.span() for m in _WORD.finditer(needle)]
    return _tokens(needle, [a for a, _ in spans], [b for _, b in spans])


_NOT_SURELY_PLAIN = _ARTICLES | _NUMBER_WORDS | {"hundred"}  # words that may not be plain tokens


def _plain_words(words: list[str], fold: dict[str, str]) -> tuple[int, frozenset[str]]:
    """How many of a quote's ``words`` are plain tokens however they are read, and those tokens' keys
    (``fold`` maps each distinct word to its folded form).

    A word is surely a plain token (its key its folded form) unless it is an article (dropped, or a
    "(a)" label), could be part of a number (a number word, "hundred") or starts with a digit. Every
    such word is one token of :func:`_quote_tokens`, so a source with fewer words than the count, or
    without one of the keys, cannot hold the quote's tokens contiguously: :func:`_forgiven` would
    return ``None`` there, and this tells so without tokenizing the quote (a megabyte-long block quote
    took seconds).
    """
    plain = {w: f for w, f in fold.items() if w not in _NOT_SURELY_PLAIN and not w[0].isdecimal()}
    return sum(map(plain.__contains__, words)), frozenset(plain.values())


@dataclass(frozen=True)
class _Canonical:
    """A source's comparison tokens, prepared once per source (and only when a quote needs them)."""

    tokens: list[_Tok]
    lows: list[int]  # tokens[k].lo, to map a word window onto tokens
    ids: dict[str, int]
    key_ids: list[int]
    encoded: str  # _key_char of every key id; "" if the source has more distinct keys than chars


@lru_cache(maxsize=32)
def _canonical(source: str) -> _Canonical:
    prepared = _prepare(source)
    tokens = _tokens(prepared.mapped.text, prepared.word_starts, prepared.word_ends)
    ids: dict[str, int] = {}
    key_ids = [ids.setdefault(t.key, len(ids)) for t in tokens]
    encoded = "".join(map(_key_char, key_ids)) if len(ids) <= _MAX_KEYS else ""
    return _Canonical(tokens, [t.lo for t in tokens], ids, key_ids, encoded)


def _forgiven(quote: list[_Tok], folded: list[str], source: _Source) -> _Window | None:
    """Where the quote's tokens occur contiguously in the source's, or ``None``.

    Such a quote differs from that excerpt only by forgiven differences. Its similarity is the Indel
    similarity of the quote's words and the excerpt's (so "5" for "five" still costs a word).
    """
    # A plain word the source never uses rules the quote out before the source's tokens are built
    # (as costly as normalizing the source: most of a fresh process's quotation check). A plain
    # token's key is a folded word, and the source's are folded words of its vocabulary, so a key
    # outside the vocabulary is outside the source's tokens: the test below would say None too.
    if any(t.number is None and t.key not in source.vocab for t in quote):
        return None
    canon = _canonical(source.original)
    if not quote or not canon.encoded or any(t.key not in canon.ids for t in quote):
        return None
    k = canon.encoded.find("".join(_key_char(canon.ids[t.key]) for t in quote))
    if k < 0:
        return None
    first, last = canon.tokens[k].lo, canon.tokens[k + len(quote) - 1].hi
    # An article the quote starts (ends) with, matched by one just outside the tokens, is quoted too.
    if folded[0] in _ARTICLES and first > 0 and _source_word(source, first - 1) in _ARTICLES:
        first -= 1
    if folded[-1] in _ARTICLES and last < len(source.word_ids) and _source_word(source, last) in _ARTICLES:
        last += 1
    from rapidfuzz import fuzz

    return _Window(fuzz.ratio(_word_ids(folded, source), source.word_ids[first:last]), first, last)


_Block = tuple[int, int, int, int]  # a run of differences: window tokens [i1, i2) vs quote tokens [j1, j2)


def _blocks(window: list[int], quote: list[int]) -> list[_Block]:
    """The runs of differences of a shortest insert/delete script (adjacent edits merged)."""
    from rapidfuzz.distance import Indel

    blocks: list[_Block] = []
    for op in Indel.opcodes(window, quote):
        if op.tag == "equal":
            continue
        if blocks and blocks[-1][1] == op.src_start and blocks[-1][3] == op.dest_start:
            i1, _, j1, _ = blocks[-1]
            blocks[-1] = (i1, op.src_end, j1, op.dest_end)
        else:
            blocks.append((op.src_start, op.src_end, op.dest_start, op.dest_end))
    return blocks


def _unmatched(blocks: list[_Block]) -> int:
    return sum(j2 - j1 for _, _, j1, j2 in blocks)


def _differences(quote_ids: list[int], key_ids: list[int], lo: int, hi: int) -> tuple[int, list[_Block]]:
    """The quote's differences from source tokens ``[lo, hi)``, with the window's edges settled.

    The alignment window is no longer than the quote, so a quote that dropped a word, or whose first
    word the window missed, runs past it. While quote tokens are unmatched at an edge, the window
    widens on that side by their number, unless fewer quote tokens would then match (three times at most,
    so a changed word cannot pair with a lookalike far away). Source tokens beyond the quote are then
    cut off each edge: an unmatched run there is either the window's surplus (dropped) or faces a
    changed first/last word (kept: as many source tokens, nearest the match, as the quote has there).

    Returns:
        The final window start and the blocks, relative to it.
    """
    n = len(key_ids)
    blocks = _blocks(key_ids[lo:hi], quote_ids)
    for _ in range(3):
        grow_left = grow_right = 0
        if blocks and blocks[0][0] == 0 and blocks[0][2] == 0:
            grow_left = min(lo, blocks[0][3])
        if blocks and blocks[-1][1] == hi - lo and blocks[-1][3] == len(quote_ids):
            grow_right = min(n - hi, blocks[-1][3] - blocks[-1][2])
        if not (grow_left or grow_right):
            break
        wider = _blocks(key_ids[lo - grow_left : hi + grow_right], quote_ids)
        if _unmatched(wider) > _unmatched(blocks):
            break
        lo, hi, blocks = lo - grow_left, hi + grow_right, wider
    if blocks and blocks[0][0] == 0 and blocks[0][2] == 0:
        i1, i2, j1, j2 = blocks[0]
        if j1 == j2:
            blocks.pop(0)
        elif i2 - i1 > j2 - j1:
            blocks[0] = (i2 - (j2 - j1), i2, j1, j2)
    if blocks and blocks[-1][1] == hi - lo and blocks[-1][3] == len(quote_ids):
        i1, i2, j1, j2 = blocks[-1]
        if j1 == j2:
            blocks.pop()
        elif i2 - i1 > j2 - j1:
            blocks[-1] = (i1, i1 + (j2 - j1), j1, j2)
    return lo, blocks


def _text_of(text: str, tokens: list[_Tok]) -> str:
    """The normalized text the tokens span (articles and punctuation included), clipped at 10 tokens."""
    if not tokens:
        return ""
    if len(tokens) > 10:
        return text[tokens[0].start : tokens[9].end] + " …"
    return text[tokens[0].start : tokens[-1].end]


def _describe(src: list[_Tok], quo: list[_Tok], phrases: tuple[str, str], edge: bool) -> list[str]:
    """The meaning changes in one block, ``src`` → ``quo``.

    ``phrases`` are the block's text on each side framed by the equal tokens around it, for the
    negation message ("may not issue" → "may issue"). At an ``edge`` of the quote the source tokens
    facing a changed word are a guess (the "(2)" before "may not issue" when the quote begins "the
    lessor shall not issue"), so there a number, negation or modal counts only if the quote has one
    in the block.
    """
    changes: list[str] = []
    src_numbers = [t for t in src if t.number is not None]
    quo_numbers = [t for t in quo if t.number is not None]
    if _numbers_differ(src_numbers, quo_numbers) and (quo_numbers or not edge):
        was = " ".join(t.surface for t in src_numbers)
        now = " ".join(t.surface for t in quo_numbers)
        changes.append(
            f"number {was} → {now}" if was and now else f"number {was or now} {'removed' if was else 'added'}"
        )
    quo_negations = sum(t.negations for t in quo)
    if sum(t.negations for t in src) != quo_negations and (quo_negations or not edge):
        changes.append(f'negation "{phrases[0]}" → "{phrases[1]}"')
    src_modals = [t.modal for t in src if t.modal is not None]
    quo_modals = [t.modal for t in quo if t.modal is not None]
    if src_modals != quo_modals and (quo_modals or not edge):
        was, now = " ".join(src_modals), " ".join(quo_modals)
        changes.append(
            f"modal {was} → {now}" if was and now else f"modal {was or now} {'removed' if was else 'added'}"
        )
    return changes


def _numbers_differ(src: list[_Tok], quo: list[_Tok]) -> bool:
    """Whether the block's numbers say something else: a quantity changed, added or removed, or a
    provision named on both sides but not the same one. A provision's label dropped or added on one
    side only ("under paragraph (1)" left out) names no other rule, so it is not a meaning change;
    the words it costs still lower the similarity."""
    src_labels = [t.number for t in src if t.label]
    quo_labels = [t.number for t in quo if t.label]
    if [t.number for t in src if not t.label] != [t.number for t in quo if not t.label]:
        return True
    return bool(src_labels and quo_labels and src_labels != quo_labels)


def _is_one(tokens: list[_Tok]) -> bool:
    return [t.number for t in tokens if t.number is not None] == ["1"]


def _meaning_changes(quote: list[_Tok], needle: str, source: _Source, window: _Window) -> tuple[str, ...]:
    """The meaning changes between the quote and its aligned source window (module docstring)."""
    canon = _canonical(source.original)
    if not quote:
        return ()
    unknown: dict[str, int] = {}
    quote_ids = [canon.ids.get(t.key, -1 - unknown.setdefault(t.key, len(unknown))) for t in quote]
    lo = bisect_left(canon.lows, window.first)
    hi = bisect_left(canon.lows, window.last)
    lo, blocks = _differences(quote_ids, canon.key_ids, lo, hi)
    tokens = canon.tokens
    changes: list[str] = []
    for i1, i2, j1, j2 in blocks:
        # Blocks are separated by equal tokens, so the tokens framing a block exist on both sides.
        framed = (
            _text_of(source.mapped.text, tokens[lo + i1 - (j1 > 0) : lo + i2 + (j2 < len(quote))]),
            _text_of(needle, quote[j1 - (j1 > 0) : j2 + (j2 < len(quote))]),
        )
        src, quo = tokens[lo + i1 : lo + i2], quote[j1:j2]
        # "a year" quoted as "one year" (or the reverse) is not a number change.
        if not src and _is_one(quo) and lo + i1 < len(tokens) and tokens[lo + i1].after_indefinite:
            quo = [t for t in quo if t.number is None]
        if not quo and _is_one(src) and j1 < len(quote) and quote[j1].after_indefinite:
            src = [t for t in src if t.number is None]
        changes.extend(_describe(src, quo, framed, edge=j1 == 0 or j2 == len(quote)))
    return tuple(dict.fromkeys(changes))


# An elision that leaves out this many words or fewer, among them a negation, drops that negation
# from the rule quoted ("the monthly rent … exceed $2,400" of "the monthly rent does not exceed").
_ELIDED_WORDS_MAX = 10
_GAP_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def _with_elided_negations(
    matches: list[SegmentMatch], sources: list[tuple[int, _Source]]
) -> list[SegmentMatch]:
    """``matches`` with each negation an elision leaves out named on the segment after it (``PARTIAL``):
    two consecutive segments found in order in one source with at most :data:`_ELIDED_WORDS_MAX` words
    between them, a negation among those words."""
    originals = {index: source.original for index, source in sources}
    out = list(matches)
    for k, (before, after) in enumerate(pairwise(matches), start=1):
        if before.source_index is None or before.source_index != after.source_index or before.meaning_changes:
            continue  # (a segment that stops before its "not" already says so)
        if before.end is None or after.start is None or after.start < before.end:
            continue
        gap = [w.lower() for w in _GAP_WORD.findall(originals[before.source_index][before.end : after.start])]
        if len(gap) <= _ELIDED_WORDS_MAX and any(w in _NEGATIONS or w.endswith("n't") for w in gap):
            change = f'negation "{" ".join(gap)}" left out by the elision'
            status = (
                QuoteStatus.PARTIAL if after.status in (QuoteStatus.EXACT, QuoteStatus.NEAR) else after.status
            )
            out[k] = replace(after, status=status, similarity=min(after.similarity, 99.9),
                             meaning_changes=(*after.meaning_changes, change))  # fmt: skip
    return out
