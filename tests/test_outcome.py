"""The outcome type (grounding_eval.outcome) and the report's reading of it (issue 20 item 3).

Unscored is a value in every result's metadata (``outcome``, ``unscored_reason``), written by the
Python adapters, the worker, the composites and ``assertions/grounding.cjs``; the report reads the
field, and reads a reason prefix only for rows of old files that have no such field anywhere
(``tests/golden/outcomes.yaml``, and ``tests/fixtures/report/safety_agreement.json``, a file written
before the field existed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.analysis.summary import load_rows
from grounding_eval.errors import DataError
from grounding_eval.outcome import Outcome, read_outcome, unscored_result, with_outcome
from grounding_eval.promptfoo import composite_scoring
from grounding_eval.promptfoo.docs_qa_assertion import docs_qa_assertion
from grounding_eval.promptfoo.factuality_assertion import factuality_assertion
from grounding_eval.promptfoo.judge_assertion import judge_assertion
from grounding_eval.promptfoo.verifier_assertion import verifier_assertion
from tests.analysis.rows import row, write
from tests.promptfoo_runs import EvalRun, shared_group

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden" / "outcomes.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))["cases"]
OLD_FILE = REPO / "tests" / "fixtures" / "report" / "safety_agreement.json"


class TestOutcome:
    def test_unscored_needs_a_reason_and_says_it_in_metadata(self) -> None:
        """An unscored outcome carries its reason; a scored one has none."""
        assert Outcome.unscored("no reply").metadata() == {
            "outcome": "unscored",
            "unscored_reason": "no reply",
        }
        assert Outcome.unscored("  ").reason == "no reason given"
        assert Outcome.of(True).metadata() == {"outcome": "pass"}
        assert Outcome.of(False).metadata() == {"outcome": "fail"}
        with pytest.raises(ValueError):
            Outcome("unscored")
        with pytest.raises(ValueError):
            Outcome("pass", "why")
        with pytest.raises(ValueError):
            Outcome("maybe")  # type: ignore[arg-type]

    def test_the_reason_line_is_built_from_it(self) -> None:
        """unscored_result: the visible prefix and the reason, no named scores, the caller's metadata kept."""
        result = unscored_result("ERROR (judge unscored)", "invalid twice", judge={"status": "unscored"})
        assert result == {
            "pass": False, "score": 0.0, "reason": "ERROR (judge unscored): invalid twice", "namedScores": {},
            "metadata": {"judge": {"status": "unscored"}, "outcome": "unscored", "unscored_reason": "invalid twice"},
        }  # fmt: skip
        assert read_outcome(result["metadata"]) == Outcome.unscored("invalid twice")

    def test_with_outcome_keeps_an_unscored_one(self) -> None:
        """A scored result gets pass / fail from its ``pass``; an unscored one keeps its own outcome."""
        assert with_outcome({"pass": True})["metadata"] == {"outcome": "pass"}
        assert with_outcome({"pass": False, "metadata": {"x": 1}})["metadata"] == {"x": 1, "outcome": "fail"}
        unscored = unscored_result("ERROR (x)", "why")
        assert with_outcome(unscored)["metadata"]["outcome"] == "unscored"

    def test_no_field_is_none(self) -> None:
        """An old result (no ``outcome``) reads as None, for the legacy read to decide."""
        assert read_outcome({"judge": {"status": "unscored"}}) is None


def _golden_row(case: dict[str, Any]) -> dict[str, Any]:
    raw = row("q1", "C1", composite=0.5, success=False)
    raw["gradingResult"] = {
        "pass": False, "score": 0, "reason": case.get("grading_reason", "x"), "metadata": case["grading"],
        "componentResults": [{"pass": False, "score": 0, "assertion": {"type": "javascript"}, **c}
                             for c in case["components"]],
    }  # fmt: skip
    return raw


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_which_rows_the_report_counts_unscored(case: dict[str, Any], tmp_path: Path) -> None:
    path = write(tmp_path / "results.json", [_golden_row(case)])
    if case["expected"] == "error":
        with pytest.raises(DataError) as raised:
            load_rows(path)
        message = raised.value.one_line()
        assert "\n" not in message and "results.json" in message and "row 1" in message
        return
    assert load_rows(path)[0].unscored is case["expected"]


def test_an_old_results_file_counts_its_unscored_rows_as_before() -> None:
    """safety_agreement.json (written before ``outcome``): its judge-unscored and verifier-not-run rows
    (read by the legacy prefix) among them, the same 4 rows are unscored as before the field existed."""
    rows = load_rows(OLD_FILE)
    assert len(rows) == 10
    assert [i for i, r in enumerate(rows) if r.unscored] == [5, 6, 7, 8]


CONTEXT: dict[str, Any] = {"vars": {}, "test": {}, "config": {}, "prompt": "p"}


