"""Tests for grounding_eval.verifier.quotes: golden cases, unit behaviour, calibration, properties."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from grounding_eval.verifier.quotes import (
    DEFAULT_THRESHOLDS,
    OutsideTexts,
    QuoteFinding,
    QuoteSpan,
    QuoteStatus,
    QuoteThresholds,
    check_quotes,
    extract_quotes,
    normalize_for_quote,
    quote_score,
)

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures" / "quotes"
GOLDEN = TESTS / "golden" / "quotes.yaml"
CARES = (FIXTURES / "us_15usc9058_cares_act_eviction_notice.txt").read_text(encoding="utf-8")
SCRA = (FIXTURES / "us_50usc3951_scra_evictions.txt").read_text(encoding="utf-8")
ARTICLE = (FIXTURES / "tenant_notice_article.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# Golden table
# --------------------------------------------------------------------------------------------------


def _golden_cases() -> list[dict[str, Any]]:
    cases = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    assert isinstance(cases, list)
    return cases


def _sources(case: dict[str, Any]) -> list[str]:
    if "source" in case:
        return [case["source"]]
    if "sources" in case:
        return list(case["sources"])
    if "source_file" in case:
        return [(FIXTURES / case["source_file"]).read_text(encoding="utf-8")]
    if "source_files" in case:
        return [(FIXTURES / name).read_text(encoding="utf-8") for name in case["source_files"]]
    return []


def _others(case: dict[str, Any]) -> list[tuple[str, str]]:
    """The case's texts outside its sources, ``(label, text)``: fixture files by name, or ``{label: text}``."""
    if "other_source_files" in case:
        return [(name, (FIXTURES / name).read_text(encoding="utf-8")) for name in case["other_source_files"]]
    return [(str(label), str(text)) for label, text in (case.get("other_sources") or {}).items()]


def _checked(case: dict[str, Any]) -> list[QuoteFinding]:
    """The case's findings: against its sources, then, with outside texts, looked up in them."""
    sources = _sources(case)
    findings = check_quotes(case["answer"], sources)
    others = _others(case)
    return OutsideTexts(lambda: others).look_up(findings, sources) if others else findings


def _squash(text: str) -> str:
    return " ".join(text.split())


class TestGolden:
    """Every case in tests/golden/quotes.yaml gives exactly the expected findings."""

    def test_table_is_well_formed(self) -> None:
        cases = _golden_cases()
        ids = [c["id"] for c in cases]
        assert len(ids) == len(set(ids)), "duplicate golden ids"
        for case in cases:
            assert {"id", "answer", "expected", "note"} <= case.keys(), case.get("id")
            assert len({"source", "sources", "source_file", "source_files"} & case.keys()) <= 1
            assert len({"other_sources", "other_source_files"} & case.keys()) <= 1
            for expected in case["expected"]:
                assert {"quote", "status"} <= expected.keys() <= _EXPECTED_KEYS, case["id"]

    @pytest.mark.parametrize("case", _golden_cases(), ids=lambda c: str(c["id"]))
    def test_case(self, case: dict[str, Any]) -> None:
        sources = _sources(case)
        findings = _checked(case)
        got = [(f.span.text, f.status.value, f.similarity) for f in findings]
        assert len(findings) == len(case["expected"]), got
        for finding, expected in zip(findings, case["expected"], strict=True):
            assert _squash(expected["quote"]) in _squash(finding.span.text), got
            assert finding.status.value == expected["status"], (got, finding.matched_text)
            if "source_index" in expected:
                assert finding.source_index == expected["source_index"]
            if "in_order" in expected:
                assert finding.in_order is expected["in_order"]
            assert finding.outside_source == expected.get("outside_source"), got
            if "meaning_changes" in expected:
                _assert_meaning_changes(finding.meaning_changes, expected["meaning_changes"])
            if {"similarity_min", "similarity_max"} & expected.keys():
                low, high = expected.get("similarity_min", 0.0), expected.get("similarity_max", 100.0)
                assert finding.similarity is not None and low <= finding.similarity <= high, got
            _assert_evidence_consistent(finding, sources, dict(_others(case)))


