"""The one switch to a live grader: ``$GROUNDING_EVAL_JUDGE_PROVIDER``, over real HTTP to a judge API on
127.0.0.1 (the judge client's scriptable server), with the one retry and the reply cache."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from grounding_eval.judge.audit import read_audit
from grounding_eval.judge.calls import answer_sha256
from grounding_eval.promptfoo.docs_qa_tests import generate_tests
from tests.entry_points import load_entry_point
from tests.judge.conftest import FAKE_KEYS, JudgeServer, Scripted, _openai_ok

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "docs_qa" / "tiny"
get_assert = load_entry_point("docs_qa")
VALID = json.dumps({"criteria": {
    "correct": {"score": 1, "reason": "It gives the torque in the reference."},
    "grounded": {"score": 1, "reason": "The value is in the cited section."},
    "complete": {"score": 1, "reason": "It states the one required point."},
    "honest_about_gaps": {"score": "n/a", "reason": "The question is in scope."},
}})  # fmt: skip


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    judge = JudgeServer()
    judge.start()
    yield judge
    judge.stop()


def test_live_grader_retries_once_then_scores_and_caches(
    server: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROUNDING_EVAL_JUDGE_PROVIDER", "openai:chat:grader-test")
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEYS["openai"])
    # The switch decides the endpoint too: promptfoo's own setting for it (a config's base_url is refused).
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.chdir(tmp_path)
    test = next(
        t for t in generate_tests({"dataset": str(TINY)}, pack_root=REPO) if t["vars"]["query_id"] == "T01"
    )
    answer = "The propeller nut takes 0.6 N·m. Source: maintenance-procedure.md#torque-values"
    context = {
        "vars": test["vars"],
        "test": {"metadata": test["metadata"]},
        "config": {"provider": "replay:{dataset}/grader_replies.yaml", "cache_dir": str(tmp_path / "cache"),
                   "max_retries": 0},
    }  # fmt: skip
    server.script(Scripted(body=_openai_ok(VALID)))
    first = get_assert(answer, context)
    assert first["pass"] is True, first["reason"]
    meta = first["metadata"]["docs_qa"]
    assert meta["provider"] == "openai:chat:grader-test" and meta["retried"] is False
    assert meta["answer_sha256"] == answer_sha256(answer)
    assert answer in server.requests[0].body["messages"][-1]["content"]
    audit = read_audit(tmp_path / "results/audit", meta["audit_id"])
    assert answer in audit["rendered_prompt"]["user"] and audit["fixture_key"] == meta["fixture_key"]
    again = get_assert(answer, context)  # the valid reply was cached: no second request
    assert again["pass"] is True and server.count == 1

    other = answer + " Tighten it by hand first."
    invalid = VALID.replace('"score": 1', '"score": "pass"', 1)
    server.script(Scripted(body=_openai_ok(invalid)), Scripted(body=_openai_ok(VALID)))
    retried = get_assert(other, context)
    assert retried["pass"] is True and retried["metadata"]["docs_qa"]["retried"] is True
    assert server.count == 3
    retry_prompt = server.requests[2].body["messages"][-1]["content"]
    assert "Your previous reply was invalid: criterion 'correct': score" in retry_prompt
