"""A judge reached through promptfoo's providers (grounding_eval/judge/host.py): the pack's cache, tokens,
keys never echoed, and no model outside an eval.

The channel here stands in for promptfoo's Node process at the protocol boundary (the real one is driven
end to end in tests/test_judge_providers_e2e.py and tests/test_worker.py): it records what it was asked
and answers as ``assertions/grounding.cjs`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge.calls import JudgeError, Usage
from grounding_eval.judge.extract import ParseFailure, failure
from grounding_eval.judge.host import HostJudgeClient, Judge, current_host, hosting
from grounding_eval.judge.pipeline import Prompt, metered, run_judge


class Channel:
    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []

    def ask(self, request: Any) -> Any:
        self.asked.append(dict(request))
        return self.answers.pop(0)


def _client(tmp_path: Path, digest: str = "d1", ref: str = "r1") -> HostJudgeClient:
    judge = Judge("ollama:chat:m", "live", "config.provider", ref=ref, host="127.0.0.1:11434", digest=digest)
    return HostJudgeClient(judge, cache_dir=tmp_path / "cache", deadline_s=30.0)


def test_a_reply_carries_its_tokens_and_cost_and_the_request_what_promptfoo_needs(tmp_path: Path) -> None:
    channel = Channel(
        {"output": "fine", "token_usage": {"prompt": 10, "completion": 5, "total": 15}, "cost": 0.002}
    )
    with hosting(channel):
        reply = _client(tmp_path).complete("the prompt", system="sys")
    assert (reply.text, reply.cached, reply.usage, reply.cost) == ("fine", False, Usage(10, 5, 15, 0), 0.002)
    # a reference to the provider, never its settings: they stay in promptfoo's Node process
    assert channel.asked == [{"ref": "r1", "prompt": "the prompt", "system": "sys", "deadline_s": 30.0}]


def test_a_cached_reply_is_no_new_token_and_counts_as_cached(tmp_path: Path) -> None:
    channel = Channel({"output": "fine", "token_usage": {"prompt": 10, "completion": 5, "total": 15}})
    with hosting(channel):
        _client(tmp_path).complete("p")
        again = _client(tmp_path).complete("p")  # a new process: the cache is on disk
    assert again.cached and again.usage == Usage(cached=15) and again.cost is None
    assert len(channel.asked) == 1


def test_a_refused_reply_is_not_cached_and_another_config_is_another_key(tmp_path: Path) -> None:
    channel = Channel({"output": "bad"}, {"output": "bad again"}, {"output": "other"})
    with hosting(channel):
        _client(tmp_path).complete("p", accept=lambda text: False)
        assert _client(tmp_path).complete("p").text == "bad again"
        assert _client(tmp_path, digest="d2").complete("p").text == "other"
    assert len(channel.asked) == 3


def test_a_providers_error_is_a_one_line_judge_error(tmp_path: Path) -> None:
    channel = Channel({"error": "401 for key [REDACTED]"})  # scrubbed where the provider lives (judges.cjs)
    with hosting(channel), pytest.raises(JudgeError) as caught:
        _client(tmp_path).complete("p")
    assert str(caught.value) == "401 for key [REDACTED]"


@pytest.mark.parametrize("answer", [{}, {"output": None}, {"output": 7}])
def test_no_text_is_a_judge_error(tmp_path: Path, answer: dict[str, Any]) -> None:
    with hosting(Channel(answer)), pytest.raises(JudgeError, match="no text"):
        _client(tmp_path).complete("p")


def test_outside_an_eval_the_host_process_is_asked(tmp_path: Path) -> None:
    """No eval around: node assertions/judges.cjs answers, and knows no judge it did not resolve."""
    assert current_host() is None
    with pytest.raises(JudgeError, match="no judge provider is known by the reference"):
        _client(tmp_path, ref="never-resolved").complete("p")


def test_the_pipe_closing_is_a_failed_call(tmp_path: Path) -> None:
    class Closed:
        def ask(self, request: Any) -> Any:
            raise OSError("the pipe to promptfoo closed")

    with hosting(Closed()), pytest.raises(JudgeError, match="promptfoo could not be asked"):
        _client(tmp_path).complete("p")


def test_the_rows_meter_adds_up_every_call_and_its_tokens(tmp_path: Path) -> None:
    """An invalid reply then a valid one: two model calls, both counted, as promptfoo's tokensUsed."""
    channel = Channel({"output": "no", "token_usage": {"prompt": 7, "completion": 1, "total": 8}},
                      {"output": "yes", "token_usage": {"prompt": 9, "completion": 2, "total": 11}, "cost": 0.5})  # fmt: skip

    def parse(text: str) -> str | ParseFailure:
        return text if text == "yes" else failure(["say yes"], text)

    with hosting(channel), metered() as meter:
        outcome = run_judge(_client(tmp_path), Prompt("s", "u"), fixture_key="k", parse=parse)
    assert outcome.parsed == "yes"  # type: ignore[union-attr]
    assert meter.tokens_used() == {"total": 19, "prompt": 16, "completion": 3, "cached": 0, "numRequests": 2}
    summary = meter.summary()["providers"]["ollama:chat:m"]
    assert (summary["calls"], summary["model"], summary["tokens"], summary["cost"]) == (2, 2, 19, 0.5)
