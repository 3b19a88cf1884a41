"""The docs-QA rubric as a promptfoo assertion: four pass/fail/n-a criteria, two helpers, the seed's score.

One call per row. The flow, and what can come back:

1. The question's record travels in the test's metadata (set by
   :func:`grounding_eval.promptfoo.docs_qa_tests.generate_tests`): ``question_type``, ``question_id``,
   ``reference_answer``, ``must_include``, ``source_sections``, and the folders ``dataset`` and ``docs``.
2. The helpers run first, on the answer alone: must-include coverage
   (:mod:`grounding_eval.docs_qa.coverage`) and citation validity (:mod:`grounding_eval.docs_qa.citations`).
3. The grader (``$GROUNDING_EVAL_JUDGE_PROVIDER``, else ``config.provider``; ``{dataset}`` stands for the
   dataset folder) is sent the rendered rubric prompt. A recorded grader (``replay:``) grades only the
   answer its reply was recorded for (``answer_sha256``); another answer gets an explicit
   ``ERROR (docs-qa grader not run)``. The judges' one loop (:func:`grounding_eval.judge.pipeline.run_judge`)
   parses the reply strictly (:func:`grounding_eval.docs_qa.reply.parse_grading`); an invalid reply is
   sent back once with the error; a second invalid reply goes to the review queue (``config.review_queue``,
   with the prompt, every raw reply and the errors) and the row is an explicit ``ERROR (docs-qa
   unscored)`` with no named scores, as is a grader call that fails for good (``metadata.outcome``
   unscored with its ``unscored_reason``, :mod:`grounding_eval.outcome`; scored rows say pass or fail).
4. Otherwise: the seed's score (sum of applicable criteria) and pass rule (Correct = 1 and Grounded = 1),
   one named score and one component per applicable criterion, the helpers' named scores and
   components, and ``metadata.docs_qa`` (verdicts with reasons, ``applicable``, ``total``, ``passed``,
   ``missed_points``, ``invalid_citations``, ``disagreements``, evidence). The helpers never change the
   grader's verdicts; a disagreement is flagged in the reason and the metadata.

The rendered prompt and the raw replies are not put in the row (several kilobytes); they go to the
judges' audit log (``config.audit_dir``, default ``results/audit``), and the row carries
``audit_id``, ``audit_dir`` and the prompt's ``prompt_sha256`` (``grounding-eval audit`` prints them).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grounding_eval.calls import CALLS, JUDGE_MAX_RETRIES, JUDGE_TIMEOUT_S
from grounding_eval.outcome import unscored_result
from grounding_eval.provenance import row_provenance

if TYPE_CHECKING:
    from grounding_eval.docs_qa.rubric import DocsQaRubric
    from grounding_eval.judge.pipeline import Scored

__all__ = ["docs_qa_assertion"]

_PREFIX = "docs_qa"
_CALL = CALLS[_PREFIX]  # its failure prefixes
_HELPERS = ("must_include_coverage", "citation_validity")


def docs_qa_assertion(output: Any, context: Any, *, pack_root: Path) -> dict[str, Any]:
    """Grade ``output`` with the docs-QA rubric; always returns a GradingResult dict."""
    from grounding_eval.promptfoo.judge_assertion import judged

    return judged(lambda: _grade(output, context if isinstance(context, dict) else {}, pack_root), _error)


def _grade(output: Any, context: dict[str, Any], pack_root: Path) -> dict[str, Any]:
    from grounding_eval.docs_qa.citations import check_citations
    from grounding_eval.docs_qa.coverage import check_coverage
    from grounding_eval.docs_qa.docs_set import load_docs_set
    from grounding_eval.docs_qa.render import render_grader_prompt
    from grounding_eval.docs_qa.reply import parse_grading
    from grounding_eval.docs_qa.scoring import disagreements, score_answer
    from grounding_eval.errors import DataError
    from grounding_eval.judge.audit import DEFAULT_AUDIT_DIR
    from grounding_eval.judge.calls import JudgeConfigError, JudgeError, answer_sha256
    from grounding_eval.judge.pipeline import (
        Audit,
        Prompt,
        Review,
        Unscored,
        check_replay,
        run_judge,
        unscored_reason,
    )
    from grounding_eval.promptfoo.judge_assertion import answer_recording, audit_fields, not_run_advice
    from grounding_eval.promptfoo.written_paths import written_path

    config = context.get("config") or {}
    test = context.get("test") or {}
    metadata = test.get("metadata") or {}
    if not isinstance(config, dict) or not isinstance(metadata, dict):
        return _error("assertion config and test metadata must be mappings")
    try:
        question = _question(metadata)
        rubric_file = Path(str(config.get("rubric") or pack_root / "rubrics" / "docs_qa.yaml"))
        rubric = _rubric(rubric_file)
        docs = load_docs_set(str(metadata.get("docs") or ""))
        if question.type not in {t.id for t in rubric.question_types}:
            raise ValueError(
                f"question {question.id}: type {question.type!r} is not a type of rubric {rubric.id}"
            )
        unknown = [sid for sid in question.source_sections if not docs.has(sid)]
        if unknown:
            raise ValueError(
                f"question {question.id}: source section(s) not in {docs.root}: {', '.join(unknown)}"
            )
        sources = [(sid, docs.section(sid).text) for sid in question.source_sections]
        choice = _provider(context)
        provider = choice.id
    except (DataError, JudgeError, ValueError, KeyError) as exc:
        return _error(exc.one_line() if isinstance(exc, DataError) else str(exc))
    except OSError as exc:  # the rubric file named by config.rubric cannot be read
        return _error(f"{type(exc).__name__}: {exc}")
    answer = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)

    coverage = check_coverage(
        answer, question.must_include, min_ratio=rubric.coverage_min_ratio,
        min_word_share=rubric.coverage_min_word_share,
    )  # fmt: skip
    citations = check_citations(answer, docs)

    try:
        rendered = render_grader_prompt(rubric, question, answer, sources)
        client = _client(choice, config)
    except (DataError, JudgeConfigError, ValueError) as exc:
        return _error(str(exc))
    key = f"{rubric.id}/{question.id}"
    answer_hash = answer_sha256(answer)
    prompt_hash = _prompt_sha256(rendered.system, rendered.user)
    evidence: dict[str, Any] = {
        "rubric_id": rubric.id,
        "rubric_version": rubric.version,
        "prompt_version": rubric.prompt_version,
        "provider": provider,
        "model": client.model,
        **({"endpoint_host": choice.host} if choice.host else {}),  # where a live grader was asked
        "fixture_key": key,
        "answer_sha256": answer_hash,
        "prompt_sha256": prompt_hash,
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "question_type": question.type,
    }
    recording = answer_recording(context)
    try:
        check = check_replay(client, key, answer, answer_is_recorded=recording is not None)
    except JudgeError as exc:
        return _error(f"grader call failed ({provider}): {exc}")
    if check is not None and not check.allowed:
        refused = {"status": "unscored", "error": f"replay_{check.status}",
                   "recorded_answer_sha256": check.recorded_sha256, "answer_recording": recording}  # fmt: skip
        why = f"{check.detail}; {not_run_advice(check, recording, 'grader')}"
        return unscored_result(str(_CALL.not_run), why, **{_PREFIX: {**evidence, **refused}})
    out_of_scope = question.out_of_scope
    prompt = {"system": rendered.system, "user": rendered.user}

    def audit_record(outcome: Scored[Any] | Unscored) -> dict[str, Any]:
        return {"kind": "docs_qa", **evidence, "retried": outcome.retried, "rendered_prompt": prompt,
                "raw_replies": outcome.replies, "errors": outcome.errors}  # fmt: skip

    def review_record(outcome: Unscored) -> dict[str, Any]:
        return {**evidence, "retried": outcome.retried, "rendered_prompt": prompt, "raw_replies": outcome.replies,
                "question_id": question.id, "errors": outcome.errors}  # fmt: skip

    try:
        audit_dir = written_path(config, "audit_dir", DEFAULT_AUDIT_DIR)
        queue = written_path(config, "review_queue", "results/docs_qa_review_queue.jsonl")
    except DataError as exc:
        return _error(str(exc))
    outcome = run_judge(
        client,
        Prompt(rendered.system, rendered.user),
        fixture_key=key,
        parse=lambda text: parse_grading(text, rubric, out_of_scope=out_of_scope, judged_text=answer),
        audit=Audit(audit_dir, audit_record),
        review=Review(queue, review_record),
    )
    evidence["retried"] = outcome.retried
    evidence.update(outcome.flags())
    audit_note = audit_fields(outcome.recorded, evidence, audit_dir)  # a failed write changes no verdict
    if isinstance(outcome, Unscored):
        why = unscored_reason(outcome, whose="the grader's", caller="grader", provider=provider)
        why += f"; {audit_note}" if audit_note else ""
        graded = {
            **evidence,
            "status": "unscored",
            "error": outcome.reason,  # invalid_reply or call_failed (a refused recording: replay_*)
            "errors": outcome.errors,
            "review_entry_id": outcome.recorded.review_entry_id,
        }
        return unscored_result(_CALL.failed, why, **{_PREFIX: graded})
    parsed = outcome.parsed

    scores = {cid: g.score for cid, g in parsed.grades.items()}
    answer_score = score_answer(scores, rubric.pass_requires)
    missed = list(coverage.missed)
    invalid = list(citations.invalid)
    flags = disagreements(scores, missed, invalid)
    named: dict[str, float] = {f"{_PREFIX}.{cid}": float(s) for cid, s in scores.items() if s is not None}
    # The seed's answer score is a count (0–4) out of the criteria that apply: promptfoo would average it
    # as a percentage (304 %) in the viewer's header, so both counts are kept in metadata, not as chips.
    counts = {
        f"{_PREFIX}.score": float(answer_score.total),
        f"{_PREFIX}.applicable": float(answer_score.applicable),
    }
    components = [
        _component(g.score == 1, float(g.score or 0), f"{_PREFIX}.{cid}", f"{cid}: {g.verdict} — {g.reason}")
        for cid, g in parsed.grades.items()
        if g.score is not None
    ]
    helpers = (
        ("must_include_coverage", coverage.coverage, len(coverage.points), missed,
         "must_include coverage", "missed: ", "; ", "every point matched"),
        ("citation_validity", citations.validity, len(citations.citations), invalid,
         "citation validity", "not in the docs set: ", ", ", "every cited section exists"),
    )  # fmt: skip
    for name, share, n, bad, label, bad_lead, sep, all_good in helpers:
        if share is None:  # nothing to check: no must-include points, or no citations
            continue
        named[f"{_PREFIX}.{name}"] = round(share, 4)
        detail = f"{bad_lead}{sep.join(bad)}" if bad else all_good
        components.append(
            _component(not bad, share, f"{_PREFIX}.{name}", f"{label} {n - len(bad)}/{n}; {detail}")
        )
    if flags:
        components.append(_component(False, 0.0, None, "disagreement: " + " | ".join(flags)))
    if answer_score.passed:  # a passing row must not read as failed: its findings are in its reason
        components = [{**c, "pass": True} for c in components]
    verdicts = ", ".join(f"{cid} {g.verdict}" for cid, g in parsed.grades.items())
    reason = (
        f"{'PASS' if answer_score.passed else 'FAIL'} docs_qa {answer_score.label} ({question.type}): {verdicts}"
        + (
            f"; fails the pass rule on {', '.join(answer_score.failed_requirements)}"
            if not answer_score.passed
            else ""
        )
        + (f"; flag missed point(s): {'; '.join(missed)}" if missed else "")
        + (f"; invalid citation(s): {', '.join(invalid)}" if invalid else "")
        + (f"; DISAGREEMENT: {' | '.join(flags)}" if flags else "")
        + (f"; {audit_note}" if audit_note else "")
    )
    return {
        "pass": answer_score.passed,
        "score": round(answer_score.total / answer_score.applicable, 4) if answer_score.applicable else 0.0,
        "reason": reason,
        "namedScores": named,
        "componentResults": components,
        "metadata": {
            _PREFIX: {
                **evidence,
                "status": "scored",
                "parse_mode": parsed.mode,
                "repairs": list(parsed.repairs),
                "criteria": {
                    cid: {"verdict": g.verdict, "reason": g.reason} for cid, g in parsed.grades.items()
                },
                "applicable": answer_score.applicable,
                "total": answer_score.total,
                "scores": counts,
                "passed": answer_score.passed,
                "missed_points": missed,
                "invalid_citations": invalid,
                "external_urls": list(citations.external_urls),
                "disagreements": flags,
            },
            "provenance": _provenance(rubric, rubric_file, metadata),
        },
    }


def _provenance(rubric: DocsQaRubric, rubric_file: Path, metadata: dict[str, Any]) -> dict[str, Any]:
    """What produced this grade (issue 10): pack version, rubric id/version/file hash, prompt, dataset."""

    return row_provenance(dataset=metadata.get("dataset"), rubric_path=rubric_file, rubric_id=rubric.id,
                          rubric_version=rubric.version, prompt_version=rubric.prompt_version,
                          sample=metadata.get("sample"))  # fmt: skip


def _component(passed: bool, score: float, metric: str | None, reason: str) -> dict[str, Any]:
    assertion: dict[str, Any] = {"type": "python", "value": f"docs_qa: {metric or 'disagreement'}"}
    if metric:
        assertion["metric"] = metric
    return {"pass": passed, "score": round(score, 4), "reason": reason, "assertion": assertion}


def _question(metadata: dict[str, Any]) -> Any:
    from grounding_eval.docs_qa.testset import Question

    needed = (
        "question_id",
        "question_type",
        "question",
        "reference_answer",
        "must_include",
        "source_sections",
        "docs",
    )
    missing = [k for k in needed if k not in metadata]
    if missing:
        raise ValueError(
            f"test metadata lacks {', '.join(missing)}: generate the tests with datasets/docs_qa/generate.py"
        )
    lists = [metadata["must_include"], metadata["source_sections"]]
    if not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in lists):
        raise ValueError("test metadata must_include and source_sections must be lists of text")
    return Question(
        id=str(metadata["question_id"]),
        type=str(metadata["question_type"]),
        question=str(metadata["question"]),
        reference_answer=str(metadata["reference_answer"]),
        must_include=tuple(metadata["must_include"]),
        source_sections=tuple(metadata["source_sections"]),
    )


def _rubric(path: Path) -> DocsQaRubric:
    stat = path.stat()
    return _load_rubric(str(path), stat.st_size, stat.st_mtime_ns)


@cache
def _load_rubric(path: str, size: int, mtime: int) -> DocsQaRubric:
    from grounding_eval.docs_qa.rubric import load_docs_qa_rubric

    del size, mtime  # the cache key only
    return load_docs_qa_rubric(path)


def _provider(context: dict[str, Any]) -> Any:
    """The grader, resolved as every judge's (:func:`grounding_eval.judge.clients.judges_for`)."""
    from grounding_eval.judge.clients import judges_for

    return judges_for("docs_qa", context).judge


def _client(choice: Any, config: dict[str, Any]) -> Any:
    """The grader's client, built once per process as the rubric judge's (a recording restarted per row:
    its position in a key's replies, reply 1 then the retry's reply 2, starts over for every row)."""
    from grounding_eval.judge.cache import default_cache_dir
    from grounding_eval.judge.clients import judge_client
    from grounding_eval.promptfoo.written_paths import written_path

    return judge_client(
        choice,
        str(written_path(config, "cache_dir", default_cache_dir())),
        float(config.get("timeout", JUDGE_TIMEOUT_S)),
        int(config.get("max_retries", JUDGE_MAX_RETRIES)),
    )


def _prompt_sha256(system: str, user: str) -> str:
    text = json.dumps({"system": system, "user": user}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _error(message: str) -> dict[str, Any]:
    return unscored_result(_CALL.failed, message)
