"""The docs-QA assertion in-process (as promptfoo calls it): outcomes, named scores, metadata, explicit errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.data.recorded_answers import load_recorded_answers
from grounding_eval.judge.audit import read_audit
from grounding_eval.judge.calls import load_replay_fixtures
from grounding_eval.promptfoo.docs_qa_tests import generate_tests
from tests.entry_points import load_entry_point
from tests.outcomes import unscored_reason

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "docs_qa" / "tiny"
SAMPLE = REPO / "datasets" / "docs_qa"
get_assert = load_entry_point("docs_qa")


@pytest.fixture(autouse=True)
def _no_live_grader(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GROUNDING_EVAL_JUDGE_PROVIDER", raising=False)
    monkeypatch.delenv("GROUNDING_EVAL_DOCS_QA_DATASET", raising=False)
    monkeypatch.chdir(tmp_path)  # the review queue and prompt audit go to the working directory


def _tests(dataset: Path) -> dict[str, dict[str, Any]]:
    return {t["vars"]["query_id"]: t for t in generate_tests({"dataset": str(dataset)}, pack_root=REPO)}


def _context(test: dict[str, Any], dataset: Path, **config: Any) -> dict[str, Any]:
    return {
        "vars": test["vars"],
        "test": {"metadata": test["metadata"], "vars": test["vars"]},
        "config": {"provider": "replay:{dataset}/grader_replies.yaml", **config},
        "prompt": "…",
        "metadata": {"recorded_fixture": str(dataset / "recorded_answers.yaml")},
    }


def _answers(dataset: Path) -> dict[str, str]:
    return {k[0]: v.answer for k, v in load_recorded_answers(dataset / "recorded_answers.yaml").items()}


class TestSeedScoredExample:
    """The seed's scored example, end to end through the assertion: 2/3 applicable, Pass, missed step flagged."""

    def test_q07(self) -> None:
        test = _tests(TINY)["Q07"]
        result = get_assert(_answers(TINY)["Q07"], _context(test, TINY))
        meta = result["metadata"]["docs_qa"]
        assert result["pass"] is True
        assert result["reason"].startswith("PASS docs_qa 2/3 applicable, Pass (multi-section)")
        assert "flag missed point(s): logbook entry with serial number" in result["reason"]
        assert {k: v["verdict"] for k, v in meta["criteria"].items()} == {
            "correct": "pass", "grounded": "pass", "complete": "fail", "honest_about_gaps": "n/a",
        }  # fmt: skip
        assert meta["criteria"]["complete"]["reason"] == "Missed the logbook entry"
        assert (meta["applicable"], meta["total"], meta["passed"]) == (3, 2, True)
        assert meta["missed_points"] == ["logbook entry with serial number"]
        assert meta["question_type"] == "multi-section" and meta["disagreements"] == []
        assert result["namedScores"] == {
            "docs_qa.correct": 1.0, "docs_qa.grounded": 1.0, "docs_qa.complete": 0.0,
            "docs_qa.must_include_coverage": pytest.approx(2 / 3, abs=1e-4), "docs_qa.citation_validity": 1.0,
        }  # fmt: skip
        assert meta["scores"] == {"docs_qa.score": 2.0, "docs_qa.applicable": 3.0}  # counts: not chips
        metrics = [c["assertion"].get("metric") for c in result["componentResults"]]
        assert metrics == ["docs_qa.correct", "docs_qa.grounded", "docs_qa.complete",
                           "docs_qa.must_include_coverage", "docs_qa.citation_validity"]  # fmt: skip
        assert len(json.dumps(result["metadata"])) < 5000


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every sample row graded in-process (the prompt audit goes to a temporary folder)."""
    tests, answers = _tests(SAMPLE), _answers(SAMPLE)
    audit = str(tmp_path_factory.mktemp("audit"))
    return {qid: get_assert(answers[qid], _context(t, SAMPLE, audit_dir=audit)) for qid, t in tests.items()}


class TestSampleOutcomes:
    """The sample's recorded answers exercise every outcome SOURCES.md lists."""

    def test_complete_but_wrong_fails(self, results: dict[str, dict[str, Any]]) -> None:
        meta = results["Q04"]["metadata"]["docs_qa"]
        assert (
            meta["criteria"]["complete"]["verdict"] == "pass"
            and meta["criteria"]["correct"]["verdict"] == "fail"
        )
        assert results["Q04"]["pass"] is False and (meta["total"], meta["applicable"]) == (2, 3)

    def test_invented_out_of_scope_answer(self, results: dict[str, dict[str, Any]]) -> None:
        result = results["Q22"]
        meta = result["metadata"]["docs_qa"]
        assert result["pass"] is False and (meta["total"], meta["applicable"]) == (0, 3)
        assert meta["criteria"]["honest_about_gaps"]["verdict"] == "fail"
        assert (
            meta["criteria"]["complete"]["verdict"] == "n/a"
            and "docs_qa.complete" not in result["namedScores"]
        )
        assert meta["invalid_citations"] == ["tenant-rights.md#security-deposits"]
        assert "docs_qa.must_include_coverage" not in result["namedScores"]  # nothing to cover out of scope

    def test_disagreements_are_flagged_not_applied(self, results: dict[str, dict[str, Any]]) -> None:
        q10, q17 = results["Q10"], results["Q17"]
        assert q10["pass"] is True and q10["namedScores"]["docs_qa.grounded"] == 1.0
        assert q10["metadata"]["docs_qa"]["disagreements"] == [
            "grader says Grounded but cited section(s) do not exist: legal-aid.md#aba-free-legal-answers"
        ]
        assert q17["namedScores"]["docs_qa.complete"] == 1.0
        assert q17["metadata"]["docs_qa"]["disagreements"] == [
            "grader says Complete but coverage missed: housing counselor"
        ]
        assert "DISAGREEMENT" in q17["reason"]

    def test_retry_after_malformed_reply(self, results: dict[str, dict[str, Any]]) -> None:
        meta = results["Q05"]["metadata"]["docs_qa"]
        assert meta["retried"] is True and results["Q05"]["pass"] is True
        assert "raw_replies" not in meta  # the replies are in the audit log, named by the row
        assert len(read_audit(Path(meta["audit_dir"]), meta["audit_id"])["raw_replies"]) == 2

    def test_grader_scores_honesty_on_in_scope_question(self, results: dict[str, dict[str, Any]]) -> None:
        meta = results["Q21"]["metadata"]["docs_qa"]
        assert meta["applicable"] == 4 and results["Q21"]["namedScores"]["docs_qa.honest_about_gaps"] == 0.0

    def test_every_row_scored_and_typed(self, results: dict[str, dict[str, Any]]) -> None:
        assert all(r["metadata"]["docs_qa"]["status"] == "scored" for r in results.values())
        passed = sorted(q for q, r in results.items() if r["pass"])
        assert sorted(set(results) - set(passed)) == ["Q01", "Q04", "Q19", "Q21", "Q22"]