_EXPECTED_KEYS = {
    "quote", "status", "source_index", "in_order", "meaning_changes", "similarity_min", "similarity_max",
    "outside_source",
}  # fmt: skip


def _assert_meaning_changes(got: tuple[str, ...], expected: list[str]) -> None:
    """As many items as expected, and every expected piece appears in some item."""
    assert len(got) == len(expected), got
    for piece in expected:
        assert any(piece in item for item in got), (piece, got)


def _assert_evidence_consistent(
    finding: QuoteFinding, sources: list[str], others: dict[str, str] | None = None
) -> None:
    """Offsets, excerpt and similarity agree with each other and with the status (an outside finding's
    with the outside text it names, and none of its indexes points into the sources)."""
    if finding.status is QuoteStatus.NO_SOURCE:
        assert finding.similarity is None and finding.source_index is None and not finding.segments
        return
    assert finding.similarity is not None and 0.0 <= finding.similarity <= 100.0
    if finding.outside_source is not None:
        assert finding.status in (QuoteStatus.OUTSIDE_SOURCES, QuoteStatus.PARTIAL)
        assert finding.source_index is None and all(m.source_index is None for m in finding.segments)
        text = (others or {})[finding.outside_source]
        assert (finding.status is QuoteStatus.PARTIAL) == bool(finding.meaning_changes)
        if len(finding.segments) == 1:
            assert text[finding.match_start : finding.match_end] == finding.matched_text
        return
    assert finding.status is not QuoteStatus.OUTSIDE_SOURCES
    assert (finding.similarity == 100.0) == (finding.status is QuoteStatus.EXACT) or not finding.in_order
    # A meaning change is never NEAR or EXACT, and the finding carries its segments' changes.
    assert not finding.meaning_changes or finding.status in (QuoteStatus.PARTIAL, QuoteStatus.NO_MATCH)
    assert set(finding.meaning_changes) == {c for seg in finding.segments for c in seg.meaning_changes}
    for seg in finding.segments:
        if seg.source_index is not None:
            assert seg.start is not None and seg.end is not None
            assert sources[seg.source_index][seg.start : seg.end] == seg.matched_text
    if finding.source_index is not None and len(finding.segments) == 1:
        assert finding.match_start is not None and finding.match_end is not None
        excerpt = sources[finding.source_index][finding.match_start : finding.match_end]
        assert excerpt == finding.matched_text


# --------------------------------------------------------------------------------------------------
# normalize_for_quote
# --------------------------------------------------------------------------------------------------


class TestNormalizeForQuote:
    """normalize_for_quote makes a faithful quotation and its source compare equal."""

    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("Tenant\u2019s RIGHTS", "tenant's rights"),
            ("30\u2011day  notice", "30 day notice"),
            ("30-day", "30 day"),
            (
                "30 \u2013 day \u2014 and \u2015 more \u2212 less \u2012 x \u2010 y",
                "30 day and more less x y",
            ),
            ("may not—", "may not"),
            ("February 1, 2020 , and title 34 )", "february 1, 2020, and title 34)"),
            ("( a ) the ; rule : here .", "(a) the; rule: here."),
            (
                "**bold** and __strong__ and *it* and _em_ and `code`",
                "bold and strong and it and em and code",
            ),
            ("see [the rule](https://example.org/a_b-c) now", "see the rule now"),
            ("zero\u200bwidth\u200d joiner\ufeff and soft\u00adhyphen", "zerowidth joiner and softhyphen"),
            ("a … b ... c . . . d", "a b c d"),
            (
                "“covered dwelling” and 'covered dwelling' and \"covered dwelling\"",
                "covered dwelling and " * 2 + "covered dwelling",
            ),
            ("\uff21\uff42\uff43 \ufb01le caf\u00e9 cafe\u0301", "abc file cafe cafe"),
            ("STRASSE Straße", "strasse strasse"),
            ("  spaced\t\nout\r\n  ", "spaced out"),
            ("", ""),
        ],
        ids=[
            "curly-apostrophe-and-case",
            "non-breaking-hyphen",
            "hyphen",
            "dash-variants",
            "trailing-em-dash",
            "stray-space-before-punctuation",
            "spaces-inside-parentheses",
            "markdown-emphasis",
            "markdown-link",
            "invisible-characters",
            "ellipses",
            "nested-quote-styles",
            "compatibility-forms-and-accents",
            "case-fold",
            "whitespace",
            "empty",
        ],
    )
    def test_examples(self, raw: str, expected: str) -> None:
        assert normalize_for_quote(raw) == expected

    def test_apostrophe_inside_word_kept(self) -> None:
        assert (
            normalize_for_quote("the landlord's and tenants' rights") == "the landlord's and tenants rights"
        )

    @given(st.text())
    def test_idempotent(self, text: str) -> None:
        once = normalize_for_quote(text)
        assert normalize_for_quote(once) == once

    @given(st.text(alphabet=st.sampled_from(list(" .,;:()-—'\"“”…*_[]`\u200b\u0301\n\ta1é("))))
    def test_idempotent_on_punctuation_soup(self, text: str) -> None:
        # Plain st.text() rarely produces the punctuation runs where step order matters.
        once = normalize_for_quote(text)
        assert normalize_for_quote(once) == once


