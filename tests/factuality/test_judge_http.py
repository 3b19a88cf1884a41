"""The judgment against a real judge API on 127.0.0.1, per wire format: the retry path and the two-stage path.

Nothing is mocked below HTTP: the judge client speaks Anthropic, OpenAI or Gemini JSON to the rubric
judge's scriptable test server, which records what it was sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.factuality.evidence import Document
from grounding_eval.factuality.judge import judge_factuality
from grounding_eval.factuality.rubric import FactualityRubric
from grounding_eval.judge.client import make_client

from .conftest import CONTRADICTED, SUPPORTED, JudgeServer, Scripted, WireCase, reply

FAST = {"backoff_base": 0.001, "backoff_max": 0.01}
TARGET = (
    "A landlord may not evict a servicemember's family without a court order. Everyone gets free legal aid."
)


def _client(case: WireCase, model: str | None = None) -> Any:
    provider = case.provider_id if model is None else case.provider_id.replace(case.model, model)
    return make_client(provider, env=case.env, base_url=case.base_url, **FAST)


def _sent_prompt(seen: Any, case: WireCase) -> str:
    body = seen.body
    if case.kind == "google":
        return str(body["contents"][-1]["parts"][0]["text"])
    return str(body["messages"][-1]["content"])


@pytest.fixture
def judge(
    wire_case: WireCase, rubric: FactualityRubric, documents: list[Document], tmp_path: Path
) -> Callable[..., Any]:
    """Judge TARGET with this wire format's client as the capable judge; queues in ``tmp_path``."""

    def run(**kw: Any) -> Any:
        return judge_factuality(
            TARGET, documents, rubric, capable=_client(wire_case), fixture_key="t/1",
            review_queue=tmp_path / "review.jsonl", human_queue=tmp_path / "human.jsonl", **kw,
        )  # fmt: skip

    return run


