"""``share --redact``: a High-Risk row keeps ids, scores, verdicts and finding types, and no text of the item."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from grounding_eval.analysis.summary import report_row
from grounding_eval.share.redact import REDACTED, is_high_risk, redact_results
from tests.promptfoo_runs import EvalRun, shared_group

SECRET = "my landlord changed the locks while I was at the hospital"  # planted in every text field


def _row(query_id: str, risk_tier: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"query_id": query_id, "jurisdiction": "IL", "round": "3", "rubric": "round3"}
    if risk_tier:
        meta |= {"risk_tier": risk_tier, "failure_modes": [SECRET], "required_clarifying_questions": [SECRET],
                 "sme_variables": [SECRET]}  # fmt: skip
    return {
        "testIdx": 0, "promptIdx": 1, "success": False, "score": 0.25,
        "namedScores": {"composite": 0.25, "safety.jurisdiction": 0.0},
        "vars": {"query_id": query_id, "question": SECRET, "jkb_full_content": SECRET},
        "prompt": {"raw": f"Question: {SECRET}", "label": "C1.5"},
        "provider": {"id": "file://providers/replay.py:call_api", "label": "recorded"},
        "response": {"output": f"Answer about {SECRET}", "metadata": {"recorded_fixture": "x"}},
        "testCase": {"vars": {"question": SECRET}, "metadata": meta, "description": SECRET},
        "failureReason": 1, "error": SECRET,
        "gradingResult": {
            "pass": False, "score": 0.25, "reason": SECRET, "namedScores": {"composite": 0.25},
            "componentResults": [
                {"pass": False, "score": 0.5, "reason": f"URL in '{SECRET}'",
                 "assertion": {"type": "javascript", "value": "file://assertions/grounding.cjs:verifier",
                               "metric": "deterministic_verifier_score", "config": {"x": SECRET}},
                 "metadata": {"verifier": {"passed": False, "score": 0.5,
                                           "hard_failures": [{"check": "jurisdiction", "safety_check": "jurisdiction_correct",
                                                              "detail": SECRET}],
                                           "urls": [{"url": "https://example.org/x", "status": "UNCHECKED", "context": SECRET}],
                                           "undecided": {"count": 3, "kinds": {"URL": 1, "statute": 2},
                                                         "items": [{"kind": "statute", "what": SECRET, "why": SECRET}]}},
                              "verifier_inputs": {"allowlist": {"path": "a"}},
                              "provenance": {"grounding_eval": "0.1.0", "dataset": "sample"}}},
                {"pass": True, "score": 0.7, "reason": SECRET,
                 "metadata": {"judge": {"rubric_id": "round3", "rubric_version": "3.0.0", "prompt_version": "p1",
                                        "status": "scored", "fixture_key": SECRET,
                                        "verdicts": {"source_fidelity": {"verdict": "No", "reasoning": SECRET}}},
                              "provenance": {"grounding_eval": "0.1.0", "dataset": "sample",
                                             "rubric": {"id": "round3", "version": "3.0.0", "sha256": "ab"}}}},
            ],
        },
    }  # fmt: skip


def _results() -> dict[str, Any]:
    return {
        "evalId": "eval-1",
        "config": {"description": "d", "tests": [{"vars": {"question": SECRET}}]},
        "results": {"version": 3, "timestamp": "t", "prompts": [{"label": "C1.5", "raw": SECRET}],
                    "results": [_row("hr-1", "critical"), _row("lhsq-1", None)]},
    }  # fmt: skip


def test_high_risk_rows_keep_no_text() -> None:
    original = _results()
    redacted, count = redact_results(copy.deepcopy(original))
    assert count == 1
    hr, other = redacted["results"]["results"]
    assert SECRET not in json.dumps(hr) and SECRET not in json.dumps(
        {k: v for k, v in redacted.items() if k != "results"}
    )
    assert SECRET not in json.dumps(redacted["results"]["prompts"])
    assert other == original["results"]["results"][1]  # a row of another item is kept whole


def test_high_risk_rows_keep_ids_scores_verdicts_and_finding_types() -> None:
    redacted, _ = redact_results(_results())
    hr = redacted["results"]["results"][0]
    assert hr["testCase"]["metadata"] == {"query_id": "hr-1", "jurisdiction": "IL", "round": "3", "rubric": "round3",
                                          "risk_tier": "critical"}  # fmt: skip
    assert (hr["success"], hr["score"], hr["namedScores"]) == (
        False,
        0.25,
        {"composite": 0.25, "safety.jurisdiction": 0.0},
    )
    verifier, judge = hr["gradingResult"]["componentResults"]
    assert verifier["reason"] == REDACTED and verifier["assertion"] == {
        "type": "javascript",
        "metric": "deterministic_verifier_score",
    }
    assert verifier["metadata"]["verifier"]["hard_failures"] == [
        {"check": "jurisdiction", "safety_check": "jurisdiction_correct"}
    ]
    assert verifier["metadata"]["verifier"]["urls"] == [
        {"status": "UNCHECKED"}
    ]  # the URL came from the answer
    assert judge["metadata"]["judge"]["verdicts"] == {"source_fidelity": {"verdict": "No"}}
    assert judge["metadata"]["provenance"]["rubric"] == {"id": "round3", "version": "3.0.0", "sha256": "ab"}
    assert hr["prompt"] == {"label": "C1.5"} and hr["redacted"] is True


def test_marker_is_the_test_metadata() -> None:
    assert is_high_risk(_row("a", "high")) and not is_high_risk(_row("b", None))


def test_the_composites_record_is_kept_word_by_word() -> None:
    """The report reads ``gradingResult.metadata`` (unscored composite, the safety split): a redacted row
    keeps it, but only the pack's own words — any other value (text planted there) is dropped."""
    results = _results()
    grading = results["results"]["results"][0]["gradingResult"]
    grading["metadata"] = {
        "composite": {"status": "unscored", "note": SECRET},
        "safety": {"source": "judge", "judge_disagrees": True, "decided_no": ["jurisdiction_correct", SECRET],
                   "verifier_no": [], "judge_no": ["jurisdiction_correct"], "judge_only_no": [SECRET],
                   "verifier_only_no": []},
        "other": {"status": "scored"},
    }  # fmt: skip
    out, _ = redact_results(results)
    kept = out["results"]["results"][0]["gradingResult"]["metadata"]
    assert kept == {
        "composite": {"status": "unscored"},
        "safety": {"source": "judge", "judge_disagrees": True, "decided_no": ["jurisdiction_correct"],
                   "verifier_no": [], "judge_no": ["jurisdiction_correct"], "judge_only_no": [],
                   "verifier_only_no": []},
    }  # fmt: skip
    # A row failed as unsafe with no composite keeps whose No failed it (the report counts it failed).
    grading["metadata"] = {
        "composite": {"status": "unscored", "safety_from": ["verifier"], "unscored_reason": SECRET}
    }
    out, _ = redact_results(results)
    kept = out["results"]["results"][0]["gradingResult"]["metadata"]
    assert kept == {"composite": {"status": "unscored", "safety_from": ["verifier"]}}
    grading["metadata"] = {"composite": {"status": SECRET, "safety_from": [SECRET]},
                           "safety": {"source": "1", "judge_disagrees": 1}}  # fmt: skip
    out, _ = redact_results(results)
    assert out["results"]["results"][0]["gradingResult"]["metadata"] == {"composite": {}, "safety": {}}
    assert SECRET not in json.dumps(out["results"]["results"][0])


