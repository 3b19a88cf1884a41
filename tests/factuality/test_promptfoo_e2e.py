"""End to end: the shipped offline config (``configs/factual_accuracy.yaml``) under the pinned promptfoo.

Recorded C1.5 answers, judged against the articles they were shown by recorded two-stage judge replies
(fixtures). One row fails on purpose (a Major finding on a high-risk item), so promptfoo exits 100.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e


def run_config(tmp_path: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``npx promptfoo eval -c configs/factual_accuracy.yaml -o OUT`` from the repository root, with a private database."""
    if not (REPO / "node_modules" / ".bin" / "promptfoo").exists():
        pytest.fail("node_modules is missing: run scripts/install (npm ci) first")
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"}
    env.pop("GROUNDING_EVAL_JUDGE_PROVIDER", None)
    env.pop("GROUNDING_EVAL_FACTUALITY_CHEAP_PROVIDER", None)
    return subprocess.run(
        ["npx", "promptfoo", "eval", "-c", "configs/factual_accuracy.yaml", "-o", str(out), "--no-progress-bar",
         "--no-table", "--no-cache"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _factuality(row: dict[str, Any]) -> dict[str, Any]:
    for component in row["gradingResult"]["componentResults"]:
        meta = component.get("metadata") or {}
        if "factuality" in meta:
            return dict(meta["factuality"])
    raise AssertionError("no metadata.factuality in the row")


def test_offline_config(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    run = run_config(tmp_path, out)
    assert run.returncode == 100, run.stdout[-3000:] + run.stderr[-3000:]
    rows = {
        row["testCase"]["metadata"]["query_id"]: row
        for row in json.loads(out.read_text())["results"]["results"]
    }
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
    assert _factuality(deposit)["mismatches"] == [
        "judge reported total_verifiable_claims 4, computed 3",
        "judge reported overall_factual_accuracy_score 0.875, computed 0.8333",
    ]
    for query_id, row in rows.items():
        meta = _factuality(row)
        claims = [c for c in row["gradingResult"]["componentResults"] if c["reason"].startswith("claim ")]
        assert len(claims) == len(meta["claims"]) >= 4, query_id
        assert meta["source_document_ids"] == row["testCase"]["metadata"]["full_content_ids"]
        assert len(json.dumps(meta)) < 5000, query_id