class TestRetry:
    """An invalid reply is retried once with its errors in the constraints; a second failure is queued."""

    def test_invalid_then_valid(
        self, wire_case: WireCase, judge_server: JudgeServer, judge: Callable[..., Any], tmp_path: Path
    ) -> None:
        bad = reply({**SUPPORTED, "score": 0.5})  # inconsistent with Supported
        judge_server.script(
            Scripted(body=wire_case.ok(bad)), Scripted(body=wire_case.ok(reply(SUPPORTED, CONTRADICTED)))
        )
        result = judge()
        assert result.status == "scored"
        assert result.score == 0.5
        assert [a["outcome"] for a in result.attempts] == ["invalid reply", "parsed"]
        assert judge_server.count == 2
        first, second = (_sent_prompt(s, wire_case) for s in judge_server.requests)
        constraints = second.split("<CONSTRAINTS>", 1)[1]
        assert "Your previous reply was invalid:" in constraints
        assert "score 0.5 does not match Supported" in constraints
        assert "Your previous reply was invalid" not in first
        assert not (tmp_path / "review.jsonl").exists()

    def test_invalid_twice_goes_to_the_review_queue(
        self, wire_case: WireCase, judge_server: JudgeServer, judge: Callable[..., Any], tmp_path: Path
    ) -> None:
        judge_server.script(
            Scripted(body=wire_case.ok("not json")), Scripted(body=wire_case.ok('{"claim_verifications": 3}'))
        )
        result = judge()
        assert result.status == "error"
        assert result.score is None
        assert "the judge reply was invalid twice; sent to" in result.reason  # status is the outcome
        lines = (tmp_path / "review.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == 1
        entry = json.loads(lines[0])
        assert entry["raw_replies"] == ["not json", '{"claim_verifications": 3}']
        assert len(entry["errors"]) == 2
        assert "<TARGET_TEXT>" in entry["rendered_prompt"]["user"]
        assert result.to_json()["status"] == "error" and result.to_json()["claims"] == []

    def test_http_failure_is_an_error_not_a_score(
        self, wire_case: WireCase, judge_server: JudgeServer, judge: Callable[..., Any], tmp_path: Path
    ) -> None:
        judge_server.script(Scripted(status=401, body={"error": "bad key"}))
        result = judge()
        assert result.status == "error" and result.score is None
        assert "HTTP 401" in result.reason
        assert wire_case.key not in result.reason


class TestTwoStage:
    """A cheap model first; only clean all-Supported verdicts are accepted from it."""

    def test_cheap_accepted(
        self, wire_case: WireCase, judge_server: JudgeServer, judge: Callable[..., Any], tmp_path: Path
    ) -> None:
        judge_server.script(Scripted(body=wire_case.ok(reply(SUPPORTED))))
        result = judge(cheap=_client(wire_case, "cheap-1"))
        assert (result.stage, result.status, result.score) == ("cheap", "scored", 1.0)
        assert result.model_id == result.cheap_model_id == "cheap-1"
        assert judge_server.count == 1
        assert [a["outcome"] for a in result.attempts] == ["accepted"]

    def test_cheap_flags_a_claim_and_the_capable_model_decides(
        self, wire_case: WireCase, judge_server: JudgeServer, judge: Callable[..., Any], tmp_path: Path
    ) -> None:
        judge_server.script(
            Scripted(body=wire_case.ok(reply(SUPPORTED, CONTRADICTED))),
            Scripted(body=wire_case.ok(reply(SUPPORTED, {**CONTRADICTED, "verification_result": "Partially Supported", "score": 0.5, "severity": "Minor"}))),
        )  # fmt: skip
        result = judge(cheap=_client(wire_case, "cheap-1"))
        assert (result.stage, result.score) == ("capable", 0.75)
        assert (result.model_id, result.cheap_model_id) == (wire_case.model, "cheap-1")
        assert [a["outcome"] for a in result.attempts] == ["escalated: claim(s) below 1: c2", "parsed"]
        assert judge_server.count == 2

    def test_cheap_invalid_reply_is_not_retried_but_escalated(
        self, wire_case: WireCase, judge_server: JudgeServer, judge: Callable[..., Any], tmp_path: Path
    ) -> None:
        judge_server.script(
            Scripted(body=wire_case.ok("{oops")), Scripted(body=wire_case.ok(reply(SUPPORTED)))
        )
        result = judge(cheap=_client(wire_case, "cheap-1"))
        assert (result.stage, result.status, result.score) == ("capable", "scored", 1.0)
        assert [a["outcome"] for a in result.attempts] == ["escalated: invalid reply", "parsed"]

    def test_high_risk_skips_the_cheap_model_and_needs_a_human(
        self, wire_case: WireCase, judge_server: JudgeServer, judge: Callable[..., Any], tmp_path: Path
    ) -> None:
        judge_server.script(Scripted(body=wire_case.ok(reply(SUPPORTED, CONTRADICTED))))
        result = judge(cheap=_client(wire_case, "cheap-1"), risk_level="high")
        assert judge_server.count == 1
        assert (result.stage, result.status) == ("capable", "needs_human_verification")
        assert result.attempts[0] == {
            "stage": "cheap",
            "model_id": "cheap-1",
            "outcome": "skipped (risk level high)",
        }
        entry = json.loads((tmp_path / "human.jsonl").read_text(encoding="utf-8"))
        (finding,) = entry["findings"]
        assert finding["claim_id"] == "c2" and finding["severity"] == "Major"
        assert finding["evidence_quote"] == CONTRADICTED["evidence_quote"]
        assert finding["judge_rationale"] == CONTRADICTED["judge_rationale"]
        assert CONTRADICTED["evidence_quote"] in finding["evidence_chunks"][0]["text"]
        assert finding["evidence_chunks"][0]["source_document_id"] == "avoid"
        assert entry["target_text"] == TARGET


class TestCache:
    """Only replies that parse are cached; a cached one is served without a call."""

    def test_valid_reply_cached_invalid_not(
        self,
        wire_case: WireCase,
        judge_server: JudgeServer,
        rubric: FactualityRubric,
        documents: list[Document],
        tmp_path: Path,
    ) -> None:
        client = make_client(
            wire_case.provider_id,
            env=wire_case.env,
            base_url=wire_case.base_url,
            cache_dir=tmp_path / "cache",
            **FAST,
        )
        judge_server.script(
            Scripted(body=wire_case.ok("not json")),
            Scripted(body=wire_case.ok(reply(SUPPORTED))),
            Scripted(body=wire_case.ok("still not json")),
        )
        first = judge_factuality(TARGET, documents, rubric, capable=client, fixture_key="k")
        again = judge_factuality(TARGET, documents, rubric, capable=client, fixture_key="k")
        # The invalid reply to the first prompt was not cached, so it is asked again; the valid reply to
        # the retry prompt was, so the retry costs no call.
        assert judge_server.count == 3
        assert [a["cached"] for a in first.attempts] == [False, False]
        assert [(a["outcome"], a["cached"]) for a in again.attempts] == [
            ("invalid reply", False),
            ("parsed", True),
        ]
        assert first.score == again.score == 1.0
