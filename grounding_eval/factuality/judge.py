"""One factual-accuracy judgment: cheap stage (optional), capable stage with one retry, queues, audit.

The flow (the seed's integration paragraphs; our decisions are in ``rubrics/factual_accuracy.yaml``):

1. The prompt is rendered once (:func:`~.render.render_factuality_prompt`).
2. **Cheap stage** (only with a cheap client, and not at risk level high): the same prompt, one attempt.
   Its verdict is accepted when the reply parsed without trouble, at least one claim is verifiable,
   every verifiable claim is Supported with its quote FOUND, and no claim has a severity. Anything else
   (a call or parse failure included) goes on to the capable model; the attempt is recorded.
3. **Capable stage**: the judges' one loop (:func:`grounding_eval.judge.pipeline.run_judge`, which the
   cheap stage also asks through, once): a reply that fails validation (a claim copied from a scorecard
   inside the target text included: :func:`~.parse.copied_claims`) is retried once with the errors
   appended to the constraints section; a second failure (or a failed call after an invalid reply)
   writes the item (rendered prompt, raw replies, errors) to the review queue and the result is
   ``error``, never a score.
4. The scorecard is assessed in code (:func:`~.score.assess`; a verdict whose evidence cannot be verified
   never makes the answer look better). At risk level high a Major or Critical finding, or a finding whose
   quote is not in the evidence, makes the result ``needs_human_verification`` and writes one entry per
   row to the human-verification queue with, per finding, the claim, its quote, the evidence chunk and
   the rationale.

A recorded judge (``replay:``) grades only the target text it was recorded for (the rubric judge's
``answer_sha256`` rule, :meth:`~grounding_eval.judge.calls.ReplayJudgeClient.check_answer`).

Queues are JSONL files appended under a lock and never given the same entry twice (the rubric judge's
``enqueue_review``). Every result carries the audit fields the seed lists: prompt version, model ids,
timestamp, source document ids, stage, attempts and the raw reply; the full rendered prompt and all raw
replies go to ``audit_dir`` keyed by hash, not into the result.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from grounding_eval.calls import CALLS
from grounding_eval.factuality.evidence import Document
from grounding_eval.factuality.parse import ParseFailure, Scorecard, parse_scorecard, refuse_copied
from grounding_eval.factuality.render import RenderedFactualityPrompt, render_factuality_prompt
from grounding_eval.factuality.rubric import FactualityRubric
from grounding_eval.factuality.score import Assessment, Status, assess
from grounding_eval.judge.audit import audit_path
from grounding_eval.judge.calls import JudgeClient, JudgeError, answer_sha256
from grounding_eval.judge.pipeline import (
    Audit,
    Prompt,
    Recorded,
    Review,
    Scored,
    Unscored,
    audit_once,
    check_replay,
    row_calls,
    run_judge,
    unscored_reason,
)
from grounding_eval.judge.review_queue import enqueue_review, review_entry_id

__all__ = ["RAW_REPLY_CHARS", "FactualityResult", "decide", "judge_factuality"]

RAW_REPLY_CHARS: Final = 600
"""Most characters of the raw reply kept in a result (the whole reply is in the audit file)."""
_SHOWN_CHARS: Final = 200  # of a claim's text or quote in a result row
_CALL: Final = CALLS["factuality"]  # its failure prefixes


@dataclass
class FactualityResult:
    """The outcome of one judgment (``status`` ``error`` carries ``reason`` and no score)."""

    status: Status
    reason: str
    prompt_version: str
    rubric_version: str
    fixture_key: str
    risk_level: str
    source_document_ids: list[str]
    answer_sha256: str
    timestamp: str
    stage: str = "capable"
    model_id: str | None = None
    provider: str | None = None
    cheap_model_id: str | None = None
    endpoint_host: str | None = None  # where a live capable judge sent its requests (no credentials)
    cheap_endpoint_host: str | None = None
    score: float | None = None
    judge_reported_score: float | None = None
    assessment: Assessment | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    raw_reply: str | None = None
    parse_mode: str | None = None
    repairs: list[str] = field(default_factory=list)
    review_entry_id: str | None = None
    human_entry_id: str | None = None
    audit_file: str | None = None
    audit_id: str | None = None
    audit_dir: str | None = None
    unscored_reason: str = ""  # an error's reason without its ERROR (…) label: the outcome's reason

    def unscored(self, label: str, why: str) -> FactualityResult:
        """An error result: the reason line is ``label: why``; ``why`` alone is the outcome's reason."""
        self.status, self.reason, self.unscored_reason = "error", f"{label}: {why}", why
        return self

    def claims_json(self, *, with_sources: bool) -> list[dict[str, Any]]:
        """The claims as the CLI's ``--json`` (and, with sources, the result metadata) lists them."""
        if self.assessment is None:
            return []
        out = []
        for c in self.assessment.claims:
            v = c.verdict
            row: dict[str, Any] = {
                "claim_id": v.claim_id,
                "claim_text": v.claim_text if not with_sources else _cut(v.claim_text),
                "verification_result": v.verification_result,
                "score": c.score,
                "severity": v.severity,
                "evidence_quote": v.evidence_quote if not with_sources else _cut(v.evidence_quote),
                "evidence_check": c.evidence_check,
            }
            if with_sources:
                row |= {"source_document_ids": list(c.source_document_ids), "chunk_ids": list(c.chunk_ids)}
                if c.ungrounded:
                    row["flag"] = "UNGROUNDED_VERDICT"
            out.append(row)
        return out

    def to_json(self) -> dict[str, Any]:
        """Exactly the CLI's ``--json`` object."""
        return {
            "status": self.status,
            "score": self.score,
            "judge_reported_score": self.judge_reported_score,
            "claims": self.claims_json(with_sources=False),
            "ungrounded_verdicts": self.assessment.ungrounded if self.assessment else 0,
            "model_id": self.model_id,
            "prompt_version": self.prompt_version,
            "attempts": self.attempts,
        }

    def metadata(self) -> dict[str, Any]:
        """The result's ``metadata.factuality`` (small: ids, verdicts, short texts; the rest is audited)."""
        a = self.assessment
        return {
            "status": self.status,
            "score": self.score,
            "judge_reported_score": self.judge_reported_score,
            "verdict_score": a.verdict_score if a else None,
            "claims": self.claims_json(with_sources=True),
            "ungrounded_verdicts": a.ungrounded if a else 0,
            "model_id": self.model_id,
            "prompt_version": self.prompt_version,
            "stage": self.stage,
            "attempts": self.attempts,
            "cheap_model_id": self.cheap_model_id,
            **({"endpoint_host": self.endpoint_host} if self.endpoint_host else {}),
            **({"cheap_endpoint_host": self.cheap_endpoint_host} if self.cheap_endpoint_host else {}),
            "provider": self.provider,
            "rubric_version": self.rubric_version,
            "risk_level": self.risk_level,
            "fixture_key": self.fixture_key,
            "source_document_ids": self.source_document_ids,
            "answer_sha256": self.answer_sha256,
            "timestamp": self.timestamp,
            "verifiable_claims": a.verifiable if a else None,
            "mismatches": list(a.mismatches) if a else [],
            "parse_mode": self.parse_mode,
            "repairs": self.repairs[:20],
            "raw_reply": _cut(self.raw_reply, RAW_REPLY_CHARS),
            "review_entry_id": self.review_entry_id,
            "human_entry_id": self.human_entry_id,
            "audit_file": self.audit_file,
            "audit_id": self.audit_id,
            "audit_dir": self.audit_dir,
            "reason": self.reason,
        }


