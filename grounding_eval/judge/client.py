"""One small client for every judge model: promptfoo-style provider ids, retries, and a reply cache.

The rubric judge needs exactly one operation — "send this prompt, give me the text back" — from whichever
model a round uses, plus recorded replies so an evaluation runs offline. Provider SDKs would add three
heavy dependencies with three retry policies; the three wire formats (:mod:`._wire`) are small, and one
retry loop and one cache (:mod:`.cache`) then behave the same for all of them. It serves the CLI and the
Python entry files; inside ``promptfoo eval`` the judges use promptfoo's own providers (:mod:`.host`).

Provider ids (``anthropic:messages:<model>``, ``openai:chat:<model>``, ``google:<model>``, ``replay:<path>``),
keys, base URLs and proxies: docs/how-to/judge-provider.md. Every configuration error is raised by
:func:`make_client`, before the first row. Keys are scrubbed from everything handed back or written
(:mod:`._redact`). One deadline bounds each HTTP attempt whole — connection, TLS, request, headers and
body — since per-read timeouts let a server that trickles a byte per read hold a call forever; a call
then takes at most :func:`worst_case_seconds` (docs/explanation/performance.md). Each reply reports the tokens
it spent (:class:`Usage`); its cost is left unknown, since the client keeps no price table.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar, cast
from urllib.parse import urlsplit

from grounding_eval.data.fields import FieldProblem, answer_hash, optional_text, reply_texts
from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml
from grounding_eval.judge._redact import redact, secret_pattern
from grounding_eval.judge._wire import WIRES, MalformedReply, WireFormat, WireRequest
from grounding_eval.judge.cache import ReplyCache

if TYPE_CHECKING:  # requests costs ~150 ms to import, and promptfoo starts a process per assertion
    import requests
    import requests.adapters

__all__ = [
    "MAX_RESPONSE_BYTES",
    "RETRY_STATUSES",
    "SUPPORTED_FORMS",
    "USER_AGENT",
    "AnswerCheck",
    "AnswerStatus",
    "HttpJudgeClient",
    "JudgeClient",
    "JudgeConfigError",
    "JudgeError",
    "JudgeReply",
    "ReplayFixture",
    "ReplayJudgeClient",
    "Usage",
    "answer_sha256",
    "backoff_delay",
    "load_replay_fixtures",
    "make_client",
    "retry_after_seconds",
    "worst_case_seconds",
]

SUPPORTED_FORMS: Final = (
    "anthropic:messages:<model>",
    "openai:chat:<model>",
    "google:<model>",
    "replay:<path>",
)
"""The provider id forms :func:`make_client` accepts, as listed in its error message."""

RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504, 529})
"""HTTP statuses worth asking again: rate limits, server errors, gateways, Anthropic's "overloaded"."""

USER_AGENT: Final = "grounding-eval-judge/0.1"

MAX_RESPONSE_BYTES: Final = 1_000_000
"""Most bytes of a successful response body read (decompressed); past it the call fails, not retried.

A judgment is a few kilobytes of JSON; a body this large is a runaway generation or a hostile server,
and reading it whole would cost memory, and the reply parser time, for nothing it could score.
"""

_ERROR_BODY_BYTES: Final = 64_000  # of an error response: enough for its message, which is cut to 300

_CONNECT_TIMEOUT_CAP: Final = 10.0  # a server that has not accepted a connection in 10 s will not
_EXCERPT_CHARS: Final = 300
_T = TypeVar("_T")


class JudgeConfigError(Exception):
    """The judge cannot be built: bad provider id, missing API key or an impossible option."""


class JudgeError(Exception):
    """A judge call failed for good (after any retries); the message says why in one line.

    Attributes:
        provider: The provider family (``anthropic``, ``openai``, ``google``, ``replay``).
        model: The model (for replay, the fixture file).
        status: The last HTTP status, or ``None`` when there was no HTTP response.
        attempts: HTTP attempts made (0 for replay).
    """

    def __init__(self, message: str, *, provider: str, model: str, status: int | None, attempts: int):
        super().__init__(" ".join(message.split()))
        self.provider = provider
        self.model = model
        self.status = status
        self.attempts = attempts


