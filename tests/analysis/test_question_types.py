"""grounding-eval report --by question_type: the docs-QA seed's table, from its own example counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.cli import main
from tests.analysis.rows import row, write

# The seed's example (docs-QA rubric, "Reporting results"): passed / n per type.
SEED = {"direct-lookup": (19, 20), "multi-section": (9, 12), "reworded": (6, 10), "out-of-scope": (4, 8)}
SEED_TABLE = """\
| Question type | Pass rate | n |
|---|---|---|
| Direct lookup | 95% | 20 |
| Multi-section | 75% | 12 |
| Reworded | 60% | 10 |
| Out of scope | 50% | 8 |
| Overall | 76% | 50 |"""


def _docs_row(i: int, qtype: str, passed: bool, *, unscored: bool = False) -> dict[str, Any]:
    verdict = "pass" if passed else "fail"
    docs = {"rubric_id": "docs_qa", "rubric_version": "1", "question_type": qtype, "applicable": 3, "total": 4,
            "passed": 3 if passed else 1,
            "criteria": {"correct": {"verdict": verdict, "reason": "r"}, "grounded": {"verdict": "pass", "reason": "r"},
                         "complete": {"verdict": "pass", "reason": "r"}, "honest_about_gaps": {"verdict": "n/a", "reason": "r"}}}  # fmt: skip
    r = row(f"q{i:02d}", "docs", success=passed, question_type=qtype, docs_qa=docs, round_="docs-qa",
            scores={"docs_qa.score": 3.0 if passed else 1.0, "docs_qa.correct": float(passed)})  # fmt: skip
    if unscored:
        r["failureReason"], r["success"] = 2, False
    return r


def _seed_rows() -> list[dict[str, Any]]:
    rows, i = [], 0
    for qtype, (passed, n) in SEED.items():
        for k in range(n):
            i += 1
            rows.append(_docs_row(i, qtype, k < passed))
    return rows


def test_seed_table_exactly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "docs.json", _seed_rows())
    assert main(["report", str(path), "--by", "question_type"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(SEED_TABLE + "\n")


def test_seed_table_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "docs.json", _seed_rows())
    assert main(["report", str(path), "--by", "question_type", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    got = [(e["question_type"], e["rows"], e["passed"], round(e["pass_rate"], 2)) for e in entries]
    assert got == [("direct-lookup", 20, 19, 0.95), ("multi-section", 12, 9, 0.75), ("reworded", 10, 6, 0.6),
                   ("out-of-scope", 8, 4, 0.5), ("overall", 50, 38, 0.76)]  # fmt: skip
    # statsmodels 0.15.0 proportion_confint(19, 20, method="wilson") and (38, 50)
    assert entries[0]["ci_low"] == pytest.approx(0.7638688065532577) and entries[-1][
        "ci_high"
    ] == pytest.approx(0.8570260860300827)


def test_unscored_rows_are_counted_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        _docs_row(1, "reworded", True),
        _docs_row(2, "reworded", False),
        _docs_row(3, "reworded", False, unscored=True),
    ]
    path = write(
        tmp_path / "docs.json", [*rows, row("x", "C0", composite=1.0)]
    )  # a row without a type: left out
    assert main(["report", str(path), "--by", "question_type", "--json"]) == 0
    reworded, overall = json.loads(capsys.readouterr().out)
    assert (reworded["rows"], reworded["scored"], reworded["passed"], reworded["unscored"]) == (3, 2, 1, 1)
    assert reworded["pass_rate"] == 0.5 and overall["rows"] == 3


def test_no_docs_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "r.json", [row("x", "C0", composite=1.0)])
    assert main(["report", str(path), "--by", "question_type"]) == 0
    assert "No row has a docs-QA question type" in capsys.readouterr().out