def _cut(text: str | None, limit: int = _SHOWN_CHARS) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + "…"


def judge_factuality(
    target_text: str,
    documents: Sequence[Document],
    rubric: FactualityRubric,
    *,
    capable: JudgeClient,
    fixture_key: str,
    cheap: JudgeClient | None = None,
    risk_level: str = "standard",
    domain_constraints: Sequence[str] = (),
    answer_is_recorded: bool = False,
    downgrade_ungrounded: bool | None = None,
    review_queue: Path | None = None,
    human_queue: Path | None = None,
    audit_dir: Path | None = None,
    item: dict[str, Any] | None = None,
) -> FactualityResult:
    """Judge ``target_text`` against ``documents``; never returns a score without a valid reply.

    Raises:
        DataError: the template cannot be rendered.
    """
    rendered = render_factuality_prompt(
        rubric, target_text=target_text, documents=documents, domain_constraints=domain_constraints
    )
    result = FactualityResult(
        status="error",
        reason="",
        prompt_version=rendered.prompt_version,
        rubric_version=rubric.version,
        fixture_key=fixture_key,
        risk_level=risk_level,
        source_document_ids=[d.source_document_id for d in documents],
        answer_sha256=answer_sha256(target_text),
        timestamp=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        model_id=capable.model,
        provider=capable.provider_id,
        cheap_model_id=cheap.model if cheap is not None else None,
        endpoint_host=getattr(capable, "host", None),
        cheap_endpoint_host=getattr(cheap, "host", None) if cheap is not None else None,
    )
    run = _Run(rubric, rendered, documents, target_text, fixture_key, answer_is_recorded, domain_constraints)
    replies: list[str] = []  # every reply of the judgment, the cheap stage's included
    if cheap is not None and risk_level != "high":
        decided = run.cheap_stage(cheap, result, replies, risk_level, downgrade_ungrounded)
        if decided is not None:
            _write_audit(result, run, replies, audit_dir)
            return _finish(result, decided, run, stage="cheap", item=item, human_queue=human_queue)
    elif cheap is not None:
        result.attempts.append(
            {"stage": "cheap", "model_id": cheap.model, "outcome": "skipped (risk level high)"}
        )
    refused = run.replay_refusal(capable)
    if refused:
        return result.unscored(str(_CALL.not_run), refused)
    outcome = run.capable_stage(capable, result, replies, review_queue, audit_dir, item)
    if isinstance(outcome, Unscored):
        if replies:
            result.raw_reply = replies[-1]
        why = unscored_reason(outcome, whose="the judge", caller="judge", provider=capable.provider_id)
        return result.unscored(_CALL.failed, why)
    card = outcome.parsed
    assessed = assess(
        card, documents, rubric, risk_level=risk_level, downgrade_ungrounded=downgrade_ungrounded
    )
    return _finish(result, (card, assessed), run, stage="capable", item=item, human_queue=human_queue)


