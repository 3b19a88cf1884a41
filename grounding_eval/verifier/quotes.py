"""Quotation accuracy: is every quoted span of five or more words really in the source texts?

Round 2b and 3 prompts ask the model to "quote specific language where helpful". A quotation the
source does not contain is the most persuasive kind of hallucination, because it looks like evidence,
so every quoted span is matched against the provided sources and classified:

``EXACT``
    After normalization the quote (every segment of it, in order, in one source) is a substring of a
    source, on word boundaries.
``NEAR`` / ``PARTIAL``
    The best fuzzy alignment reaches :attr:`QuoteThresholds.near` / :attr:`QuoteThresholds.partial`,
    or the kind of the differing words decides (see "Forgiven differences and meaning changes").
``NO_MATCH``
    Below both: the fabricated-quote finding.
``NO_SOURCE``
    There was nothing to check against. This is *not* a fabrication finding and is left out of
    :func:`quote_score`.

What counts as a quote (see :func:`extract_quotes`): straight ``"…"`` and curly ``“…”`` double quotes
within one paragraph and at most :attr:`QuoteThresholds.max_quote_chars` long, and Markdown block
quotes (one span per block-quote paragraph). Single quotes are never delimiters, because apostrophes
("tenant's", "tenants'") would pair up across sentences. Quotes of fewer than
:attr:`QuoteThresholds.min_words` words (scare quotes, terms of art) are not reported.

Elisions (``...``, ``…``, ``[...]``) split a quote into segments. Decision: every segment must match,
and ``EXACT`` additionally needs all segments verbatim *in order in one source*; verbatim segments
that are out of order or spread over several sources are stitched together, which can change the
meaning, so the quote is ``NEAR`` (:attr:`QuoteFinding.in_order` is ``False``). Otherwise a quote's
status is its worst segment's status and its similarity the minimum over segments.

Markdown inside a quote is matched on its text: ``**bold**``/``_emphasis_`` markers are dropped and a
link ``[text](url)`` counts as ``text``, on both sides, because a source scraped from a web page may
carry the same markup.

How a segment that is not verbatim is scored: both sides are split into words, plurals and
possessives are folded ("tenants", "tenant's" -> "tenant": the commonest honest slip), and the quote's
word sequence is aligned against the source's with ``rapidfuzz.fuzz.partial_ratio_alignment`` on
*word ids*. The similarity is the Indel similarity of the quote and the best source window of the
same length, i.e. roughly the share of the quote's words found there in order. Two reasons for words
rather than characters: legal boilerplate shares so many letters and short words with any invented
sentence that a character-level ``partial_ratio`` rates invented sentences 50..70 (the same as
quotes with half their words changed); and a character-level alignment of a long quote against a
40,000-character statute costs tens of milliseconds, a word-level one well under one. A short source
(fewer words than the quote) is compared whole, because ``partial_ratio`` would otherwise align the
source inside the quote and call a two-word source a perfect match.

Forgiven differences and meaning changes. These are the pack's decisions (issue 7), not the methods
document's. The similarity counts words; what the differing words *are* can matter more:

* Differences the normalization removes (case, curly vs straight quotes, dashes, whitespace,
  ellipses, Markdown) leave a quote ``EXACT``.
* Forgiven differences: a number written in words or in digits with the same value ("five"/"5",
  "thirty-five"/"35", "one hundred twenty"/"120", "first"/"1st", "$2400"/"$2,400"); an article (a,
  an, the) added, dropped or swapped; punctuation; plurals and possessives (folded as above). A quote
  whose only differences from a source excerpt are forgiven ones is ``NEAR``, whatever its
  similarity (a 5-word quote with "5" for "five" scores 80 but is ``NEAR``). The similarity stays
  the honest word overlap with the excerpt. The number words understood are zero to nine hundred
  ninety-nine and the ordinals first to twelfth (also after a tens word, "twenty-first"); larger
  numbers must be digits on one side and the other. "a year" vs "one year" is not forgiven (status
  by similarity) but is not a number change either.
* Meaning changes: where the quote's words differ from the aligned source words, (a) a number whose
  value differs, or that is added or removed ("30" → "60", "thirty" → "60") -- a number naming a
  provision ("(1)", "paragraph 1", "section 8", "§ 3") counts only when both sides name one and they
  differ, since leaving out "under paragraph (1)" cites no other rule; (b) a negation added or
  removed (not, no, never, without, neither, nor, cannot, any "n't" contraction: "may not" → "may",
  "shall" → "shall not"); (c) a modal swapped, added or removed (must, may, shall, should, can,
  could, will, would, might; "can't" holds "can"). A quote with any of them is never ``NEAR``:
  ``PARTIAL`` if its similarity reaches :attr:`QuoteThresholds.partial`, else ``NO_MATCH`` as
  before, and :attr:`QuoteFinding.meaning_changes` names the words. A contraction for its long form
  ("doesn't"/"does not") is neither forgiven nor a meaning change.

How: the quote and the source are also read as *comparison tokens*: folded words, each number one
token keyed by its value, articles dropped (but not "(a)", a paragraph letter). If the quote's tokens
occur contiguously in a source's (one ``str.find`` over the source's tokens encoded one character
each), only forgiven differences separate them and the quote is ``NEAR``, located there (a quote of
articles only has no tokens, and its score decides). Otherwise
the fuzzy word alignment above gives the similarity and a window; an insert/delete diff
(``rapidfuzz.distance.Indel.opcodes``) of the quote's tokens against the window's -- never the whole
source -- gives the runs of differing tokens, and each run is checked for (a)-(c). The window is as
long as the quote, so it may miss a word the quote kept while dropping another; it is widened by at
most three times the unmatched words at an edge, and source words beyond the quote's ends are cut off. At
the quote's first and last words the source words facing a changed word are a guess, so there a
number, negation or modal counts only if the quote has one. An elision that leaves out a negation
("the monthly rent … exceed $2,400" of "the monthly rent does not exceed $2,400"), with at most
:data:`_ELIDED_WORDS_MAX` words between segments found in order in one source, is a meaning change too.
One edge is not a guess: a quote (or a
segment before an elision) that ends on a modal or an auxiliary ("may", "is", "does") where the source
goes on with "not", "never" or "no" ("the lessor ... may" of "may not") drops the negation although
every quoted word is there, so it is a meaning change and ``PARTIAL``, not ``EXACT`` (an occurrence
that keeps the negation elsewhere in the sources still makes it ``EXACT``). Meaning changes are looked for only when
the similarity reaches :attr:`QuoteThresholds.partial`: below it the alignment is too loose to pair
words.

Budget: a source's comparison tokens are built once (cached like the prepared source, and only when
some quote is not verbatim): linear, about as costly as normalizing it (~10 ms for a 40,000-character
statute). Per quote segment and source: the token search is linear in the source; the diff runs on
the quote and a window of at most three times its length, O(quote words x window words / 64).
"""