# --------------------------------------------------------------------------------------------------
# extract_quotes
# --------------------------------------------------------------------------------------------------


class TestExtractQuotes:
    """extract_quotes finds double, curly and block quotes of five or more words, with offsets."""

    def test_inline_offsets_point_at_text(self) -> None:
        answer = 'He said "one two three four five" and “six seven eight nine ten”.'
        spans = extract_quotes(answer)
        assert [(s.kind, s.text) for s in spans] == [
            ("double", "one two three four five"),
            ("curly", "six seven eight nine ten"),
        ]
        for span in spans:
            assert answer[span.start : span.end] == span.text

    def test_block_quote_paragraphs(self) -> None:
        answer = (
            "Intro.\n> first line of it\n>> nested second line\n>\n> another paragraph of five words\nEnd."
        )
        spans = extract_quotes(answer)
        assert spans == [
            QuoteSpan("first line of it\nnested second line", 9, 47, "blockquote"),
            QuoteSpan("another paragraph of five words", 52, 83, "blockquote"),
        ]
        assert answer[spans[0].start : spans[0].end] == "first line of it\n>> nested second line"

    def test_inline_quotes_inside_block_quote_not_reported_twice(self) -> None:
        answer = '> The term "covered dwelling unit as used here" means a dwelling.'
        assert [s.kind for s in extract_quotes(answer)] == ["blockquote"]

    def test_min_words_counts_words_not_elision_marks(self) -> None:
        assert extract_quotes('"one two … three four"') == []
        assert len(extract_quotes('"one two … three four five"')) == 1
        assert len(extract_quotes('"one two three"', min_words=3)) == 1

    def test_quote_does_not_cross_blank_line(self) -> None:
        answer = 'Start "one two three four five\n\nsix seven" eight nine ten eleven "x".'
        assert extract_quotes(answer) == []

    def test_single_newline_inside_quote_is_fine(self) -> None:
        assert len(extract_quotes('"one two three\nfour five six"')) == 1

    def test_max_chars(self) -> None:
        long_quote = '"' + " ".join(["word"] * 500) + '"'
        assert extract_quotes(long_quote) == []  # 2,499 characters > 2,000
        assert len(extract_quotes(long_quote, max_chars=3000)) == 1

    def test_restart_on_second_opener(self) -> None:
        answer = 'a "stray opener and then "one two three four five six" end'
        assert [s.text for s in extract_quotes(answer)] == ["one two three four five six"]

    def test_inch_marks_and_possessives(self) -> None:
        answer = "A 5\" pipe, the tenants' rights, the landlord's duty, and 7\" more words here now."
        assert extract_quotes(answer) == []

    def test_crlf_line_endings(self) -> None:
        answer = '> one two three\r\n> four five six\r\nafter "seven eight nine ten eleven"\r\n'
        spans = extract_quotes(answer)
        assert [s.kind for s in spans] == ["blockquote", "double"]
        assert spans[0].text == "one two three\nfour five six"


# --------------------------------------------------------------------------------------------------
# check_quotes and quote_score
# --------------------------------------------------------------------------------------------------