@dataclass(frozen=True)
class JudgeReply:
    """A judge model's reply text and how it was obtained.

    Attributes:
        text: The reply text (all text blocks / parts, concatenated).
        provider: ``anthropic``, ``openai``, ``google`` or ``replay``.
        model: The model asked (for replay, the fixture file as given).
        cached: Whether the reply came from the on-disk cache.
        attempts: HTTP attempts made for this reply (0 when cached or replayed).
        latency_ms: Wall time of the whole call, retries and waits included.
        raw: The provider's parsed response JSON (``None`` for replay).
        request_id: The provider's request id, for support tickets and audit trails.
        usage: The tokens the call spent, when the provider said (a cached reply: 0 new, the
            original's count as ``cached``); ``None`` when unknown or no model was called.
        cost: The call's cost in US dollars as promptfoo computed it (``None``: unknown, or cached).
    """

    text: str
    provider: str
    model: str
    cached: bool
    attempts: int
    latency_ms: float
    raw: dict[str, Any] | None
    request_id: str | None
    usage: Usage | None = None
    cost: float | None = None


@dataclass(frozen=True)
class Usage:
    """Tokens one judge call spent, promptfoo's way (``tokenUsage``): new tokens, and tokens served from
    a cache (counted apart, never as new)."""

    prompt: int = 0
    completion: int = 0
    total: int = 0
    cached: int = 0

    @classmethod
    def from_promptfoo(cls, usage: object) -> Usage | None:
        """Read a provider's ``tokenUsage``; ``None`` when it is not a mapping of counts."""
        if not isinstance(usage, Mapping):
            return None

        def count(name: str) -> int:
            value = usage.get(name)
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                return max(int(value), 0)
            return 0

        prompt, completion = count("prompt"), count("completion")
        total = count("total") or prompt + completion
        return cls(prompt=prompt, completion=completion, total=total, cached=count("cached"))

    def as_cached(self) -> Usage:
        """The same reply served from a cache: no new tokens, all of them counted as cached."""
        return Usage(cached=self.total or self.cached)


class JudgeClient(Protocol):
    """What the rubric judge needs from a model: a prompt in, reply text out."""

    provider_id: str
    model: str

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        fixture_key: str | None = None,
        accept: Callable[[str], bool] | None = None,
    ) -> JudgeReply:
        """Return the judge's reply to ``prompt``.

        Args:
            prompt: The rendered user prompt.
            system: An optional system prompt (an empty string counts as none).
            fixture_key: Which recorded reply to return; only the replay client reads it.
            accept: Whether a reply text is worth keeping (the rubric judge passes "it parses"). A
                caching client stores only accepted replies, and treats a cached reply it refuses as
                a miss; ``None`` accepts every successful reply.

        Raises:
            JudgeError: The call failed for good.
        """
        ...


# --- retry policy ---------------------------------------------------------------------------------------


def backoff_delay(attempt: int, *, base: float, cap: float, retry_after: float | None, rand: float) -> float:
    """Return the seconds to wait after failed attempt number ``attempt`` (1-based).

    A server's ``Retry-After`` is obeyed (capped at ``cap``): it knows when its rate window reopens.
    Otherwise the wait doubles per attempt from ``base`` up to ``cap``, and "equal jitter" draws it from
    the upper half of that step, so parallel promptfoo workers that failed together do not retry together,
    yet none retries immediately.

    Args:
        attempt: The attempt that just failed, counting from 1.
        base: The first step, in seconds.
        cap: The longest wait, in seconds.
        retry_after: The server's requested wait in seconds, if it sent one.
        rand: A number in [0, 1) (``random.random()``; fixed in tests).
    """
    if retry_after is not None:
        return min(retry_after, cap)
    step = min(cap, base * 2.0 ** min(attempt - 1, 60))
    return step / 2 + rand * step / 2


def worst_case_seconds(*, timeout: float, max_retries: int, backoff_max: float) -> float:
    """Return the longest one :meth:`HttpJudgeClient.complete` call can take on the network.

    Each of the ``max_retries + 1`` attempts ends by its overall deadline (``timeout``), and each of the
    ``max_retries`` waits between them is at most ``backoff_max`` (a server's ``Retry-After`` included).
    With :func:`make_client`'s defaults: 5 × 60 + 4 × 30 = 420 s; with the promptfoo assertions'
    (``timeout`` 120): 720 s. ``assertions/grounding.cjs`` derives its call deadline from this bound.
    """
    return (max_retries + 1) * timeout + max_retries * backoff_max


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Return the wait a response asks for (``retry-after-ms``, else ``retry-after`` in seconds), if any.

    An HTTP-date, a negative or a non-numeric value is ignored (the caller falls back to backoff).
    """
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


# --- HTTP providers -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Failure:
    """Why one attempt failed, kept for the final error message."""

    what: str  # "HTTP 503", "ConnectionError", "malformed reply", "deadline passed"
    detail: str
    status: int | None


class _Deadline:
    """One attempt's overall deadline: when it passes, every socket the attempt uses is shut down.

    A timer thread does the shutting down, so a call blocked in a read (or a TLS handshake) returns at
    once, whatever the server sends. The attempt's connections register their sockets through
    :data:`_ATTEMPT` (a thread-local: one client can be called from several threads at a time). Used
    as a context manager around one attempt, which then asks :attr:`expired`.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sockets: list[Any] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        _ATTEMPT.deadline = self
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        _ATTEMPT.deadline = None

    def watch(self, sock: Any) -> None:
        """Shut ``sock`` down when the deadline passes (at once if it has)."""
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: Any) -> None:
    import socket

    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)  # wakes a blocked read in another thread; close() would not