from __future__ import annotations

import enum
import re
import unicodedata
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import accumulate, pairwise
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # rapidfuzz (~10 ms in a fresh process) is imported by the first fuzzy match
    pass


__all__ = [
    "DEFAULT_THRESHOLDS",
    "QuoteFinding",
    "QuoteSpan",
    "QuoteStatus",
    "QuoteThresholds",
    "SegmentMatch",
    "check_quotes",
    "check_spans",
    "extract_quotes",
    "normalize_for_quote",
    "quote_score",
]


class QuoteStatus(enum.Enum):
    """How well a quoted span matches the sources."""

    EXACT = "EXACT"
    NEAR = "NEAR"
    PARTIAL = "PARTIAL"
    NO_MATCH = "NO_MATCH"
    NO_SOURCE = "NO_SOURCE"


@dataclass(frozen=True)
class QuoteThresholds:
    """Every number the quotation check depends on, in one place.

    Similarity (0..100) is the share of the quote's words found in order in the best window of a
    source. Calibrated on ``tests/golden/quotes.yaml``, on ``TestCalibration`` in
    ``tests/verifier/test_quotes.py`` (which pins the claims below) and on a one-off sweep over the
    eight sample statutes in ``shared/data/sources`` (random word substitutions into real passages;
    30 invented sentences in the statutes' own register):

    * ``near`` = 90: at most one word in ten differs. One word changed in a 12-word quote scores
      91.7 (``NEAR``), two changed 83.3 (``PARTIAL``); a 5-word quote with one word changed scores
      80 (``PARTIAL``) -- one wrong word in five is not a slip. Unless the word is a forgiven
      difference ("5" for "five", an article: ``NEAR`` whatever the score); and a changed number,
      negation or modal makes even a 95 ``PARTIAL`` (module docstring).
    * ``partial`` = 50: at least half of the quote's words are there, in order. A quote with half
      its words changed scores 50..67 (``PARTIAL``, a distorted quote). Invented sentences scored
      29..56 (median 42): legal boilerplate shares "the", "tenant", "may not", "security deposit"
      with any statute. The five that reached 50 were all distortions of a real provision (e.g. a
      deposit cap with the wrong amount), for which ``PARTIAL`` is fair.
    * Quotes of exactly ``min_words`` words are the least reliable: random 5-word strings of
      statute vocabulary reach 60 about one time in five.

    Attributes:
        near: Minimum similarity for ``NEAR``.
        partial: Minimum similarity for ``PARTIAL``; below it a quote is ``NO_MATCH``.
        min_words: Quotes with fewer words (after removing elision marks) are not reported.
        max_quote_chars: An inline quote longer than this is taken to be an unbalanced quote mark,
            not a quotation, and is ignored. Block quotes are delimited explicitly and are not capped.
    """

    near: float = 90.0
    partial: float = 50.0
    min_words: int = 5
    max_quote_chars: int = 2000

    def __post_init__(self) -> None:
        # Checked when built, not halfway through a run.
        if not 0.0 <= self.partial <= self.near <= 100.0:
            raise ValueError(
                f"need 0 <= partial <= near <= 100, got partial={self.partial}, near={self.near}"
            )
        if self.min_words < 1:
            raise ValueError(f"min_words must be at least 1, got {self.min_words}")
        if self.max_quote_chars < 1:
            raise ValueError(f"max_quote_chars must be at least 1, got {self.max_quote_chars}")


