"""Properties of the computed score: always in [0, 1] or "no verifiable claims", and never the model's own."""

from __future__ import annotations

import dataclasses

from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.factuality.evidence import Document
from grounding_eval.factuality.parse import ClaimVerdict, Scorecard
from grounding_eval.factuality.rubric import FactualityRubric
from grounding_eval.factuality.score import assess

QUOTES = [
    None,
    "Except by court order, a landlord (or another person with paramount title) may not",  # found
    "You may qualify for free legal aid based on your income.",  # found
    "the landlord must always give ninety days of notice before any eviction",  # not found
]
RESULTS = {"Supported": 1.0, "Partially Supported": 0.5, "Contradicted": 0.0, "Unverifiable": None}


@st.composite
def claims(draw: st.DrawFn) -> list[ClaimVerdict]:
    out = []
    for n in range(draw(st.integers(0, 8))):
        result = draw(st.sampled_from(list(RESULTS)))
        score = RESULTS[result]
        quote = draw(st.sampled_from(QUOTES[1:] if result in ("Supported", "Contradicted") else QUOTES))
        severity = draw(st.sampled_from(["Critical", "Major", "Minor"])) if score in (0.0, 0.5) else None
        out.append(ClaimVerdict(f"c{n}", f"claim {n}", result, quote, score, severity, "r"))
    return out


reported_scores = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5))


@settings(max_examples=150, deadline=None)
@given(
    cs=claims(),
    reported=reported_scores,
    total=st.one_of(st.none(), st.integers(-3, 50)),
    risk=st.sampled_from(["standard", "high"]),
    downgrade=st.booleans(),
)
def test_score_in_unit_interval_or_no_verifiable_claims(
    cs: list[ClaimVerdict],
    reported: float | None,
    total: int | None,
    risk: str,
    downgrade: bool,
    rubric: FactualityRubric,
    documents: list[Document],
) -> None:
    card = Scorecard(tuple(cs), reported, total, None, "strict")
    result = assess(card, documents, rubric, risk_level=risk, downgrade_ungrounded=downgrade)
    event("no score" if result.score is None else "scored")
    if result.score is None:
        assert result.verifiable == 0
        assert result.status in ("no_verifiable_claims", "needs_human_verification")
    else:
        assert 0.0 <= result.score <= 1.0
        assert result.verifiable >= 1
        assert result.status in ("scored", "needs_human_verification")


@settings(max_examples=150, deadline=None)
@given(
    cs=claims(),
    first=reported_scores,
    second=reported_scores,
    total_a=st.integers(0, 50),
    total_b=st.integers(0, 50),
)
def test_score_never_depends_on_the_models_own_numbers(
    cs: list[ClaimVerdict],
    first: float | None,
    second: float | None,
    total_a: int,
    total_b: int,
    rubric: FactualityRubric,
    documents: list[Document],
) -> None:
    a = assess(Scorecard(tuple(cs), first, total_a, None, "strict"), documents, rubric, risk_level="standard")
    b = assess(
        Scorecard(tuple(cs), second, total_b, None, "strict"), documents, rubric, risk_level="standard"
    )
    assert a.score == b.score
    assert a.status == b.status
    assert a.verifiable == b.verifiable
    assert [dataclasses.astuple(c)[1:] for c in a.claims] == [dataclasses.astuple(c)[1:] for c in b.claims]
