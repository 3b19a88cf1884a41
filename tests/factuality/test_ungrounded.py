"""A verdict whose evidence cannot be verified never makes the answer look better (issue 18 §2).

Two ways: the golden table ``golden_ungrounded.yaml`` (hand-worked rows, replayed through the whole judgment
and its human queue), and a property over generated scorecards comparing the outcome with the judge's own
verdicts, computed here directly from the claims.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.factuality.evidence import Document
from grounding_eval.factuality.judge import FactualityResult, decide, judge_factuality
from grounding_eval.factuality.parse import ClaimVerdict, Scorecard
from grounding_eval.factuality.rubric import FactualityRubric
from grounding_eval.factuality.score import assess
from grounding_eval.judge.calls import answer_sha256, replay_client

TABLE = yaml.safe_load((Path(__file__).parent / "golden_ungrounded.yaml").read_text(encoding="utf-8"))
ROWS = TABLE["rows"]
TARGET = "The answer under judgment."
SCORES = {"Supported": 1.0, "Partially Supported": 0.5, "Contradicted": 0.0, "Unverifiable": None}
# Sentences copied from tests/fixtures/factuality/evidence/*.txt, and sentences that are in neither file.
FOUND = [
    "Except by court order, a landlord (or another person with paramount title) may not",
    "You may qualify for free legal aid based on your income.",
    "for which the monthly rent does not exceed $2,400",
]
BAD = [
    "servicemembers are protected from every eviction in every state forever",
    "the landlord must always give ninety days of notice before any eviction",
    "every tenant may stay for a year without paying rent",
]
HUMAN_LEVELS = ("Critical", "Major")  # the rubric's levels marked human_verification_at_high_risk


def _claims(spec: list[list[Any]]) -> list[dict[str, Any]]:
    out = []
    for n, (result, quote, *severity) in enumerate(spec, 1):
        text = {"found": FOUND[n % len(FOUND)], "bad": BAD[n % len(BAD)], None: None}[quote]
        out.append({"claim_id": f"c{n}", "claim_text": f"claim {n}", "verification_result": result,
                    "evidence_quote": text, "score": SCORES[result], "severity": (severity or [None])[0],
                    "judge_rationale": "r"})  # fmt: skip
    return out


def test_table_covers_every_verdict_with_each_kind_of_quote() -> None:
    seen = {(result, quote) for row in ROWS for result, quote, *_ in row["claims"]}
    for result in SCORES:
        for quote in ("found", "bad"):
            assert (result, quote) in seen, (result, quote)
    assert ("Partially Supported", None) in seen and ("Unverifiable", None) in seen
    assert len({row["id"] for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
def test_golden_ungrounded(
    row: dict[str, Any], rubric: FactualityRubric, documents: list[Document], tmp_path: Path
) -> None:
    claims = _claims(row["claims"])
    counted = [c["score"] for c in claims if c["score"] is not None]
    text = json.dumps({
        "overall_factual_accuracy_score": sum(counted) / len(counted) if counted else None,
        "total_verifiable_claims": len(counted), "claim_verifications": claims, "overall_summary": "s",
    })  # fmt: skip
    recording = tmp_path / "replies.json"
    recording.write_text(
        json.dumps([{"key": "k", "answer_sha256": answer_sha256(TARGET), "replies": [text]}])
    )
    human_queue = tmp_path / "human.jsonl"
    result = judge_factuality(
        TARGET, documents, rubric, capable=replay_client(recording), fixture_key="k",
        risk_level=row.get("risk", "standard"), downgrade_ungrounded=row.get("downgrade", True),
        human_queue=human_queue,
    )  # fmt: skip
    passed, reason = decide(
        result, pass_threshold=rubric.pass_threshold, no_claims_pass=row.get("no_claims_pass", False)
    )
    expect = row["expect"]
    a = result.assessment
    assert a is not None, result.reason
    assert [c.score for c in a.claims] == expect["counted"]
    assert [c.verdict.claim_id for c in a.claims if c.ungrounded] == expect["flagged"]
    for got, want in ((a.verdict_score, expect["verdict_score"]), (result.score, expect["score"])):
        assert got is None if want is None else got == pytest.approx(want)
    assert result.status == expect["status"]
    assert [c.verdict.claim_id for c in a.human_findings] == expect["human"]
    queued = (
        [json.loads(line) for line in human_queue.read_text().splitlines()] if human_queue.exists() else []
    )
    assert [f["claim_id"] for entry in queued for f in entry["findings"]] == expect["human"]
    assert passed is expect["pass"], reason
    assert a.mismatches == ()  # the judge's numbers are right for its own verdicts
    assert (f"{len(expect['flagged'])} UNGROUNDED_VERDICT" in reason) is bool(expect["flagged"])


# --- the property --------------------------------------------------------------------------------------------


@st.composite
def scorecards(draw: st.DrawFn) -> tuple[list[ClaimVerdict], list[str]]:
    """Claims of every verdict, each quote found in the evidence, invented, or null; and each quote's kind."""
    claims, kinds = [], []
    for n in range(draw(st.integers(0, 7))):
        result = draw(st.sampled_from(list(SCORES)))
        score = SCORES[result]
        kind = draw(st.sampled_from(["found", "bad", "null"]))
        quote = {"found": draw(st.sampled_from(FOUND)), "bad": draw(st.sampled_from(BAD)), "null": None}[kind]
        severity = draw(st.sampled_from(["Critical", "Major", "Minor"])) if score in (0.0, 0.5) else None
        claims.append(ClaimVerdict(f"c{n}", f"claim {n}", result, quote, score, severity, "r"))
        kinds.append(kind)
    return claims, kinds