DEFAULT_THRESHOLDS = QuoteThresholds()


@dataclass(frozen=True)
class QuoteSpan:
    """A quoted span found in an answer.

    Attributes:
        text: The quoted text as written, without the quote marks. For a block quote: its lines with
            the ``>`` markers removed, joined by ``\\n``.
        start: Offset of the text's first character in the answer.
        end: Offset just past its last character. For inline quotes ``answer[start:end] == text``.
        kind: ``"double"`` (opened by a straight ``"``), ``"curly"`` (opened by ``“``) or
            ``"blockquote"``.
    """

    text: str
    start: int
    end: int
    kind: Literal["double", "curly", "blockquote"]


@dataclass(frozen=True)
class SegmentMatch:
    """The best match of one elision-delimited segment of a quote.

    Attributes:
        text: The segment as written.
        status: Its own classification.
        similarity: 0..100, rounded to 1 decimal.
        source_index: Index into the ``sources`` argument of the best source, or ``None``.
        start: Offset of the matched excerpt in that source (original text), or ``None``.
        end: Offset just past the excerpt, or ``None``.
        matched_text: ``source[start:end]``, or ``None``.
        meaning_changes: The segment's meaning changes against its aligned source words (see
            :attr:`QuoteFinding.meaning_changes`); empty when there are none.
    """

    text: str
    status: QuoteStatus
    similarity: float
    source_index: int | None
    start: int | None
    end: int | None
    matched_text: str | None
    meaning_changes: tuple[str, ...] = ()


@dataclass(frozen=True)
class QuoteFinding:
    """The verdict on one quoted span.

    Attributes:
        span: The quote.
        status: ``EXACT``/``NEAR``/``PARTIAL``/``NO_MATCH``, or ``NO_SOURCE`` when there was nothing
            to check against. For an elided quote, the worst segment's status (and ``NEAR`` at best
            when the segments are verbatim but not in order in one source). ``NEAR`` with a
            similarity below :attr:`QuoteThresholds.near` means the only differences were forgiven
            ones; ``PARTIAL`` with a similarity at or above it means a meaning change (see
            ``meaning_changes``).
        similarity: 0..100 rounded to 1 decimal (the minimum over segments); ``None`` for
            ``NO_SOURCE``. 100.0 means every segment is verbatim; a fuzzy score is capped at 99.9
            (all words present but punctuation or a plural differs). It is the word overlap with the
            excerpt, whatever the kind of the differing words.
        source_index: Index into ``sources`` of the best match (of the worst segment, for an elided
            quote), or ``None``.
        matched_text: The aligned excerpt of the original source text. For an elided quote, the
            segments' excerpts joined by `` … ``.
        match_start: Offset in ``sources[source_index]`` where the match begins (the first segment's
            start when all segments matched in order in that source, else the worst segment's).
        match_end: Offset just past the match (last segment's end, same rule).
        in_order: For an elided quote, whether all segments were found in order in one source.
        segments: Per-segment evidence (one entry for a quote without elisions; empty for
            ``NO_SOURCE``).
        meaning_changes: Where the quote's words change what its aligned source words say, one
            human-readable item per change, read as *source → quote*: ``number 30 → 60``,
            ``number thirty → 60``, ``number 30 removed``, ``number 60 added``,
            ``negation "may not issue" → "may issue"`` (the changed words with the equal word on
            each side), ``modal must → may``, ``modal may added``, ``modal must removed``. Words are
            as normalized (lower case, straight quotes). Any item caps the
            status at ``PARTIAL``. Filled only for matches reaching :attr:`QuoteThresholds.partial`
            (below it the alignment is too loose to name words); for an elided quote, the segments'
            items in order, without repeats.
    """

    span: QuoteSpan
    status: QuoteStatus
    similarity: float | None
    source_index: int | None
    matched_text: str | None
    match_start: int | None = None
    match_end: int | None = None
    in_order: bool = True
    segments: tuple[SegmentMatch, ...] = field(default=())
    meaning_changes: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------------
