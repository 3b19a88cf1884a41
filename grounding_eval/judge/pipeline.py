"""The one judge loop, for every judge: ask → parse → one retry with the error → audit → review queue.

The rubric judge (:mod:`grounding_eval.promptfoo.judge_assertion`), the factual-accuracy judge
(:mod:`grounding_eval.factuality.judge`) and the docs-QA grader
(:mod:`grounding_eval.promptfoo.docs_qa_assertion`) differ in their template and their reply schema, not
in how a judge is asked. Each renders its prompt and passes a parser (reply text → parsed reply or
:class:`~grounding_eval.judge.extract.ParseFailure`); :func:`run_judge` does the rest and returns a typed
outcome, :class:`Scored` or :class:`Unscored`, that the promptfoo adapters map to a GradingResult:

1. Ask the client. A caching client keeps only replies that parse (the parser is the ``accept`` test,
   and each reply text is parsed once).
2. A reply that does not parse is sent back once: the validation error appended to the user prompt, or
   the judge's own ``retry`` rendering (the factual-accuracy judge puts it in its constraints section).
3. A call that fails for good (:class:`~grounding_eval.judge.calls.JudgeError`, or a
   :class:`~grounding_eval.errors.DataError` from a recording) ends the loop: unscored, ``call_failed``.
4. Every outcome is written to the judges' audit log (the record is the judge's: :class:`Audit`), a
   failed call included, so the prompt that was sent and any reply received are kept.
5. An unscored outcome with at least one reply received goes to the review queue (:class:`Review`):
   a person can read what the judge said. A failed call with no reply is not queued (there is nothing
   to read; a re-run asks again).

Where a judge gives no audit directory or queue, that step is skipped. :func:`unscored_reason` writes
the reason line of an unscored outcome the same way for every judge.

Every call the loop makes is counted by the row's :class:`Meter` (opened by the promptfoo adapter with
:func:`metered`): provider, whether the reply was cached or recorded, tokens and cost. The adapter puts
:meth:`Meter.tokens_used` in the GradingResult's ``tokensUsed`` (promptfoo adds it to the row, the
viewer and ``stats.tokenUsage.assertions``) and :meth:`Meter.summary` in ``metadata.judge_usage``.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath, PureWindowsPath
from typing import Any, Generic, Literal, TypeVar

from grounding_eval.encodable import sendable
from grounding_eval.errors import DataError
from grounding_eval.judge.audit import write_audit
from grounding_eval.judge.calls import (
    AnswerCheck,
    JudgeClient,
    JudgeError,
    JudgeReply,
    ReplayJudgeClient,
    Usage,
)
from grounding_eval.judge.checkpoint import checkpoint
from grounding_eval.judge.extract import ParseFailure
from grounding_eval.judge.review_queue import enqueue_review, review_entry_id

__all__ = [
    "Attempt",
    "Audit",
    "Call",
    "Meter",
    "Prompt",
    "Recorded",
    "Review",
    "Scored",
    "Unscored",
    "audit_once",
    "check_replay",
    "judge_label",
    "metered",
    "row_calls",
    "run_judge",
    "unscored_reason",
    "with_usage",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Prompt:
    """A rendered judge prompt: the system text and the user text."""

    system: str
    user: str


@dataclass(frozen=True)
class Attempt:
    """One call of the loop.

    Attributes:
        number: 1 for the first call, 2 for the retry.
        reply: The reply text, or ``None`` when the call failed.
        cached: Whether the reply came from the client's cache.
        error: The validation error of a reply that did not parse, or the call's error; ``None`` when
            the reply parsed.
    """

    number: int
    reply: str | None
    cached: bool = False
    error: str | None = None

    @property
    def call_failed(self) -> bool:
        """Whether the call itself failed (no reply)."""
        return self.reply is None


@dataclass(frozen=True)
class Recorded:
    """What was written for an outcome: its audit record and its review-queue entry.

    Attributes:
        audit_id: The audit record's id, or ``None`` when none was written.
        audit_dir: The audit directory it was written to.
        audit_error: ``"<exception type>: <message>"`` when the write failed (the verdict stands).
        review_queue: The queue an unscored outcome was sent to.
        review_entry_id: Its entry id there.
        review_sent: ``True`` when appended now, ``False`` when the same entry was there already.
    """

    audit_id: str | None = None
    audit_dir: str | None = None
    audit_error: str | None = None
    review_queue: Path | None = None
    review_entry_id: str | None = None
    review_sent: bool | None = None


@dataclass(frozen=True, kw_only=True)
class _Outcome:
    attempts: tuple[Attempt, ...]
    recorded: Recorded = field(default_factory=Recorded)
    lone_surrogates: int = 0  # in the prompt, sent as U+FFFD (grounding_eval.encodable.sendable)

    def flags(self) -> dict[str, Any]:
        """What the row says about how the judge was asked: ``lone_surrogates_sent_as_fffd`` when the
        prompt held lone surrogates (half an emoji in the answer), else nothing."""
        return {"lone_surrogates_sent_as_fffd": self.lone_surrogates} if self.lone_surrogates else {}

    @property
    def replies(self) -> list[str]:
        """Every reply text received, in order."""
        return [a.reply for a in self.attempts if a.reply is not None]

    @property
    def errors(self) -> list[str]:
        """Every validation or call error, in order."""
        return [a.error for a in self.attempts if a.error is not None]

    @property
    def retried(self) -> bool:
        """Whether the judge was asked a second time."""
        return len(self.attempts) > 1

    @property
    def cached(self) -> bool:
        """Whether the last reply came from the cache."""
        return bool(self.attempts) and self.attempts[-1].cached


@dataclass(frozen=True, kw_only=True)
class Scored(_Outcome, Generic[T]):
    """The judge's reply parsed: ``parsed`` is the judge's verdict, to be scored by the judge's rules."""

    parsed: T