class TestCheckQuotes:
    """check_quotes classifies each quote against the best source and keeps the evidence."""

    def test_exact_match_evidence(self) -> None:
        answer = 'It "may not issue a notice to vacate under paragraph (1)".'
        (finding,) = check_quotes(answer, [SCRA, CARES])
        assert finding.status is QuoteStatus.EXACT
        assert finding.similarity == 100.0
        assert finding.source_index == 1
        assert finding.matched_text == "may not issue a notice to vacate under paragraph (1)"
        assert finding.match_start is not None and finding.match_end is not None
        assert CARES[finding.match_start : finding.match_end] == finding.matched_text

    def test_excerpt_is_original_text_with_quirks(self) -> None:
        (finding,) = check_quotes('"beginning on March 27, 2020, the lessor of a covered"', [CARES])
        assert finding.status is QuoteStatus.EXACT
        assert finding.matched_text == "beginning on March 27, 2020 , the lessor of a covered"

    def test_elided_quote_segments(self) -> None:
        answer = '"The lessor of a covered dwelling unit … may not issue a notice to vacate"'
        (finding,) = check_quotes(answer, [CARES])
        assert finding.status is QuoteStatus.EXACT and finding.in_order
        assert len(finding.segments) == 2
        assert finding.matched_text == (
            "The lessor of a covered dwelling unit … may not issue a notice to vacate"
        )
        assert finding.match_start is not None and finding.match_end is not None
        assert finding.match_start < finding.match_end

    def test_elided_quote_takes_worst_segment(self) -> None:
        answer = '"The lessor of a covered dwelling unit … must pay triple damages to every tenant"'
        (finding,) = check_quotes(answer, [CARES])
        statuses = [s.status for s in finding.segments]
        assert statuses[0] is QuoteStatus.EXACT
        assert finding.status is statuses[1] is QuoteStatus.NO_MATCH
        assert finding.similarity == min(s.similarity for s in finding.segments)

    def test_word_before_match_must_not_be_glued(self) -> None:
        # "tenant to vacate the covered" is a substring of "...the tenant to vacate..." but
        # "enant to vacate the covered" must not be EXACT just because it is a character substring.
        (finding,) = check_quotes('"enant to vacate the covered dwelling"', [CARES])
        assert finding.status is not QuoteStatus.EXACT

    def test_sources_must_be_a_sequence_not_a_string(self) -> None:
        with pytest.raises(TypeError, match="not a single string"):
            check_quotes('"one two three four five"', CARES)

    def test_source_without_words_counts_as_blank(self) -> None:
        (finding,) = check_quotes('"one two three four five"', ["***", "— …"])
        assert finding.status is QuoteStatus.NO_SOURCE
        assert finding.similarity is None

    def test_blank_source_keeps_indexes_of_the_others(self) -> None:
        (finding,) = check_quotes('"may not issue a notice to vacate"', ["", CARES])
        assert finding.source_index == 1

    def test_thresholds_are_used(self) -> None:
        answer = 'The lessor "may not issue a notice to vacate under paragraph (1) until after the end"'
        (default,) = check_quotes(answer, [CARES])
        assert default.status is QuoteStatus.NEAR
        strict = QuoteThresholds(near=99.0, partial=95.0)
        (finding,) = check_quotes(answer, [CARES], strict)
        assert finding.status is QuoteStatus.NO_MATCH
        assert check_quotes(answer, [CARES], QuoteThresholds(min_words=30)) == []


class TestQuoteThresholds:
    """QuoteThresholds rejects inconsistent settings when built."""

    @pytest.mark.parametrize(
        "kwargs",
        [
            {"near": 50.0, "partial": 60.0},
            {"near": 101.0},
            {"partial": -1.0},
            {"min_words": 0},
            {"max_quote_chars": 0},
        ],
        ids=["partial-above-near", "near-above-100", "negative-partial", "zero-min-words", "zero-max-chars"],
    )
    def test_invalid(self, kwargs: dict[str, Any]) -> None:
        with pytest.raises(ValueError):
            QuoteThresholds(**kwargs)

    def test_defaults(self) -> None:
        assert (DEFAULT_THRESHOLDS.near, DEFAULT_THRESHOLDS.partial, DEFAULT_THRESHOLDS.min_words) == (
            90.0,
            50.0,
            5,
        )