class TestFixturesKeyedToAnswers:
    """Every recorded grader reply carries the SHA-256 of the recorded answer it grades."""

    @pytest.mark.parametrize("dataset", [SAMPLE, TINY], ids=["sample", "tiny"])
    def test_hashes(self, dataset: Path) -> None:
        answers = _answers(dataset)
        fixtures = load_replay_fixtures(dataset / "grader_replies.yaml")
        assert set(fixtures) == {f"docs_qa/{q}" for q in answers}
        for key, fixture in fixtures.items():
            answer = answers[key.split("/", 1)[1]]
            assert fixture.answer_sha256 == hashlib.sha256(answer.encode("utf-8")).hexdigest(), key


class TestExplicitErrors:
    """No silent fallbacks: every problem is an explicit result with a reason, never a substituted score."""

    def test_other_answer_is_not_graded_by_a_recording(self) -> None:
        test = _tests(TINY)["Q07"]
        result = get_assert("A different answer.", _context(test, TINY))
        assert result["pass"] is False and result["namedScores"] == {}
        assert unscored_reason(result).startswith("recorded judge reply docs_qa/Q07 was recorded for")
        assert "set GROUNDING_EVAL_JUDGE_PROVIDER to a live grader" in result["reason"]
        meta = result["metadata"]["docs_qa"]  # the rubric judge's evidence of a refused recording
        assert meta["error"] == "replay_mismatch" and meta["recorded_answer_sha256"] != meta["answer_sha256"]

    def test_invalid_twice_goes_to_the_review_queue(self, tmp_path: Path) -> None:
        test = _tests(TINY)["Q07"]
        answer = _answers(TINY)["Q07"]
        replay = tmp_path / "bad.yaml"
        bad = json.dumps({"criteria": {"correct": {"score": "yes", "reason": "a."}}})
        replay.write_text(yaml.safe_dump([{"key": "docs_qa/Q07", "answer_sha256": hashlib.sha256(answer.encode()).hexdigest(),
                                           "replies": [bad, bad]}]), encoding="utf-8")  # fmt: skip
        queue = tmp_path / "queue.jsonl"
        context = _context(test, TINY, provider=f"replay:{replay}", review_queue=str(queue))
        result = get_assert(answer, context)
        assert result["pass"] is False and result["namedScores"] == {}
        assert unscored_reason(result).startswith(
            "the grader's reply was invalid twice; sent to the review queue"
        )
        entries = [json.loads(line) for line in queue.read_text(encoding="utf-8").splitlines()]
        assert len(entries) == 1 and entries[0]["question_id"] == "Q07" and len(entries[0]["errors"]) == 2
        assert entries[0]["raw_replies"] == [bad, bad]  # the review queue's promise (it had no replies)
        again = get_assert(answer, context)
        assert "already in the review queue" in again["reason"]
        assert len(queue.read_text(encoding="utf-8").splitlines()) == 1

    def test_failed_call_after_an_invalid_reply_queues_the_reply(self, tmp_path: Path) -> None:
        """One recorded reply, invalid: the retry's call fails (no reply 2); the reply is queued, audited,
        and the row says the call failed (was: a bare error, the reply lost)."""
        test = _tests(TINY)["Q07"]
        answer = _answers(TINY)["Q07"]
        replay = tmp_path / "bad.yaml"
        replay.write_text(yaml.safe_dump([{"key": "docs_qa/Q07", "answer_sha256": hashlib.sha256(answer.encode()).hexdigest(),
                                           "replies": ["not json"]}]), encoding="utf-8")  # fmt: skip
        queue = tmp_path / "queue.jsonl"
        result = get_assert(
            answer, _context(test, TINY, provider=f"replay:{replay}", review_queue=str(queue))
        )
        assert unscored_reason(result).startswith(f"grader call failed (replay:{replay}): ")
        assert result["reason"].endswith(f"; the earlier invalid reply was sent to the review queue {queue}")
        (entry,) = [json.loads(line) for line in queue.read_text(encoding="utf-8").splitlines()]
        meta = result["metadata"]["docs_qa"]
        assert entry["raw_replies"] == ["not json"] and meta["review_entry_id"] == entry["entry_id"]
        assert meta["status"] == "unscored" and meta["error"] == "call_failed"
        assert read_audit(Path(meta["audit_dir"]), meta["audit_id"])["raw_replies"] == ["not json"]

    def test_no_grader_configured(self) -> None:
        test = _tests(TINY)["T01"]
        context = _context(test, TINY)
        context["config"] = {}
        result = get_assert("x", context)
        assert unscored_reason(result).startswith("no judge provider: set $GROUNDING_EVAL_JUDGE_PROVIDER")

    def test_missing_api_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("GROUNDING_EVAL_JUDGE_PROVIDER", "anthropic:messages:claude-sonnet-4-5-20250929")
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        result = get_assert("x", _context(_tests(TINY)["T01"], TINY))
        why = unscored_reason(result)  # the deciding finding: which variable, for which provider
        assert "API key is not set" in why and "anthropic:messages:claude-sonnet-4-5-20250929" in why

    def test_test_without_docs_qa_metadata(self) -> None:
        result = get_assert("x", {"test": {"metadata": {}}, "config": {"provider": "replay:x.yaml"}})
        assert unscored_reason(result).startswith("test metadata lacks question_id")

    @pytest.mark.parametrize(
        "output",
        [None, 42, {"a": [1]}, "\ud83d", "", "x" * 200_000],
        ids=["none", "int", "dict", "surrogate", "empty", "huge"],
    )
    def test_never_raises(self, output: Any) -> None:
        result = get_assert(output, _context(_tests(TINY)["T01"], TINY))
        assert result["pass"] is False and result["reason"]
        json.dumps(result, ensure_ascii=False).encode("utf-8")

    def test_garbage_context(self) -> None:
        for context in (None, [], {"test": "x"}, {"config": "x", "test": {"metadata": {}}}):
            result = get_assert("x", context)
            assert unscored_reason(result)
