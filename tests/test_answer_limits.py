"""An answer over the verifier's size limit gets an explicit error, never a verdict on a truncated text."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounding_eval.cli import main
from grounding_eval.verifier.limits import MAX_ANSWER_BYTES
from tests.entry_points import load_entry_point
from tests.outcomes import unscored_reason
from tests.scores import row_scores

get_assert = load_entry_point("verifier")
CONTEXT = {"vars": {"jurisdiction": "IL"}, "prompt": "", "config": {"liveness": "offline"}, "test": {}}
LIMIT_NOTE = f"limit {MAX_ANSWER_BYTES} bytes (grounding_eval.verifier.limits.MAX_ANSWER_BYTES)"


def test_assertion_refuses_an_answer_over_the_limit() -> None:
    answer = "é" * (MAX_ANSWER_BYTES // 2 + 1)  # two UTF-8 bytes each: the limit is in bytes, not characters
    result = get_assert(answer, CONTEXT)
    # The outcome as a value (the report counts the row apart by it, never by the reason's prefix), and the
    # deciding finding: the answer's size in bytes against the limit.
    assert unscored_reason(result) == f"answer too large: {MAX_ANSWER_BYTES + 2} bytes; {LIMIT_NOTE}"
    assert result["namedScores"] == {}


def test_assertion_verifies_an_answer_at_the_limit() -> None:
    answer = ("Call 211. " * (MAX_ANSWER_BYTES // 10 + 1))[:MAX_ANSWER_BYTES]
    result = get_assert(answer, CONTEXT)
    assert result["metadata"]["outcome"] != "unscored", result["reason"][:200]
    assert row_scores(result)["jurisdiction_score"] == 1.0


def test_cli_refuses_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = tmp_path / "long.txt"
    answer.write_text("x" * (MAX_ANSWER_BYTES + 1), encoding="utf-8")
    assert main(["verify", str(answer), "--offline"]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"grounding-eval: error: {answer}: answer too large: {MAX_ANSWER_BYTES + 1} bytes; {LIMIT_NOTE}\n"
    )