def _finding(status: QuoteStatus) -> QuoteFinding:
    return QuoteFinding(QuoteSpan("one two three four five", 0, 23, "double"), status, None, None, None)


class TestQuoteScore:
    """quote_score averages EXACT/NEAR=1, PARTIAL=0.5, NO_MATCH=0 over checked quotes."""

    def test_mean(self) -> None:
        statuses = [QuoteStatus.EXACT, QuoteStatus.NEAR, QuoteStatus.PARTIAL, QuoteStatus.NO_MATCH]
        assert quote_score([_finding(s) for s in statuses]) == pytest.approx(2.5 / 4)

    def test_no_source_left_out(self) -> None:
        assert quote_score([_finding(QuoteStatus.NO_SOURCE), _finding(QuoteStatus.PARTIAL)]) == 0.5

    @pytest.mark.parametrize("statuses", [[], [QuoteStatus.NO_SOURCE]], ids=["no-quotes", "all-no-source"])
    def test_none_when_nothing_checked(self, statuses: list[QuoteStatus]) -> None:
        assert quote_score([_finding(s) for s in statuses]) is None

    def test_outside_sources_left_out(self) -> None:
        """A real quote found only outside the sources is information: it neither raises nor lowers."""
        assert quote_score([_finding(QuoteStatus.OUTSIDE_SOURCES), _finding(QuoteStatus.NO_MATCH)]) == 0.0
        assert quote_score([_finding(QuoteStatus.OUTSIDE_SOURCES)]) is None


# --------------------------------------------------------------------------------------------------
# Calibration: the claims made in QuoteThresholds' docstring, on real statute text
# --------------------------------------------------------------------------------------------------

_SOURCE_WORDS = CARES.split("\n", 2)[2].split()


def _mutated(start: int, length: int, changes: int, seed: int) -> str:
    rng = random.Random(seed)
    words = _SOURCE_WORDS[start : start + length]
    for i in rng.sample(range(length), changes):
        words[i] = rng.choice(["zebra", "quantum", "velvet", "harbor", "meadow", "copper", "lantern"])
    return " ".join(words)


class TestCalibration:
    """The thresholds separate slips, distortions and inventions as documented."""

    @pytest.mark.parametrize("seed", range(8))
    def test_one_word_in_twelve_is_near(self, seed: int) -> None:
        quote = _mutated(300 + 40 * seed, 12, 1, seed)
        (finding,) = check_quotes(f'"{quote}"', [CARES])
        assert finding.status is QuoteStatus.NEAR, (quote, finding.similarity)

    @pytest.mark.parametrize("seed", range(8))
    def test_two_words_in_twelve_is_partial(self, seed: int) -> None:
        quote = _mutated(300 + 40 * seed, 12, 2, seed)
        (finding,) = check_quotes(f'"{quote}"', [CARES])
        assert finding.status is QuoteStatus.PARTIAL, (quote, finding.similarity)

    @pytest.mark.parametrize("seed", range(8))
    def test_half_the_words_changed_is_partial(self, seed: int) -> None:
        quote = _mutated(300 + 40 * seed, 12, 6, seed)
        (finding,) = check_quotes(f'"{quote}"', [CARES])
        assert finding.status is QuoteStatus.PARTIAL, (quote, finding.similarity)

    @pytest.mark.parametrize(
        "sentence",
        [
            "A landlord shall return the full security deposit to the tenant within 14 days after the "
            "tenant vacates the premises.",
            "Any tenant who is a victim of domestic violence may terminate the lease without penalty by "
            "giving written notice.",
            "A tenant may withhold rent if the landlord fails to make repairs within a reasonable time "
            "after notice.",
            "The lessor shall not charge any late fees to the tenant during the moratorium period.",
            "A servicemember may terminate a residential lease at any time after entering military service.",
            "The notice to vacate must be delivered by certified mail to the tenant's last known address.",
            "Tenants in covered properties may request a 90-day extension of the notice period.",
            "Landlords who violate this section are subject to a civil penalty of up to $10,000.",
            "Before filing for eviction the landlord must offer the tenant a repayment plan for unpaid rent.",
            "the tenant has the right to a hearing before an eviction",
        ],
    )
    def test_invented_sentence_in_legal_register_is_no_match(self, sentence: str) -> None:
        (finding,) = check_quotes(f'"{sentence}"', [CARES, SCRA])
        assert finding.status is QuoteStatus.NO_MATCH, (finding.similarity, finding.matched_text)

    def test_character_level_partial_ratio_would_not_separate_these(self) -> None:
        # Why the check aligns words: rapidfuzz's character-level partial_ratio rates an invented
        # sentence about as high as a real quote with half its words changed.
        from rapidfuzz import fuzz

        invented = normalize_for_quote("the landlord must give the tenant at least 30 days written notice")
        assert fuzz.partial_ratio(invented, normalize_for_quote(CARES)) > 55
        (finding,) = check_quotes(f'"{invented}"', [CARES])
        assert finding.status is QuoteStatus.NO_MATCH