@dataclass(frozen=True, kw_only=True)
class Unscored(_Outcome):
    """No verdict: every reply was invalid (``invalid_reply``) or a call failed (``call_failed``).

    ``call_error`` is the failed call's message (without the provider), ``None`` for invalid replies.
    """

    reason: Literal["invalid_reply", "call_failed"] = "invalid_reply"
    call_error: str | None = None

    @property
    def last_error(self) -> str:
        """The last validation or call error."""
        errors = self.errors
        return errors[-1] if errors else "no reply"


@dataclass(frozen=True)
class Audit:
    """Where and what to write to the audit log: ``record`` builds the judge's record from the outcome."""

    directory: Path
    record: Callable[[Scored[Any] | Unscored], Mapping[str, Any]]


@dataclass(frozen=True)
class Review:
    """Where and what to queue for a person: ``record`` builds the entry (``entry_id`` is added here)."""

    queue: Path
    record: Callable[[Unscored], Mapping[str, Any]]


@dataclass(frozen=True)
class Call:
    """One judge call of a row, as its meter counts it.

    Attributes:
        provider: The provider id asked.
        source: ``model`` (a model answered now), ``cache`` (the pack's reply cache), ``recorded`` (a
            replay fixture) or ``failed`` (no reply).
        usage: Tokens, when the provider said (a cached reply: 0 new, the original count as cached).
        cost: US dollars, when promptfoo priced it.
        invalid: the reply did not parse (a call that gave nothing usable, counted as failed).
        host: The endpoint host a live judge sends its requests to (no credentials); ``None`` for a
            recording or when the provider does not say.
    """

    provider: str
    source: Literal["model", "cache", "recorded", "failed"]
    usage: Usage | None = None
    cost: float | None = None
    invalid: bool = False
    host: str | None = None

    @classmethod
    def of(
        cls, provider: str, reply: JudgeReply | None, *, invalid: bool = False, host: str | None = None
    ) -> Call:
        """The call that gave ``reply`` (``None``: the call failed); ``invalid``: the reply did not parse."""
        if reply is None:
            return cls(provider, "failed", host=host)
        if reply.provider == "replay":
            return cls(provider, "recorded", invalid=invalid)
        return cls(provider, "cache" if reply.cached else "model", reply.usage, reply.cost, invalid, host)

    def as_dict(self) -> dict[str, Any]:
        """As the audit record lists it."""
        usage = self.usage
        tokens = None if usage is None else {"prompt": usage.prompt, "completion": usage.completion,
                                             "total": usage.total, "cached": usage.cached}  # fmt: skip
        return {"provider": self.provider, "source": self.source, "tokens": tokens, "cost": self.cost,
                **({"invalid": True} if self.invalid else {}),
                **({"host": self.host} if self.host else {})}  # fmt: skip


