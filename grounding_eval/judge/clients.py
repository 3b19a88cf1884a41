"""The judges of a row and their clients: what ``assertions/judges.cjs`` resolved, as the Python judges use it.

Which model judges is decided once, in Node (``assertions/judges.cjs``; docs/how-to/judge-provider.md),
in promptfoo's precedence: ``$GROUNDING_EVAL_JUDGE_PROVIDER`` (which then decides the endpoint too: a judge
endpoint the config names is refused), the assertion's own ``provider`` (or ``config.provider``), then
the test's ``options.provider`` (``defaultTest.options.provider`` / ``--grader``). Every judge (rubric,
factual accuracy, docs-QA) reads its :class:`~grounding_eval.judge.host.Judges` here
(:func:`judges_for`) and gets its client (:func:`judge_client`): a recording (``replay:``, read here and
never a model) or :class:`~grounding_eval.judge.host.HostJudgeClient` (promptfoo's provider, reached
through Node).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Final

from grounding_eval.calls import worst_case_seconds
from grounding_eval.files import check_inside
from grounding_eval.judge.calls import JudgeConfigError, ReplayJudgeClient, load_replay_fixtures
from grounding_eval.judge.host import HostJudgeClient, Judge, Judges, resolve_judges

__all__ = [
    "CHEAP_PROVIDER_ENV",
    "JUDGE_PROVIDER_ENV",
    "Judge",
    "Judges",
    "forget_clients",
    "judge_client",
    "judges_for",
]

JUDGE_PROVIDER_ENV: Final = "GROUNDING_EVAL_JUDGE_PROVIDER"
CHEAP_PROVIDER_ENV: Final = "GROUNDING_EVAL_FACTUALITY_CHEAP_PROVIDER"
# A judge outside the models providers/live.yaml puts under test (docs/how-to/run-live.md recommends one).
_LIVE_JUDGE_EXAMPLE: Final = "openai:chat:gpt-4.1"


def judges_for(
    call: str, context: Mapping[str, Any], *, override: Mapping[str, Any] | None = None, check: bool = False
) -> Judges:
    """The judges of ``call`` for this row (:func:`grounding_eval.judge.host.resolve_judges`).

    Raises:
        ValueError: The judge cannot be used (one line naming the setting).
        JudgeError: Node could not be reached.
    """
    return resolve_judges(call, context, override=override, check=check)


def judge_client(judge: Judge, cache_dir: str | None, timeout: float, max_retries: int) -> Any:
    """The client for ``judge``: its recorded replies (restarted for every row), or the live judge
    through promptfoo's providers, one call bounded by ``timeout`` × (``max_retries`` + 1) and the waits.

    Raises:
        JudgeConfigError: A bad option.
        DataError: A recording is missing, malformed, or outside the dataset folder it was named in.
    """
    if judge.use == "replay":
        client = _replay_client(judge.id, judge.path or "", judge.dataset)
        assert isinstance(client, ReplayJudgeClient)
        return client.restarted()
    if not (isinstance(timeout, int | float) and timeout > 0) or max_retries < 0:
        raise JudgeConfigError(f"judge provider {judge.id}: timeout must be > 0 and max_retries ≥ 0")
    deadline = worst_case_seconds(timeout=timeout, max_retries=max_retries)
    return _live_client(judge, cache_dir, deadline)


@cache
def _replay_client(provider_id: str, path: str, dataset: str | None) -> Any:
    if not path.strip():
        raise JudgeConfigError(f"judge provider {provider_id!r}: replay needs a fixture file path")
    if dataset and Path(path).exists():  # the dataset's recordings never come from elsewhere
        check_inside(path, dataset)
    return ReplayJudgeClient(provider_id, path, load_replay_fixtures(path))


@cache
def _live_client(judge: Judge, cache_dir: str | None, deadline: float) -> Any:
    return HostJudgeClient(judge, cache_dir=Path(cache_dir) if cache_dir else None, deadline_s=deadline)


def forget_clients() -> None:
    """Forget this process's judge clients (a new process's state: recordings read again)."""
    _replay_client.cache_clear()
    _live_client.cache_clear()