_ATTEMPT = threading.local()  # .deadline: the _Deadline of the attempt running in this thread, if any


def _watched(sock: Any) -> Any:
    deadline: _Deadline | None = getattr(_ATTEMPT, "deadline", None)
    if deadline is not None and sock is not None:
        deadline.watch(sock)
    return sock


@functools.cache
def _deadline_adapter() -> type[requests.adapters.HTTPAdapter]:
    """A ``requests`` transport whose connections hand their sockets to the running attempt's deadline.

    urllib3's connections are subclassed at two public-by-use points: ``_new_conn`` (the socket just
    connected, before any TLS handshake) and ``request`` (a kept-alive connection used again). Built on
    first use: importing ``requests`` costs ~150 ms.
    """
    import requests.adapters
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class WatchedHTTPConnection(HTTPConnection):
        def _new_conn(self) -> Any:
            return _watched(super()._new_conn())

        def request(self, *args: Any, **kwargs: Any) -> None:
            _watched(self.sock)
            super().request(*args, **kwargs)

    class WatchedHTTPSConnection(WatchedHTTPConnection, HTTPSConnection):  # the methods above, then TLS
        pass

    class WatchedHTTPPool(HTTPConnectionPool):
        ConnectionCls = WatchedHTTPConnection

    class WatchedHTTPSPool(HTTPSConnectionPool):
        ConnectionCls = WatchedHTTPSConnection

    pools = {"http": WatchedHTTPPool, "https": WatchedHTTPSPool}

    class DeadlineAdapter(requests.adapters.HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = pools

        def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
            manager = super().proxy_manager_for(proxy, **proxy_kwargs)
            manager.pool_classes_by_scheme = pools  # through a proxy (CONNECT tunnel) too
            return manager

    return DeadlineAdapter


class HttpJudgeClient:
    """A judge behind an HTTP API (Anthropic, OpenAI-compatible or Gemini); build it with :func:`make_client`.

    The ``requests`` session is created on the first call, so building a client costs nothing and opens
    nothing. Only successful replies the caller accepts are cached (see :meth:`complete`). Each HTTP
    attempt ends by its overall deadline (``timeout`` seconds: connection, request, headers and whole
    body); a call ends within :func:`worst_case_seconds`.
    """

    def __init__(
        self,
        provider_id: str,
        wire: WireFormat,
        model: str,
        *,
        api_key: str,
        base_url: str,
        temperature: float,
        max_tokens: int,
        timeout: float,
        max_retries: int,
        backoff_base: float,
        backoff_max: float,
        cache: ReplyCache | None,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        """Keep the (already validated) settings; see :func:`make_client` for their meaning."""
        self.provider_id = provider_id
        self.model = model
        self.base_url = base_url
        self._wire = wire
        self._api_key = api_key
        self._secret = secret_pattern(api_key)
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._deadline_s = timeout
        # Per socket operation; the read timeout is past the deadline, so the deadline is what ends a
        # slow attempt, and says so.
        self._timeout = (min(timeout, _CONNECT_TIMEOUT_CAP), timeout + 1.0)
        self._max_retries = max_retries
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._cache = cache
        self._sleep = sleep
        self._rand = rand
        self._session: requests.Session | None = None
        self._session_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"HttpJudgeClient({self.provider_id!r}, base_url={self.base_url!r})"  # never the key

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        fixture_key: str | None = None,
        accept: Callable[[str], bool] | None = None,
    ) -> JudgeReply:
        """Return the model's reply, from the cache if this exact request was answered before.

        ``fixture_key`` is accepted and ignored, so callers can pass it whatever the provider.

        A reply is cached only if ``accept`` (when given) says yes, so a reply that fails the rubric's
        schema is asked for again on the next run instead of being served, unscoreable, forever. A
        cached reply that ``accept`` refuses (written before this rule, or by a caller without it) is
        a miss, and its file is removed.

        Raises:
            JudgeError: A non-retryable HTTP status (400, 401, 403, 404, …), or retries ran out on
                retryable statuses, connection errors, timeouts, attempts past their overall deadline
                or malformed replies.
        """
        started = time.perf_counter()
        system = system or None
        fields = {
            "provider": self._wire.kind,
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self._temperature,
            "max_tokens": self._max_tokens,
            "system": system,
            "prompt": prompt,
        }
        if self._cache is not None:
            hit = self._cache.get(fields)
            if hit is not None:
                if accept is None or accept(hit.text):
                    usage = self._usage(hit.raw)
                    return self._reply(
                        hit.text,
                        hit.raw,
                        hit.request_id,
                        started,
                        attempts=0,
                        cached=True,
                        usage=usage.as_cached() if usage is not None else None,
                    )
                self._cache.discard(fields)
        request = self._wire.build(
            self.base_url, self._api_key, self.model, prompt, system, self._temperature, self._max_tokens
        )
        payload, text, headers, attempts = self._send(request)
        raw = self._scrub(payload)
        text = self._scrub(text)
        request_id = self._scrub(self._wire.request_id(headers, raw))
        if self._cache is not None and (accept is None or accept(text)):
            self._cache.put(fields, text=text, raw=raw, request_id=request_id)
        return self._reply(
            text, raw, request_id, started, attempts=attempts, cached=False, usage=self._usage(raw)
        )

    def close(self) -> None:
        """Close the HTTP session, if one was opened."""
        with self._session_lock:
            if self._session is not None:
                self._session.close()
                self._session = None

    def _reply(
        self,
        text: str,
        raw: dict[str, Any] | None,
        request_id: str | None,
        started: float,
        *,
        attempts: int,
        cached: bool,
        usage: Usage | None,
    ) -> JudgeReply:
        return JudgeReply(
            text=text,
            provider=self._wire.kind,
            model=self.model,
            cached=cached,
            attempts=attempts,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            raw=raw,
            request_id=request_id,
            usage=usage,
            cost=None,  # no price table: promptfoo's hosted providers are the ones that price a call
        )

    def _usage(self, raw: dict[str, Any] | None) -> Usage | None:
        """The tokens ``raw`` (a response's JSON, or a cached copy of it) says were spent, if it says."""
        counts = self._wire.usage(raw)
        return Usage(counts.prompt, counts.completion, counts.total) if counts is not None else None

    def _session_for_call(self) -> requests.Session:
        import requests

        with self._session_lock:
            if self._session is None:
                self._session = requests.Session()
                adapter = _deadline_adapter()
                self._session.mount("http://", adapter())
                self._session.mount("https://", adapter())
                self._session.headers["user-agent"] = USER_AGENT
            return self._session

    def _send(self, request: WireRequest) -> tuple[dict[str, Any], str, Mapping[str, str], int]:
        """POST ``request`` with retries; return (response JSON, reply text, headers, attempts made)."""
        import requests

        session = self._session_for_call()
        data = json.dumps(request.body).encode("utf-8")
        failure = _Failure("no attempt", "", None)
        attempt = 0
        while attempt <= self._max_retries:
            attempt += 1
            retry_after: float | None = None
            deadline = _Deadline(self._deadline_s)
            try:
                # Streamed: the body is read by _read_body, which stops at MAX_RESPONSE_BYTES.
                with (
                    deadline,
                    session.post(
                        request.url,
                        data=data,
                        headers=dict(request.headers),
                        timeout=self._timeout,
                        allow_redirects=False,  # a redirected POST would become a GET, or leak the key
                        stream=True,
                    ) as response,
                ):
                    status = response.status_code
                    ok = 200 <= status < 300
                    content = _read_body(response, MAX_RESPONSE_BYTES if ok else _ERROR_BODY_BYTES, strict=ok)
                if deadline.expired:  # the body ended because its socket was shut: it may be cut short
                    raise _DeadlinePassed
            except (
                requests.ConnectionError,
                requests.Timeout,
                requests.exceptions.ChunkedEncodingError,
                _DeadlinePassed,
            ) as exc:
                if deadline.expired:
                    detail = (
                        f"no complete response within {self._deadline_s:g} s (the attempt's overall deadline)"
                    )
                    failure = _Failure("deadline passed", detail, None)
                else:
                    failure = _Failure(type(exc).__name__, str(exc), None)
            except _BodyTooLarge as exc:  # asking again would only fetch it again
                raise self._error(
                    _Failure("reply larger than 1 MB", str(exc), status), attempt, final=True
                ) from None
            except requests.RequestException as exc:  # nothing a retry would fix
                raise self._error(_Failure(type(exc).__name__, str(exc), None), attempt, final=True) from None
            else:
                if ok:
                    try:
                        payload = _json_object(content)
                        return payload, self._wire.extract(payload), response.headers, attempt
                    except MalformedReply as exc:
                        failure = _Failure("malformed reply", f"{exc}; body: {_body_text(content)}", status)
                elif status in RETRY_STATUSES:
                    failure = _Failure(f"HTTP {status}", _body_text(content), status)
                    retry_after = retry_after_seconds(response.headers)
                else:
                    raise self._error(
                        _Failure(f"HTTP {status}", _body_text(content), status), attempt, final=True
                    )
            if attempt <= self._max_retries:
                self._sleep(
                    backoff_delay(
                        attempt,
                        base=self._backoff_base,
                        cap=self._backoff_max,
                        retry_after=retry_after,
                        rand=self._rand(),
                    )
                )
        raise self._error(failure, attempt, final=False)

    def _error(self, failure: _Failure, attempts: int, *, final: bool) -> JudgeError:
        how = "not retried" if final else f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        message = (
            f"judge call failed (provider {self._wire.kind}, model {self.model}): "
            # Scrub before shortening: a cut through the key would leave a prefix that no longer matches.
            f"{failure.what} ({how}): {_shorten(self._scrub(failure.detail))}"
        )
        return JudgeError(
            message,
            provider=self._wire.kind,
            model=self.model,
            status=failure.status,
            attempts=attempts,
        )

    def _scrub(self, value: _T) -> _T:
        """Return ``value`` with the API key, in any form :mod:`._redact` knows, replaced wherever a
        string holds it (servers can echo it)."""
        return cast(_T, redact(value, self._secret))


class _DeadlinePassed(Exception):
    """An attempt's overall deadline passed while its response was read."""


class _BodyTooLarge(Exception):
    """A successful response's body ran past :data:`MAX_RESPONSE_BYTES` (the message says how far)."""


def _read_body(response: requests.Response, limit: int, *, strict: bool) -> bytes:
    """Read a streamed body, decompressed, up to ``limit`` bytes.

    Past the limit, a ``strict`` read (a success, whose reply would be scored) raises
    :class:`_BodyTooLarge` without reading further; any other read (an error body, only quoted in a
    message) keeps what it has. A ``Content-Length`` already over the limit is refused unread.
    """
    declared = response.headers.get("content-length", "")
    if strict and declared.isdigit() and int(declared) > limit:
        raise _BodyTooLarge(f"the response declares {int(declared):,} bytes, over the {limit:,} read")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(chunk_size=65_536):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            if strict:
                raise _BodyTooLarge(f"stopped reading the response after {limit:,} bytes")
            break
    return b"".join(chunks)[:limit]


def _json_object(content: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(content)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both
        raise MalformedReply(f"not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise MalformedReply(f"expected a JSON object, got {type(payload).__name__}")
    return payload


def _body_text(content: bytes) -> str:
    return content.decode("utf-8", errors="replace").strip() or "(empty body)"


def _shorten(text: str) -> str:
    """One line of at most ``_EXCERPT_CHARS`` characters: enough to diagnose, short enough to log."""
    text = " ".join(text.split())
    return text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "…"


# --- replay (recorded fixtures) -------------------------------------------------------------------------


def answer_sha256(answer: str) -> str:
    """Return the SHA-256 of ``answer`` as 64 lowercase hex digits: the answer a recorded reply judged.

    The hash is taken over the UTF-8 bytes of the answer exactly as the judge assertion receives it as
    promptfoo's ``output`` (a non-text output is first dumped to JSON by the assertion, and that text is
    hashed). Nothing is normalized — not case, not whitespace, not a trailing newline — because a recorded
    verdict holds only for the text the judge read. Lone surrogates (possible in JSON-decoded text) are
    encoded with ``surrogatepass`` so every ``str`` has a hash.
    """
    return hashlib.sha256(answer.encode("utf-8", errors="surrogatepass")).hexdigest()


@dataclass(frozen=True)
class ReplayFixture:
    """The recorded replies for one fixture key, returned in order by successive calls.

    Attributes:
        key: ``<rubric>/<item id>/<condition>``.
        replies: The recorded replies, in order (a second one answers the repair retry).
        note: Why the recording looks the way it does, if that needs saying.
        answer_sha256: :func:`answer_sha256` of the answer the replies judged; ``None`` for an old
            recording without one (replayed only for answers that are recordings too).
    """

    key: str
    replies: tuple[str, ...]
    note: str | None = None
    answer_sha256: str | None = None


AnswerStatus = Literal["match", "unhashed_recorded_answer", "mismatch", "unhashed"]


@dataclass(frozen=True)
class AnswerCheck:
    """Whether a recorded judge reply may grade this answer, and why (see :meth:`ReplayJudgeClient.check_answer`).

    Attributes:
        key: The fixture key.
        status: ``match`` (the recording judged this very text), ``unhashed_recorded_answer`` (no hash,
            but the answer is a recording too), ``mismatch`` (the recording judged another text) or
            ``unhashed`` (no hash and a live answer: nothing ties the recording to it).
        recorded_sha256: The hash the recording carries, ``None`` if it carries none.
        answer_sha256: The hash of the answer under judgment.
        detail: One clause for a result's reason: why it was refused, or why an unhashed recording was
            accepted; empty for ``match``.
    """

    key: str
    status: AnswerStatus
    recorded_sha256: str | None
    answer_sha256: str
    detail: str

    @property
    def allowed(self) -> bool:
        """True when the recorded reply may be replayed for this answer."""
        return self.status in ("match", "unhashed_recorded_answer")


_REPLAY_FIELDS: Final = frozenset({"key", "replies", "note", "answer_sha256"})
"""RecordedReplyEntry's fields (tests/data/test_schemas.py keeps the two equal)."""


def load_replay_fixtures(path: str | Path) -> dict[str, ReplayFixture]:
    """Load a YAML list of ``{key, answer_sha256?, replies: [text, ...], note?}`` recorded judge replies.

    Raises:
        DataError: One line naming the file, the entry and the problem (including an ``answer_sha256``
            that is not 64 lowercase hex digits).
    """
    data = read_yaml(path)
    if not isinstance(data, list) or not data:
        raise DataError(
            path,
            "expected a non-empty YAML list of {key, answer_sha256, replies, note} recorded judge replies",
        )
    fixtures: dict[str, ReplayFixture] = {}
    for i, entry in enumerate(data, 1):
        if not isinstance(entry, dict):
            raise DataError(path, f"entry {i}: expected a mapping with key and replies")
        unknown = set(entry) - _REPLAY_FIELDS
        if unknown:
            raise DataError(path, f"entry {i}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")
        key, digest = entry.get("key"), entry.get("answer_sha256")
        if not isinstance(key, str) or not key.strip():
            raise DataError(path, f"entry {i}: field 'key' is required and must be text")
        # The recorded reply's field rules (grounding_eval.data.models.RecordedReplyEntry), called without
        # pydantic: this runs in every fresh judge process.
        try:
            replies = reply_texts(entry.get("replies"))
        except FieldProblem as exc:
            raise DataError(path, f"entry {i} ({key}): field 'replies' {exc}") from None
        note = _field(path, i, key, "note", optional_text, entry.get("note"))
        digest = _field(path, i, key, "answer_sha256", answer_hash, digest)
        if key in fixtures:
            raise DataError(path, f"entry {i}: a second entry for key {key!r}")
        fixtures[key] = ReplayFixture(key, replies, note, digest)
    return fixtures


def _field(
    path: str | Path, i: int, key: str, name: str, check: Callable[[Any], str], value: Any
) -> str | None:
    try:
        return check(value) if value is not None else None
    except FieldProblem as exc:
        raise DataError(path, f"entry {i} ({key}): field {name!r} {exc}") from None


class ReplayJudgeClient:
    """Recorded judge replies (fixtures) served by ``fixture_key``; never a model, never cached.

    The n-th call for a key returns its n-th reply, so a fixture can record "malformed first, valid on
    the retry". The position is per client instance (see :meth:`restarted`).

    A recording is a verdict on one answer text. Before replaying, callers ask :meth:`check_answer`
    whether the recording was made for the answer under judgment; :meth:`complete` keeps the
    :class:`JudgeClient` signature and does not see the answer.
    """

    def __init__(self, provider_id: str, path: str, fixtures: Mapping[str, ReplayFixture]) -> None:
        """Serve ``fixtures`` (loaded from ``path``, which names them in errors)."""
        self.provider_id = provider_id
        self.model = path
        self._fixtures = dict(fixtures)
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()

    def restarted(self) -> ReplayJudgeClient:
        """The same recordings with every key back at its first reply: one judgment's view.

        The promptfoo adapter restarts the client for every row, so a process that grades many rows (a
        warm worker, a repeated row) replays each row as a fresh process would.
        """
        return ReplayJudgeClient(self.provider_id, self.model, self._fixtures)

    def check_answer(self, fixture_key: str | None, answer: str, *, answer_is_recorded: bool) -> AnswerCheck:
        """Say whether the recording for ``fixture_key`` may grade ``answer``.

        A recording with a hash grades only the answer with that hash. A recording without one (made
        before hashes existed) grades an answer only when ``answer_is_recorded`` — the answer came from
        the replay provider, so both sides are fixtures of the same offline run — and the check says so.

        Args:
            fixture_key: The recording's key.
            answer: The answer text as the judge would see it (hashed with :func:`answer_sha256`).
            answer_is_recorded: Whether the answer itself is a recorded fixture (the replay provider's).

        Raises:
            JudgeError: No ``fixture_key``, or a key the file does not have.
        """
        fixture = self._fixture(fixture_key)
        actual = answer_sha256(answer)
        recorded = fixture.answer_sha256
        name = f"recorded judge reply {fixture.key}"
        if recorded == actual:
            return AnswerCheck(fixture.key, "match", recorded, actual, "")
        if recorded is not None:
            detail = f"{name} was recorded for answer sha256 {recorded[:12]}… but this answer is sha256 {actual[:12]}…"
            return AnswerCheck(fixture.key, "mismatch", recorded, actual, detail)
        if answer_is_recorded:
            detail = (
                "recorded reply without an answer hash, accepted because the answer is a recorded fixture too"
            )
            return AnswerCheck(fixture.key, "unhashed_recorded_answer", None, actual, detail)
        detail = (
            f"{name} has no answer hash and this answer (sha256 {actual[:12]}…) is not a recorded fixture, "
            "so nothing shows the reply judged this text"
        )
        return AnswerCheck(fixture.key, "unhashed", None, actual, detail)

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        fixture_key: str | None = None,
        accept: Callable[[str], bool] | None = None,
    ) -> JudgeReply:
        """Return the next recorded reply for ``fixture_key``; ``prompt``, ``system`` and ``accept`` are
        not read (a recording is never cached).

        Raises:
            JudgeError: No ``fixture_key``, a key the file does not have, or all its replies used up.
        """
        started = time.perf_counter()
        fixture = self._fixture(fixture_key)
        with self._lock:
            n = self._served.get(fixture.key, 0)
            if n >= len(fixture.replies):
                raise self._error(
                    f"{self.model}: replay judge: key {fixture.key!r} has {len(fixture.replies)} recorded "
                    f"repl{'y' if len(fixture.replies) == 1 else 'ies'}, asked for reply {n + 1}"
                )
            self._served[fixture.key] = n + 1
        return JudgeReply(
            text=fixture.replies[n],
            provider="replay",
            model=self.model,
            cached=False,
            attempts=0,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            raw=None,
            request_id=None,
        )

    def _fixture(self, fixture_key: str | None) -> ReplayFixture:
        where = f"{self.model}: replay judge"
        if fixture_key is None:
            raise self._error(f"{where} needs a fixture_key")
        fixture = self._fixtures.get(fixture_key)
        if fixture is None:
            raise self._error(f"{where} has no recorded replies for key {fixture_key!r}")
        return fixture

    def _error(self, message: str) -> JudgeError:
        return JudgeError(message, provider="replay", model=self.model, status=None, attempts=0)


# --- building -------------------------------------------------------------------------------------------


def make_client(
    provider_id: str,
    *,
    cache_dir: Path | None = None,
    base_url: str | None = None,
    temperature: float = 0.0,
    max_tokens: int = 4096,
    timeout: float = 60.0,
    max_retries: int = 4,
    backoff_base: float = 1.0,
    backoff_max: float = 30.0,
    env: Mapping[str, str] | None = None,
) -> JudgeClient:
    """Build the judge client for a promptfoo-style provider id, checking every setting now.

    Args:
        provider_id: ``anthropic:messages:<model>``, ``openai:chat:<model>``, ``google:<model>`` or
            ``replay:<path>``.
        cache_dir: Directory for cached replies (created if missing); ``None`` for no cache. Replay
            ignores it.
        base_url: The judge's base URL (e.g. an OpenAI-compatible server); otherwise the public API.
            No ``*_BASE_URL`` variable is read: those steer promptfoo's generation providers. Not
            allowed with replay.
        temperature: Sampling temperature (0 for the most repeatable judgments).
        max_tokens: Reply length limit.
        timeout: Each HTTP attempt's overall deadline in seconds: connecting (at most 10 s of it),
            sending, the response headers and the whole body. A call takes at most
            :func:`worst_case_seconds` of these settings.
        max_retries: Further attempts after the first on retryable failures.
        backoff_base: First backoff step in seconds; it doubles per attempt.
        backoff_max: Longest single wait in seconds, including a server's ``Retry-After``.
        env: Where API keys are read; defaults to ``os.environ``.

    Raises:
        JudgeConfigError: Unknown provider form, missing API key (naming the variable), bad option.
        DataError: A replay fixture file is missing or malformed.
    """
    env = os.environ if env is None else env
    kind, _, rest = provider_id.partition(":")
    if kind == "replay":
        if not rest.strip():
            raise JudgeConfigError(f"judge provider {provider_id!r}: replay needs a fixture file path")
        if base_url is not None:
            raise JudgeConfigError(f"judge provider {provider_id!r}: base_url does not apply to replay")
        return ReplayJudgeClient(provider_id, rest, load_replay_fixtures(rest))
    wire, model = _parse_http_provider(provider_id)
    _check_options(
        provider_id, wire, temperature, max_tokens, timeout, max_retries, backoff_base, backoff_max
    )
    api_key = next((env[name] for name in wire.key_envs if env.get(name)), None)
    if api_key is None:
        names = " or ".join(wire.key_envs)
        raise JudgeConfigError(f"{names} is not set (needed by judge provider {provider_id})")
    base = _check_base_url(provider_id, base_url or wire.default_base)
    return HttpJudgeClient(
        provider_id,
        wire,
        model,
        api_key=api_key,
        base_url=base,
        temperature=float(temperature),  # 0 and 0.0 must give the same cache key
        max_tokens=max_tokens,
        timeout=float(timeout),
        max_retries=max_retries,
        backoff_base=float(backoff_base),
        backoff_max=float(backoff_max),
        cache=_open_cache(provider_id, cache_dir) if cache_dir is not None else None,
    )


def _parse_http_provider(provider_id: str) -> tuple[WireFormat, str]:
    """Return the wire format and model of an HTTP provider id, or raise listing the supported forms."""
    kind, _, rest = provider_id.partition(":")
    api, _, tail = rest.partition(":")
    if kind == "anthropic" and api == "messages":
        wire, model = WIRES["anthropic"], tail
    elif kind == "openai" and api == "chat":
        wire, model = WIRES["openai"], tail
    elif kind == "google":
        wire, model = WIRES["google"], rest
    else:
        raise JudgeConfigError(
            f"unknown judge provider {provider_id!r}; supported forms: {', '.join(SUPPORTED_FORMS)}"
        )
    if not model or model != model.strip():
        raise JudgeConfigError(f"judge provider {provider_id!r}: the model name is missing or padded")
    if wire.kind == "google" and any(c in model for c in "/:?#"):
        # It becomes a URL path segment: "models/x" or "x:generateContent" would address another resource.
        raise JudgeConfigError(
            f"judge provider {provider_id!r}: write the Gemini model bare, as google:<model>"
        )
    return wire, model


def _check_options(
    provider_id: str,
    wire: WireFormat,
    temperature: float,
    max_tokens: int,
    timeout: float,
    max_retries: int,
    backoff_base: float,
    backoff_max: float,
) -> None:
    def bad(message: str) -> JudgeConfigError:
        return JudgeConfigError(f"judge provider {provider_id}: {message}")

    if not _is_number(temperature) or not 0.0 <= temperature <= wire.max_temperature:
        raise bad(f"temperature must be between 0 and {wire.max_temperature:g}, got {temperature!r}")
    if not _is_int(max_tokens) or max_tokens < 1:
        raise bad(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if not _is_number(timeout) or timeout <= 0:
        raise bad(f"timeout must be a positive number of seconds, got {timeout!r}")
    if not _is_int(max_retries) or max_retries < 0:
        raise bad(f"max_retries must be a whole number ≥ 0, got {max_retries!r}")
    for name, value in (("backoff_base", backoff_base), ("backoff_max", backoff_max)):
        if not _is_number(value) or value < 0:
            raise bad(f"{name} must be a number of seconds ≥ 0, got {value!r}")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_base_url(provider_id: str, url: str) -> str:
    """Return ``url`` without a trailing slash, or raise if it is not a plain http(s) base URL."""

    def bad(problem: str) -> JudgeConfigError:
        return JudgeConfigError(f"judge provider {provider_id}: base URL {url!r} {problem}")

    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        raise bad("is not an http(s) URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise bad("is not an http(s) URL")
    if parts.username is not None or parts.password is not None:
        # Credentials in a URL end up in error messages and cache keys; keys belong in the *_API_KEY variable.
        raise JudgeConfigError(f"judge provider {provider_id}: the base URL must not carry credentials")
    if parts.query or parts.fragment:
        raise bad("has a query or fragment")
    return url.rstrip("/")


def _open_cache(provider_id: str, cache_dir: Path) -> ReplyCache:
    try:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JudgeConfigError(
            f"judge provider {provider_id}: cannot use cache directory {cache_dir}: {exc.strerror or exc}"
        ) from None
    return ReplyCache(Path(cache_dir))
