"""What a judge model call is, whoever answers it: the client protocol, its reply and errors, and recorded
replies (``replay:``).

Live judges are promptfoo's providers, reached through ``assertions/judges.cjs``
(:class:`~grounding_eval.judge.host.HostJudgeClient`): the pack keeps no HTTP client of its own. A
recording (:class:`ReplayJudgeClient`) is a fixture: the replies a judge gave, each for the answer text it
was recorded for (``answer_sha256``), never a model and never cached.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from grounding_eval.data.fields import FieldProblem, answer_hash, optional_text, reply_texts
from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml

__all__ = [
    "AnswerCheck",
    "AnswerStatus",
    "JudgeClient",
    "JudgeConfigError",
    "JudgeError",
    "JudgeReply",
    "ReplayFixture",
    "ReplayJudgeClient",
    "Usage",
    "answer_sha256",
    "load_replay_fixtures",
    "replay_client",
]


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


def replay_client(path: str | Path, provider_id: str | None = None) -> ReplayJudgeClient:
    """The recorded replies in ``path`` as a judge (``provider_id``: how rows name it, default
    ``replay:<path>``).

    Raises:
        DataError: The file is missing or malformed (one line naming it).
    """
    return ReplayJudgeClient(provider_id or f"replay:{path}", str(path), load_replay_fixtures(path))
