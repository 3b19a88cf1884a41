"""The one judge loop (judge/pipeline.py) against a real judge API on 127.0.0.1 and real recordings:
retry with the error, the cache keeps only replies that parse, failed calls, audit and review queue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.judge.audit import read_audit
from grounding_eval.judge.calls import answer_sha256, replay_client
from grounding_eval.judge.extract import ParseFailure, failure
from grounding_eval.judge.host import HostJudgeClient, resolve_judges
from grounding_eval.judge.pipeline import (
    Audit,
    Prompt,
    Review,
    Scored,
    Unscored,
    check_replay,
    run_judge,
    unscored_reason,
)
from tests.judge.conftest import JudgeServer, Scripted, WireCase, wire_cases

PROMPT = Prompt("You grade answers.", "Grade: <answer>Call the hotline.</answer>")
GOOD = '{"verdict": "pass"}'
BAD = "I think it passes."


def parse(text: str) -> dict[str, Any] | ParseFailure:
    """A judge's validator: the reply must be the JSON object {"verdict": "pass"|"fail"}."""
    try:
        value = json.loads(text)
    except ValueError:
        return failure(["the reply is not JSON"], text)
    if not isinstance(value, dict) or value.get("verdict") not in ("pass", "fail"):
        return failure(["'verdict' must be pass or fail"], text)
    return value


@pytest.fixture
def openai(judge_server: JudgeServer) -> WireCase:
    return wire_cases(judge_server.url)["openai"]


def _client(case: WireCase, cache_dir: Path | None = None) -> Any:
    """The live judge at the test server, through promptfoo's own provider (assertions/judges.cjs)."""
    spec = {
        "id": case.provider_id,
        "config": {"apiBaseUrl": case.base_url, "apiKey": case.key, "maxRetries": 0},
    }
    judge = resolve_judges("judge", {"config": {"provider": spec}}).judge
    return HostJudgeClient(judge, cache_dir=cache_dir, deadline_s=30.0)


def _users(server: JudgeServer) -> list[str]:
    """The user message of every request the server saw (OpenAI wire)."""
    return [next(m["content"] for m in r.body["messages"] if m["role"] == "user") for r in server.requests]


def _specs(tmp_path: Path) -> tuple[Audit, Review]:
    def audit_record(outcome: Scored[Any] | Unscored) -> dict[str, Any]:
        return {"fixture_key": "k", "raw_replies": outcome.replies, "errors": outcome.errors}

    def review_record(outcome: Unscored) -> dict[str, Any]:
        return {"fixture_key": "k", "raw_replies": outcome.replies, "errors": outcome.errors}

    return Audit(tmp_path / "audit", audit_record), Review(tmp_path / "queue.jsonl", review_record)


def _queue(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "queue.jsonl"
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )


class TestRetry:
    """An invalid reply is sent back once with its validation error; a valid one ends the loop."""

    def test_valid_first_reply_is_scored_without_retry(
        self, openai: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """One call, the parsed reply, retried False, the audit record holds the reply."""
        judge_server.script(Scripted(body=openai.ok(GOOD)))
        audit, review = _specs(tmp_path)
        outcome = run_judge(_client(openai), PROMPT, fixture_key="k", parse=parse, audit=audit, review=review)
        assert isinstance(outcome, Scored) and outcome.parsed == {"verdict": "pass"}
        assert (outcome.retried, outcome.replies, outcome.errors, judge_server.count) == (
            False,
            [GOOD],
            [],
            1,
        )
        assert read_audit(audit.directory, str(outcome.recorded.audit_id))["raw_replies"] == [GOOD]
        assert outcome.recorded.review_entry_id is None and _queue(tmp_path) == []

    def test_retry_sends_the_error_after_the_first_prompt(
        self, openai: WireCase, judge_server: JudgeServer
    ) -> None:
        """The second request's user text is the first's, a blank line, and the validation error."""
        judge_server.script(Scripted(body=openai.ok(BAD)), Scripted(body=openai.ok(GOOD)))
        outcome = run_judge(_client(openai), PROMPT, fixture_key="k", parse=parse)
        error = parse(BAD)
        assert isinstance(error, ParseFailure) and isinstance(outcome, Scored)
        assert _users(judge_server) == [PROMPT.user, f"{PROMPT.user}\n\n{error.error}"]
        assert outcome.retried and outcome.replies == [BAD, GOOD] and outcome.errors == [error.error]

    def test_a_judge_renders_its_own_retry(self, openai: WireCase, judge_server: JudgeServer) -> None:
        """``retry`` gets the error and gives the whole next user prompt (factuality's constraints)."""
        judge_server.script(Scripted(body=openai.ok(BAD)), Scripted(body=openai.ok(GOOD)))
        run_judge(_client(openai), PROMPT, fixture_key="k", parse=parse, retry=lambda e: f"FIX: {e}")
        assert _users(judge_server)[1].startswith("FIX: Your previous reply was invalid")

    def test_one_attempt_means_no_retry(self, openai: WireCase, judge_server: JudgeServer) -> None:
        """``max_attempts=1`` (factuality's cheap stage): an invalid reply is unscored after one call."""
        judge_server.script(Scripted(body=openai.ok(BAD)))
        outcome = run_judge(_client(openai), PROMPT, fixture_key="k", parse=parse, max_attempts=1)
        assert isinstance(outcome, Unscored) and outcome.reason == "invalid_reply"
        assert judge_server.count == 1 and not outcome.retried

    def test_each_reply_is_parsed_once(
        self, openai: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """The cache's accept() and the loop share one parse per reply text (a parse is the costly part)."""
        judge_server.script(Scripted(body=openai.ok(BAD)), Scripted(body=openai.ok(GOOD)))
        seen: list[str] = []

        def counting(text: str) -> dict[str, Any] | ParseFailure:
            seen.append(text)
            return parse(text)

        run_judge(_client(openai, tmp_path / "cache"), PROMPT, fixture_key="k", parse=counting)
        assert seen == [BAD, GOOD]


class TestCache:
    """Only replies that parse are cached; an invalid reply is asked again on the next run."""

    def test_parsed_reply_is_served_from_the_cache(
        self, openai: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        judge_server.script(Scripted(body=openai.ok(GOOD)))
        first = run_judge(_client(openai, tmp_path), PROMPT, fixture_key="k", parse=parse)
        again = run_judge(_client(openai, tmp_path), PROMPT, fixture_key="k", parse=parse)
        assert (first.cached, again.cached, judge_server.count) == (False, True, 1)
        assert isinstance(again, Scored) and again.parsed == {"verdict": "pass"}

    def test_invalid_replies_are_not_cached(
        self, openai: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        judge_server.script(*[Scripted(body=openai.ok(BAD))] * 4)
        for _ in range(2):
            outcome = run_judge(_client(openai, tmp_path), PROMPT, fixture_key="k", parse=parse)
            assert isinstance(outcome, Unscored) and not outcome.cached
        assert judge_server.count == 4


class TestUnscored:
    """Invalid twice → review queue once; a failed call ends the loop; reasons say which."""

    def test_invalid_twice_is_queued_once_and_audited(
        self, openai: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """The entry carries its id, every reply and error; the same judgment again is 'already in'."""
        judge_server.script(*[Scripted(body=openai.ok(BAD))] * 4)
        audit, review = _specs(tmp_path)
        outcomes = [
            run_judge(_client(openai), PROMPT, fixture_key="k", parse=parse, audit=audit, review=review)
            for _ in range(2)
        ]
        first, second = outcomes
        assert isinstance(first, Unscored) and isinstance(second, Unscored)
        (entry,) = _queue(tmp_path)
        assert entry["entry_id"] == first.recorded.review_entry_id == second.recorded.review_entry_id
        assert entry["raw_replies"] == [BAD, BAD] and len(entry["errors"]) == 2
        assert (first.recorded.review_sent, second.recorded.review_sent) == (True, False)
        assert read_audit(audit.directory, str(first.recorded.audit_id))["raw_replies"] == [BAD, BAD]
        reasons = [unscored_reason(o, whose="the v3 judge", caller="judge", provider="p") for o in outcomes]
        assert reasons == [
            f"the v3 judge reply was invalid twice; {verb} the review queue {review.queue}. "
            f"Last error: {first.errors[-1]}"
            for verb in ("sent to", "already in")
        ]

    def test_call_failure_without_a_reply_is_not_queued(
        self, openai: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """HTTP 400: unscored ``call_failed`` at once (no retry of the loop), audited, nothing to review."""
        judge_server.script(Scripted(400, {"error": {"message": "bad request"}}))
        audit, review = _specs(tmp_path)
        outcome = run_judge(_client(openai), PROMPT, fixture_key="k", parse=parse, audit=audit, review=review)
        assert isinstance(outcome, Unscored) and outcome.reason == "call_failed"
        assert judge_server.count == 1 and outcome.replies == [] and _queue(tmp_path) == []
        assert outcome.recorded.audit_id is not None
        why = unscored_reason(outcome, whose="the judge", caller="judge", provider=openai.provider_id)
        assert why.startswith(f"judge call failed ({openai.provider_id}): ") and "400" in why

    def test_call_failure_on_the_retry_keeps_the_first_reply(
        self, openai: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """An invalid reply, then a failed call: the reply a person can read goes to the queue."""
        judge_server.script(Scripted(body=openai.ok(BAD)), Scripted(400, {"error": {"message": "no"}}))
        audit, review = _specs(tmp_path)
        outcome = run_judge(_client(openai), PROMPT, fixture_key="k", parse=parse, audit=audit, review=review)
        assert isinstance(outcome, Unscored) and outcome.reason == "call_failed"
        assert [e["raw_replies"] for e in _queue(tmp_path)] == [[BAD]]
        why = unscored_reason(outcome, whose="the judge", caller="grader", provider="p")
        assert why.startswith("grader call failed (p): ")
        assert why.endswith(f"; the earlier invalid reply was sent to the review queue {review.queue}")

    def test_no_queue_given_says_so(self, openai: WireCase, judge_server: JudgeServer) -> None:
        judge_server.script(*[Scripted(body=openai.ok(BAD))] * 2)
        outcome = run_judge(_client(openai), PROMPT, fixture_key="k", parse=parse)
        assert isinstance(outcome, Unscored)
        assert unscored_reason(outcome, whose="the judge", caller="judge", provider=None) == (
            f"the judge reply was invalid twice. Last error: {outcome.errors[-1]}"
        )

    def test_failed_audit_write_keeps_the_verdict(
        self, openai: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """The audit directory is a file: scored all the same, ``audit_error`` names the failure."""
        judge_server.script(Scripted(body=openai.ok(GOOD)))
        (tmp_path / "audit").write_text("not a directory")
        audit, review = _specs(tmp_path)
        outcome = run_judge(_client(openai), PROMPT, fixture_key="k", parse=parse, audit=audit, review=review)
        assert isinstance(outcome, Scored) and outcome.recorded.audit_id is None
        assert str(outcome.recorded.audit_error).split(":")[0] in {"FileExistsError", "NotADirectoryError"}


class TestReplay:
    """Recorded replies through the same loop: reply n per call, and the answer-hash guard."""

    def _recording(self, tmp_path: Path, replies: list[str], answer: str | None) -> Any:
        entry: dict[str, Any] = {"key": "v3/q1/C0", "replies": replies}
        if answer is not None:
            entry["answer_sha256"] = answer_sha256(answer)
        path = tmp_path / "replies.yaml"
        path.write_text(yaml.safe_dump([entry]), encoding="utf-8")
        return replay_client(path)

    def test_recorded_invalid_then_valid(self, tmp_path: Path) -> None:
        """The invalid first reply is a call the row's meter counts as invalid (the report's failed calls)."""
        from grounding_eval.judge.pipeline import metered

        client = self._recording(tmp_path, [BAD, GOOD], "the answer")
        with metered() as meter:
            outcome = run_judge(client, PROMPT, fixture_key="v3/q1/C0", parse=parse)
        assert isinstance(outcome, Scored) and outcome.replies == [BAD, GOOD]
        (usage,) = meter.summary()["providers"].values()
        assert usage == {"calls": 2, "recorded": 2, "invalid": 1}
        assert [c.as_dict().get("invalid", False) for c in meter.calls] == [True, False]

    def test_a_missing_recorded_reply_is_a_failed_call(self, tmp_path: Path) -> None:
        """One recorded reply, invalid: the retry finds no second reply → ``call_failed`` naming the key."""
        client = self._recording(tmp_path, [BAD], "the answer")
        outcome = run_judge(client, PROMPT, fixture_key="v3/q1/C0", parse=parse)
        assert isinstance(outcome, Unscored) and outcome.reason == "call_failed"
        assert "asked for reply 2" in str(outcome.call_error) and outcome.replies == [BAD]

    def test_check_replay(self, tmp_path: Path, openai: WireCase) -> None:
        """A live judge grades any answer (None); a recording only the answer it was recorded for."""
        client = self._recording(tmp_path, [GOOD], "the answer")
        assert check_replay(_client(openai), "v3/q1/C0", "other", answer_is_recorded=False) is None
        same = check_replay(client, "v3/q1/C0", "the answer", answer_is_recorded=False)
        other = check_replay(client, "v3/q1/C0", "another answer", answer_is_recorded=True)
        assert same is not None and same.allowed and same.status == "match"
        assert other is not None and not other.allowed and other.status == "mismatch"


@pytest.mark.parametrize(
    ("provider", "label"),
    [
        ("replay:/home/me/study/datasets/x/judge_replies/round3.yaml", "replay:round3.yaml"),
        ("replay:datasets/sample/judge_replies/round3.yaml", "replay:round3.yaml"),
        ("file:///home/me/providers/judge.py:call_api", "file://judge.py:call_api"),
        ("file://providers/judge.py", "file://judge.py"),
        ("file://C:\\Users\\me\\judge.py:call_api", "file://judge.py:call_api"),
        ("bedrock:us.anthropic.claude-sonnet-4-5", "bedrock:us.anthropic.claude-sonnet-4-5"),
        ("http://127.0.0.1:8080/judge", "http://127.0.0.1:8080/judge"),
    ],
)
def test_a_judge_is_named_without_its_local_path(provider: str, label: str) -> None:
    from grounding_eval.judge.pipeline import Call, Meter, judge_label

    assert judge_label(provider) == label
    meter = Meter([Call(provider, "recorded")])
    assert list(meter.summary()["providers"]) == [label]
