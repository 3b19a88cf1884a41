"""What the quotation check reports, and the thresholds it decides by."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Literal


class QuoteStatus(enum.Enum):
    """How well a quoted span matches the sources (or, ``OUTSIDE_SOURCES``, a text outside them)."""

    EXACT = "EXACT"
    NEAR = "NEAR"
    PARTIAL = "PARTIAL"
    NO_MATCH = "NO_MATCH"
    NO_SOURCE = "NO_SOURCE"
    # Not in the sources, but EXACT or NEAR in a text outside them (a dataset's other article, named by
    # :attr:`QuoteFinding.outside_source`): a real quote, never a fabricated one (:mod:`.outside`).
    OUTSIDE_SOURCES = "OUTSIDE_SOURCES"


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
      negation or modal makes even a 95 ``PARTIAL`` (docs/reference/verifier.md).
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
            to check against, or ``OUTSIDE_SOURCES`` (EXACT or NEAR in the outside text
            :attr:`outside_source`, where a quote the sources do not hold was looked up). For an
            elided quote, the worst segment's status (and ``NEAR`` at best when the segments are
            verbatim but not in order in one source). ``NEAR`` with a
            similarity below :attr:`QuoteThresholds.near` means the only differences were forgiven
            ones; ``PARTIAL`` with a similarity at or above it means a meaning change (see
            ``meaning_changes``).
        similarity: 0..100 rounded to 1 decimal (the minimum over segments); ``None`` for
            ``NO_SOURCE``. 100.0 means every segment is verbatim; a fuzzy score is capped at 99.9
            (all words present but punctuation or a plural differs). It is the word overlap with the
            excerpt, whatever the kind of the differing words.
        source_index: Index into ``sources`` of the best match (of the worst segment, for an elided
            quote), or ``None`` (also when the match is in an outside text: :attr:`outside_source`).
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
        outside_source: The label of the text outside the sources the quote was found in, or ``None``:
            set on an ``OUTSIDE_SOURCES`` finding, and on a ``PARTIAL`` one whose only differences from
            an outside text are meaning changes (:mod:`.outside`). The offsets and excerpts are then
            that text's, and no segment has a ``source_index``.
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
    outside_source: str | None = None