@dataclass
class _Run:
    rubric: FactualityRubric
    rendered: RenderedFactualityPrompt
    documents: Sequence[Document]
    target_text: str
    fixture_key: str
    answer_is_recorded: bool
    domain_constraints: Sequence[str]

    def parse(self, text: str) -> Scorecard | ParseFailure:
        """The reply read, and refused when it copies a scorecard out of the target text."""
        return refuse_copied(
            parse_scorecard(text, self.rubric, judged_text=self.target_text), self.target_text, self.rubric
        )

    def replay_refusal(self, client: JudgeClient) -> str | None:
        """Why a recorded judge may not grade this target text, or ``None`` (a live judge, or a match)."""
        try:
            check = check_replay(
                client, self.fixture_key, self.target_text, answer_is_recorded=self.answer_is_recorded
            )
        except JudgeError as exc:
            return str(exc)
        return None if check is None or check.allowed else check.detail

    def prompt(self) -> Prompt:
        return Prompt(self.rendered.system, self.rendered.user)

    def retry(self, error: str) -> str:
        """The retry's user prompt: the validation error added to the constraints section."""
        return render_factuality_prompt(
            self.rubric,
            target_text=self.target_text,
            documents=self.documents,
            domain_constraints=[*self.domain_constraints, error],
        ).user

    def cheap_stage(
        self,
        cheap: JudgeClient,
        result: FactualityResult,
        replies: list[str],
        risk_level: str,
        downgrade: bool | None,
    ) -> tuple[Scorecard, Assessment] | None:
        attempt: dict[str, Any] = {"stage": "cheap", "model_id": cheap.model}
        result.attempts.append(attempt)
        refused = self.replay_refusal(cheap)
        if refused:
            attempt["outcome"] = f"escalated: cheap judge not run ({refused})"
            return None
        outcome = run_judge(
            cheap, self.prompt(), fixture_key=self.fixture_key, parse=self.parse, max_attempts=1
        )
        asked = outcome.attempts[0]
        attempt |= outcome.flags()  # half an emoji in the answer: sent as U+FFFD, said here
        if asked.reply is None:
            attempt["outcome"] = f"escalated: call failed ({asked.error})"
            return None
        replies.append(asked.reply)
        attempt |= {"raw_reply_sha256": _sha(asked.reply), "cached": asked.cached}
        if isinstance(outcome, Unscored):
            attempt |= {"outcome": "escalated: invalid reply", "errors": [asked.error]}
            return None
        card = outcome.parsed
        assessed = assess(
            card, self.documents, self.rubric, risk_level=risk_level, downgrade_ungrounded=downgrade
        )
        why = _cheap_rejection(assessed)
        if why:
            attempt["outcome"] = f"escalated: {why}"
            return None
        attempt["outcome"] = "accepted"
        return card, assessed

    def capable_stage(
        self,
        capable: JudgeClient,
        result: FactualityResult,
        replies: list[str],
        review_queue: Path | None,
        audit_dir: Path | None,
        item: dict[str, Any] | None,
    ) -> Scored[Scorecard] | Unscored:
        """Ask the capable judge (one retry), audit the judgment, queue a reply invalid twice."""
        earlier = list(replies)

        def attempts(outcome: Scored[Any] | Unscored) -> list[dict[str, Any]]:
            return [*result.attempts, *_capable_attempts(outcome, capable.model)]

        def audit_record(outcome: Scored[Any] | Unscored) -> dict[str, Any]:
            return _audit_record(result, self, [*earlier, *outcome.replies], attempts(outcome))

        def review_record(outcome: Unscored) -> dict[str, Any]:
            return {
                **_record_head("factuality_invalid_reply", result, self, item),
                "rendered_prompt": {"system": self.rendered.system, "user": self.rendered.user},
                "raw_replies": [*earlier, *outcome.replies],
                "errors": outcome.errors,
                "timestamp": result.timestamp,
            }

        outcome = run_judge(
            capable,
            self.prompt(),
            fixture_key=self.fixture_key,
            parse=self.parse,
            retry=self.retry,
            audit=Audit(Path(audit_dir), audit_record) if audit_dir is not None else None,
            review=Review(review_queue, review_record) if review_queue is not None else None,
        )
        result.attempts[:] = attempts(outcome)
        replies.extend(outcome.replies)
        _audit_fields(result, outcome.recorded)
        result.review_entry_id = outcome.recorded.review_entry_id
        return outcome


