"""Tests for the quotation check's forgiven differences and meaning changes (issue 7).

The golden table (tests/golden/quotes.yaml) pins the rules on real statute text; these tests pin the
number forms, negations and modals one by one, the evidence on segments, and two properties.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from grounding_eval.verifier.quotes import (
    QuoteFinding,
    QuoteSpan,
    QuoteStatus,
    QuoteThresholds,
    check_quotes,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "quotes"
CARES = (FIXTURES / "us_15usc9058_cares_act_eviction_notice.txt").read_text(encoding="utf-8")

# One sentence, long enough that a single changed word is NEAR by score (one word in 14).
_SENTENCE = "The tenant has {n} days to answer the written notice that the landlord sent by mail today."


def _check_one(quote: str, source: str, thresholds: QuoteThresholds | None = None) -> QuoteFinding:
    findings = check_quotes(f"It says “{quote}”.", [source], *([thresholds] if thresholds else []))
    assert len(findings) == 1, findings
    return findings[0]


class TestNumberForms:
    """A number in words and in digits with the same value is forgiven; another value never is."""

    @pytest.mark.parametrize(
        ("source_form", "quote_form"),
        [
            ("5", "five"),
            ("five", "5"),
            ("30", "thirty"),
            ("35", "thirty-five"),
            ("35", "thirty five"),
            ("19", "nineteen"),
            ("0", "zero"),
            ("120", "one hundred twenty"),
            ("900", "nine hundred"),
            ("1st", "first"),
            ("twelfth", "12th"),
            ("21st", "twenty-first"),
            ("2,400", "2400"),
            ("1.50", "1.5"),
            ("007", "7"),
        ],
    )
    def test_same_value_is_near_whatever_the_score(self, source_form: str, quote_form: str) -> None:
        source = _SENTENCE.format(n=source_form)
        # Five words only, so one differing word alone would be PARTIAL (80).
        quote = f"has {quote_form} days to answer"
        finding = _check_one(quote, source)
        assert finding.status is QuoteStatus.NEAR, (finding.similarity, finding.matched_text)
        assert finding.meaning_changes == ()
        assert finding.similarity is not None and finding.similarity < 100.0

    @pytest.mark.parametrize(
        ("source_form", "quote_form", "item"),
        [
            ("30", "60", "number 30 → 60"),
            ("30", "sixty", "number 30 → sixty"),
            ("thirty", "31", "number thirty → 31"),
            ("thirty-five", "36", "number thirty five → 36"),
            ("1st", "second", "number 1st → second"),
            ("1.5", "15", "number 1.5 → 15"),
            ("2,400", "24,000", "number 2,400 → 24,000"),
            ("120", "one hundred", "number 120 → one hundred"),
        ],
    )
    def test_other_value_is_a_meaning_change(self, source_form: str, quote_form: str, item: str) -> None:
        source = _SENTENCE.format(n=source_form)
        quote = _SENTENCE.format(n=quote_form)
        finding = _check_one(quote, source)
        assert finding.status is QuoteStatus.PARTIAL, (finding.similarity, finding.matched_text)
        assert finding.meaning_changes == (item,)

    def test_number_removed_and_added(self) -> None:
        source = "The tenant has 30 days to answer the written notice that the landlord sent by mail."
        removed = _check_one(
            "The tenant has days to answer the written notice that the landlord sent", source
        )
        assert removed.meaning_changes == ("number 30 removed",)
        added = _check_one(
            "the written notice that the landlord sent by 2 mail",
            "the written notice that the landlord sent by mail",
        )
        assert added.meaning_changes == ("number 2 added",)

    def test_indefinite_article_for_one_is_neither(self) -> None:
        source = "Violators shall be imprisoned for not more than one year, or fined, or both."
        finding = _check_one("shall be imprisoned for not more than a year, or fined", source)
        assert finding.meaning_changes == ()
        assert finding.status is QuoteStatus.NEAR  # by score (one word in 11)
        short = _check_one("for not more than a year", source)
        assert short.status is QuoteStatus.PARTIAL and short.meaning_changes == ()

    def test_comma_between_number_words_keeps_two_numbers(self) -> None:
        source = "Items twenty, one and three of the list apply to the tenant in every case."
        finding = _check_one("Items 20, 1 and three of the list apply", source)
        assert finding.status is QuoteStatus.NEAR and finding.meaning_changes == ()
        merged = _check_one("Items 21 and three of the list apply to the tenant", source)
        assert merged.status is not QuoteStatus.NEAR


_CLAUSES = "The landlord {v} return the deposit to the tenant within the period set by the court order."


class TestNegationsAndModals:
    """A negation added or removed, or a modal changed, caps the status at PARTIAL and is named."""

    @pytest.mark.parametrize(
        ("source_verb", "quote_verb", "item"),
        [
            ("may not", "may", 'negation "may not return" → "may return"'),
            ("shall", "shall not", 'negation "shall return" → "shall not return"'),
            ("does not", "does", 'negation "does not return" → "does return"'),
            ("need not", "need", 'negation "need not return" → "need return"'),
            ("shall never", "shall", 'negation "shall never return" → "shall return"'),
        ],
    )
    def test_negation(self, source_verb: str, quote_verb: str, item: str) -> None:
        finding = _check_one(_CLAUSES.format(v=quote_verb), _CLAUSES.format(v=source_verb))
        assert finding.similarity is not None and finding.similarity >= 90.0
        assert finding.status is QuoteStatus.PARTIAL
        assert finding.meaning_changes == (item,)

    @pytest.mark.parametrize(
        ("source_verb", "quote_verb", "item"),
        [
            ("must", "may", "modal must → may"),
            ("shall", "may", "modal shall → may"),
            ("may", "must", "modal may → must"),
            ("should", "will", "modal should → will"),
            ("could", "might", "modal could → might"),
            ("can", "would", "modal can → would"),
            ("shall", "", "modal shall removed"),
        ],
    )
    def test_modal(self, source_verb: str, quote_verb: str, item: str) -> None:
        quote = " ".join(_CLAUSES.format(v=quote_verb).split())
        finding = _check_one(quote, _CLAUSES.format(v=source_verb))
        assert finding.status is QuoteStatus.PARTIAL
        assert finding.meaning_changes == (item,)

    def test_modal_added(self) -> None:
        finding = _check_one(_CLAUSES.format(v="must"), " ".join(_CLAUSES.format(v="").split()))
        assert finding.meaning_changes == ("modal must added",)

    def test_modal_and_negation_together(self) -> None:
        finding = _check_one(_CLAUSES.format(v="must"), _CLAUSES.format(v="may not"))
        assert finding.status is QuoteStatus.PARTIAL
        assert set(finding.meaning_changes) == {
            'negation "landlord may not return" → "landlord must return"',
            "modal may → must",
        }

    @pytest.mark.parametrize(
        ("source_verb", "quote_verb"),
        [("does not", "doesn't"), ("cannot", "can not"), ("will not", "won't"), ("shall not", "shan't")],
    )
    def test_contraction_is_not_a_meaning_change(self, source_verb: str, quote_verb: str) -> None:
        finding = _check_one(_CLAUSES.format(v=quote_verb), _CLAUSES.format(v=source_verb))
        assert finding.meaning_changes == ()
        assert finding.status is QuoteStatus.NEAR  # by score: one or two words in 17

    def test_can_t_for_may_not_changes_the_modal_only(self) -> None:
        finding = _check_one(_CLAUSES.format(v="can't"), _CLAUSES.format(v="may not"))
        assert finding.meaning_changes == ("modal may → can",)

    def test_ordinary_word_change_is_not_named(self) -> None:
        finding = _check_one(
            _CLAUSES.format(v="shall").replace("deposit", "money"), _CLAUSES.format(v="shall")
        )
        assert finding.status is QuoteStatus.NEAR and finding.meaning_changes == ()


class TestEvidence:
    """meaning_changes lives on segments and findings, and only where the alignment is credible."""

    def test_defaults_are_empty(self) -> None:
        span = QuoteSpan("one two three four five", 0, 23, "double")
        assert QuoteFinding(span, QuoteStatus.NO_SOURCE, None, None, None).meaning_changes == ()
        (no_source,) = check_quotes('"may not require the tenant to vacate"', [])
        assert no_source.meaning_changes == ()

    def test_elided_quote_segments_carry_their_own_changes(self) -> None:
        answer = (
            '"The lessor of a covered dwelling unit … may issue a notice to vacate under paragraph (2) until '
            'after the expiration"'
        )
        (finding,) = check_quotes(answer, [CARES])
        first, second = finding.segments
        assert first.status is QuoteStatus.EXACT and first.meaning_changes == ()
        assert second.status is QuoteStatus.PARTIAL
        assert second.meaning_changes == ('negation "may not issue" → "may issue"', "number 1 → 2")
        assert finding.status is QuoteStatus.PARTIAL
        assert finding.meaning_changes == second.meaning_changes

    def test_same_change_in_two_segments_is_listed_once(self) -> None:
        source = "the lessor gives the tenant a notice 30 days before the date that is 30 days after the date"
        answer = (
            '"the lessor gives the tenant a notice 60 days … before the date that is 60 days after the date"'
        )
        (finding,) = check_quotes(answer, [source])
        assert [s.meaning_changes for s in finding.segments] == [("number 30 → 60",)] * 2
        assert finding.meaning_changes == ("number 30 → 60",)

    def test_below_partial_no_changes_are_named(self) -> None:
        finding = _check_one("the landlord must pay the tenant 3 times the deposit within 10 days", CARES)
        assert finding.status is QuoteStatus.NO_MATCH and finding.meaning_changes == ()

    def test_thresholds_still_decide_partial_or_no_match(self) -> None:
        quote = "before the date that is 60 days after the date on which the lessor provides"
        strict = QuoteThresholds(near=99.0, partial=95.0)
        finding = _check_one(quote, CARES, strict)
        assert finding.similarity is not None and finding.similarity < 95.0
        assert finding.status is QuoteStatus.NO_MATCH and finding.meaning_changes == ()

    def test_forgiven_is_near_under_any_thresholds(self) -> None:
        strict = QuoteThresholds(near=99.0, partial=95.0)
        finding = _check_one("before the date that is thirty days after", CARES, strict)
        assert finding.status is QuoteStatus.NEAR

    def test_matched_text_points_at_the_forgiven_match(self) -> None:
        finding = _check_one("the date that is thirty days after the date", CARES)
        assert finding.matched_text == "the date that is 30 days after the date"

    def test_edge_words_facing_a_changed_word_are_not_reported(self) -> None:
        # The window puts "(2)" opposite "the lessor"; the quote has no number there.
        finding = _check_one("the lessor shall not issue a notice to vacate", CARES)
        assert finding.meaning_changes == ("modal may → shall",)


# --------------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------------

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = [
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def _spell(n: int, hyphen: bool) -> str:
    """English words for 0..999 (written independently of the code under test)."""
    if n >= 100:
        rest = n % 100
        return f"{_ONES[n // 100]} hundred" + (f" {_spell(rest, hyphen)}" if rest else "")
    if n >= 20:
        unit = n % 10
        return _TENS[n // 10 - 2] + (("-" if hyphen else " ") + _ONES[unit] if unit else "")
    return _TEENS[n - 10] if n >= 10 else _ONES[n]


_PLAIN = [
    *["tenant", "landlord", "notice", "deposit", "court", "rent", "lease", "days", "unit", "premises"],
    *["return", "pay", "file", "order", "within", "after", "before", "of", "to", "and", "or", "for"],
    *["the", "a", "an", "section", "paragraph", "dwelling", "written", "period", "damages", "claim"],
]
_MODALS = ["must", "may", "shall", "should", "can", "could", "will", "would", "might"]
_SEPARATORS = [" ", " ", " ", ", ", "; ", ": ", ". ", " — "]


@st.composite
def _text_with(draw: st.DrawFn, extra: st.SearchStrategy[str]) -> tuple[list[str], list[str]]:
    tokens = draw(st.lists(st.one_of(st.sampled_from(_PLAIN), extra), min_size=8, max_size=60))
    seps = draw(st.lists(st.sampled_from(_SEPARATORS), min_size=len(tokens), max_size=len(tokens)))
    return tokens, seps


def _join(tokens: list[str], seps: list[str]) -> str:
    return "".join(t + s for t, s in zip(tokens, seps, strict=True)).strip()


class TestProperties:
    """Invariants over generated statute-like text."""

    @settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        _text_with(st.integers(0, 999).map(str)),
        st.randoms(use_true_random=False),
        st.booleans(),
    )
    def test_digits_written_as_words_never_worse_than_near(
        self, text: tuple[list[str], list[str]], rng: random.Random, hyphen: bool
    ) -> None:
        tokens, seps = text
        numbers = [i for i, t in enumerate(tokens) if t.isdigit()]
        if not numbers:
            event("no number drawn")
            return
        k = rng.choice(numbers)
        start = rng.randint(max(0, k - 10), k)
        end = rng.randint(k + 1, min(len(tokens), k + 10))
        quote_tokens = tokens[start:end]
        quote_tokens[k - start] = _spell(int(tokens[k]), hyphen)
        quote = _join(quote_tokens, seps[start:end])
        findings = check_quotes(f"It says “{quote}” here.", [_join(tokens, seps)])
        if not findings:  # fewer than five words: not a quotation
            event("fewer than five words")
            return
        event("reaches the assertion")
        (finding,) = findings
        assert finding.status in (QuoteStatus.EXACT, QuoteStatus.NEAR), (quote, finding)
        assert finding.meaning_changes == ()

    @settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_text_with(st.sampled_from(_MODALS)), st.randoms(use_true_random=False))
    def test_not_after_a_modal_is_never_near(
        self, text: tuple[list[str], list[str]], rng: random.Random
    ) -> None:
        tokens, seps = text
        modals = [i for i, t in enumerate(tokens) if t in _MODALS]
        if not modals:
            event("no modal drawn")
            return
        k = rng.choice(modals)
        start = rng.randint(max(0, k - 8), k)
        end = rng.randint(max(k + 1, start + 5), max(k + 1, start + 5, min(len(tokens), k + 8)))
        end = min(end, len(tokens))
        quote_tokens = [*tokens[start : k + 1], "not", *tokens[k + 1 : end]]
        quote_seps = [*seps[start:k], " ", seps[k], *seps[k + 1 : end]]
        quote = _join(quote_tokens, quote_seps)
        findings = check_quotes(f"It says “{quote}” here.", [_join(tokens, seps)])
        if not findings:
            event("fewer than five words")
            return
        event("reaches the assertion")
        (finding,) = findings
        assert finding.status in (QuoteStatus.PARTIAL, QuoteStatus.NO_MATCH), (quote, finding)
        if finding.status is QuoteStatus.PARTIAL:
            assert any(c.startswith("negation") for c in finding.meaning_changes), finding

    @settings(max_examples=150, deadline=None)
    @given(_text_with(st.sampled_from(["the", "a", "an"])), st.randoms(use_true_random=False))
    def test_article_swapped_or_dropped_never_worse_than_near(
        self, text: tuple[list[str], list[str]], rng: random.Random
    ) -> None:
        tokens, seps = text
        articles = [i for i, t in enumerate(tokens) if t in ("the", "a", "an")]
        if not articles:
            event("no article drawn")
            return
        k = rng.choice(articles)
        start = rng.randint(max(0, k - 8), k)
        end = rng.randint(k + 1, min(len(tokens), k + 8))
        quote_tokens = tokens[start:end]
        quote_tokens[k - start] = rng.choice(["the", "a", "an", ""])
        if all(t in ("the", "a", "an", "") for t in quote_tokens):
            event("articles only")
            return  # a quote of articles only has nothing to compare: the score decides
        quote = " ".join(" ".join(t for t in quote_tokens if t).split())
        findings = check_quotes(f"It says “{quote}” here.", [_join(tokens, seps)])
        if not findings:
            event("fewer than five words")
            return
        event("reaches the assertion")
        (finding,) = findings
        assert finding.status in (QuoteStatus.EXACT, QuoteStatus.NEAR), (quote, finding)

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        _text_with(
            st.sampled_from(
                [
                    *_MODALS,
                    *["not", "no", "never", "without", "nor", "cannot", "can't", "doesn't", "won't"],
                    *["one", "thirty", "five", "hundred", "first", "second", "twenty-first", "1st"],
                    *["2,400", "1.5", "1 1/2", "(a)", "(1)", "(ii)", "$30", "007", "٣"],
                ]
            )
        ),
        st.lists(st.tuples(st.integers(0, 80), st.sampled_from(["", "not", "thirty", "may", "the", "6"]))),
        st.data(),
        st.integers(5, 30),
    )
    def test_evidence_consistent_on_mutated_legal_text(
        self,
        text: tuple[list[str], list[str]],
        edits: list[tuple[int, str]],
        data: st.DataObject,
        length: int,
    ) -> None:
        tokens, seps = text
        start = data.draw(st.integers(0, len(tokens) - 5))  # five words at least, before the edits
        quote_tokens = tokens[start : start + length]
        for at, word in edits:
            if quote_tokens:
                quote_tokens[at % len(quote_tokens)] = word
        quote = " ".join(" ".join(quote_tokens).split())
        source = _join(tokens, seps)
        findings = check_quotes(f"It says “{quote}” here.", [source])
        event("reaches the assertion" if findings else "fewer than five words")
        for finding in findings:
            assert finding.similarity is not None
            if finding.meaning_changes:
                assert finding.status in (QuoteStatus.PARTIAL, QuoteStatus.NO_MATCH)
            if finding.status is QuoteStatus.NEAR and not finding.meaning_changes:
                assert finding.matched_text is not None
            for segment in finding.segments:
                assert segment.start is not None and segment.end is not None
                assert source[segment.start : segment.end] == segment.matched_text
