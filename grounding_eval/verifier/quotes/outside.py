"""Quotes found outside the sources: where a quote the sources do not hold is looked up before it is fabricated.

An answer may quote a statute word for word from memory, and the statute may be in the dataset though not
among the item's own articles: a real quote, which the sources alone would call ``NO_MATCH``. So a quote
that is ``NO_MATCH`` or ``PARTIAL`` against the sources is looked up in :class:`OutsideTexts` (a dataset's
other articles, the same for every condition) with the same matcher, and

* ``EXACT`` or ``NEAR`` there: ``OUTSIDE_SOURCES``, naming the text (``outside_source``) — accurate, so never
  a fabricated quote; not evidence from the item's sources, so not scored (the verdict layer's decision,
  docs/reference/verifier.md "Quotes from outside the item's sources");
* ``PARTIAL`` there only because of a meaning change, at ``NEAR`` similarity or above (it would be ``NEAR``
  but for a changed number, negation or modal), when the sources gave no meaning change of their own:
  ``PARTIAL`` with that text's meaning changes, naming it — a real rule misstated, not an invention;
* anything else: the sources' finding stands.

Cost: nothing is read until a quote needs the look-up; then the texts are read once per
:class:`OutsideTexts` (once per process for a dataset). A text is aligned with a quote only when its
vocabulary may hold one of the quote's segments at ``NEAR`` (:func:`_may_hold`), and prepared (normalized:
the costly part) only then, once: so a fabricated quote costs a vocabulary look-up per text when the
vocabularies come with the texts (a dataset's are kept on disk beside its articles), and each distinct
quote is looked up once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import NamedTuple

from grounding_eval.verifier.quotes.check import _check_span, _segments
from grounding_eval.verifier.quotes.findings import (
    DEFAULT_THRESHOLDS,
    QuoteFinding,
    QuoteStatus,
    QuoteThresholds,
)
from grounding_eval.verifier.quotes.matching import _WORD, _fold_word, _prepare, _Source
from grounding_eval.verifier.quotes.meaning import _ARTICLES, _NUMBER_WORDS

__all__ = ["OutsideText", "OutsideTexts", "vocabulary"]

_LOOKED_UP = frozenset({QuoteStatus.NO_MATCH, QuoteStatus.PARTIAL})


class OutsideText(NamedTuple):
    """One text outside the sources: its label in the report, the text, and optionally its
    :func:`vocabulary` (kept with the text, e.g. on disk, it spares preparing a text no quote can be in)."""

    label: str
    text: str
    words: Collection[str] | None = None


def vocabulary(text: str) -> list[str]:
    """The words of ``text`` as the matcher compares them (normalized, plurals and possessives folded)."""
    return list(_prepare(text).vocab)


class OutsideTexts:
    """Labelled texts outside an item's sources (a dataset's articles), read on first use, each prepared
    once and only when a quote may be in it.

    Args:
        load: Returns the texts (:class:`OutsideText`, or ``(label, text)`` pairs); called at most once,
            when a quote first needs them (it may raise, e.g. a ``DataError`` for an unreadable dataset:
            the caller's error).
    """

    def __init__(self, load: Callable[[], Sequence[OutsideText | tuple[str, str]]]) -> None:
        self._load = load
        self._loaded: tuple[OutsideText, ...] | None = None
        self._prepared: dict[int, _Source] = {}
        self._words: dict[int, Collection[str]] = {}

    def _entries(self) -> tuple[OutsideText, ...]:
        if self._loaded is None:
            self._loaded = tuple(OutsideText(*entry) for entry in self._load())
        return self._loaded

    def texts(self) -> tuple[tuple[str, str], ...]:
        """Every ``(label, text)``, read on the first call."""
        return tuple((e.label, e.text) for e in self._entries())

    def look_up(
        self,
        findings: Sequence[QuoteFinding],
        sources: Sequence[str],
        thresholds: QuoteThresholds = DEFAULT_THRESHOLDS,
    ) -> list[QuoteFinding]:
        """``findings`` (made against ``sources``) with each quote the sources do not hold looked up in the
        texts outside them (module docstring); a text one of ``sources`` contains is not outside them.

        Only ``NO_MATCH`` and ``PARTIAL`` findings are looked up: without them nothing is read.
        """
        if not any(f.status in _LOOKED_UP for f in findings):
            return list(findings)
        held = [s for s in (s.strip() for s in sources) if s]
        outside = [
            k
            for k, entry in enumerate(self._entries())
            if entry.text.strip() and not any(entry.text.strip() in s for s in held)
        ]
        decided: dict[str, QuoteFinding | None] = {}  # one look-up per distinct quote, as check_spans
        out: list[QuoteFinding] = []
        for finding in findings:
            if finding.status not in _LOOKED_UP:
                out.append(finding)
                continue
            if finding.span.text not in decided:
                decided[finding.span.text] = self._found(finding, outside, thresholds)
            found = decided[finding.span.text]
            out.append(finding if found is None else replace(found, span=finding.span))
        return out

    def _source(self, k: int) -> _Source:
        if k not in self._prepared:
            self._prepared[k] = _prepare(self._entries()[k].text)
        return self._prepared[k]

    def _vocabulary(self, k: int) -> Collection[str]:
        if k not in self._words:
            given = self._entries()[k].words
            self._words[k] = frozenset(given) if given is not None else self._source(k).vocab.keys()
        return self._words[k]

    def _found(self, finding: QuoteFinding, outside: list[int], th: QuoteThresholds) -> QuoteFinding | None:
        """The finding outside the sources that replaces ``finding``, or None (its verdict stands)."""
        words = [[_fold_word(w) for w in _WORD.findall(needle)] for _, needle in _segments(finding.span.text)]
        candidates = [
            (k, self._source(k)) for k in outside if any(_may_hold(w, self._vocabulary(k), th) for w in words)
        ]
        if not candidates:
            return None
        got = _check_span(finding.span, candidates, th)
        if got.source_index is None:  # pragma: no cover - a candidate always aligns
            return None
        if got.status in (QuoteStatus.EXACT, QuoteStatus.NEAR):
            status = QuoteStatus.OUTSIDE_SOURCES
        elif (
            got.status is QuoteStatus.PARTIAL
            and got.meaning_changes
            and got.similarity is not None
            and got.similarity >= th.near
            and not finding.meaning_changes
        ):
            status = QuoteStatus.PARTIAL
        else:
            return None
        return replace(
            got,
            status=status,
            source_index=None,
            segments=tuple(replace(m, source_index=None) for m in got.segments),
            outside_source=self._entries()[got.source_index].label,
        )


def _may_hold(words: list[str], vocab: Collection[str], th: QuoteThresholds) -> bool:
    """Whether a source of vocabulary ``vocab`` may hold a segment of these ``n`` folded words at ``NEAR``
    or better.

    A similarity is an Indel ratio ``2M / (n + L)`` of the segment against a window of ``L >= M`` source
    words, ``M`` of them the segment's: at least ``r = near / 100`` only if ``M >= r n / (2 - r)``, and
    each of those ``M`` words is in the source's vocabulary. A difference the matcher forgives is a
    number or an article, every other word in the source. So a source missing more than
    ``n (2 - 2r) / (2 - r)`` of the segment's words (18 % at the default 90), numbers and articles not
    counted, holds it below ``NEAR`` and with a difference not forgiven: it is not aligned at all."""
    missing = sum(
        1
        for w in words
        if w not in vocab and w not in _ARTICLES and w not in _NUMBER_WORDS and not w[:1].isdecimal()
    )
    # missing <= n (2 - 2r) / (2 - r), multiplied out in percent: exact for whole-number thresholds, where
    # the bound is reached exactly (11 words, 2 missing: 2 × 9 / (11 + 9) is NEAR's 90).
    return missing * (200 - th.near) <= len(words) * (200 - 2 * th.near) + 1e-9