def _capable_attempts(outcome: Scored[Any] | Unscored, model: str) -> list[dict[str, Any]]:
    """The capable stage's attempts as a result lists them (stage, model, number, reply hash, outcome)."""
    out = []
    for asked in outcome.attempts:
        attempt: dict[str, Any] = {"stage": "capable", "model_id": model, "attempt": asked.number,
                                   **outcome.flags()}  # fmt: skip
        if asked.reply is None:
            attempt["outcome"] = f"call failed: {asked.error}"
        else:
            attempt |= {"raw_reply_sha256": _sha(asked.reply), "cached": asked.cached}
            if asked.error is None:
                attempt["outcome"] = "parsed"
            else:
                attempt |= {"outcome": "invalid reply", "errors": [asked.error]}
        out.append(attempt)
    return out


def _cheap_rejection(assessed: Assessment) -> str | None:
    if assessed.verifiable == 0:
        return "no verifiable claims"
    below = [c.verdict.claim_id for c in assessed.claims if c.score is not None and c.score < 1]
    if below:
        return f"claim(s) below 1: {', '.join(below[:10])}"
    if any(c.verdict.severity for c in assessed.claims):
        return "a severity was given"
    if assessed.ungrounded:
        return f"{assessed.ungrounded} ungrounded verdict(s)"
    return None


