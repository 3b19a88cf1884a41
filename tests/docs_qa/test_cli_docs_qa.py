"""``grounding-eval docs-qa rubric|prompt``: exit codes and exact output."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from grounding_eval.cli import main
from grounding_eval.data.recorded_answers import load_recorded_answers

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "docs_qa" / "tiny"


def test_rubric_marks_whose_words(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs-qa", "rubric"]) == 0
    out = capsys.readouterr().out
    assert "    pass (1): Every claim can be traced to a cited section [seed]\n" in out
    assert "    applies: in scope grader, out of scope required [grounding-eval]\n" in out
    assert (
        "  An answer passes only if it scores 1 on Correct and Grounded, whatever its total. [seed]\n" in out
    )
    assert "  applicability: grounding-eval decision: Correct and Grounded apply to every question" in out


def test_prompt_for_recorded_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs-qa", "prompt", str(TINY), "Q07"]) == 0
    out = capsys.readouterr().out
    answer = load_recorded_answers(TINY / "recorded_answers.yaml")[("Q07", "docs-qa")].answer
    digest = hashlib.sha256(answer.encode("utf-8")).hexdigest()
    assert out.startswith(f"===== SYSTEM (fixture key docs_qa/Q07, answer_sha256 {digest}) =====\n")
    assert '<source id="maintenance-procedure.md#follow-on-maintenance">' in out
    assert "- logbook entry with serial number" in out


def test_unknown_question_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs-qa", "prompt", str(TINY), "Q99"]) == 2
    err = capsys.readouterr().err
    assert err == f"grounding-eval: error: {TINY / 'questions.jsonl'}: no question with id 'Q99'\n"
