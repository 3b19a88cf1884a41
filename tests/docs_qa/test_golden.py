"""Golden tables: the grader reply parser, the seed's scoring rule, must-include coverage, citation validity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.docs_qa.citations import check_citations
from grounding_eval.docs_qa.coverage import check_coverage
from grounding_eval.docs_qa.docs_set import load_docs_set
from grounding_eval.docs_qa.reply import GradingFailure, ParsedGrading, parse_grading
from grounding_eval.docs_qa.rubric import load_docs_qa_rubric
from grounding_eval.docs_qa.scoring import score_answer

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parents[0] / "fixtures" / "docs_qa"
RUBRIC = load_docs_qa_rubric()


def _rows(name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = yaml.safe_load((HERE / "golden" / name).read_text(encoding="utf-8"))
    return rows


def _score(value: Any) -> Any:
    return None if value == "n/a" else value


class TestParseGrading:
    """Every row of golden/grader_replies.yaml: parsed as expected, or refused with the expected errors."""

    def test_table_is_large_enough(self) -> None:
        assert len(_rows("grader_replies.yaml")) >= 20

    @pytest.mark.parametrize("row", _rows("grader_replies.yaml"), ids=lambda r: r["id"])
    def test_row(self, row: dict[str, Any]) -> None:
        result = parse_grading(row["reply"], RUBRIC, out_of_scope=row.get("out_of_scope", False))
        expect = row["expect"]
        if expect["ok"]:
            assert isinstance(result, ParsedGrading), getattr(result, "error", "")
            assert result.mode == expect["mode"]
            assert {k: g.score for k, g in result.grades.items()} == {
                k: _score(v) for k, v in expect["scores"].items()
            }
            assert list(result.grades) == list(RUBRIC.ids)
            if expect["mode"] == "strict":
                assert result.repairs == ()
            for repair in expect.get("repairs", []):
                assert any(repair in r for r in result.repairs), (repair, result.repairs)
            if "summary" in expect:
                assert result.summary == expect["summary"]
        else:
            assert isinstance(result, GradingFailure), result
            assert "\n" not in result.error
            for error in expect["errors"]:
                assert error in result.error, (error, result.error)

    def test_never_raises_on_non_text(self) -> None:
        assert isinstance(parse_grading(None, RUBRIC, out_of_scope=False), GradingFailure)  # type: ignore[arg-type]


class TestScoreAnswer:
    """Every row of golden/scoring.yaml: total, applicable count, pass and the seed's result line."""

    @pytest.mark.parametrize("row", _rows("scoring.yaml"), ids=lambda r: r["id"])
    def test_row(self, row: dict[str, Any]) -> None:
        result = score_answer({k: _score(v) for k, v in row["scores"].items()}, RUBRIC.pass_requires)
        expect = row["expect"]
        assert (result.total, result.applicable, result.passed) == (
            expect["total"],
            expect["applicable"],
            expect["passed"],
        )
        assert result.label == expect["label"]

    def test_complete_but_wrong_is_worse_than_incomplete(self) -> None:
        wrong = score_answer(
            {"correct": 0, "grounded": 1, "complete": 1, "honest_about_gaps": None}, RUBRIC.pass_requires
        )
        incomplete = score_answer(
            {"correct": 1, "grounded": 1, "complete": 0, "honest_about_gaps": None}, RUBRIC.pass_requires
        )
        assert wrong.total == incomplete.total
        assert incomplete.passed and not wrong.passed


class TestCoverage:
    """Every row of golden/coverage.yaml: the missed points."""

    @pytest.mark.parametrize("row", _rows("coverage.yaml"), ids=lambda r: r["id"])
    def test_row(self, row: dict[str, Any]) -> None:
        report = check_coverage(
            row["answer"], row["must_include"], min_ratio=RUBRIC.coverage_min_ratio,
            min_word_share=RUBRIC.coverage_min_word_share,
        )  # fmt: skip
        assert list(report.missed) == row["missed"]
        if not row["must_include"]:
            assert report.coverage is None
        else:
            assert report.coverage == pytest.approx(1 - len(row["missed"]) / len(row["must_include"]))

    def test_exact_substring_always_matches(self) -> None:
        text = "Reinstall the battery, run the pre-flight motor run-up check, and log the serial number."
        words = text.split()
        for i in range(len(words) - 2):
            point = " ".join(words[i : i + 3])
            assert check_coverage(text, [point], min_ratio=88, min_word_share=0.8).missed == ()


class TestCitations:
    """Every row of golden/citations.yaml against the fixture docs set."""

    DOCS = load_docs_set(FIXTURES / "citations_docs")

    @pytest.mark.parametrize("row", _rows("citations.yaml"), ids=lambda r: r["id"])
    def test_row(self, row: dict[str, Any]) -> None:
        report = check_citations(row["answer"], self.DOCS)
        assert [c.section for c in report.citations] == row["cited"]
        assert list(report.invalid) == row["invalid"]
        assert list(report.external_urls) == row["external"]
        if not row["cited"]:
            assert report.validity is None