# Normalization
# --------------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------------
# Extraction
# --------------------------------------------------------------------------------------------------

_BLOCK_MARKER = re.compile(r"[ \t]{0,3}>(?:[ \t]{0,3}>)*[ \t]?")
_QUOTE_MARK = re.compile('["\u201c\u201d]')
_ELISION = re.compile(r"\[\s*(?:\.\s*){3,}\]|\[\s*\u2026\s*\]|\.(?:\s*\.){2,}|\u2026")


# A whitespace-separated token with a letter or digit in it, from its first one: one match per word.
# (``[^\W_]`` is str.isalnum, and ``\s`` is the white space str.split() splits on.)
_WORD_FROM_ALNUM = re.compile(r"[^\W_]\S*")


def _count_words(text: str) -> int:
    """The tokens of ``text.split()`` that hold a letter or digit, elision marks removed first."""
    return len(_WORD_FROM_ALNUM.findall(_ELISION.sub(" ", text)))


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _lines(answer: str) -> list[tuple[int, str]]:
    """Return ``(offset, line without its line break)`` for every line.

    Only CR, LF and CRLF end a line, as in Markdown; ``str.splitlines`` would also split at form
    feeds, ``\x1c``-``\x1e`` and U+2028, and could turn a quote into two paragraphs.
    """
    out: list[tuple[int, str]] = []
    offset = 0
    for m in _LINE_BREAK.finditer(answer):
        out.append((offset, answer[offset : m.start()]))
        offset = m.end()
    if offset < len(answer):
        out.append((offset, answer[offset:]))
    return out


def _blockquote_spans(block: list[tuple[int, str]], min_words: int) -> list[QuoteSpan]:
    """One span per paragraph of a block quote (paragraphs are separated by a bare ``>`` line)."""
    spans: list[QuoteSpan] = []
    para: list[tuple[int, str]] = []  # (offset of content, content)
    for offset, line in [*block, (0, "")]:
        marker = _BLOCK_MARKER.match(line)
        content_at = offset + (marker.end() if marker else 0)
        content = line[marker.end() :] if marker else ""
        if content.strip():
            stripped = content.lstrip() if not para else content
            para.append((content_at + len(content) - len(stripped), stripped.rstrip()))
            continue
        if para:
            text = "\n".join(c for _, c in para)
            start = para[0][0]
            end = para[-1][0] + len(para[-1][1])
            if _count_words(text) >= min_words:
                spans.append(QuoteSpan(text=text, start=start, end=end, kind="blockquote"))
            para = []
    return spans


