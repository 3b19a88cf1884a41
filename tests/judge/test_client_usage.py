"""The direct judge client reports the tokens each response says it spent (``JudgeReply.usage``).

Against the loopback judge server: each wire format's own usage fields, a cached reply counted as
cached with no new tokens, and a response without (or with garbled) counts read as unknown, never as an
error or as zero tokens spent.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge.client import Usage, make_client
from tests.judge.conftest import JudgeServer, Scripted, WireCase, wire_cases

FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "max_retries": 0}
PROMPT = "Grade this answer.\n<answer>Call the Legal Aid hotline.</answer>"

# Where each format keeps its counts (the response's section, then the prompt, completion, total fields).
FIELDS = {
    "anthropic": ("usage", "input_tokens", "output_tokens", None),
    "openai": ("usage", "prompt_tokens", "completion_tokens", "total_tokens"),
    "google": ("usageMetadata", "promptTokenCount", "candidatesTokenCount", "totalTokenCount"),
}


def _client(case: WireCase, cache_dir: Path | None = None) -> Any:
    return make_client(case.provider_id, env=case.env, base_url=case.base_url, cache_dir=cache_dir, **FAST)


def _body(case: WireCase, change: Any = None) -> dict[str, Any]:
    """``case``'s success body, its usage section passed through ``change`` (``None``: left out)."""
    body = copy.deepcopy(case.ok("a judgment"))
    section = FIELDS[case.kind][0]
    if change is None:
        del body[section]
    else:
        body[section] = change(body[section], *FIELDS[case.kind][1:])
    return body


class TestReadFromTheResponse:
    """Each wire format's own fields give prompt, completion and total; the direct client prices nothing."""

    def test_counts_per_format(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        judge_server.script(Scripted(body=wire_case.ok("a judgment")))
        reply = _client(wire_case).complete(PROMPT)
        prompt, completion, total = wire_case.tokens
        assert reply.usage == Usage(prompt=prompt, completion=completion, total=total, cached=0)
        assert reply.cost is None

    def test_a_total_left_out_is_the_sum(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """As some OpenAI-compatible servers send it (and Anthropic always)."""

        def drop_total(
            usage: dict[str, Any], prompt: str, completion: str, total: str | None
        ) -> dict[str, Any]:
            return {k: v for k, v in usage.items() if k != total}

        judge_server.script(Scripted(body=_body(wire_case, drop_total)))
        reply = _client(wire_case).complete(PROMPT)
        prompt, completion, _ = wire_case.tokens
        assert reply.usage == Usage(prompt=prompt, completion=completion, total=prompt + completion)


class TestCached:
    """A reply served from the cache spent no new tokens: the original total is counted as cached."""

    def test_second_call_reports_cached_tokens(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        judge_server.script(Scripted(body=wire_case.ok("a judgment")))
        first = _client(wire_case, tmp_path).complete(PROMPT)
        again = _client(wire_case, tmp_path).complete(PROMPT)  # a new process: only the disk cache is shared
        assert judge_server.count == 1 and again.cached and not first.cached
        assert again.usage == Usage(prompt=0, completion=0, total=0, cached=wire_case.tokens[2])
        assert again.cost is None

    def test_cached_reply_without_counts_reports_none(
        self, wire_case: WireCase, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        judge_server.script(Scripted(body=_body(wire_case)))
        _client(wire_case, tmp_path).complete(PROMPT)
        again = _client(wire_case, tmp_path).complete(PROMPT)
        assert again.cached and again.usage is None


def _set(name: str, value: Any) -> Any:
    """A change to the usage section: the field called ``name`` (prompt, completion or total) set to ``value``."""

    def change(usage: dict[str, Any], prompt: str, completion: str, total: str | None) -> dict[str, Any]:
        field = {"prompt": prompt, "completion": completion, "total": total}[name]
        assert field is not None, "only the formats that send a total are given a total to change"
        return {**usage, field: value}

    return change


def _without(name: str) -> Any:
    def change(usage: dict[str, Any], prompt: str, completion: str, total: str | None) -> dict[str, Any]:
        field = {"prompt": prompt, "completion": completion}[name]
        return {k: v for k, v in usage.items() if k != field}

    return change


class TestUnknown:
    """Missing or malformed counts: ``usage`` is ``None`` and the reply is still served, never an error."""

    @pytest.mark.parametrize(
        "change",
        [
            pytest.param(None, id="section-missing"),
            pytest.param(lambda *_: None, id="section-null"),
            pytest.param(lambda *_: [10, 5], id="section-a-list"),
            pytest.param(lambda *_: "15 tokens", id="section-a-string"),
            pytest.param(_without("prompt"), id="prompt-missing"),
            pytest.param(_without("completion"), id="completion-missing"),
            pytest.param(_set("prompt", "10"), id="prompt-a-string"),
            pytest.param(_set("completion", 5.5), id="completion-a-fraction"),
            pytest.param(_set("completion", True), id="completion-a-bool"),
            pytest.param(_set("prompt", -1), id="prompt-negative"),
        ],
    )
    def test_none(self, change: Any, wire_case: WireCase, judge_server: JudgeServer) -> None:
        body = _body(wire_case, change)
        judge_server.script(Scripted(body=body))
        reply = _client(wire_case).complete(PROMPT)
        assert (reply.text, reply.raw, reply.usage) == ("a judgment", body, None)

    @pytest.mark.parametrize("kind", ["openai", "google"])  # Anthropic sends no total
    @pytest.mark.parametrize(
        "change",
        [
            pytest.param(_set("total", "15"), id="total-a-string"),
            pytest.param(_set("total", 1), id="total-below-its-parts"),
        ],
    )
    def test_a_bad_total_is_none(self, change: Any, kind: str, judge_server: JudgeServer) -> None:
        case = wire_cases(judge_server.url)[kind]
        body = _body(case, change)
        judge_server.script(Scripted(body=body))
        reply = _client(case).complete(PROMPT)
        assert (reply.text, reply.raw, reply.usage) == ("a judgment", body, None)
