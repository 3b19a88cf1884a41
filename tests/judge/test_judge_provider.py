"""Which model judges a row: promptfoo's precedence, the one switch, and the self-grading refusal.

The context is promptfoo's assertion context as ``assertions/grounding.cjs`` forwards it: the test's
``options.provider`` (``defaultTest.options.provider`` / ``--grader``) described as plain data, and
``grounding_eval_host`` with the assertion's own ``provider`` and the model under test.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge.host import HostJudgeClient, hosting
from grounding_eval.promptfoo import judge_provider
from grounding_eval.promptfoo.judge_provider import JUDGE_PROVIDER_ENV, choose_judge, judge_client

REPO = Path(__file__).resolve().parents[2]
UNDER_TEST = {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": "https://gen.example/v1"}}


@pytest.fixture(autouse=True)
def _no_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(JUDGE_PROVIDER_ENV, raising=False)
    judge_provider._built_client.cache_clear()


def _context(
    *,
    grader: Any = None,
    assertion: Any = None,
    under_test: Any = UNDER_TEST,
    same_object: bool = False,
    hosted: bool = True,
) -> dict[str, Any]:
    context: dict[str, Any] = {"test": {"options": {"provider": grader} if grader is not None else {}}}
    if hosted:
        context["grounding_eval_host"] = {"protocol": 1, "assertion_provider": assertion, "grader": grader,
                                          "under_test": under_test, "grader_is_under_test": same_object}  # fmt: skip
    return context


# (case id, env switch, config, context kwargs, expected (id, use, where))
PRECEDENCE = [
    ("switch-beats-everything", "ollama:chat:live", {"provider": "replay:r.yaml"},
     {"grader": {"id": "vertex:gemini"}, "assertion": {"id": "bedrock:claude"}},
     ("ollama:chat:live", "spec", "$GROUNDING_EVAL_JUDGE_PROVIDER")),
    ("switch-to-a-recording", "replay:r.yaml", {}, {}, ("replay:r.yaml", "replay", "$GROUNDING_EVAL_JUDGE_PROVIDER")),
    ("assertion-field-beats-grader", None, {}, {"grader": {"id": "vertex:gemini"}, "assertion": {"id": "bedrock:claude"}},
     ("bedrock:claude", "assertion", "the assertion's provider")),
    ("config-provider-beats-grader", None, {"provider": "azure:chat:dep"}, {"grader": {"id": "vertex:gemini"}},
     ("azure:chat:dep", "spec", "config.provider")),
    ("config-provider-object", None, {"provider": {"id": "openrouter:m", "config": {"temperature": 0}}}, {},
     ("openrouter:m", "spec", "config.provider")),
    ("same-judge-twice-is-fine", None, {"provider": "bedrock:claude"}, {"assertion": {"id": "bedrock:claude"}},
     ("bedrock:claude", "assertion", "the assertion's provider")),
    ("grader-held-by-promptfoo", None, {}, {"grader": {"id": "vertex:gemini", "loaded": True}},
     ("vertex:gemini", "grader", "options.provider")),
    ("grader-outside-promptfoos-node", None, {}, {"grader": "openai:chat:judge", "hosted": False},
     ("openai:chat:judge", "spec", "options.provider")),
    ("replay-named-by-the-grader", None, {}, {"grader": {"id": "replay:r.yaml"}}, ("replay:r.yaml", "replay", "options.provider")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("env", "config", "kwargs", "expected"), [p[1:] for p in PRECEDENCE], ids=[p[0] for p in PRECEDENCE]
)
def test_precedence(monkeypatch: pytest.MonkeyPatch, env: str | None, config: dict[str, Any],
                    kwargs: dict[str, Any], expected: tuple[str, str, str]) -> None:  # fmt: skip
    if env:
        monkeypatch.setenv(JUDGE_PROVIDER_ENV, env)
    choice = choose_judge(config, _context(**kwargs), {})
    assert choice is not None
    assert (choice.id, choice.use, choice.where) == expected


@pytest.mark.parametrize(
    ("config", "kwargs", "said"),
    [
        ({}, {}, "no judge provider: set $GROUNDING_EVAL_JUDGE_PROVIDER"),
        ({"provider": "azure:chat:a"}, {"assertion": {"id": "bedrock:b"}}, "names two judges"),
        ({"provider": 7}, {}, "config.provider must be a provider id or {id, config}, got a int"),
        ({"provider": {"config": {}}}, {}, "config.provider must be a provider id"),
        ({}, {"assertion": {"malformed": True, "type": "array"}}, "the assertion's provider must be a provider id"),
        ({}, {"assertion": {"error": "two assertions with the same config name different providers"}},
         "two assertions with the same config"),
        ({"provider": {"id": "replay:r.yaml", "config": {"x": 1}}}, {}, "a replay: judge takes no config"),
    ],
)  # fmt: skip
def test_a_setting_that_cannot_be_used_is_one_line(
    config: dict[str, Any], kwargs: dict[str, Any], said: str
) -> None:
    with pytest.raises(ValueError) as caught:
        choose_judge(config, _context(**kwargs), {})
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_default_test_provider_is_named_as_the_gotcha() -> None:
    """promptfoo #10581: defaultTest.provider is the model under test, not the grader."""
    context = _context()
    context["test"]["provider"] = "openai:chat:gpt-4o"
    with pytest.raises(ValueError, match=re.escape("defaultTest.provider sets the model under test")):
        choose_judge({}, context, {})