@dataclass
class Meter:
    """The judge calls of one row (:func:`metered`)."""

    calls: list[Call] = field(default_factory=list)

    def add(self, call: Call) -> None:
        """Count one call."""
        self.calls.append(call)

    def tokens_used(self) -> dict[str, int]:
        """promptfoo's ``tokensUsed`` for the row: new tokens, cached tokens apart, and the requests
        made to a model (a cached or recorded reply is none)."""
        total = {"total": 0, "prompt": 0, "completion": 0, "cached": 0, "numRequests": 0}
        for call in self.calls:
            if call.source in ("model", "failed"):
                total["numRequests"] += 1
            if call.usage is not None:
                total["total"] += call.usage.total
                total["prompt"] += call.usage.prompt
                total["completion"] += call.usage.completion
                total["cached"] += call.usage.cached
        return total

    def summary(self) -> dict[str, Any]:
        """``metadata.judge_usage``: per provider, its ``calls``, and of them the ``model``, ``cache``,
        ``recorded`` and ``failed`` ones (no reply), the ``invalid`` replies (a reply that did not parse,
        also counted by its source), new ``tokens`` and ``cost`` — each only when not zero (cost: when
        priced), to keep the row small; the row's tokens are its ``tokensUsed``; and the endpoint ``host``
        a live judge sent its requests to."""
        by: dict[str, dict[str, Any]] = {}
        for call in self.calls:
            row = by.setdefault(judge_label(call.provider), {"calls": 0})
            row["calls"] += 1
            if call.host:
                row["host"] = call.host
            row[call.source] = row.get(call.source, 0) + 1
            if call.invalid:
                row["invalid"] = row.get("invalid", 0) + 1
            if call.usage is not None and call.usage.total:
                row["tokens"] = row.get("tokens", 0) + call.usage.total
            if call.cost is not None:
                row["cost"] = row.get("cost", 0.0) + call.cost
        return {"providers": by}


def judge_label(provider_id: str) -> str:
    """How a judge is named where people read its calls (``metadata.judge_usage``, the report): its
    provider id, but a recording or a provider file by the file's name — a local path is where the
    judge sits on one machine, not which judge it is, and must not travel in a shared results file."""
    kind, sep, rest = provider_id.partition(":")
    if kind == "replay" and sep:
        return f"replay:{_file_name(rest)}"
    if provider_id.startswith("file://"):
        path, colon, function = provider_id[len("file://") :].rpartition(":")
        if not colon or "/" in function or "\\" in function:  # no function name after the path
            path, function = provider_id[len("file://") :], ""
        return f"file://{_file_name(path)}" + (f":{function}" if function else "")
    return provider_id


def _file_name(path: str) -> str:
    return PureWindowsPath(path).name if "\\" in path else PurePath(path).name


_meter: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("grounding_eval_meter", default=None)


@contextlib.contextmanager
def metered() -> Iterator[Meter]:
    """Count the judge calls made inside the block (one row's judgment)."""
    meter = Meter()
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)


def with_usage(result: dict[str, Any], meter: Meter) -> dict[str, Any]:
    """``result`` (a GradingResult) with the row's judge calls: ``tokensUsed`` and, when a judge was
    asked, ``metadata.judge_usage``, and the endpoint hosts live judges were asked at in its provenance
    (``metadata.provenance.judge_endpoints``)."""
    result["tokensUsed"] = meter.tokens_used()
    if meter.calls:
        metadata = result.get("metadata")
        if isinstance(metadata, dict):
            metadata["judge_usage"] = meter.summary()
            hosts = sorted({call.host for call in meter.calls if call.host})
            if hosts and isinstance(metadata.get("provenance"), dict):
                metadata["provenance"]["judge_endpoints"] = hosts
    return result


def row_calls(own: list[Call] | None = None) -> list[Call]:
    """The judge calls of the row so far (its meter's), else ``own`` (a loop run outside a meter)."""
    meter = _meter.get()
    return list(meter.calls) if meter is not None else list(own or [])


def _count(
    client: JudgeClient, reply: JudgeReply | None, calls: list[Call], *, invalid: bool = False
) -> None:
    call = Call.of(client.provider_id, reply, invalid=invalid, host=getattr(client, "host", None))
    calls.append(call)
    meter = _meter.get()
    if meter is not None:
        meter.add(call)