@pytest.mark.parametrize(
    "grade", [verifier_assertion, judge_assertion, factuality_assertion, docs_qa_assertion],
    ids=["verifier", "judge", "factuality", "docs_qa"],
)  # fmt: skip
def test_every_adapter_says_unscored_as_a_value(grade: Any) -> None:
    """A row an adapter cannot grade (here: a config that is not a mapping) is unscored in metadata,
    with the reason the visible line ends with, and no named scores."""
    result = grade("an answer", {**CONTEXT, "config": ["not", "a", "mapping"]}, pack_root=REPO)
    meta = result["metadata"]
    assert meta["outcome"] == "unscored" and result["pass"] is False and result["namedScores"] == {}
    assert result["reason"].endswith(meta["unscored_reason"])


def test_a_composite_carries_its_outcome_and_no_composite_score_when_unscored() -> None:
    """An unscored composite: outcome unscored with its reason, none of the composite's named scores
    (promptfoo's per-column averages leave the row out); the row's other named scores are kept."""
    named = {"round3.llm_judge_score": 0.9, "composite": 0.7, "safety.source_fidelity": 1.0}
    result = composite_scoring.score_round3(named, {"componentResults": []})
    assert result["metadata"]["outcome"] == "unscored"
    assert result["metadata"]["unscored_reason"] == "the judge assertion did not run"
    assert result["namedScores"] == {"round3.llm_judge_score": 0.9}


def test_a_round3_composite_the_judge_left_short_has_no_safety_chips() -> None:
    """The judge scored but left a core criterion out: no Round 3 composite, so none of its named scores
    either (the three ``safety.*`` chips were added to such a row before, and averaged by promptfoo)."""
    from tests.test_composite import CORE, _round3_context

    # Issue 38: the verifier passes here (a verifier No would fail the row as unsafe, with its chips:
    # tests/golden/safety_outage.yaml); before, this row also had a hallucinated_citation failure.
    context = _round3_context({}, [])
    judge = context["componentResults"][1]["metadata"]["judge"]
    left_out = CORE[0]
    del judge["verdicts"][left_out]
    result = composite_scoring.score_round3({"round3.llm_judge_score": 0.9}, context)
    assert result["metadata"]["outcome"] == "unscored"
    assert left_out in result["metadata"]["unscored_reason"]
    assert result["namedScores"] == {"round3.llm_judge_score": 0.9}
    unsafe = _round3_context({}, ["hallucinated_citation"])
    del unsafe["componentResults"][1]["metadata"]["judge"]["verdicts"][left_out]
    result = composite_scoring.score_round3({"round3.llm_judge_score": 0.9}, unsafe)
    assert result["metadata"]["outcome"] == "fail" and "composite" not in result["namedScores"]
    assert left_out in result["metadata"]["composite"]["unscored_reason"]


def test_rescore_counts_a_row_unscored_by_the_field_only() -> None:
    """``row_unscored`` (rescore's count): the composite's or any component's ``outcome``, never a reason."""
    from grounding_eval.outcome import row_unscored

    imitation = {"reason": "ERROR (judge unscored): x", "metadata": {"outcome": "fail"}}
    assert row_unscored({"metadata": {"outcome": "pass"}, "componentResults": [imitation]}) is False
    unscored = unscored_result("ERROR (verifier not run)", "no allowlist")
    assert row_unscored({"metadata": {"outcome": "pass"}, "componentResults": [imitation, unscored]}) is True
    assert row_unscored(composite_scoring.score_round1({}, {"componentResults": []})) is True
    # A composite that failed the row decides it, over an unscored component (issue 38); a pass does not.
    failed = {
        "metadata": {"outcome": "fail", "composite": {"status": "unscored"}},
        "componentResults": [unscored],
    }
    assert row_unscored(failed) is False
    assert (
        row_unscored({**failed, "metadata": {"outcome": "pass", "composite": {"status": "scored"}}}) is True
    )


@pytest.mark.e2e
@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_a_real_promptfoo_run_carries_the_outcome(shared_eval: Callable[[str], EvalRun]) -> None:
    """The main job through the pinned promptfoo: every row's result (the composite's) and every pack
    assertion's component says its outcome; a scored row's outcome is promptfoo's verdict."""
    run = shared_eval("promptfooconfig.yaml")
    assert run.returncode in (0, 100), run.tail()
    rows = json.loads(run.out.read_text(encoding="utf-8"))["results"]["results"]
    assert len(rows) == 24
    for r in rows:
        grading = r["gradingResult"]
        assert grading["metadata"]["outcome"] == ("pass" if r["success"] else "fail"), r["id"]
        ours = [
            c for c in grading["componentResults"] if {"judge", "verifier"} & set(c.get("metadata") or {})
        ]
        assert len(ours) == 2 and all(c["metadata"]["outcome"] in ("pass", "fail") for c in ours), r["id"]