class TestSelfGrading:
    def test_the_model_under_test_at_its_endpoint_is_refused(self) -> None:
        judge = {"id": UNDER_TEST["id"], "config": {"apiBaseUrl": "https://gen.example/v1"}}
        with pytest.raises(ValueError, match=r"is the model under test.*#10581"):
            choose_judge({"provider": judge}, _context(), {})

    def test_the_same_provider_object_is_refused(self) -> None:
        with pytest.raises(ValueError, match="is the model under test"):
            choose_judge({}, _context(grader={"id": "vertex:gemini", "loaded": True}, same_object=True), {})

    def test_the_same_id_at_another_endpoint_is_another_model(self) -> None:
        judge = {"id": UNDER_TEST["id"], "config": {"apiBaseUrl": "https://judge.example/v1"}}
        choice = choose_judge({"provider": judge}, _context(), {})
        assert choice is not None and choice.id == UNDER_TEST["id"]

    def test_allowed_when_the_assertion_says_so(self) -> None:
        choice = choose_judge({"provider": UNDER_TEST["id"], "allow_self_grading": True},
                              _context(under_test={"id": UNDER_TEST["id"], "config": {}}), {})  # fmt: skip
        assert choice is not None and choice.id == UNDER_TEST["id"]

    def test_a_recording_is_never_the_model_under_test(self) -> None:
        under = {"id": "replay:r.yaml", "config": {}}
        choice = choose_judge({"provider": "replay:r.yaml"}, _context(under_test=under), {})
        assert choice is not None and choice.use == "replay"


def test_dataset_folder_fills_in_and_must_be_given() -> None:
    choice = choose_judge(
        {"provider": {"id": "replay:{dataset}/j.yaml"}}, _context(), {"dataset": "datasets/x"}
    )
    assert choice is not None and (choice.id, choice.spec) == (
        "replay:datasets/x/j.yaml",
        "replay:datasets/x/j.yaml",
    )
    with pytest.raises(ValueError, match=re.escape("names {dataset}, but the test has no metadata.dataset")):
        choose_judge({"provider": "replay:{dataset}/j.yaml"}, _context(), {})


class _Channel:
    def ask(self, request: Any) -> Any:
        return {"output": "{}", "token_usage": {"total": 3}}


class TestClientFor:
    def test_inside_an_eval_any_id_goes_through_promptfoo(self, tmp_path: Path) -> None:
        choice = choose_judge({"provider": "bedrock:anthropic.claude-x"}, _context(), {})
        assert choice is not None
        with hosting(_Channel()):
            client = judge_client(choice, str(tmp_path), None, 120.0, 4)
        assert isinstance(client, HostJudgeClient) and client.provider_id == "bedrock:anthropic.claude-x"

    def test_outside_an_eval_the_direct_client_names_what_it_serves(self, tmp_path: Path) -> None:
        from grounding_eval.judge.client import JudgeConfigError

        choice = choose_judge({"provider": "bedrock:anthropic.claude-x"}, _context(hosted=False), {})
        assert choice is not None
        with pytest.raises(
            JudgeConfigError,
            match=re.escape("unknown judge provider 'bedrock:anthropic.claude-x'; supported"),
        ):
            judge_client(choice, str(tmp_path), None, 120.0, 4)

    def test_the_grader_promptfoo_loaded_needs_promptfoos_node(self, tmp_path: Path) -> None:
        from grounding_eval.judge.client import JudgeConfigError

        choice = choose_judge({}, _context(grader={"id": "vertex:g", "loaded": True}), {})
        assert choice is not None and choice.use == "grader"
        with pytest.raises(
            JudgeConfigError, match=re.escape("reached only through file://assertions/grounding.cjs")
        ):
            judge_client(choice, str(tmp_path), None, 120.0, 4)

    def test_base_url_becomes_the_providers_api_base_url(self, tmp_path: Path) -> None:
        seen: list[Any] = []

        class Recording:
            def ask(self, request: Any) -> Any:
                seen.append(request)
                return {"output": "ok"}

        choice = choose_judge({"provider": "openai:chat:m"}, _context(), {})
        assert choice is not None
        with hosting(Recording()):
            judge_client(choice, str(tmp_path), "http://127.0.0.1:1234/v1", 120.0, 4).complete("p")
        assert seen[0]["spec"] == {
            "id": "openai:chat:m",
            "config": {"apiBaseUrl": "http://127.0.0.1:1234/v1"},
        }
