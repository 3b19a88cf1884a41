"""Orchestration: each quote's segments matched against every source, one verdict per quote, and the score."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from grounding_eval.verifier.quotes.extract import _ELISION, extract_quotes
from grounding_eval.verifier.quotes.findings import (
    DEFAULT_THRESHOLDS,
    QuoteFinding,
    QuoteSpan,
    QuoteStatus,
    QuoteThresholds,
    SegmentMatch,
)
from grounding_eval.verifier.quotes.matching import (
    _WORD,
    _find_exact,
    _fold_word,
    _fuzzy,
    _Hit,
    _hit,
    _prepare,
    _Source,
)
from grounding_eval.verifier.quotes.meaning import (
    _forgiven,
    _meaning_changes,
    _plain_words,
    _quote_tokens,
    _stops_before_negation,
    _Tok,
    _with_elided_negations,
)
from grounding_eval.verifier.quotes.normalize import normalize_for_quote

_EDGE_PUNCT = re.compile(r"^[\s.,;:!?]+|[\s.,;:!?]+$")


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
    quote: list[_Tok] | None = None  # tokenized only when a source may hold it or a change is read
    plain_count, plain_keys = _plain_words(words, fold)
    for index, source in sources:
        if plain_count > len(source.word_ids) or not plain_keys <= source.vocab.keys():
            continue  # (exactly where _forgiven would find nothing: see _plain_words)
        quote = _quote_tokens(needle) if quote is None else quote
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
        if status is QuoteStatus.NO_MATCH:
            changes: tuple[str, ...] = ()
        else:
            quote = _quote_tokens(needle) if quote is None else quote
            changes = _meaning_changes(quote, needle, source, found)
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


def _segments(text: str) -> list[tuple[str, str]]:
    """The quote's elision-delimited segments that hold a word: (as written, normalized and trimmed)."""
    segments: list[tuple[str, str]] = []
    for raw in _ELISION.split(text):
        needle = _EDGE_PUNCT.sub("", normalize_for_quote(raw))
        if _WORD.search(needle):
            segments.append((raw, needle))
    return segments


def _check_span(span: QuoteSpan, sources: list[tuple[int, _Source]], th: QuoteThresholds) -> QuoteFinding:
    segments = _segments(span.text)
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
    ``PARTIAL`` 0.5, ``NO_MATCH`` 0. ``NO_SOURCE`` quotes were not checked and are left out, and so are
    ``OUTSIDE_SOURCES`` quotes (real, but not evidence from the sources: information).

    Args:
        findings: Output of :func:`check_quotes`.

    Returns:
        The mean in 0..1, or ``None`` when nothing was checked (no quotes, or none scored), so
        the composite can tell "no quotation evidence" from a perfect or a failing score.
    """
    points = [_POINTS[f.status] for f in findings if f.status in _POINTS]
    return sum(points) / len(points) if points else None
