"""Which model judges a row, named the promptfoo way, and the client that asks it.

Every judge (rubric, factual accuracy, docs-QA) chooses its provider here, in promptfoo's precedence:

1. ``$GROUNDING_EVAL_JUDGE_PROVIDER`` — the one switch that overrides whatever the config names, a
   recorded (``replay:``) judge included: how a shipped offline config is run with a live judge;
2. the assertion's own ``provider`` (promptfoo's field; ``assertions/grounding.cjs`` finds it, since
   promptfoo does not pass it to a javascript assertion) or its ``config.provider`` (the pack's older
   spelling; naming two different ones is an error);
3. the test's ``options.provider``: ``defaultTest.options.provider`` or ``--grader``.

A provider is any id or ``{id, config}`` promptfoo accepts, plus the pack's ``replay:<file>`` (recorded
judge replies, never a model). ``{dataset}`` in an id stands for the test's dataset folder. Inside an
eval, a live judge is called through promptfoo's own provider loader
(:class:`~grounding_eval.judge.host.HostJudgeClient`); outside (the Python entry files, the CLI) the
pack's direct client serves the forms it knows (:data:`~grounding_eval.judge.client.SUPPORTED_FORMS`).

A judge that is the model under test (the same provider object, or the same id at the same endpoint) would grade
itself — promptfoo's own gotcha (#10581: ``defaultTest.provider`` sets the model under test, not the
grader). It is refused unless the assertion says ``allow_self_grading: true``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final, Literal

__all__ = ["JUDGE_PROVIDER_ENV", "JudgeChoice", "choose_judge", "judge_client", "with_dataset"]

JUDGE_PROVIDER_ENV: Final = "GROUNDING_EVAL_JUDGE_PROVIDER"
_LIVE_JUDGE_EXAMPLE: Final = "anthropic:messages:claude-sonnet-4-5-20250929"


@dataclass(frozen=True)
class JudgeChoice:
    """The judge a row uses.

    Attributes:
        id: The provider id, as the row's evidence and the report name it.
        use: ``replay`` (recorded replies), ``spec`` (load ``spec``), or the provider promptfoo already
            holds for the row: ``assertion`` (the assertion's ``provider``) or ``grader``
            (``options.provider``, which ``--grader`` loads).
        spec: The id or ``{id, config, …}`` to load.
        where: Where it was set, for messages.
    """

    id: str
    use: Literal["replay", "spec", "assertion", "grader"]
    spec: str | dict[str, Any]
    where: str


def choose_judge(
    config: dict[str, Any],
    context: dict[str, Any],
    metadata: dict[str, Any],
    *,
    key: str = "provider",
    required: bool = True,
) -> JudgeChoice | None:
    """The row's judge (see the module docstring for the precedence).

    Args:
        config: The assertion's config.
        context: promptfoo's assertion context (``test``, ``provider``, and ``grounding_eval_host``
            when ``assertions/grounding.cjs`` forwarded it).
        metadata: The test's metadata (``dataset`` for ``{dataset}``).
        key: The config key naming this judge (``cheap_provider`` for the factual-accuracy judge's
            first stage, which only the config names).
        required: Whether having no judge is an error (else ``None``).

    Raises:
        ValueError: No judge named (and ``required``), a malformed setting, two settings that disagree,
            or a judge that is the model under test.
    """
    given_host, given_test = context.get("grounding_eval_host"), context.get("test")
    host: dict[str, Any] = given_host if isinstance(given_host, dict) else {}
    test: dict[str, Any] = given_test if isinstance(given_test, dict) else {}
    choice: JudgeChoice | None = None
    env = os.environ.get(JUDGE_PROVIDER_ENV, "").strip()
    if key != "provider":
        own = config.get(key)
        choice = _from_setting(own, f"config.{key}") if own else None
    elif env:
        choice = _from_setting(env, f"${JUDGE_PROVIDER_ENV}")
    else:
        assertion = host.get("assertion_provider")
        if isinstance(assertion, dict) and "error" in assertion:
            raise ValueError(f"the assertion's provider: {assertion['error']}")
        own_config = config.get("provider")
        from_assertion = _described(assertion, "assertion", "the assertion's provider") if assertion else None
        from_config = _from_setting(own_config, "config.provider") if own_config else None
        if from_assertion and from_config and from_assertion.id != from_config.id:
            raise ValueError(
                f"the assertion names two judges: provider {from_assertion.id!r} and config.provider "
                f"{from_config.id!r}; keep one"
            )
        choice = from_assertion or from_config
        if choice is None:
            grader = (
                (test.get("options") or {}).get("provider") if isinstance(test.get("options"), dict) else None
            )
            if grader:
                if "grounding_eval_host" in context:
                    choice = _described(grader, "grader", "options.provider")
                else:
                    choice = _from_setting(grader, "options.provider")
    if choice is None:
        if not required:
            return None
        hint = (
            " (defaultTest.provider sets the model under test, not the grader: use defaultTest.options.provider)"
            if test.get("provider")
            else ""
        )
        raise ValueError(
            f"no judge provider: set ${JUDGE_PROVIDER_ENV}, the assertion's provider, or "
            f"defaultTest.options.provider / --grader (e.g. {_LIVE_JUDGE_EXAMPLE}){hint}"
        )
    choice = _dataset_filled(choice, metadata)
    if choice.use != "replay" and not config.get("allow_self_grading"):
        _refuse_self_grading(choice, host, context)
    return choice


def _from_setting(value: object, where: str) -> JudgeChoice:
    """A judge named by an id or ``{id, config, …}`` in a config or the environment."""
    if isinstance(value, str) and value.strip():
        text = value.strip()
        return JudgeChoice(text, "replay" if text.startswith("replay:") else "spec", text, where)
    if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"].strip():
        spec = dict(value)
        if str(spec["id"]).startswith("replay:"):
            if set(spec) - {"id", "label"}:
                raise ValueError(f"{where}: a replay: judge takes no config")
            return JudgeChoice(spec["id"], "replay", spec["id"], where)
        return JudgeChoice(spec["id"], "spec", spec, where)
    raise ValueError(f"{where} must be a provider id or {{id, config}}, got {_shape(value)}")


def _described(value: object, use: Literal["assertion", "grader"], where: str) -> JudgeChoice:
    """A judge described by ``assertions/grounding.cjs``: the provider promptfoo holds for the row."""
    if isinstance(value, dict) and value.get("malformed"):
        raise ValueError(f"{where} must be a provider id or {{id, config}}, got a {value.get('type')}")
    if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"].strip():
        pid = value["id"].strip()
        if pid.startswith("replay:"):
            return JudgeChoice(pid, "replay", pid, where)
        return JudgeChoice(
            pid, use, {k: v for k, v in value.items() if k in ("id", "label", "config")}, where
        )
    return _from_setting(value, where)


def _dataset_filled(choice: JudgeChoice, metadata: dict[str, Any]) -> JudgeChoice:
    filled = with_dataset(choice.id, metadata, "judge provider")
    if filled == choice.id:
        return choice
    spec = filled if isinstance(choice.spec, str) else {**choice.spec, "id": filled}
    return JudgeChoice(filled, choice.use, spec, choice.where)


def _refuse_self_grading(choice: JudgeChoice, host: dict[str, Any], context: dict[str, Any]) -> None:
    under = host.get("under_test")
    if not isinstance(under, dict):
        provider = context.get("provider")
        under = {"id": provider.get("id")} if isinstance(provider, dict) else None
    same_object = choice.use in ("assertion", "grader") and bool(host.get("grader_is_under_test"))
    own_config = choice.spec.get("config") if isinstance(choice.spec, dict) else None
    same_model = (
        isinstance(under, dict)
        and under.get("id") == choice.id
        and (_endpoint(own_config) == _endpoint(under.get("config")))
    )
    if same_object or same_model:
        raise ValueError(
            f"the judge {choice.id!r} ({choice.where}) is the model under test, which would grade its own "
            "answers (promptfoo #10581: defaultTest.provider sets the model under test, "
            "defaultTest.options.provider the grader); name another judge, or set allow_self_grading: true"
        )


# A model is its id at an endpoint: the same id on another server is another model.
_ENDPOINT_KEYS: Final = ("apiBaseUrl", "apiHost", "baseUrl", "url", "region", "projectId")


def _endpoint(config: object) -> str:
    config = config if isinstance(config, dict) else {}
    return json.dumps({k: config.get(k) for k in _ENDPOINT_KEYS}, sort_keys=True, default=str)


def _shape(value: object) -> str:
    return "an empty value" if value in ("", None) else f"a {type(value).__name__}"


def with_dataset(provider: str, metadata: dict[str, Any], what: str) -> str:
    """``provider`` with ``{dataset}`` replaced by the test's ``metadata.dataset``: recorded replies that
    travel with the dataset. A replay file found there must lie inside that dataset folder.

    Raises:
        ValueError: ``{dataset}`` used where the test names no dataset.
        DataError: The replay file resolves outside the dataset folder.
    """
    if "{dataset}" not in provider:
        return provider
    dataset = str(metadata.get("dataset") or "")
    if not dataset:
        raise ValueError(f"{what} {provider!r} names {{dataset}}, but the test has no metadata.dataset")
    provider = provider.replace("{dataset}", dataset)
    kind, _, path = provider.partition(":")
    if kind == "replay" and Path(path).exists():  # the dataset's recordings never come from elsewhere
        from grounding_eval.files import check_inside

        check_inside(path, dataset)
    return provider


def judge_client(
    choice: JudgeChoice | str,
    cache_dir: str,
    base_url: str | None,
    timeout: float,
    max_retries: int,
) -> Any:
    """The client for ``choice``: recorded replies, promptfoo's provider (inside an eval) or the direct
    client (outside). Built once per process; a replay client restarted per row.

    Raises:
        JudgeConfigError: The direct client cannot serve the provider, or a bad option.
        DataError: A replay file is missing or malformed.
    """
    from grounding_eval.judge.client import ReplayJudgeClient
    from grounding_eval.judge.host import current_host
    from grounding_eval.promptfoo.preflight import note_judge

    if isinstance(choice, str):
        choice = _from_setting(choice, "the judge")
    note_judge(choice)
    hosted = choice.use != "replay" and current_host() is not None
    spec = json.dumps(choice.spec, sort_keys=True, default=str)
    client = _built_client(choice.id, choice.use, spec, hosted, cache_dir, base_url, timeout, max_retries)
    return client.restarted() if isinstance(client, ReplayJudgeClient) else client


@cache
def _built_client(
    provider: str,
    use: str,
    spec_json: str,
    hosted: bool,
    cache_dir: str,
    base_url: str | None,
    timeout: float,
    max_retries: int,
) -> Any:
    from grounding_eval.judge.client import JudgeConfigError, make_client, worst_case_seconds

    spec = json.loads(spec_json)
    if hosted:
        from grounding_eval.judge.host import HostJudgeClient

        if not (isinstance(timeout, int | float) and timeout > 0) or max_retries < 0:
            raise JudgeConfigError(f"judge provider {provider}: timeout must be > 0 and max_retries ≥ 0")
        if base_url:  # the pack's older setting: the provider's own apiBaseUrl, unless it names one
            spec = {"id": spec} if isinstance(spec, str) else spec
            if use != "spec":
                raise JudgeConfigError(
                    f"judge provider {provider}: config.base_url cannot change the provider promptfoo "
                    "loaded; give the provider as {id, config: {apiBaseUrl}}"
                )
            spec = {**spec, "config": {"apiBaseUrl": base_url, **(spec.get("config") or {})}}
        deadline = worst_case_seconds(timeout=timeout, max_retries=max_retries, backoff_max=30.0)
        return HostJudgeClient(provider, use=use, spec=spec, cache_dir=Path(cache_dir), deadline_s=deadline)
    if use in ("assertion", "grader"):
        raise JudgeConfigError(
            f"judge provider {provider}: the provider promptfoo loaded is reached only through "
            "file://assertions/grounding.cjs (the Python entry files call the direct client)"
        )
    if isinstance(spec, dict):
        config = spec.get("config") or {}
        base_url = base_url or (config.get("apiBaseUrl") if isinstance(config, dict) else None)
        spec = spec["id"]
    return make_client(
        spec, cache_dir=Path(cache_dir), base_url=base_url, timeout=timeout, max_retries=max_retries
    )
