"""The judge client against each provider's published examples (tests/fixtures/judge_client/published_examples.yaml).

test_client.py's expected bodies and its server's replies are both ours; here the request the client builds
must have the shape of the provider's published example, and the provider's published response must read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grounding_eval.files import read_yaml
from grounding_eval.judge.client import Usage
from tests.judge.conftest import JudgeServer, Scripted, WireCase
from tests.judge.test_client import PROMPT, SYSTEM, _client

PUBLISHED: dict[str, Any] = read_yaml(
    Path(__file__).resolve().parents[1] / "fixtures" / "judge_client" / "published_examples.yaml"
)


def _misfits(ours: Any, published: Any, where: str = "body") -> list[str]:
    """Where ``ours`` is not shaped as ``published``: a field it does not have, or another JSON type there."""
    if isinstance(ours, dict) and isinstance(published, dict):
        return [
            problem
            for key, value in ours.items()
            for problem in (
                _misfits(value, published[key], f"{where}.{key}")
                if key in published
                else [f"{where}.{key}: not a published field"]
            )
        ]
    if isinstance(ours, list) and isinstance(published, list) and published:
        return [problem for item in ours for problem in _misfits(item, published[-1], f"{where}[]")]
    if _json_type(ours) != _json_type(published):
        return [f"{where}: {_json_type(ours)}, published {_json_type(published)}"]
    return []


def _json_type(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    return "number" if isinstance(value, int | float) else type(value).__name__


class TestPublishedExamples:
    def test_the_request_has_the_published_shape(
        self, wire_case: WireCase, judge_server: JudgeServer
    ) -> None:
        """Every field the client sends is one the provider publishes, with its JSON type; none it needs is
        missing."""
        example = PUBLISHED[wire_case.kind]
        judge_server.script(Scripted(body=wire_case.ok("x")))
        _client(wire_case).complete(PROMPT, system=SYSTEM)
        [seen] = judge_server.requests
        assert _misfits(seen.body, {**example["request"], **example["documented"]}) == []
        assert set(example["request"]) - {"generationConfig"} <= set(seen.body)  # Gemini's config is optional

    def test_the_published_response_reads(self, wire_case: WireCase, judge_server: JudgeServer) -> None:
        """The provider's example response gives its text, its id and its token counts."""
        example = PUBLISHED[wire_case.kind]
        judge_server.script(Scripted(body=example["response"]))
        reply = _client(wire_case).complete(PROMPT)
        assert reply.text == example["reply"]["text"]
        assert reply.request_id == example["reply"]["request_id"]
        assert reply.usage == Usage(*example["reply"]["tokens"])
        assert reply.raw == example["response"]
