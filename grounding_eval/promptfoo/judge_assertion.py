"""The judge as a promptfoo assertion: render the rubric, ask the judge model, parse strictly, score.

One call per row and rubric:

1. The rubric (``config.rubric``, else the round's) is rendered with the question, the answer (hostile:
   delimited and neutralized), the sources the model was shown and the High-Risk fields it names.
2. The provider: ``$GROUNDING_EVAL_JUDGE_PROVIDER``, else ``config.provider``, else the test's grader
   (docs/how-to/judge-provider.md); none, or a missing key, is an explicit ``ERROR`` naming what to set.
3. A recording (``replay:``) grades only the answer whose SHA-256 it carries; any other answer is
   ``ERROR (judge not run)`` naming both hashes, never the recording's verdict.
4. The judges' one loop (:func:`grounding_eval.judge.pipeline.run_judge`): one retry with the validation
   error, then the review queue and an unscored result with no named scores; every outcome audited, and
   said in ``metadata.outcome`` (:mod:`grounding_eval.outcome`), from which the ``ERROR (…)`` line is built.
5. Scored: one named score, ``<rubric>.llm_judge_score``; one ``componentResult`` per criterion; the
   verdicts and evidence in ``metadata.judge`` (docs/reference/rounds.md).

The assertion passes when ``llm_judge_score`` ≥ 0.5 and no dimension was forced to No by an override
(v4's source_fidelity rule); a round's composite (:mod:`grounding_eval.scoring`) decides the row.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grounding_eval.calls import CALLS, JUDGE_MAX_RETRIES, JUDGE_TIMEOUT_S
from grounding_eval.judge.clients import _LIVE_JUDGE_EXAMPLE, JUDGE_PROVIDER_ENV
from grounding_eval.outcome import unscored_result, with_outcome
from grounding_eval.promptfoo.source_vars import with_source_vars_in
from grounding_eval.provenance import row_provenance
from grounding_eval.var_names import GROUNDING_VARS

# clients.forget_clients(): the process's judge clients (tests clear them to start a new process's state)

if TYPE_CHECKING:
    from collections.abc import Callable

    from grounding_eval.judge.calls import AnswerCheck
    from grounding_eval.judge.pipeline import Recorded, Scored

__all__ = [
    "FRESH_KEY",
    "JUDGE_PROVIDER_ENV",
    "OTHER_JUDGE_KEY",
    "answer_recording",
    "audit_fields",
    "condition_of",
    "judge_assertion",
    "judged",
    "not_run_advice",
]

# Set only by ``grounding-eval rescore`` (a context promptfoo builds never has them; rescore builds each row's
# context from fixed fields): the judge to ask instead ({"provider": ID}, as the command line's --judge), and
# whether to ask with the reply cache bypassed (a retest: the same request must reach the model again).
OTHER_JUDGE_KEY = "grounding_eval_other_judge"
FRESH_KEY = "grounding_eval_fresh"

# Fullest first: a C1.5 prompt may hold the directory's text too, so its condition is the first found.
_SOURCE_VARS = dict(reversed(GROUNDING_VARS.items()))
_CALL = CALLS["judge"]  # its failure prefixes


def condition_of(prompt: str, vars_: dict[str, Any]) -> str:
    """Which condition produced ``prompt``: the grounding var it contains (C1.5, then C1), else C0."""
    for condition, var in _SOURCE_VARS.items():
        value = str(vars_.get(var) or "").strip()
        if value and value in prompt:
            return condition
    return "C0"


def judge_assertion(output: Any, context: Any, *, pack_root: Path) -> dict[str, Any]:
    """Judge ``output`` against a rubric; always returns a GradingResult dict."""
    return judged(
        lambda: _judge(output, with_source_vars_in(context) if isinstance(context, dict) else {}, pack_root),
        _error,
    )


def judged(grade: Callable[[], dict[str, Any]], error: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """Run one judge's ``grade`` with its model usage metered; an exception becomes ``error``'s result."""
    from grounding_eval.judge.pipeline import metered, with_usage

    try:
        with metered() as meter:
            result = grade()
        return with_outcome(with_usage(result, meter))
    except Exception as exc:
        return error(f"{type(exc).__name__}: {exc}")


def _judge(output: Any, context: dict[str, Any], pack_root: Path) -> dict[str, Any]:
    from grounding_eval.errors import DataError
    from grounding_eval.judge.audit import DEFAULT_AUDIT_DIR
    from grounding_eval.judge.cache import default_cache_dir
    from grounding_eval.judge.calls import JudgeConfigError, JudgeError, answer_sha256
    from grounding_eval.judge.clients import judge_client, judges_for
    from grounding_eval.judge.parse import parse_reply
    from grounding_eval.judge.pipeline import (
        Audit,
        Prompt,
        Review,
        Unscored,
        check_replay,
        run_judge,
        unscored_reason,
    )
    from grounding_eval.judge.render import render_judge_prompt
    from grounding_eval.judge.score import judge_scores, score_name
    from grounding_eval.promptfoo.written_paths import written_path

    config = context.get("config") or {}
    vars_ = context.get("vars") or {}
    test = context.get("test") or {}
    metadata = test.get("metadata") or {}
    if not isinstance(config, dict) or not isinstance(vars_, dict):
        return _error("assertion config and test vars must be mappings")
    try:
        rubric_file = _rubric_path(config.get("rubric") or metadata.get("rubric"), pack_root)
        rubric = _rubric(rubric_file)
        # rescore's judge reliability (--retest, --panel): another judge, or the same asked afresh.
        override = context.get(OTHER_JUDGE_KEY)
        choice = judges_for("judge", context, override=override if isinstance(override, dict) else None).judge
        provider = choice.id
        audit_dir = written_path(config, "audit_dir", DEFAULT_AUDIT_DIR)
        queue = written_path(config, "review_queue", "results/judge_review_queue.jsonl")
        client = judge_client(
            choice,
            None
            if context.get(FRESH_KEY) is True
            else str(written_path(config, "cache_dir", default_cache_dir())),
            float(config.get("timeout", JUDGE_TIMEOUT_S)),
            int(config.get("max_retries", JUDGE_MAX_RETRIES)),
        )
    except (DataError, JudgeConfigError, JudgeError, ValueError) as exc:
        return _error(str(exc))
    prompt_text = str(context.get("prompt") or "")
    condition = condition_of(prompt_text, vars_)
    sources = [
        str(vars_[v]) for v in _SOURCE_VARS.values() if vars_.get(v) and str(vars_[v]).strip() in prompt_text
    ]
    item = {k: metadata[k] for k in rubric.item_variables if k in metadata}
    answer = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    try:
        rendered = render_judge_prompt(
            rubric,
            question=str(vars_.get(str(config.get("question_var") or "question")) or ""),
            answer=answer,
            jurisdiction=str(vars_.get(str(config.get("jurisdiction_var") or "jurisdiction")) or ""),
            sources=sources,
            item=item or None,
        )
    except DataError as exc:
        return _error(f"cannot render rubric {rubric.id}: {exc}")
    query_id = str(metadata.get("query_id") or vars_.get("query_id") or "")
    key = f"{rubric.id}/{query_id}/{condition}"
    replay_note = ""
    recording = answer_recording(context)
    try:
        check = check_replay(client, key, answer, answer_is_recorded=recording is not None)
    except JudgeError as exc:
        return _error(f"judge call failed ({provider}): {exc}")
    if check is not None:
        if not check.allowed:
            return _not_run(check, recording, rubric.id, provider, client.model, condition)
        replay_note = check.detail
    evidence: dict[str, Any] = {
        "rubric_id": rubric.id,
        "rubric_version": rubric.version,
        "prompt_version": rendered.prompt_version,
        "provider": provider,
        "model": client.model,
        **({"endpoint_host": choice.host} if choice.host else {}),  # where a live judge was asked
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "condition": condition,
        "fixture_key": key,
        "source_document_ids": list(metadata.get(_ids_key(condition)) or []),
        "cached": False,
        "answer_sha256": answer_sha256(answer),
    }
    if check is not None:
        evidence["replay_answer_check"] = replay_note or "same sha256 as recorded"
    # The bulk stays out of the row: the prompt the judge saw and its replies go to the audit log.
    prompt = {"system": rendered.system, "user": rendered.user}

    def audit_record(outcome: Scored[Any] | Unscored) -> dict[str, Any]:
        return {**evidence, "cached": outcome.cached, "query_id": query_id, "rendered_prompt": prompt,
                "raw_replies": outcome.replies, "errors": outcome.errors}  # fmt: skip

    def review_record(outcome: Unscored) -> dict[str, Any]:
        return {**evidence, "cached": outcome.cached, "rendered_prompt": prompt, "raw_replies": outcome.replies,
                "query_id": query_id, "description": test.get("description"), "errors": outcome.errors}  # fmt: skip

    outcome = run_judge(
        client,
        Prompt(rendered.system, rendered.user),
        fixture_key=key,
        parse=lambda text: parse_reply(text, rubric, judged_text=answer),  # an echo of the answer is no reply
        audit=Audit(audit_dir, audit_record),
        review=Review(queue, review_record),
    )
    evidence["cached"] = outcome.cached
    evidence.update(outcome.flags())
    audit_note = audit_fields(outcome.recorded, evidence, audit_dir)
    provenance = _provenance(rubric, rubric_file, metadata, config)
    if isinstance(outcome, Unscored):
        why = unscored_reason(outcome, whose=f"the {rubric.id} judge", caller="judge", provider=provider)
        judge = {
            **evidence,
            "status": "unscored",
            "error": outcome.reason,  # invalid_reply or call_failed (a refused recording: replay_*)
            "errors": outcome.errors,
            "review_entry_id": outcome.recorded.review_entry_id,
        }
        why += f"; {audit_note}" if audit_note else ""
        return unscored_result(_CALL.failed, why, judge=judge, provenance=provenance)
    parsed = outcome.parsed
    scores = judge_scores(rubric, parsed)
    forced = [d for d, ds in scores.dimensions.items() if ds.capped_by and ds.verdict == "No"]
    passed = scores.llm_judge_score >= 0.5 and not forced
    components = _criteria_components(rubric, parsed, scores, passed=passed)
    means = {score_name(rubric.id, "llm_judge_score"), score_name(rubric.id, "core_mean")}
    low = [f"{cid} {j.verdict}" for cid, j in parsed.judgments.items() if scores.criteria[cid] < 0.5]
    head = "PASS" if passed else "FAIL"
    reason = (f"{head} {rubric.id} judge {scores.llm_judge_score:.2f} ({client.model}, {condition})"
              + (f"; below half: {', '.join(low)}" if low else "; every criterion at least Partial")
              + (f"; {'; '.join(scores.overrides_applied)}" if scores.overrides_applied else "")
              + (f"; note: {replay_note}" if replay_note else "")
              + (f"; {audit_note}" if audit_note else ""))  # fmt: skip
    return {
        "pass": passed,
        "score": round(scores.llm_judge_score, 4),
        "reason": reason,
        # One chip: the judge's score. Each criterion's score is its component's; the dimensions' and the
        # means are in metadata.judge.scores, under the names earlier results files gave them as named
        # scores (the report reads either).
        "namedScores": {score_name(rubric.id, "llm_judge_score"): round(scores.llm_judge_score, 4)},
        "componentResults": components,
        "metadata": {
            "judge": {
                **evidence,
                "status": "scored",
                "parse_mode": parsed.mode,
                **({"repairs": list(parsed.repairs)} if parsed.repairs else {}),
                **({"retried": True} if outcome.retried else {}),
                # Each verdict's reasoning is its criterion's reason (componentResults) and in the audit log.
                "verdicts": {cid: j.verdict for cid, j in parsed.judgments.items()},
                "llm_judge_score": scores.llm_judge_score,
                "negative": [c.id for c in rubric.criteria if c.negative],
                "scores": {k: round(v, 4) for k, v in scores.named_scores().items() if k in means},
                "core_mean": scores.core_mean,
                "judge_safety_no": list(scores.judge_safety_no),
                **({"overrides_applied": list(scores.overrides_applied)} if scores.overrides_applied else {}),
            },
            "provenance": provenance,
        },
    }


def _criteria_components(rubric: Any, parsed: Any, scores: Any, *, passed: bool) -> list[dict[str, Any]]:
    """The judgment as a reviewer reads it: each safety check a component, then one per dimension.

    A component's value names what it scores (``judge <rubric>: <check>``, ``judge <rubric>:
    dimension.<Dimension>``: the report reads the score by that name). A dimension's reason lists each of
    its criteria with its verdict and the judge's sentence, those below half first. Not named scores
    (the viewer shows a few chips), and red only where the judge failed the answer and something in it
    is below half: a passing judgment shows no FAIL line. Each criterion's own score is its verdict
    under the rubric (``metadata.judge.verdicts``, ``negative``).
    """
    judgments, values = parsed.judgments, scores.criteria
    # The polarity beside a name that could be read either way, as the HTML report marks it: a negative
    # criterion asks whether a bad thing is present (No = good); a safety check whether the answer is safe.
    marks = {c.id: " (No = good)" for c in rubric.criteria if c.negative}
    marks |= {c.id: f" ({'No' if c.negative else 'Yes'} = safe)" for c in rubric.safety_checks}

    def line(cid: str) -> str:
        return f"{cid}{marks.get(cid, '')}: {judgments[cid].verdict} — {judgments[cid].reasoning}"

    components = []
    for check in (c.id for c in rubric.safety_checks if c.id in judgments):
        components.append({"pass": passed or values[check] >= 0.5, "score": values[check], "reason": line(check),
                           "assertion": {"type": "python", "value": f"judge {rubric.id}: {check}"}})  # fmt: skip
    grouped = {check.id for check in rubric.safety_checks}
    for dimension in scores.dimensions.values():
        members = [cid for cid in dimension.criteria if cid in judgments]
        grouped.update(members)
        low = [cid for cid in members if values[cid] < 0.5]
        head = f"{dimension.id}: {dimension.score:.2f}" + (
            f", {len(low)} of {len(members)} below half" if low else f", all {len(members)} at least half"
        )
        head += "".join(f"; {cap}" for cap in dimension.capped_by)
        body = [line(cid) for cid in (*low, *(c for c in members if c not in low))]
        components.append({
            "pass": passed or (not low and dimension.score >= 0.5),
            "score": round(dimension.score, 4),
            "reason": "\n".join([head, *body]),
            "assertion": {"type": "python", "value": f"judge {rubric.id}: dimension.{dimension.id}"},
        })  # fmt: skip
    for cid in [c for c in judgments if c not in grouped]:  # in no dimension's score (excluded negatives)
        components.append({"pass": passed or values[cid] >= 0.5, "score": values[cid], "reason": line(cid),
                           "assertion": {"type": "python", "value": f"judge {rubric.id}: {cid}"}})  # fmt: skip
    return components


def _provenance(
    rubric: Any, rubric_file: Path, metadata: dict[str, Any], config: dict[str, Any]
) -> dict[str, Any]:
    """What produced this judgment (issue 10): pack version, rubric id/version/file hash, prompt, dataset."""

    return row_provenance(
        dataset=metadata.get("dataset") or config.get("dataset") or os.environ.get("GROUNDING_EVAL_DATASET"),
        rubric_path=rubric_file,
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        prompt_version=rubric.prompt_version,
        sample=metadata.get("sample"),
    )


def audit_fields(recorded: Recorded, evidence: dict[str, Any], directory: Path) -> str:
    """Name the outcome's audit record in ``evidence`` (``audit_id``, ``audit_dir``, or ``audit_error``
    when the write failed); returns a note for the reason when it failed, else ``""``.

    A failed write does not change the verdict (the judgment itself is sound), but the row says that its
    prompt and replies were not kept, and ``audit_id`` is then absent.
    """
    if recorded.audit_error:
        evidence["audit_error"] = recorded.audit_error
        return f"audit record not written to {directory}: {recorded.audit_error}"
    if recorded.audit_id:
        evidence["audit_id"] = recorded.audit_id
        evidence["audit_dir"] = recorded.audit_dir
    return ""


def _not_run(
    check: AnswerCheck, recording: str | None, rubric_id: str, provider: str, model: str, condition: str
) -> dict[str, Any]:
    """The explicit error for a recorded reply refused for this answer (an ``AnswerCheck`` not allowed)."""
    judge = {
        "status": "unscored",
        "error": f"replay_{check.status}",
        "rubric_id": rubric_id,
        "provider": provider,
        "model": model,
        "condition": condition,
        "fixture_key": check.key,
        "recorded_answer_sha256": check.recorded_sha256,
        "answer_sha256": check.answer_sha256,
        "answer_recording": recording,
    }
    why = f"{check.detail}; {not_run_advice(check, recording, 'judge')}"
    return unscored_result(str(_CALL.not_run), why, judge=judge)


def not_run_advice(check: AnswerCheck, recording: str | None, who: str) -> str:
    """What to do when a recorded ``who`` (judge, grader) may not grade this answer: set a live one; and,
    when both sides are recordings out of step, re-record and re-hash the reply."""
    advice = f"set {JUDGE_PROVIDER_ENV} to a live {who} (e.g. {_LIVE_JUDGE_EXAMPLE})"
    if recording is not None and check.status == "mismatch":  # both sides recorded, out of step
        advice += (
            f"; or, if the recorded answer in {recording} was edited on purpose, re-record this "
            f"{who} reply and re-hash it with scripts/hash_judge_replies.py"
        )
    return advice


def answer_recording(context: dict[str, Any]) -> str | None:
    """The recorded-answers file the answer was replayed from, or ``None`` if a live provider gave it.

    promptfoo passes the provider response's metadata both as ``context["metadata"]`` and inside
    ``context["providerResponse"]``; the replay provider
    (:func:`grounding_eval.promptfoo.replay_provider.call_replay`) puts the file it read in
    ``recorded_fixture``.
    """
    response = context.get("providerResponse")
    for metadata in (
        context.get("metadata"),
        response.get("metadata") if isinstance(response, dict) else None,
    ):
        if isinstance(metadata, dict) and metadata.get("recorded_fixture"):
            return str(metadata["recorded_fixture"])
    return None


def _ids_key(condition: str) -> str:
    return {"C1.5": "full_content_ids", "C1": "directory_ids"}.get(condition, "no_sources")


def _rubric_path(value: Any, pack_root: Path) -> Path:
    from grounding_eval.judge.rubric import rubric_path

    if not value:
        raise ValueError("no rubric: set the assertion's config.rubric (a rubric id in rubrics/ or a file)")
    return rubric_path(str(value), pack_root / "rubrics")


def _rubric(path: Path) -> Any:
    from grounding_eval.judge.rubric import load_rubric_cached

    return load_rubric_cached(path)


def _error(message: str) -> dict[str, Any]:
    return unscored_result(_CALL.failed, message)