def _finish(
    result: FactualityResult,
    decided: tuple[Scorecard, Assessment],
    run: _Run,
    *,
    stage: str,
    item: dict[str, Any] | None,
    human_queue: Path | None,
) -> FactualityResult:
    card, assessed = decided
    result.stage = stage
    result.assessment = assessed
    result.status = assessed.status
    result.score = assessed.score
    result.judge_reported_score = card.reported_score
    result.raw_reply = card.raw
    result.parse_mode = card.mode
    result.repairs = list(card.repairs)
    if stage == "cheap" and result.cheap_model_id:
        result.model_id = result.cheap_model_id
    if assessed.human_findings and human_queue is not None:
        record = _human_record(result, run, assessed, item)

        record = {"entry_id": review_entry_id(record), **record}
        result.human_entry_id = record["entry_id"]
        enqueue_review(human_queue, record)
    return result


def _human_record(
    result: FactualityResult, run: _Run, assessed: Assessment, item: dict[str, Any] | None
) -> dict[str, Any]:
    chunks = {c.chunk_id: c for d in run.documents for c in d.chunks}
    findings = []
    for c in assessed.human_findings:
        v = c.verdict
        findings.append({
            "claim_id": v.claim_id,
            "claim_text": v.claim_text,
            "verification_result": v.verification_result,
            "severity": v.severity,
            "evidence_quote": v.evidence_quote,
            "evidence_check": c.evidence_check,
            "evidence_chunks": [{"chunk_id": cid, "source_document_id": chunks[cid].source_document_id,
                                 "text": chunks[cid].text} for cid in c.chunk_ids if cid in chunks],
            "judge_rationale": v.judge_rationale,
        })  # fmt: skip
    return {
        **_record_head("factuality_human_verification", result, run, item),
        "risk_level": result.risk_level,
        "target_text": run.target_text,
        "source_document_ids": result.source_document_ids,
        "score": result.score,
        "findings": findings,
        "timestamp": result.timestamp,
    }


def _record_head(
    kind: str, result: FactualityResult, run: _Run, item: dict[str, Any] | None
) -> dict[str, Any]:
    """What identifies a queue entry: the item, the rubric and prompt, the judge, the judged text's hash."""
    return {
        "kind": kind,
        "fixture_key": result.fixture_key,
        "item": item or {},
        "rubric_id": run.rubric.id,
        "rubric_version": result.rubric_version,
        "prompt_version": result.prompt_version,
        "provider": result.provider,
        "model": result.model_id,
        "answer_sha256": result.answer_sha256,
    }


def _audit_record(
    result: FactualityResult, run: _Run, replies: list[str], attempts: list[dict[str, Any]]
) -> dict[str, Any]:
    """The judgment's audit record: the rendered prompt, every raw reply and every attempt."""
    return {
        "kind": "factual_accuracy",
        "fixture_key": result.fixture_key,
        "prompt_version": result.prompt_version,
        "answer_sha256": result.answer_sha256,
        "rendered_prompt": {"system": run.rendered.system, "user": run.rendered.user},
        "raw_replies": replies,
        "attempts": attempts,
        "judge_calls": [c.as_dict() for c in row_calls()],  # the pipeline writes its own over this
    }


