"""End to end: the shipped offline config (``configs/factual_accuracy.yaml``) under the pinned promptfoo.

Recorded C1.5 answers, judged against the articles they were shown by recorded two-stage judge replies
(fixtures). One row fails on purpose (a Major finding on a high-risk item), so promptfoo exits 100.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.promptfoo_runs import EvalRun, shared_group

pytestmark = pytest.mark.e2e


def _factuality(row: dict[str, Any]) -> dict[str, Any]:
    for component in row["gradingResult"]["componentResults"]:
        meta = component.get("metadata") or {}
        if "factuality" in meta:
            return dict(meta["factuality"])
    raise AssertionError("no metadata.factuality in the row")


@pytest.mark.xdist_group(shared_group("configs/factual_accuracy.yaml"))
def test_offline_config(shared_eval: Callable[[str], EvalRun]) -> None:
    run = shared_eval("configs/factual_accuracy.yaml")
    assert run.returncode == 100, run.tail()
    rows = {row["testCase"]["metadata"]["query_id"]: row for row in run.rows()}
    assert set(rows) == {
        "hr-or-retaliation-01",
        "hr-wv-military-01",
        "hr-il-lockout-01",
        "hr-oh-evict-01",
        "hr-mi-deposit-01",
    }
    assert {q for q, row in rows.items() if not row["success"]} == {"hr-oh-evict-01"}

    cheap = _factuality(rows["hr-or-retaliation-01"])
    assert (cheap["stage"], cheap["status"], cheap["score"]) == ("cheap", "scored", 1.0)
    assert cheap["model_id"] == cheap["cheap_model_id"] == "datasets/sample/factuality/cheap_replies.yaml"

    overruled = _factuality(rows["hr-wv-military-01"])
    assert overruled["stage"] == "capable" and overruled["score"] == 0.875
    assert overruled["attempts"][0]["outcome"] == "escalated: 1 ungrounded verdict(s)"
    assert overruled["cheap_model_id"] == "datasets/sample/factuality/cheap_replies.yaml"
    assert overruled["model_id"] == "datasets/sample/factuality/judge_replies.yaml"

    retried = _factuality(rows["hr-il-lockout-01"])
    assert [a["outcome"] for a in retried["attempts"]] == [
        "skipped (risk level high)",
        "invalid reply",
        "parsed",
    ]
    assert retried["risk_level"] == "high" and retried["status"] == "scored"

    human = rows["hr-oh-evict-01"]
    assert human["gradingResult"]["reason"].startswith(
        "NEEDS_HUMAN_VERIFICATION: risk level high and c2 (Major)"
    )
    assert human["namedScores"]["factuality.severity.major"] == 1

    deposit = rows["hr-mi-deposit-01"]
    assert deposit["namedScores"]["factuality.ungrounded_verdicts"] == 1
    assert deposit["namedScores"]["factual_accuracy"] == pytest.approx(0.8333, abs=1e-4)
    # c4 (Supported) quotes a sentence that is not in the article: out of the mean, (1 + 1 + 0.5) / 3; the
    # judge's own 0.875 over 4 is right for its verdicts, so no mismatch (issue 18 §2)
    assert _factuality(deposit)["verdict_score"] == 0.875
    assert _factuality(deposit)["mismatches"] == []
    assert deposit["gradingResult"]["componentResults"][0]["reason"].endswith(
        "; 1 UNGROUNDED_VERDICT (c4 scored as Unverifiable; 0.88 by the judge's verdicts)"
    )
    for query_id, row in rows.items():
        meta = _factuality(row)
        claims = [c for c in row["gradingResult"]["componentResults"] if c["reason"].startswith("claim ")]
        assert len(claims) == len(meta["claims"]) >= 4, query_id
        assert meta["source_document_ids"] == row["testCase"]["metadata"]["full_content_ids"]
        assert len(json.dumps(meta)) < 5000, query_id