def _inline_spans(answer: str, begin: int, end: int, min_words: int, max_chars: int) -> list[QuoteSpan]:
    """Pair quote marks inside one paragraph ``answer[begin:end]``.

    A straight ``"`` can open only after a non-alphanumeric character and before a non-space, and
    close only after a non-space and before a non-alphanumeric character; ``“`` only opens and ``”``
    only closes. An opener met while a quote is open restarts it there (the earlier mark was
    unbalanced), so a stray mark costs at most the quote it belongs to.
    """
    spans: list[QuoteSpan] = []
    open_at: int | None = None
    for m in _QUOTE_MARK.finditer(answer, begin, end):
        i = m.start()
        mark = answer[i]
        before = answer[i - 1] if i > begin else " "
        after = answer[i + 1] if i + 1 < end else " "
        can_open = mark == "\u201c" or (mark == '"' and not before.isalnum() and not after.isspace())
        can_close = mark == "\u201d" or (mark == '"' and not before.isspace() and not after.isalnum())
        if open_at is not None and can_close:
            text = answer[open_at + 1 : i]
            if len(text) <= max_chars and _count_words(text) >= min_words:
                kind: Literal["double", "curly"] = "curly" if answer[open_at] == "\u201c" else "double"
                spans.append(QuoteSpan(text=text, start=open_at + 1, end=i, kind=kind))
            open_at = None
        elif can_open:
            open_at = i
    return spans


def extract_quotes(
    answer: str, *, min_words: int = 5, max_chars: int = DEFAULT_THRESHOLDS.max_quote_chars
) -> list[QuoteSpan]:
    """Find the quoted spans of ``min_words`` or more words in an answer.

    Inline quotes (straight or curly double quotes) never cross a blank line and are at most
    ``max_chars`` long, so an unbalanced mark cannot swallow the rest of the answer. Block quotes
    are runs of lines starting with ``>`` (nested ``> >`` too), one span per paragraph; their text is
    not searched for inline quotes again. Words are counted after removing elision marks.

    Args:
        answer: The model's answer (Markdown or plain text).
        min_words: Shorter quotes (scare quotes, terms of art) are not returned.
        max_chars: Longest inline quote, in characters; a longer one is taken to be a stray mark.

    Returns:
        The spans in order of position.
    """
    spans: list[QuoteSpan] = []
    block: list[tuple[int, str]] = []
    para_start: int | None = None
    para_end = 0
    for offset, line in [*_lines(answer), (len(answer), "")]:
        in_block = _BLOCK_MARKER.match(line) is not None
        blank = not line.strip()
        if para_start is not None and (in_block or blank):
            spans.extend(_inline_spans(answer, para_start, para_end, min_words, max_chars))
            para_start = None
        if block and not in_block:
            spans.extend(_blockquote_spans(block, min_words))
            block = []
        if in_block:
            block.append((offset, line))
        elif not blank:
            if para_start is None:
                para_start = offset
            para_end = offset + len(line)
    return sorted(spans, key=lambda s: s.start)


# --------------------------------------------------------------------------------------------------
# Matching
# --------------------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+(?:'\w+)*")
_EDGE_PUNCT = re.compile(r"^[\s.,;:!?]+|[\s.,;:!?]+$")


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


# --------------------------------------------------------------------------------------------------
# Forgiven differences and meaning changes (see the module docstring)
# --------------------------------------------------------------------------------------------------

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


# Each distinct key becomes one character, so "is the quote's token sequence in the source's?" is a
# str.find (linear) rather than a scan over candidate positions. Surrogate code points are skipped.
_MAX_KEYS = 0x10FFFF - 0x800


def _key_char(key_id: int) -> str:
    return chr(key_id if key_id < 0xD800 else key_id + 0x800)


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


def _source_word(source: _Source, k: int) -> str:
    return source.mapped.text[source.word_starts[k] : source.word_ends[k]]


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


def _status(similarity: float, thresholds: QuoteThresholds) -> QuoteStatus:
    if similarity >= thresholds.near:
        return QuoteStatus.NEAR
    if similarity >= thresholds.partial:
        return QuoteStatus.PARTIAL
    return QuoteStatus.NO_MATCH


def _segment_match(
    raw: str,
    index: int | None,
    source: _Source | None,
    hit: _Hit | None,
    status: QuoteStatus,
    meaning_changes: tuple[str, ...] = (),
) -> SegmentMatch:
    if index is None or source is None or hit is None:
        return SegmentMatch(raw, status, 0.0, None, None, None, None)
    start = source.mapped.starts[hit.start]
    end = source.mapped.starts[hit.end - 1] + 1
    return SegmentMatch(
        raw,
        status,
        round(hit.similarity, 1),
        index,
        start,
        end,
        source.original[start:end],
        meaning_changes,
    )


_SEVERITY = {QuoteStatus.EXACT: 0, QuoteStatus.NEAR: 1, QuoteStatus.PARTIAL: 2, QuoteStatus.NO_MATCH: 3}


