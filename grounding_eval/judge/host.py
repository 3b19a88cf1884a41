"""A judge model reached through promptfoo's own providers, from inside an eval.

Inside ``promptfoo eval`` the pack's Python workers are children of promptfoo's Node process
(``assertions/grounding.cjs``). A judge there does not speak any wire format itself: it asks that
process for a model call over the worker's pipe, and promptfoo's provider loader
(``loadApiProvider``) makes it — so any provider id or ``{id, config}`` promptfoo accepts
(``bedrock:``, ``vertex:``, ``azure:``, ``ollama:``, ``openrouter:``, ``http:``, ``file://…``) grades,
with promptfoo's keys, retries and cost table, and the tokens it reports come back with the reply.

:class:`HostJudgeClient` is that judge, behind the same :class:`~grounding_eval.judge.client.JudgeClient`
protocol as the direct client, so the judge loop (:mod:`grounding_eval.judge.pipeline`) does not know
which one it has. promptfoo's own cache is bypassed (the library copy the pack loads is not the CLI's,
and ``--no-cache`` does not reach it); the pack's reply cache (:mod:`grounding_eval.judge.cache`) keeps
replies that parse, keyed by the provider, a digest of its config, the system text and the prompt. A
cached reply reports 0 new tokens and its original count as cached, as promptfoo ≥ 0.122 does.

The worker opens the channel for the call it is grading (:func:`hosting`); outside it (the
``grounding-eval`` CLI) there is none, and the direct client is used instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from grounding_eval.judge._redact import MIN_SECRET_CHARS, SECRET_NAME, redact, secret_pattern
from grounding_eval.judge.cache import ReplyCache
from grounding_eval.judge.client import JudgeError, JudgeReply, Usage

__all__ = ["HostChannel", "HostJudgeClient", "current_host", "hosting"]


class HostChannel(Protocol):
    """The worker's pipe to promptfoo's Node process: one model call out, its reply back."""

    def ask(self, request: Mapping[str, Any]) -> Mapping[str, Any]:
        """Send ``request`` (``use``, ``spec``, ``prompt``, ``system``, ``deadline_s``) and return the
        reply (``output``, ``token_usage``, ``cost``, or ``error``).

        Raises:
            OSError: The pipe closed (promptfoo has gone).
        """
        ...


_host_lock = threading.Lock()
_host: HostChannel | None = None


@contextlib.contextmanager
def hosting(channel: HostChannel | None) -> Iterator[None]:
    """Make ``channel`` the judges' way to promptfoo while one call is graded (``None``: no way, as in
    promptfoo's own Python)."""
    global _host
    with _host_lock:
        previous, _host = _host, channel
    try:
        yield
    finally:
        with _host_lock:
            _host = previous


def current_host() -> HostChannel | None:
    """The channel of the call being graded, or ``None`` outside an eval's worker."""
    return _host


