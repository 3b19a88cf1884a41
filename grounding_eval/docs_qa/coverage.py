"""Must-include coverage: which of the reference answer's required points does the answer state?

A deterministic cross-check on the grader's Complete (the seed: "Covers every point in the reference
answer's 'must include' list"). It never changes the grader's verdict; a disagreement is flagged.

The rule (grounding-eval's; its numbers live in ``rubrics/docs_qa.yaml`` under ``coverage``):

1. Both texts are normalized as the quote checker does (:func:`~grounding_eval.verifier.quotes.
   normalize_for_quote`: case, curly quotes, dashes and hyphens, Markdown, white space).
2. A point is *matched* when ``rapidfuzz.fuzz.partial_ratio(point, answer)`` reaches ``min_ratio``
   (the point appears nearly verbatim), or when at least ``min_word_share`` of the point's content
   words (three letters or more, not a stop word, plural ``s`` folded) occur in the answer (the point
   is paraphrased around its key words).
3. Either way, every number in the point must occur in the answer as a number: "30 days" is not
   covered by "60 days", however similar the letters.

Budget: per point, one ``partial_ratio`` (linear in the answer for a short point) and one set lookup per
word; the answer's words are computed once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["CoverageReport", "PointMatch", "check_coverage"]

_WORD: Final = re.compile(r"[a-z0-9]+")
_NUMBER: Final = re.compile(r"\d+(?:[.,]\d+)*")
_STOP: Final = frozenset({
    "the", "and", "for", "you", "your", "with", "that", "this", "from", "are", "was", "were", "has", "have",
    "had", "not", "but", "can", "may", "any", "all", "its", "their", "they", "them", "what", "when", "where",
    "which", "who", "will", "would", "should", "could", "into", "onto", "out", "about", "after", "before",
    "than", "then", "there", "these", "those", "does", "did", "been", "being", "also", "only", "must",
})  # fmt: skip


@dataclass(frozen=True)
class PointMatch:
    """How one required point fared: matched or not, and the evidence (ratio, word share)."""

    point: str
    matched: bool
    ratio: float
    word_share: float
    numbers_missing: tuple[str, ...]


@dataclass(frozen=True)
class CoverageReport:
    """Coverage of a ``must_include`` list."""

    points: tuple[PointMatch, ...]

    @property
    def missed(self) -> tuple[str, ...]:
        """The points not matched, as written in the test set."""
        return tuple(p.point for p in self.points if not p.matched)

    @property
    def coverage(self) -> float | None:
        """Share of points matched; ``None`` for an empty list."""
        if not self.points:
            return None
        return sum(p.matched for p in self.points) / len(self.points)


def _fold(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _content_words(text: str) -> list[str]:
    return [_fold(w) for w in _WORD.findall(text) if len(w) >= 3 and w not in _STOP and not w.isdigit()]


def check_coverage(
    answer: str, must_include: Sequence[str], *, min_ratio: float, min_word_share: float
) -> CoverageReport:
    """Match each required point against ``answer`` (see the module docstring for the rule)."""
    from rapidfuzz import fuzz

    from grounding_eval.verifier.quotes import normalize_for_quote

    text = normalize_for_quote(answer)
    words = set(_content_words(text))
    numbers = set(_NUMBER.findall(text))
    out = []
    for point in must_include:
        norm = normalize_for_quote(point)
        ratio = float(fuzz.partial_ratio(norm, text)) if norm else 0.0
        content = _content_words(norm)
        share = sum(w in words for w in content) / len(content) if content else 0.0
        missing = tuple(n for n in _NUMBER.findall(norm) if n not in numbers)
        matched = bool(norm) and not missing and (ratio >= min_ratio or share >= min_word_share)
        out.append(PointMatch(point, matched, round(ratio, 1), round(share, 3), missing))
    return CoverageReport(tuple(out))