def _best_match(
    raw: str, needle: str, sources: list[tuple[int, _Source]], th: QuoteThresholds
) -> SegmentMatch:
    cut: SegmentMatch | None = None  # verbatim, but where the source goes on with a dropped "not"
    for index, source in sources:
        i = _find_exact(needle, source)
        while i >= 0:
            hit = _Hit(100.0, i, i + len(needle))
            change = _stops_before_negation(needle, source, hit.end)
            if change is None:
                return _segment_match(raw, index, source, hit, QuoteStatus.EXACT)
            if cut is None:
                cut = _segment_match(
                    raw, index, source, _Hit(99.9, i, hit.end), QuoteStatus.PARTIAL, (change,)
                )
            i = _find_exact(needle, source, i + 1)
    words = _WORD.findall(needle)
    fold = {w: _fold_word(w) for w in set(words)}  # each distinct word folded once
    folded = [fold[w] for w in words]
    if not folded:  # pragma: no cover - segments without a word are dropped before matching
        return _segment_match(raw, None, None, None, QuoteStatus.NO_MATCH)
    quote = _quote_tokens(needle)
    for index, source in sources:
        window = _forgiven(quote, folded, source)
        if window is not None:
            # A fuzzy score can round up to 100.0 without being a substring; it is still not EXACT.
            hit = _hit(source, window, min(window.similarity, 99.9))
            change = _stops_before_negation(needle, source, hit.end)
            if change is None:
                return _segment_match(raw, index, source, hit, QuoteStatus.NEAR)
            if cut is None:
                cut = _segment_match(raw, index, source, hit, QuoteStatus.PARTIAL, (change,))
    if cut is not None:
        return cut
    best: tuple[tuple[int, float], SegmentMatch] | None = None
    for index, source in sources:
        found = _fuzzy(folded, source)
        if found is None:
            continue
        similarity = min(found.similarity, 99.9)
        status = _status(similarity, th)
        changes = () if status is QuoteStatus.NO_MATCH else _meaning_changes(quote, needle, source, found)
        if status is not QuoteStatus.NO_MATCH:
            edge = _stops_before_negation(needle, source, source.word_ends[found.last - 1])
            changes = (*changes, edge) if edge and edge not in changes else changes
        if changes and status is QuoteStatus.NEAR:
            status = QuoteStatus.PARTIAL
        rank = (_SEVERITY[status], -similarity)
        if best is None or rank < best[0]:
            best = (
                rank,
                _segment_match(raw, index, source, _hit(source, found, similarity), status, changes),
            )
    return best[1] if best is not None else _segment_match(raw, None, None, None, QuoteStatus.NO_MATCH)


def _in_order(
    segments: list[tuple[str, str]], sources: list[tuple[int, _Source]]
) -> list[SegmentMatch] | None:
    """All segments verbatim and in order in one source (the first such source), or ``None``."""
    for index, source in sources:
        matches: list[SegmentMatch] = []
        pos = 0
        for raw, needle in segments:
            i = _find_exact(needle, source, pos)
            while i >= 0 and _stops_before_negation(needle, source, i + len(needle)):
                i = _find_exact(needle, source, i + 1)  # that occurrence drops a "not": not verbatim
            if i < 0:
                break
            pos = i + len(needle)
            matches.append(_segment_match(raw, index, source, _Hit(100.0, i, pos), QuoteStatus.EXACT))
        else:
            return matches
    return None