class HostJudgeClient:
    """A judge model promptfoo calls for us (see the module docstring).

    Args:
        provider_id: The provider's id, as the row's evidence names it.
        use: Which provider the Node side uses: ``"spec"`` (load ``spec``), or ``"assertion"`` /
            ``"grader"``, the assertion's ``provider`` or the test's ``options.provider`` promptfoo
            already holds for the row (``--grader`` loads one).
        spec: The provider id or ``{id, config, …}`` to load when ``use`` is ``"spec"``; the row's
            description otherwise (only its digest is kept).
        cache_dir: Where parsed replies are cached; ``None`` for no cache.
        deadline_s: The most one model call may take, the provider's own retries included.
    """

    def __init__(
        self,
        provider_id: str,
        *,
        use: str,
        spec: str | Mapping[str, Any],
        cache_dir: Path | None,
        deadline_s: float,
    ) -> None:
        self.provider_id = provider_id
        self.model = provider_id
        self._use = use
        self._spec = spec if isinstance(spec, str) else dict(spec)
        self._config_sha256 = hashlib.sha256(
            json.dumps(self._spec, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8", "replace")
        ).hexdigest()
        self._deadline = float(deadline_s)
        self._cache = ReplyCache(cache_dir) if cache_dir is not None else None
        if cache_dir is not None:
            cache_dir.mkdir(parents=True, exist_ok=True)
        self._secrets = [p for p in map(secret_pattern, _secrets(self._spec)) if p is not None]

    def __repr__(self) -> str:
        return f"HostJudgeClient({self.provider_id!r}, use={self._use!r})"

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        fixture_key: str | None = None,
        accept: Callable[[str], bool] | None = None,
    ) -> JudgeReply:
        """Return the model's reply, from the pack's cache if this exact request was answered and kept.

        Raises:
            JudgeError: No promptfoo to ask (outside an eval), the pipe closed, or the provider failed
                (its error, scrubbed of keys, in one line).
        """
        del fixture_key  # a live model needs none
        started = time.perf_counter()
        system = system or None
        fields = {"transport": "promptfoo", "provider": self.provider_id, "config_sha256": self._config_sha256,
                  "system": system, "prompt": prompt}  # fmt: skip
        if self._cache is not None:
            hit = self._cache.get(fields)
            if hit is not None:
                if accept is None or accept(hit.text):
                    usage = Usage.from_promptfoo((hit.raw or {}).get("token_usage"))
                    cached = usage.as_cached() if usage is not None else None  # counts unknown: None
                    return self._reply(hit.text, started, cached=True, usage=cached)
                self._cache.discard(fields)
        host = current_host()
        if host is None:
            raise self._error("promptfoo's providers are reached only inside promptfoo eval")
        request = {"use": self._use, "spec": self._spec if self._use == "spec" else None, "prompt": prompt,
                   "system": system, "deadline_s": self._deadline}  # fmt: skip
        try:
            answer = host.ask(request)
        except OSError as exc:
            raise self._error(f"promptfoo could not be asked: {exc}") from None
        if "error" in answer or not isinstance(answer.get("output"), str):
            raise self._error(str(answer.get("error") or "the provider returned no text"))
        text = self._scrub(answer["output"])
        usage = Usage.from_promptfoo(answer.get("token_usage"))
        cost = answer.get("cost")
        cost = float(cost) if isinstance(cost, int | float) and math.isfinite(cost) and cost >= 0 else None
        if self._cache is not None and (accept is None or accept(text)):
            raw = {"token_usage": dataclasses.asdict(usage) if usage else None, "cost": cost}
            self._cache.put(fields, text=text, raw=raw, request_id=None)
        return self._reply(text, started, cached=False, usage=usage, cost=cost, attempts=1)

    def _reply(
        self, text: str, started: float, *, cached: bool, usage: Usage | None, cost: float | None = None,
        attempts: int = 0,
    ) -> JudgeReply:  # fmt: skip
        return JudgeReply(
            text=text,
            provider=self.provider_id,
            model=self.model,
            cached=cached,
            attempts=attempts,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            raw=None,
            request_id=None,
            usage=usage,
            cost=cost,
        )

    def _scrub(self, text: str) -> str:
        for pattern in self._secrets:
            text = redact(text, pattern)
        return text

    def _error(self, message: str) -> JudgeError:
        return JudgeError(
            self._scrub(message), provider=self.provider_id, model=self.model, status=None, attempts=1
        )


def _secrets(spec: object) -> list[str]:
    """Values that must never come back in a reply or an error: the keys in the provider's config and
    the process's key-like variables (promptfoo's providers read their keys from there)."""
    found: list[str] = []

    def visit(value: object, name: str = "") -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                visit(v, str(k))
        elif isinstance(value, list):
            for v in value:
                visit(v, name)
        elif isinstance(value, str) and SECRET_NAME.search(name) and len(value) >= MIN_SECRET_CHARS:
            found.append(value)

    visit(spec)
    found += [v for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v) >= MIN_SECRET_CHARS]
    return sorted(set(found))