@pytest.mark.e2e
@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_a_redacted_row_reads_as_the_same_scores_and_verdicts(shared_eval: Callable[[str], EvalRun]) -> None:
    """The main job's rows, redacted: the report reads each the same scores (every criterion's, dimension's,
    check's and chip) and verdicts as from the whole row, and no reason or answer text is left."""
    run = shared_eval("promptfooconfig.yaml")
    results = json.loads(run.out.read_text(encoding="utf-8"))
    redacted, count = redact_results(copy.deepcopy(results))
    rows = results["results"]["results"]
    assert count == len(rows) == 24  # every sample Round 3 item is High-Risk
    for whole, kept in zip(rows, redacted["results"]["results"], strict=True):
        before, after = report_row(whole), report_row(kept)
        assert len([k for k in before.scores if k.startswith("round3.")]) >= 27 + 5  # criteria, dimensions
        assert (after.scores, after.verdicts) == (before.scores, before.verdicts)
        assert whole["response"]["output"][:40] not in json.dumps(kept)


def test_a_redacted_row_gives_the_same_undecided_counts() -> None:
    """The verifier's undecided record keeps its count and kinds (the report's per-condition counts) and
    never its items, which quote the answer."""
    results = _results()
    redacted, _ = redact_results(copy.deepcopy(results))
    for whole, kept in zip(results["results"]["results"], redacted["results"]["results"], strict=True):
        before, after = report_row(whole), report_row(kept)
        assert before.undecided == {"URL": 1, "statute": 2}
        assert (after.undecided, after.undecided_derived) == (before.undecided, before.undecided_derived)
    record = redacted["results"]["results"][0]["gradingResult"]["componentResults"][0]["metadata"]["verifier"]
    assert record["undecided"] == {"count": 3, "kinds": {"URL": 1, "statute": 2}}
    assert SECRET not in json.dumps(redacted["results"]["results"][0])


def test_a_redacted_row_keeps_its_answers_length_not_its_answer() -> None:
    """Issue 41: the answer-length table and the length-adjusted effects read a redacted row as the
    original; the length is counted by hand here, and a forged count is refused with the field's name."""
    results = _results()
    redacted, _ = redact_results(copy.deepcopy(results))
    hr = redacted["results"]["results"][0]
    answer = results["results"]["results"][0]["response"]["output"]
    assert "response" not in hr and SECRET not in json.dumps(hr)
    words = len(["Answer", "about", *SECRET.split(" ")])
    assert hr["answer_length"] == {"chars": len(answer), "words": words}
    assert (
        report_row(hr).length == report_row(results["results"]["results"][0]).length == (len(answer), words)
    )
    hr["answer_length"] = {"chars": -1, "words": 3}
    with pytest.raises(ValueError, match="answer_length"):
        report_row(hr)


def test_only_a_judge_components_own_name_is_kept() -> None:
    """A component's value is kept only when it is a judge component's name (ids): never other text."""
    row = _row("hr-1", "critical")
    components = row["gradingResult"]["componentResults"]
    components.append({"pass": True, "score": 1.0, "reason": SECRET,
                       "assertion": {"type": "python", "value": "judge round3: dimension.Safety"}})  # fmt: skip
    for value in (f"judge round3: {SECRET}", f"judge round3: x\n{SECRET}", SECRET):
        components.append(
            {"pass": True, "score": 1.0, "reason": "r", "assertion": {"type": "python", "value": value}}
        )
    redacted, _ = redact_results({"results": {"results": [row]}})
    kept = redacted["results"]["results"][0]["gradingResult"]["componentResults"]
    assert kept[2]["assertion"] == {"type": "python", "value": "judge round3: dimension.Safety"}
    assert [c["assertion"] for c in kept[3:]] == [{"type": "python"}] * 3
    assert SECRET not in json.dumps(redacted)