# --------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------

# Source tokens: words, numbers, accents, apostrophes, dashes, Markdown, invisible characters and
# punctuation, but no double quote marks and no ">" (they would change where the quote is).
_TOKEN = st.one_of(
    st.sampled_from(
        [
            *["the", "tenant", "landlord", "may", "not", "shall", "notice", "vacate", "30-day", "2020"],
            *["\u00a79058", "(1)", "(a)", "title", "34", ")", ",", ";", ":", ".", "(", "?", "!"],
            *["tenant's", "tenants'", "**bold**", "_em_", "[link](https://x.org/a_b)", "caf\u00e9"],
            *["...", "[...]"],
            "120\u2011day",  # non-breaking hyphen
            "landlord\u2019s",  # curly apostrophe
            "\u2014",  # em dash
            "\u2013",  # en dash
            "\ufb01le",  # "fi" ligature
            "Stra\u00dfe",
            "zero\u200bwidth",
            "\u2026",  # ellipsis
        ]
    ),
    st.text(
        alphabet=st.characters(exclude_characters='"\u201c\u201d>\n\r', exclude_categories=["Cs"]),
        min_size=1,
        max_size=8,
    ),
)
_SEPARATOR = st.sampled_from([" ", "  ", "\n", "\t", " \n "])


# Tokens that are one word each (a letter or digit, no white space), however they are written.
_WORD_TOKEN = st.sampled_from(
    [
        *["the", "tenant", "landlord", "may", "not", "shall", "notice", "vacate", "30-day", "2020", "34"],
        *["\u00a79058", "(1)", "(a)", "title", "tenant's", "tenants'", "**bold**", "_em_", "caf\u00e9"],
        *["[link](https://x.org/a_b)", "120\u2011day", "landlord\u2019s", "\ufb01le", "Stra\u00dfe"],
        "zero\u200bwidth",
    ]
)


@st.composite
def _source_and_quote(draw: st.DrawFn) -> tuple[str, str]:
    """A source of tokens and a quote of whole tokens from it, five of them words (so always a quote)."""
    other = _TOKEN.filter(lambda t: t.strip() != "")
    before, after = draw(st.lists(other, max_size=25)), draw(st.lists(other, max_size=25))
    words, others = draw(st.lists(_WORD_TOKEN, min_size=5, max_size=15)), draw(st.lists(other, max_size=15))
    quoted = draw(st.permutations([*words, *others]))
    tokens = [*before, *quoted, *after]
    seps = draw(st.lists(_SEPARATOR, min_size=len(tokens), max_size=len(tokens)))
    start, end = len(before), len(before) + len(quoted)
    source = "".join(t + s for t, s in zip(tokens, seps, strict=True))
    quote = "".join(t + s for t, s in zip(tokens[start:end], seps[start:end], strict=True)).strip()
    return source, quote


# Characters of one quoted word: anything but white space, line breaks and double quote marks (which
# would end the quote or split its paragraph).
_QUOTE_WORD_CHARS = st.characters(
    exclude_characters='"\u201c\u201d', exclude_categories=["Cs", "Cc", "Zs", "Zl", "Zp"]
)