def _check_span(span: QuoteSpan, sources: list[tuple[int, _Source]], th: QuoteThresholds) -> QuoteFinding:
    segments: list[tuple[str, str]] = []
    for raw in _ELISION.split(span.text):
        needle = _EDGE_PUNCT.sub("", normalize_for_quote(raw))
        if _WORD.search(needle):
            segments.append((raw, needle))
    if not segments:  # only reachable with min_words < 1, which QuoteThresholds forbids; be safe
        return QuoteFinding(span, QuoteStatus.NO_MATCH, 0.0, None, None)

    ordered = _in_order(segments, sources)
    if ordered is not None:
        ordered = _with_elided_negations(ordered, sources)
    if ordered is not None and all(m.status is QuoteStatus.EXACT for m in ordered):
        first, last = ordered[0], ordered[-1]
        return QuoteFinding(
            span=span,
            status=QuoteStatus.EXACT,
            similarity=100.0,
            source_index=first.source_index,
            matched_text=" … ".join(m.matched_text or "" for m in ordered),
            match_start=first.start,
            match_end=last.end,
            in_order=True,
            segments=tuple(ordered),
        )

    if ordered is not None:
        matches = ordered
    else:
        matches = _with_elided_negations(
            [_best_match(raw, needle, sources, th) for raw, needle in segments], sources
        )
    worst = max(matches, key=lambda m: (_SEVERITY[m.status], -m.similarity))
    status = worst.status
    if status is QuoteStatus.EXACT:
        status = QuoteStatus.NEAR  # every segment verbatim, but stitched out of order or across sources
    changes = tuple(dict.fromkeys(c for m in matches for c in m.meaning_changes))
    return QuoteFinding(
        span=span,
        status=status,
        similarity=min(m.similarity for m in matches),
        source_index=worst.source_index,
        matched_text=(
            " … ".join(m.matched_text for m in matches if m.matched_text is not None)
            if any(m.matched_text is not None for m in matches)
            else None
        ),
        match_start=worst.start,
        match_end=worst.end,
        in_order=len(matches) == 1 or ordered is not None,
        segments=tuple(matches),
        meaning_changes=changes,
    )


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


def check_quotes(
    answer: str, sources: Sequence[str], thresholds: QuoteThresholds = DEFAULT_THRESHOLDS
) -> list[QuoteFinding]:
    """Classify every quoted span of ``thresholds.min_words`` or more words against the sources.

    Args:
        answer: The model's answer.
        sources: The source texts the answer was given. Sources that are blank (no word after
            normalization) are skipped but keep their index; with no usable source every quote is
            ``NO_SOURCE``.
        thresholds: Where the status boundaries lie.

    Returns:
        One finding per quoted span, in order of position in the answer.

    Raises:
        TypeError: If ``sources`` is a single string (it would otherwise be read as one source per
            character).
    """
    spans = extract_quotes(answer, min_words=thresholds.min_words, max_chars=thresholds.max_quote_chars)
    return check_spans(spans, sources, thresholds)


def check_spans(
    spans: Sequence[QuoteSpan], sources: Sequence[str], thresholds: QuoteThresholds = DEFAULT_THRESHOLDS
) -> list[QuoteFinding]:
    """Classify quoted spans already extracted (:func:`extract_quotes`) against the sources.

    :func:`check_quotes` is this after extraction; call it directly to check the same spans against
    other sources (the user's question, say) without extracting them again.

    Raises:
        TypeError: If ``sources`` is a single string.
    """
    if isinstance(sources, str):
        raise TypeError("sources must be a sequence of source texts, not a single string")
    if not spans:
        return []
    prepared = [(i, _prepare(s)) for i, s in enumerate(sources)]
    usable = [(i, p) for i, p in prepared if p.word_ids]
    if not usable:
        return [QuoteFinding(span, QuoteStatus.NO_SOURCE, None, None, None) for span in spans]
    # A verdict depends on the quote's text alone (sources and thresholds are fixed here), so each
    # distinct text is matched once: a model in a repetition loop quoting one sentence 25,000 times
    # costs one match, not 25,000.
    decided: dict[str, QuoteFinding] = {}
    findings: list[QuoteFinding] = []
    for span in spans:
        known = decided.get(span.text)
        if known is None:
            known = decided[span.text] = _check_span(span, usable, thresholds)
            findings.append(known)
        else:
            findings.append(replace(known, span=span))
    return findings


_POINTS = {QuoteStatus.EXACT: 1.0, QuoteStatus.NEAR: 1.0, QuoteStatus.PARTIAL: 0.5, QuoteStatus.NO_MATCH: 0.0}


def quote_score(findings: Sequence[QuoteFinding]) -> float | None:
    """Mean quotation accuracy over the checked quotes.

    ``EXACT`` and ``NEAR`` score 1 (a near quote is a faithful quote with a slip, not an invention),
    ``PARTIAL`` 0.5, ``NO_MATCH`` 0. ``NO_SOURCE`` quotes were not checked and are left out.

    Args:
        findings: Output of :func:`check_quotes`.

    Returns:
        The mean in 0..1, or ``None`` when nothing was checked (no quotes, or all ``NO_SOURCE``), so
        the composite can tell "no quotation evidence" from a perfect or a failing score.
    """
    points = [_POINTS[f.status] for f in findings if f.status is not QuoteStatus.NO_SOURCE]
    return sum(points) / len(points) if points else None