def _verdict_outcome(
    claims: list[ClaimVerdict], *, risk: str, threshold: float, no_claims_pass: bool
) -> tuple[float | None, set[str], bool]:
    """The seed's Step 5 and routing over the judge's own verdicts, with no evidence check."""
    scores = [c.score for c in claims if c.score is not None]
    mean = sum(scores) / len(scores) if scores else None
    human = {c.claim_id for c in claims if risk == "high" and c.severity in HUMAN_LEVELS}
    passed = (no_claims_pass if mean is None else mean >= threshold) and not human
    return mean, human, passed


@settings(max_examples=400, deadline=None)
@given(
    drawn=scorecards(),
    risk=st.sampled_from(["standard", "high"]),
    downgrade=st.booleans(),
    no_claims_pass=st.booleans(),
    threshold=st.sampled_from([0.0, 0.5, 0.75, 0.8, 1.0]),
)
def test_a_failed_evidence_check_never_beats_the_judges_own_verdict(
    drawn: tuple[list[ClaimVerdict], list[str]],
    risk: str,
    downgrade: bool,
    no_claims_pass: bool,
    threshold: float,
    rubric: FactualityRubric,
    documents: list[Document],
) -> None:
    claims, kinds = drawn
    a = assess(Scorecard(tuple(claims), None, 0, None, "strict"), documents, rubric,
               risk_level=risk, downgrade_ungrounded=downgrade)  # fmt: skip
    result = FactualityResult(status=a.status, reason="", prompt_version="p", rubric_version="v", fixture_key="k",
                              risk_level=risk, source_document_ids=[], answer_sha256="", timestamp="",
                              score=a.score, assessment=a)  # fmt: skip
    passed, _ = decide(result, pass_threshold=threshold, no_claims_pass=no_claims_pass)
    mean, human, verdict_pass = _verdict_outcome(claims, risk=risk, threshold=threshold,
                                                 no_claims_pass=no_claims_pass)  # fmt: skip

    for claim, kind, assessed in zip(claims, kinds, a.claims, strict=True):
        failed = kind == "bad" or (
            kind == "null" and claim.verification_result in ("Supported", "Contradicted")
        )
        assert assessed.ungrounded is failed
        if failed and claim.score is not None and claim.score < 1:
            event("ungrounded 0 or 0.5: kept")
        if claim.severity is not None:  # a finding is never taken out of the score or the routing
            assert assessed.score == claim.score
        elif failed and downgrade and claim.score == 1:
            assert assessed.score is None
        else:
            assert assessed.score == claim.score
    if mean is None:
        assert a.score is None
    elif a.score is None:
        event("every verifiable claim taken out")
        assert not passed
    else:
        assert a.score <= mean
        event("score lowered" if a.score < mean else "score kept")
    found_human = {c.verdict.claim_id for c in a.human_findings}
    assert human <= found_human
    if found_human - human:
        event("ungrounded finding routed at high risk")
    assert not passed or verdict_pass
    if verdict_pass and not passed:
        event("pass lost to caution")
