"""End to end with the pinned promptfoo: the offline docs-QA config, and another docs set and test set
swapped in by a config change only (``tests/fixtures/docs_qa/swap_config.yaml`` differs from
``configs/docs_qa.yaml`` in ``dataset:`` and its relative paths)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.promptfoo_runs import EvalRun, run_eval, shared_group

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e


def _docs_qa(row: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = row["gradingResult"]["componentResults"][0]["metadata"]["docs_qa"]
    return meta


@pytest.mark.xdist_group(shared_group("configs/docs_qa.yaml"))
def test_sample_config_offline(shared_eval: Callable[[str], EvalRun]) -> None:
    """24 rows, each scored, typed and carrying the shared names; failures exit 100 (promptfoo's code)."""
    run = shared_eval("configs/docs_qa.yaml")
    assert run.returncode == 100, run.tail()
    rows = run.rows()
    assert len(rows) == 24
    types = Counter(row["testCase"]["metadata"]["question_type"] for row in rows)
    assert types == {"direct-lookup": 10, "multi-section": 6, "reworded": 5, "out-of-scope": 3}
    for row in rows:
        assert row["failureReason"] in (0, 1), row.get("error")
        meta = _docs_qa(row)
        assert meta["status"] == "scored"
        named = row["namedScores"]
        # Counts stay out of the chips (the viewer's header would average them as a percentage).
        assert not {"docs_qa.applicable", "docs_qa.score"} & set(named) and all(
            0 <= v <= 1 for v in named.values()
        )
        assert meta["scores"] == {"docs_qa.applicable": meta["applicable"], "docs_qa.score": meta["total"]}
        assert row["score"] == pytest.approx(meta["total"] / meta["applicable"], abs=1e-4)
        assert row["success"] is meta["passed"]
        assert set(meta) >= {"rubric_id", "rubric_version", "criteria", "applicable", "total", "passed",
                             "question_type", "missed_points", "invalid_citations", "disagreements"}  # fmt: skip
        for cid, verdict in meta["criteria"].items():
            key = f"docs_qa.{cid}"
            assert (key in named) is (verdict["verdict"] != "n/a")
    by_id = {row["vars"]["query_id"]: row for row in rows}
    assert by_id["Q14"]["success"] is True and _docs_qa(by_id["Q14"])["missed_points"] == [
        "some have waiting lists"
    ]
    assert by_id["Q04"]["success"] is False
    assert by_id["Q22"]["success"] is False and _docs_qa(by_id["Q22"])["invalid_citations"]
    assert sum(row["success"] for row in rows) == 19


def test_swap_docs_set_and_test_set_by_config_only(tmp_path: Path) -> None:
    """The tiny second set (the seed's example) through the same provider, assertion and generator."""
    config = REPO / "tests" / "fixtures" / "docs_qa" / "swap_config.yaml"
    differing = {
        a.strip()
        for a in (REPO / "configs" / "docs_qa.yaml").read_text(encoding="utf-8").splitlines()
        if not a.startswith("#")
    } ^ {b.strip() for b in config.read_text(encoding="utf-8").splitlines() if not b.startswith("#")}
    assert all("file://" in line or line.startswith("dataset:") for line in differing), differing
    run = run_eval(config, tmp_path)
    assert run.returncode == 100, run.tail()
    rows = run.rows()
    by_id = {row["vars"]["query_id"]: row for row in rows}
    assert set(by_id) == {"T01", "Q07", "T03"}
    q07 = _docs_qa(by_id["Q07"])
    assert by_id["Q07"]["success"] is True and (q07["total"], q07["applicable"]) == (2, 3)
    assert q07["missed_points"] == ["logbook entry with serial number"]
    assert by_id["Q07"]["response"]["metadata"]["recorded_fixture"].endswith(
        "tests/fixtures/docs_qa/tiny/recorded_answers.yaml"
    )
    assert by_id["T03"]["success"] is False and by_id["T01"]["success"] is True
