"""Which model judges a row, decided once in assertions/judges.cjs: promptfoo's precedence, the one switch
(which decides the endpoint too), the self-grading refusal.

Asked as the Python side asks it outside an eval (a ``type: python`` entry, the command line, ``rescore``):
through the real ``node assertions/judges.cjs --serve`` host process, with promptfoo's own context.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge import clients
from grounding_eval.judge.clients import CHEAP_PROVIDER_ENV, JUDGE_PROVIDER_ENV
from grounding_eval.judge.host import Judges, resolve_judges

REPO = Path(__file__).resolve().parents[2]
UNDER_TEST = {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": "https://gen.example/v1"}}
JS_ENTRY = "file://assertions/grounding.cjs:judge"
PY_ENTRY = "file://assertions/grounding.py:judge"


@pytest.fixture(autouse=True)
def _no_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(JUDGE_PROVIDER_ENV, raising=False)
    monkeypatch.delenv(CHEAP_PROVIDER_ENV, raising=False)
    clients.forget_clients()


def _context(
    config: dict[str, Any] | None = None,
    *,
    grader: Any = None,
    assertion: Any = None,
    entry: str = JS_ENTRY,
    under_test: Any = UNDER_TEST,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """promptfoo's context for a judge assertion: its config, and its test (with the assertion itself)."""
    config = config or {}
    own: dict[str, Any] = {"type": "python" if entry.endswith(".py:judge") else "javascript", "value": entry}
    if config:
        own["config"] = config
    if assertion is not None:
        own["provider"] = assertion
    test: dict[str, Any] = {"assert": [own], "options": {"provider": grader} if grader is not None else {},
                            "metadata": metadata or {}}  # fmt: skip
    return {"config": config, "test": test, "provider": under_test}


def _resolve(context: dict[str, Any], call: str = "judge", **kw: Any) -> Judges:
    return resolve_judges(call, context, **kw)


