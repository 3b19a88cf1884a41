"""Every score of a promptfoo row or GradingResult, as ``grounding-eval report`` reads it.

The pack gives promptfoo a few named scores per row (the chips a reviewer reads: the composite, the
safety checks, the judge's and the verifier's scores); every other score is elsewhere in the row — a
judge criterion's is its verdict under the rubric, a dimension's or a verifier check's is its component's,
a factual-accuracy count is in its result's metadata — or, in results files written earlier, a named
score. ``row_scores`` asks the report's own reader of a row (:func:`~grounding_eval.analysis.summary.
report_row`), so a test can ask for any score by the name the report gives it.
"""

from __future__ import annotations

from typing import Any

from grounding_eval.analysis.summary import report_row


def row_scores(row: dict[str, Any]) -> dict[str, float]:
    """Every score of ``row``: a results row, or one assertion's GradingResult (read as promptfoo would
    put it in a row: itself and its components, flattened)."""
    if "gradingResult" not in row:
        flattened = [row, *(row.get("componentResults") or [])]
        row = {"gradingResult": {"componentResults": flattened}, "namedScores": row.get("namedScores") or {}}
    return report_row(row).scores


def query_id(row: dict[str, Any]) -> str | None:
    """The item id of a results row or a generated test: its test's metadata (issue 42), or its vars (a
    results file written before, a config of one's own)."""
    meta = (
        (row.get("testCase") or {}).get("metadata")
        or (row.get("metadata") if "testCase" not in row else {})
        or {}
    )
    found = meta.get("query_id") or (row.get("vars") or {}).get("query_id")
    return str(found) if found is not None else None


def sample_round_record(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A run's rows as tests/fixtures/sample_rounds/named_scores.json keeps them, in (item, condition) order:
    pass, score and every score, chips and metadata alike (pinned before the chips were cut to 8)."""
    kept = [
        {
            "item_id": query_id(r),
            "condition": r["prompt"]["label"].split(":")[0],
            "success": r["success"],
            "score": r["score"],
            "namedScores": row_scores(r),
        }
        for r in rows
    ]
    return sorted(kept, key=lambda x: (x["item_id"], x["condition"]))