@st.composite
def _arbitrary_answer_and_sources(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Arbitrary text around a quote of five or more arbitrary words, and arbitrary sources; one
    source holds the quote's words, verbatim or with one word changed, unless none is drawn."""
    letters = st.characters(categories=["L", "N"])
    words = draw(
        st.lists(
            st.tuples(st.text(_QUOTE_WORD_CHARS, max_size=6), letters).map("".join), min_size=5, max_size=12
        )
    )
    quote = " ".join(words)
    sources = draw(st.lists(st.text(), max_size=3))
    kept = draw(st.sampled_from(["verbatim", "one word changed", "none"]))
    if kept != "none":
        source_words = list(words)
        if kept == "one word changed":
            source_words[draw(st.integers(0, len(words) - 1))] = draw(
                st.text(letters, min_size=1, max_size=6)
            )
        around = draw(st.tuples(st.text(), st.text()))
        sources.insert(
            draw(st.integers(0, len(sources))), f"{around[0]} {' '.join(source_words)} {around[1]}"
        )
    answer = f"{draw(st.text())}\n\n\u201c{quote}\u201d {draw(st.text())}"
    return answer, sources


def _junk_quote(junk: str, data: st.DataObject) -> str:
    """Five or more words cut from ``junk``, each between two letters, without what would end the quote."""
    cleaned = re.sub('["\u201c\u201d\r\n]', " ", junk)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(cleaned)), min_size=4, max_size=10)))
    pieces = [cleaned[a:b] for a, b in zip([0, *cuts], [*cuts, len(cleaned)], strict=True)]
    return " ".join(f"q{piece}q" for piece in pieces)


class TestProperties:
    """Invariants over generated text."""

    @settings(
        max_examples=300,
        deadline=None,
        suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
    )
    @given(_source_and_quote())
    def test_substring_on_word_boundaries_is_exact_unless_it_drops_a_negation(
        self, pair: tuple[str, str]
    ) -> None:
        source, quote = pair
        (finding,) = check_quotes(f"Prefix text “{quote}” suffix text.", [source])
        if finding.status is QuoteStatus.EXACT:
            event("EXACT")
            return
        # By design the one exception: every word is there, but the quote (or a segment before an elision)
        # stops on "may" where the source goes on with "not", or an elision leaves a "not" out.
        event("PARTIAL: a negation left out")
        assert finding.status is QuoteStatus.PARTIAL and finding.similarity == 99.9, finding
        assert finding.meaning_changes, finding
        for change in finding.meaning_changes:
            assert "(the quote stops before" in change or "left out by the elision" in change, finding

    @settings(max_examples=200, deadline=None)
    @given(_arbitrary_answer_and_sources())
    def test_never_raises_on_arbitrary_text(self, drawn: tuple[str, list[str]]) -> None:
        answer, sources = drawn
        findings = check_quotes(answer, sources)
        assert findings  # the drawn answer holds a quote of five words or more
        for finding in findings:
            _assert_evidence_consistent(finding, sources)
        event(f"quote {findings[0].status.name}")
        event("excerpt located" if findings[0].source_index is not None else "no excerpt")

    @settings(max_examples=100, deadline=None)
    @given(st.binary(max_size=2000), st.binary(max_size=2000), st.data())
    def test_never_raises_on_binary_junk(self, answer: bytes, source: bytes, data: st.DataObject) -> None:
        """Junk around and inside a quote still gets one finding per quoted span, in order."""
        junk_answer = answer.decode("latin-1")
        junk_source = source.decode("utf-8", errors="replace")
        quoted = _junk_quote(junk_answer[:1000], data)
        text = f'{junk_answer}\n\nIt says "{quoted}" and again "{quoted}".'
        sources = [junk_source, junk_answer, quoted]
        findings = check_quotes(text, sources)
        spans = extract_quotes(text)
        assert [f.span for f in findings] == spans
        assert [s.text for s in spans[-2:]] == [quoted, quoted]
        # The last two are the same text, matched once: the same verdict.
        assert replace(findings[-1], span=findings[-2].span) == findings[-2]
        # The quote is one of the sources: all of it is there.
        assert findings[-1].status is not QuoteStatus.NO_MATCH, findings[-1]
        for finding in findings:
            _assert_evidence_consistent(finding, sources)
        event(f"quotes in the answer: {'2' if len(findings) == 2 else 'more than 2'}")
        event(f"junk quote {findings[-1].status.name}")

    @pytest.mark.parametrize("seed", range(3))
    def test_never_raises_on_100kb_strings(self, seed: int) -> None:
        rng = random.Random(seed)
        alphabet = 'abc de  "“”…..>\n\n-—\u200b\u0301é§()[]*_'
        answer = "".join(rng.choice(alphabet) for _ in range(100_000))
        source = "".join(rng.choice(alphabet) for _ in range(100_000))
        findings = check_quotes(answer, [source, CARES])
        for finding in findings:
            _assert_evidence_consistent(finding, [source, CARES])


