"""Quotation accuracy: is every quoted span of five or more words really in the source texts?

A quotation the source does not contain is the most persuasive kind of hallucination, because it looks
like evidence, so every quoted span is matched against the sources and classified ``EXACT``, ``NEAR``,
``PARTIAL``, ``NO_MATCH`` (the fabricated-quote finding) or ``NO_SOURCE`` (nothing to check against, not
scored); a quote the sources do not hold may be found in texts outside them (:mod:`.outside`,
``OUTSIDE_SOURCES``). The rules are in docs/reference/verifier.md ("Quote matching"), pinned by
tests/golden/quotes.yaml.

A quote goes through :mod:`.extract` (the spans of an answer), :mod:`.normalize` (the text compared, with
a map back to original offsets), :mod:`.matching` (verbatim search and word-level alignment),
:mod:`.meaning` (forgiven differences and meaning changes) and :mod:`.check` (one verdict per quote).
"""

from __future__ import annotations

from grounding_eval.verifier.quotes.check import check_quotes, check_spans, quote_score
from grounding_eval.verifier.quotes.extract import extract_quotes
from grounding_eval.verifier.quotes.findings import (
    DEFAULT_THRESHOLDS,
    QuoteFinding,
    QuoteSpan,
    QuoteStatus,
    QuoteThresholds,
    SegmentMatch,
)
from grounding_eval.verifier.quotes.normalize import normalize_for_quote
from grounding_eval.verifier.quotes.outside import OutsideText, OutsideTexts

__all__ = [
    "DEFAULT_THRESHOLDS",
    "OutsideText",
    "OutsideTexts",
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
