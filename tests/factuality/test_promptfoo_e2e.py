"""End to end: the shipped offline config (``configs/factual_accuracy.yaml``) under the pinned promptfoo.

Recorded C1.5 answers, judged against the articles they were shown by recorded judge replies (fixtures).
Every row is a legal-aid item, so it runs at the seed's high risk level and skips the cheap stage; with
``risk_level: standard`` set (a deviation a study must argue) the moderate items go through the cheap stage.
One row fails on purpose (a Major finding), so promptfoo exits 100.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.promptfoo_runs import REPO, EvalRun, run_eval, shared_group

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

    # Every row is a legal-aid item: the seed's high risk level, whatever its tier (issue 41). Three are
    # moderate, which the tier mapping alone would run at standard.
    tiers = {q: row["testCase"]["metadata"]["risk_tier"] for q, row in rows.items()}
    assert sorted(q for q, t in tiers.items() if t == "moderate") == [
        "hr-mi-deposit-01", "hr-or-retaliation-01", "hr-wv-military-01"
    ]  # fmt: skip
    for query_id, row in rows.items():
        meta = _factuality(row)
        assert meta["risk_level"] == "high", query_id
        assert meta["risk_level_from"].startswith("legal_risk_level"), query_id
        assert meta["attempts"][0]["outcome"] == "skipped (risk level high)", query_id
        assert meta["stage"] == "capable", query_id

    moderate = _factuality(rows["hr-or-retaliation-01"])
    assert (moderate["status"], moderate["score"]) == ("scored", 1.0)
    assert moderate["model_id"] == "datasets/sample/factuality/judge_replies.yaml"

    direct = _factuality(rows["hr-wv-military-01"])
    assert direct["score"] == 0.875
    assert [a["outcome"] for a in direct["attempts"]] == ["skipped (risk level high)", "parsed"]

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


def test_standard_risk_level_set_explicitly_runs_the_cheap_stage(tmp_path: Path) -> None:
    """``config.risk_level: standard`` beats the legal-aid default: the two-stage routing of the moderate items
    (one accepted from the cheap stage, one escalated), and the Major finding no longer needs a human."""
    text = (REPO / "configs" / "factual_accuracy.yaml").read_text(encoding="utf-8")
    config = yaml.safe_load(text.replace("file://../", f"file://{REPO}/"))  # its files, from anywhere
    (assertion,) = config["defaultTest"]["assert"]
    assertion["config"]["risk_level"] = "standard"
    path = tmp_path / "factual_accuracy_standard.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    run = run_eval(path, tmp_path)
    assert run.returncode in (0, 100), run.tail()
    rows = {row["testCase"]["metadata"]["query_id"]: row for row in run.rows()}
    cheap = _factuality(rows["hr-or-retaliation-01"])
    assert (cheap["stage"], cheap["status"], cheap["score"]) == ("cheap", "scored", 1.0)
    assert cheap["risk_level"] == "standard" and cheap["risk_level_from"] == "set explicitly"
    overruled = _factuality(rows["hr-wv-military-01"])
    assert overruled["stage"] == "capable" and overruled["score"] == 0.875
    assert overruled["attempts"][0]["outcome"] == "escalated: 1 ungrounded verdict(s)"
    assert _factuality(rows["hr-oh-evict-01"])["risk_level"] == "standard"