# --------------------------------------------------------------------------------------------------
# Texts outside the sources (issue 38)
# --------------------------------------------------------------------------------------------------


class TestOutsideTexts:
    """Where a quote the sources do not hold is looked up: read only when needed, once, and pruned soundly."""

    def test_nothing_is_read_until_a_quote_needs_it(self) -> None:
        reads: list[int] = []

        def load() -> list[tuple[str, str]]:
            reads.append(1)
            return [("scra", SCRA)]

        outside = OutsideTexts(load)
        held = check_quotes('"may not require the tenant to vacate"', [CARES])
        assert outside.look_up(held, [CARES]) == held and outside.look_up([], [CARES]) == []
        no_source = check_quotes('"stay the proceedings for a period of 90 days"', [])
        assert outside.look_up(no_source, []) == no_source
        assert reads == []
        answer = '"stay the proceedings for a period of 90 days" and "stay the proceedings for a period of 90 days"'
        for _ in range(2):
            found = outside.look_up(check_quotes(answer, [CARES]), [CARES])
            assert [(f.status, f.outside_source) for f in found] == [
                (QuoteStatus.OUTSIDE_SOURCES, "scra")
            ] * 2
            assert found[0].span != found[1].span  # each finding keeps its own span
        assert reads == [1]

    def test_an_unreadable_dataset_is_the_callers_error(self) -> None:
        def load() -> list[tuple[str, str]]:
            raise OSError("gone")

        with pytest.raises(OSError, match="gone"):
            OutsideTexts(load).look_up(check_quotes('"a b c d e f"', [CARES]), [CARES])

    @settings(max_examples=300, deadline=None)
    @given(
        start=st.integers(0, len(_SOURCE_WORDS) - 30),
        length=st.integers(5, 24),
        changes=st.integers(0, 8),
        overhang=st.integers(0, 6),
        seed=st.integers(0, 10_000),
    )
    def test_pruning_never_skips_a_text_that_could_be_adopted(
        self, start: int, length: int, changes: int, overhang: int, seed: int
    ) -> None:
        """``_may_hold`` False (the text is never aligned) only where the matcher, aligning it, finds the
        quote below NEAR and not forgiven: never EXACT, NEAR or PARTIAL at NEAR similarity. Quotes are
        statute passages with invented words in, some running past the statute's end."""
        from grounding_eval.verifier.quotes.check import _segments
        from grounding_eval.verifier.quotes.matching import _WORD, _fold_word
        from grounding_eval.verifier.quotes.outside import _may_hold, vocabulary

        words = _mutated(start, length, min(changes, length), seed).split()
        if overhang:
            words = [*_SOURCE_WORDS[-length:], *(["lantern", "velvet", "copper"] * 2)[:overhang]]
        quote = " ".join(words)
        (finding,) = check_quotes(f'"{quote}"', [CARES]) or [None]
        if finding is None:  # a passage that is all punctuation: no quote
            event("no quote")
            return
        vocab = frozenset(vocabulary(CARES))
        held = any(
            _may_hold([_fold_word(w) for w in _WORD.findall(needle)], vocab, DEFAULT_THRESHOLDS)
            for _, needle in _segments(finding.span.text)
        )
        adoptable = finding.status in (QuoteStatus.EXACT, QuoteStatus.NEAR) or (
            finding.status is QuoteStatus.PARTIAL
            and finding.similarity is not None
            and finding.similarity >= DEFAULT_THRESHOLDS.near
        )
        event(f"pruned={not held} adoptable={adoptable}")
        assert held or not adoptable, (quote, finding.status, finding.similarity)