def _write_audit(result: FactualityResult, run: _Run, replies: list[str], audit_dir: Path | None) -> None:
    """Audit a judgment the cheap stage decided (the capable stage's is written by its loop)."""
    if audit_dir is not None:
        record = _audit_record(result, run, replies, result.attempts)
        _audit_fields(result, audit_once(Path(audit_dir), record))


def _audit_fields(result: FactualityResult, recorded: Recorded) -> None:
    """Name the audit record in the result (``audit_id``, ``audit_dir``, ``audit_file``)."""

    if recorded.audit_error:  # the audit copy is extra: the result still carries the start of the raw reply
        result.audit_file = f"not written: {recorded.audit_error}"
    elif recorded.audit_id and recorded.audit_dir:
        result.audit_id = recorded.audit_id
        result.audit_dir = recorded.audit_dir
        result.audit_file = str(audit_path(Path(recorded.audit_dir), recorded.audit_id))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _evidence_effect(a: Assessment) -> str:
    """What the evidence check did to the score, for the reason line (empty when nothing moved)."""
    dropped = [c.verdict.claim_id for c in a.claims if c.downgraded]
    if not dropped:
        return ""
    ids = ", ".join(dropped[:10]) + (", …" if len(dropped) > 10 else "")
    before = "none" if a.verdict_score is None else f"{a.verdict_score:.2f}"
    return f" ({ids} scored as Unverifiable; {before} by the judge's verdicts)"


def decide(result: FactualityResult, *, pass_threshold: float, no_claims_pass: bool) -> tuple[bool, str]:
    """Whether the row passes, and its reason line (``PASS``/``FAIL``/``NEEDS_HUMAN_VERIFICATION``/…).

    Never a pass the judge's own verdicts would not give: the computed score is at most the verdicts'
    (:func:`~.score.counted_score`), and "no verifiable claims" passes (``no_claims_pass``) only when the
    judge itself found none — not when the evidence check took every verifiable claim out.
    """
    a = result.assessment
    if result.status == "error" or a is None:
        return False, result.reason or _CALL.failed
    where = f"stage {result.stage}, {result.model_id}"
    counts = ", ".join(f"{n} {k}" for k, n in a.counts.items() if n)
    notes = []
    if a.ungrounded:
        notes.append(f"{a.ungrounded} UNGROUNDED_VERDICT{_evidence_effect(a)}")
    notes.extend(f"MISMATCH: {m}" for m in a.mismatches)
    tail = f"; {'; '.join(notes)}" if notes else ""
    if result.status == "needs_human_verification":
        ids = ", ".join(
            f"{c.verdict.claim_id} ({c.verdict.severity}{', UNGROUNDED_VERDICT' if c.ungrounded else ''})"
            for c in a.human_findings
        )
        shown = "none" if result.score is None else f"{result.score:.2f}"
        return False, (f"NEEDS_HUMAN_VERIFICATION: risk level high and {ids}; factual accuracy {shown} "
                       f"({counts}; {where}){tail}")  # fmt: skip
    if result.status == "no_verifiable_claims" or result.score is None:
        if a.verdict_verifiable:  # the evidence check emptied it: never a pass the judge's verdicts lack
            return False, (f"FAIL NO VERIFIABLE CLAIMS: no score, every verifiable verdict's quote is missing "
                           f"from the evidence ({counts}; {where}){tail}")  # fmt: skip
        head = "PASS" if no_claims_pass else "FAIL"
        return (
            no_claims_pass,
            f"{head} NO VERIFIABLE CLAIMS: no score ({counts or 'no claims'}; {where}){tail}",
        )
    passed = result.score >= pass_threshold
    head = "PASS" if passed else "FAIL"
    return passed, (f"{head} factual accuracy {result.score:.2f} over {a.verifiable} verifiable claim(s), "
                    f"threshold {pass_threshold:g} ({counts}; {where}){tail}")  # fmt: skip
