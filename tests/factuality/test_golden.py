"""The golden table of judge replies: each row's parse outcome and its score, computed by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.factuality.evidence import Document
from grounding_eval.factuality.parse import ParseFailure, Scorecard, parse_scorecard
from grounding_eval.factuality.rubric import FactualityRubric
from grounding_eval.factuality.score import assess

TABLE = yaml.safe_load((Path(__file__).parent / "golden_replies.yaml").read_text(encoding="utf-8"))
ROWS = TABLE["rows"]


def _text(row: dict[str, Any]) -> str:
    return str(row["raw"]) if "raw" in row else json.dumps(row["json"], ensure_ascii=False)


def test_the_table_is_big_enough_and_ids_are_unique() -> None:
    ids = [row["id"] for row in ROWS]
    assert len(ids) >= 40
    assert len(set(ids)) == len(ids)
    outcomes = {row["expect"]["parse"] for row in ROWS}
    assert outcomes == {"strict", "lenient", "invalid"}


@pytest.mark.parametrize("row", ROWS, ids=[row["id"] for row in ROWS])
def test_golden_reply(row: dict[str, Any], rubric: FactualityRubric, documents: list[Document]) -> None:
    expect = row["expect"]
    parsed = parse_scorecard(_text(row), rubric)
    if expect["parse"] == "invalid":
        assert isinstance(parsed, ParseFailure), parsed
        assert expect["problem"] in parsed.error, parsed.error
        assert parsed.error.startswith("Your previous reply was invalid: ")
        return
    assert isinstance(parsed, Scorecard), getattr(parsed, "error", parsed)
    assert parsed.mode == expect["parse"], parsed.repairs
    if "repair" in expect:
        assert any(expect["repair"] in r for r in parsed.repairs), parsed.repairs
    result = assess(parsed, documents, rubric, risk_level=row.get("risk", "standard"))
    assert result.status == expect["status"]
    if expect["score"] is None:
        assert result.score is None
    else:
        assert result.score == pytest.approx(expect["score"])
    assert result.verifiable == expect["verifiable"]
    assert result.ungrounded == expect.get("ungrounded", 0)
    assert len(result.mismatches) == expect.get("mismatches", 0), result.mismatches
    if "checks" in expect:
        assert [c.evidence_check for c in result.claims] == expect["checks"]