def run_judge(
    client: JudgeClient,
    prompt: Prompt,
    *,
    fixture_key: str,
    parse: Callable[[str], T | ParseFailure],
    retry: Callable[[str], str] | None = None,
    max_attempts: int = 2,
    audit: Audit | None = None,
    review: Review | None = None,
) -> Scored[T] | Unscored:
    """Ask ``client`` until a reply parses (at most ``max_attempts`` calls), then record the outcome.

    Args:
        client: The judge model (or its recording).
        prompt: The rendered prompt.
        fixture_key: The judgment's key (the replay client's recording; part of the cache's key).
        parse: Reply text → parsed reply, or a :class:`ParseFailure` whose ``error`` is sent back.
        retry: The user prompt of the next call, from the last validation error; by default the
            first user prompt with the error appended after a blank line.
        max_attempts: Calls at most (2: one retry; the factual-accuracy judge's cheap stage asks once).
        audit: The audit record to write for every outcome; ``None`` writes none.
        review: The review-queue entry for an unscored outcome with a reply; ``None`` queues none.

    Returns:
        :class:`Scored` with the parsed reply, or :class:`Unscored` with why; each with every attempt
        and what was recorded. Never raises for a failed call or a failed audit write.
    """
    checkpoint()  # a configuration check stops before any model is asked
    seen: dict[str, T | ParseFailure] = {}  # the client's accept() and this loop parse each text once

    def parsed(text: str) -> T | ParseFailure:
        if text not in seen:
            seen[text] = parse(text)
        return seen[text]

    def accept(text: str) -> bool:
        return not isinstance(parsed(text), ParseFailure)

    attempts: list[Attempt] = []
    calls: list[Call] = []
    user = prompt.user
    system, surrogates = sendable(prompt.system)
    outcome: Scored[T] | Unscored | None = None
    for number in range(1, max_attempts + 1):
        user, replaced = sendable(user)  # half an emoji in the answer: sent as U+FFFD, never a crash
        surrogates += replaced if number == 1 else 0
        try:
            reply = client.complete(user, system=system, fixture_key=fixture_key, accept=accept)
        except (JudgeError, DataError) as exc:
            _count(client, None, calls)
            message = str(exc)  # one line, both kinds
            attempts.append(Attempt(number, None, error=message))
            outcome = Unscored(attempts=tuple(attempts), reason="call_failed", call_error=message)
            break
        result = parsed(reply.text)
        _count(client, reply, calls, invalid=isinstance(result, ParseFailure))
        seen.clear()  # a retry's reply is another text; keep the memo to this call's accept() and loop
        if not isinstance(result, ParseFailure):
            attempts.append(Attempt(number, reply.text, cached=reply.cached))
            outcome = Scored(attempts=tuple(attempts), parsed=result)
            break
        attempts.append(Attempt(number, reply.text, cached=reply.cached, error=result.error))
        user = retry(result.error) if retry is not None else f"{prompt.user}\n\n{result.error}"
    if outcome is None:
        outcome = Unscored(attempts=tuple(attempts), reason="invalid_reply")
    outcome = replace(outcome, lone_surrogates=surrogates)
    return replace(outcome, recorded=_record(outcome, audit, review, calls))


def _record(
    outcome: Scored[Any] | Unscored, audit: Audit | None, review: Review | None, calls: list[Call]
) -> Recorded:
    recorded = Recorded()
    if audit is not None:  # every record says what each call of the row cost, whichever judge wrote it
        record = {**audit.record(outcome), "judge_calls": [c.as_dict() for c in row_calls(calls)]}
        recorded = audit_once(audit.directory, record)
    if review is not None and isinstance(outcome, Unscored) and outcome.replies:
        entry = dict(review.record(outcome))
        entry = {"entry_id": review_entry_id(entry), **entry}
        sent = enqueue_review(review.queue, entry)
        recorded = replace(
            recorded, review_queue=review.queue, review_entry_id=entry["entry_id"], review_sent=sent
        )
    return recorded


def audit_once(directory: Path, record: Mapping[str, Any]) -> Recorded:
    """Write ``record`` to the audit log in ``directory``; a failed write is named, never raised.

    The judgment itself is sound when its audit copy cannot be written; the row says its evidence was
    not kept (``audit_error``).
    """
    try:
        return Recorded(audit_id=write_audit(directory, record), audit_dir=str(directory))
    except OSError as exc:
        return Recorded(audit_error=f"{type(exc).__name__}: {exc}")


def check_replay(
    client: JudgeClient, fixture_key: str, answer: str, *, answer_is_recorded: bool
) -> AnswerCheck | None:
    """Whether a recorded judge may grade ``answer`` (:meth:`ReplayJudgeClient.check_answer`); ``None``
    for a live judge, which grades any answer.

    Raises:
        JudgeError: The recording has no reply for ``fixture_key``.
    """
    checkpoint()  # a configuration check stops here: what follows depends on the real answer
    if not isinstance(client, ReplayJudgeClient):
        return None
    return client.check_answer(fixture_key, answer, answer_is_recorded=answer_is_recorded)


def unscored_reason(outcome: Unscored, *, whose: str, caller: str, provider: str | None) -> str:
    """The reason line of an unscored outcome, after the judge's ``ERROR (… unscored): `` prefix.

    Args:
        outcome: The outcome.
        whose: Whose reply it was, as the sentence starts: ``the v3 judge``, ``the grader's``.
        caller: What was called, for a failed call: ``judge``, ``grader``.
        provider: The provider id, named in a failed call's line.
    """
    rec = outcome.recorded
    queued = (
        f"{'sent to' if rec.review_sent else 'already in'} the review queue {rec.review_queue}"
        if rec.review_queue is not None
        else ""
    )
    if outcome.reason == "call_failed":
        where = f" ({provider})" if provider else ""
        line = f"{caller} call failed{where}: {outcome.call_error}"
        return line + (f"; the earlier invalid reply was {queued}" if queued else "")
    head = f"{whose} reply was invalid {'twice' if outcome.retried else 'once'}"
    return (
        f"{head}; {queued}. Last error: {outcome.last_error}"
        if queued
        else (f"{head}. Last error: {outcome.last_error}")
    )
