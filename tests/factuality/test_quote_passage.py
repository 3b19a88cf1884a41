"""An evidence quote is one passage: an elision that leaves evidence out never confirms a verdict.

The golden table ``golden_quote_passage.yaml`` pins each quote's check against the fixture evidence; the
judgment test replays a Supported verdict resting on each quote and checks that the elided ones count as
Unverifiable and flagged (the score it gives is never above the judge's own verdicts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.factuality.evidence import Document, locate_quotes
from grounding_eval.factuality.judge import decide, judge_factuality
from grounding_eval.factuality.rubric import FactualityRubric
from grounding_eval.judge.calls import answer_sha256, replay_client

from .conftest import reply

ROWS = yaml.safe_load((Path(__file__).parent / "golden_quote_passage.yaml").read_text(encoding="utf-8"))[
    "rows"
]
TARGET = "A landlord can evict a servicemember's family without going to court."
GROUNDED = "You may qualify for free legal aid based on your income."


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_quote_check(row: dict[str, Any], documents: list[Document]) -> None:
    (where,) = locate_quotes([row["quote"]], documents)
    assert (where.check, where.status) == (row["check"], row["status"])
    assert bool(where.chunk_ids) is (row["check"] == "FOUND")


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_a_supported_verdict_on_the_quote(
    row: dict[str, Any], rubric: FactualityRubric, documents: list[Document], tmp_path: Path
) -> None:
    """Two Supported claims, the second resting on the row's quote: 1.00 PASS only when the quote is one passage;
    elided, the claim is Unverifiable and flagged, and the row has one verifiable claim left (1 / 1)."""
    claims = [
        {"claim_id": "c1", "claim_text": "Legal aid depends on income.", "verification_result": "Supported",
         "evidence_quote": GROUNDED, "score": 1, "severity": None, "judge_rationale": "r"},
        {"claim_id": "c2", "claim_text": "claim 2", "verification_result": "Supported",
         "evidence_quote": row["quote"], "score": 1, "severity": None, "judge_rationale": "r"},
    ]  # fmt: skip
    recording = tmp_path / "r.json"
    recording.write_text(
        json.dumps([{"key": "k", "answer_sha256": answer_sha256(TARGET), "replies": [reply(*claims)]}])
    )
    result = judge_factuality(TARGET, documents, rubric, capable=replay_client(recording), fixture_key="k")
    passed, reason = decide(result, pass_threshold=rubric.pass_threshold, no_claims_pass=False)
    assert result.assessment is not None
    c2 = result.assessment.claims[1]
    found = row["check"] == "FOUND"
    assert c2.ungrounded is not found and c2.score == (1.0 if found else None)
    assert (result.score, result.assessment.verifiable) == ((1.0, 2) if found else (1.0, 1))
    assert passed, reason
    assert ("1 UNGROUNDED_VERDICT (c2 scored as Unverifiable" in reason) is not found


def test_an_elided_contradiction_keeps_its_zero(
    rubric: FactualityRubric, documents: list[Document], tmp_path: Path
) -> None:
    """The other direction: an elided quote under a Contradicted verdict keeps its 0 and goes to a human at high risk."""
    claims = [
        {"claim_id": "c1", "claim_text": "claim 1", "verification_result": "Supported", "evidence_quote": GROUNDED,
         "score": 1, "severity": None, "judge_rationale": "r"},
        {"claim_id": "c2", "claim_text": "claim 2", "verification_result": "Contradicted",
         "evidence_quote": ROWS[0]["quote"], "score": 0, "severity": "Minor", "judge_rationale": "r"},
    ]  # fmt: skip
    recording = tmp_path / "r.json"
    recording.write_text(
        json.dumps([{"key": "k", "answer_sha256": answer_sha256(TARGET), "replies": [reply(*claims)]}])
    )
    result = judge_factuality(TARGET, documents, rubric, capable=replay_client(recording), fixture_key="k",
                              risk_level="high")  # fmt: skip
    assert result.assessment is not None
    assert [c.score for c in result.assessment.claims] == [1.0, 0.0]
    assert result.score == 0.5 and result.status == "needs_human_verification"
    assert [c.verdict.claim_id for c in result.assessment.human_findings] == ["c2"]