# (case id, env switch, config, context kwargs, expected (id, use, where))
PRECEDENCE = [
    ("switch-beats-everything", "ollama:chat:live", {"provider": "replay:r.yaml"},
     {"grader": "vertex:gemini", "assertion": "bedrock:claude"},
     ("ollama:chat:live", "live", "$GROUNDING_EVAL_JUDGE_PROVIDER")),
    ("switch-to-a-recording", "replay:r.yaml", {}, {}, ("replay:r.yaml", "replay", "$GROUNDING_EVAL_JUDGE_PROVIDER")),
    ("assertion-field-beats-grader", None, {}, {"grader": "replay:g.yaml", "assertion": "replay:a.yaml"},
     ("replay:a.yaml", "replay", "the assertion's provider")),
    ("python-entry-field-beats-grader", None, {},
     {"grader": "replay:g.yaml", "assertion": "replay:a.yaml", "entry": PY_ENTRY},
     ("replay:a.yaml", "replay", "the assertion's provider")),
    ("python-alias-field-beats-grader", None, {},
     {"grader": "replay:g.yaml", "assertion": "replay:a.yaml", "entry": "file://assertions/judge.py:get_assert"},
     ("replay:a.yaml", "replay", "the assertion's provider")),
    ("config-provider-beats-grader", None, {"provider": "replay:c.yaml"}, {"grader": "replay:g.yaml"},
     ("replay:c.yaml", "replay", "config.provider")),
    ("config-provider-object", None, {"provider": {"id": "ollama:chat:m", "config": {"temperature": 0}}}, {},
     ("ollama:chat:m", "live", "config.provider")),
    ("same-judge-twice-is-fine", None, {"provider": "replay:a.yaml"}, {"assertion": "replay:a.yaml"},
     ("replay:a.yaml", "replay", "the assertion's provider")),
    ("the-grader", None, {}, {"grader": "ollama:chat:g"}, ("ollama:chat:g", "live", "options.provider")),
    ("replay-named-by-the-grader", None, {}, {"grader": {"id": "replay:r.yaml"}}, ("replay:r.yaml", "replay", "options.provider")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("env", "config", "kwargs", "expected"), [p[1:] for p in PRECEDENCE], ids=[p[0] for p in PRECEDENCE]
)
def test_precedence(monkeypatch: pytest.MonkeyPatch, env: str | None, config: dict[str, Any],
                    kwargs: dict[str, Any], expected: tuple[str, str, str]) -> None:  # fmt: skip
    if env:
        monkeypatch.setenv(JUDGE_PROVIDER_ENV, env)
    judge = _resolve(_context(config, **kwargs)).judge
    assert (judge.id, judge.use, judge.where) == expected


@pytest.mark.parametrize(
    ("config", "kwargs", "said"),
    [
        ({}, {}, "no judge provider: set $GROUNDING_EVAL_JUDGE_PROVIDER"),
        ({"provider": "replay:c.yaml"}, {"assertion": "replay:a.yaml"}, "names two judges"),
        ({"provider": 7}, {}, "config.provider must be a provider id or {id, config}, got a int"),
        ({"provider": {"config": {}}}, {}, "config.provider must be a provider id"),
        ({}, {"assertion": ["a", "b"]}, "the assertion's provider must be a provider id"),
        ({"provider": {"id": "replay:r.yaml", "config": {"x": 1}}}, {}, "a replay: judge takes no config"),
    ],
)  # fmt: skip
def test_a_setting_that_cannot_be_used_is_one_line(
    config: dict[str, Any], kwargs: dict[str, Any], said: str
) -> None:
    with pytest.raises(ValueError) as caught:
        _resolve(_context(config, **kwargs))
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_two_assertions_with_one_config_and_two_providers_are_refused() -> None:
    context = _context({"rubric": "v3"}, assertion="replay:a.yaml")
    context["test"]["assert"].append({**context["test"]["assert"][0], "provider": "replay:b.yaml"})
    with pytest.raises(ValueError, match="two assertions with the same config name different providers"):
        _resolve(context)


def test_default_test_provider_is_named_as_the_gotcha() -> None:
    """promptfoo #10581: defaultTest.provider is the model under test, not the grader."""
    context = _context()
    context["test"]["provider"] = "openai:chat:gpt-4o"
    with pytest.raises(ValueError, match=re.escape("defaultTest.provider sets the model under test")):
        _resolve(context)


class TestSelfGrading:
    def test_the_model_under_test_at_its_endpoint_is_refused(self) -> None:
        judge = {"id": UNDER_TEST["id"], "config": {"apiBaseUrl": "https://gen.example/v1"}}
        with pytest.raises(ValueError, match=r"is the model under test.*#10581"):
            _resolve(_context({"provider": judge}))

    def test_the_same_id_at_another_endpoint_is_another_model(self) -> None:
        judge = {"id": UNDER_TEST["id"], "config": {"apiBaseUrl": "https://judge.example/v1"}}
        assert _resolve(_context({"provider": judge})).judge.id == UNDER_TEST["id"]

    def test_allowed_when_the_assertion_says_so(self) -> None:
        config = {"provider": UNDER_TEST["id"], "allow_self_grading": True}
        judge = _resolve(_context(config, under_test={"id": UNDER_TEST["id"], "config": {}})).judge
        assert judge.id == UNDER_TEST["id"]

    @pytest.mark.parametrize(("value", "allowed"), [("1", True), ("true", True), ("0", False), ("", False)])
    def test_allowed_for_a_run_by_the_users_switch(
        self, monkeypatch: pytest.MonkeyPatch, value: str, allowed: bool
    ) -> None:
        """The methods document's own study had Sonnet 4.5 grade its own answers: reproducible for one run."""
        monkeypatch.setenv("GROUNDING_EVAL_ALLOW_SELF_GRADING", value)
        context = _context({"provider": UNDER_TEST["id"]}, under_test={"id": UNDER_TEST["id"], "config": {}})
        if allowed:
            assert _resolve(context).judge.id == UNDER_TEST["id"]
        else:
            with pytest.raises(
                ValueError, match=r"is the model under test.*GROUNDING_EVAL_ALLOW_SELF_GRADING=1"
            ):
                _resolve(context)

    def test_the_run_switch_is_not_taken_from_a_studys_env_file(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """A received study's .env (which promptfoo loads into the environment) cannot allow self-grading."""
        (tmp_path / ".env").write_text("GROUNDING_EVAL_ALLOW_SELF_GRADING=1\n", encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("GROUNDING_EVAL_ALLOW_SELF_GRADING", "1")  # as promptfoo loaded it from the file
        context = _context({"provider": UNDER_TEST["id"]}, under_test={"id": UNDER_TEST["id"], "config": {}})
        with pytest.raises(ValueError, match=r"is the model under test"):
            _resolve(context)

    def test_a_recording_is_never_the_model_under_test(self) -> None:
        under = {"id": "replay:r.yaml", "config": {}}
        assert _resolve(_context({"provider": "replay:r.yaml"}, under_test=under)).judge.use == "replay"


def test_dataset_folder_fills_in_and_must_be_given() -> None:
    judge = _resolve(
        _context({"provider": {"id": "replay:{dataset}/j.yaml"}}, metadata={"dataset": "datasets/x"})
    ).judge
    assert (judge.id, judge.path, judge.dataset) == (
        "replay:datasets/x/j.yaml",
        "datasets/x/j.yaml",
        "datasets/x",
    )
    with pytest.raises(ValueError, match=re.escape("names {dataset}, but the test has no metadata.dataset")):
        _resolve(_context({"provider": "replay:{dataset}/j.yaml"}))


class TestTheSwitchDecidesTheEndpoint:
    """While $GROUNDING_EVAL_JUDGE_PROVIDER is set, a judge endpoint the config names is refused, never merged
    (issue 39: one added line, base_url, took the partner's key)."""

    @pytest.mark.parametrize(
        ("config", "kwargs", "named"),
        [
            ({"base_url": "http://127.0.0.1:9/v1"}, {}, "config.base_url"),
            ({"cheap_base_url": "http://127.0.0.1:9/v1"}, {}, "config.cheap_base_url"),
            ({"provider": {"id": "openai:chat:x", "config": {"apiBaseUrl": "http://127.0.0.1:9/v1"}}}, {},
             "config.provider.config.apiBaseUrl"),
            ({"provider": "https://127.0.0.1:9/judge"}, {}, "config.provider (a URL)"),
            ({}, {"assertion": {"id": "http", "config": {"url": "http://127.0.0.1:9/judge"}}},
             "the assertion's provider.config.url"),
            ({}, {"assertion": {"id": "openai:chat:x", "config": {"apiBaseUrl": "http://127.0.0.1:9/v1"}},
                  "entry": PY_ENTRY}, "the assertion's provider.config.apiBaseUrl"),
        ],
    )  # fmt: skip
    def test_a_named_endpoint_is_refused_in_one_line(
        self, monkeypatch: pytest.MonkeyPatch, config: dict[str, Any], kwargs: dict[str, Any], named: str
    ) -> None:
        monkeypatch.setenv(JUDGE_PROVIDER_ENV, "openai:chat:gpt-4o-mini")
        for call in ("judge", "factuality", "docs_qa"):
            entry = kwargs.get("entry", JS_ENTRY).replace(":judge", f":{call}")
            with pytest.raises(ValueError) as caught:
                _resolve(_context(config, **{**kwargs, "entry": entry}), call)
            said = str(caught.value)
            assert said.startswith(f"{named} names a judge endpoint (") and "refused, not merged" in said
            assert "\n" not in said

    def test_without_the_switch_base_url_is_the_judges_own_endpoint(self) -> None:
        judge = _resolve(_context({"provider": "openai:chat:m", "base_url": "http://127.0.0.1:9/v1"})).judge
        assert (judge.use, judge.host) == ("live", "127.0.0.1:9")

    def test_the_switchs_own_endpoint_is_recorded(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(JUDGE_PROVIDER_ENV, "openai:chat:gpt-4o-mini")
        assert _resolve(_context()).judge.host == "api.openai.com"

    def test_the_command_lines_judge_takes_its_base_url(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(JUDGE_PROVIDER_ENV, "openai:chat:gpt-4o-mini")
        override = {"provider": "openai:chat:m", "base_url": "http://127.0.0.1:9/v1"}
        assert _resolve({}, override=override).judge.host == "127.0.0.1:9"
        with pytest.raises(ValueError, match="--base-url needs --judge"):
            monkeypatch.delenv(JUDGE_PROVIDER_ENV)
            _resolve({}, override={"base_url": "http://127.0.0.1:9/v1"})


class TestTheCheapStage:
    def test_named_by_the_config(self) -> None:
        judges = _resolve(
            _context({"provider": "replay:c.yaml", "cheap_provider": "replay:k.yaml"}), "factuality"
        )
        assert judges.cheap is not None and (judges.cheap.id, judges.cheap.where) == (
            "replay:k.yaml",
            "config.cheap_provider",
        )

    def test_off_when_the_switch_names_the_judge(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(JUDGE_PROVIDER_ENV, "replay:live.yaml")
        judges = _resolve(_context({"cheap_provider": "replay:k.yaml"}), "factuality")
        assert judges.judge.id == "replay:live.yaml" and judges.cheap is None

    def test_its_own_switch(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv(CHEAP_PROVIDER_ENV, "replay:cheap.yaml")
        judges = _resolve(
            _context({"provider": "replay:c.yaml", "cheap_provider": "replay:k.yaml"}), "factuality"
        )
        assert judges.cheap is not None and judges.cheap.id == "replay:cheap.yaml"

    def test_only_the_factual_accuracy_judge_has_one(self) -> None:
        assert (
            _resolve(_context({"provider": "replay:c.yaml", "cheap_provider": "replay:k.yaml"})).cheap is None
        )


def test_a_label_keeps_no_userinfo_or_query() -> None:
    url = "https://user:pw-123456@127.0.0.1:9/judge?key=abcdef123456"
    judge = _resolve(_context({"provider": {"id": url, "config": {"body": {"p": "{{prompt}}"}}}})).judge
    assert (judge.id, judge.host) == ("https://127.0.0.1:9/judge", "127.0.0.1:9")
    with pytest.raises(ValueError) as caught:  # promptfoo's own message quotes the URL: scrubbed too
        _resolve(_context({"provider": {"id": url, "config": {}}}))
    assert "pw-123456" not in str(caught.value) and "abcdef123456" not in str(caught.value)
