"""The factual-accuracy judge as a promptfoo assertion (``file://assertions/grounding.py:factuality``).

Reads promptfoo's ``(output, context)``, finds the evidence, calls :func:`grounding_eval.factuality.judge.
judge_factuality`, and returns a GradingResult — always, whatever the output holds (never raises).

Evidence, in this order: ``config.evidence_files`` (text files, or chunk lists with ids); the vars named
in ``config.evidence_vars`` (one document per var, id = the var's name); otherwise, for a legal-aid row
generated from a dataset, the C1.5 articles the model was shown (``metadata.full_content_ids`` read from
``<metadata.dataset>/articles``) — only when the prompt really contains them. No evidence is an ERROR.

Judge: resolved as every judge's (``assertions/judges.cjs``): ``$GROUNDING_EVAL_JUDGE_PROVIDER`` beats
``config.provider`` (``{dataset}`` = the test's dataset folder). Two-stage: ``config.cheap_provider`` (or
``$GROUNDING_EVAL_FACTUALITY_CHEAP_PROVIDER``); when a live judge is set through the environment and the
cheap one is not, the cheap stage is off, so one switch makes the whole judgment live.

Risk level: the ``risk_level`` var, else ``config.risk_level``; else, for a legal-aid item (a test the
legal-aid generator made: its metadata names the item's ``jurisdiction``), the rubric's ``legal_risk_level``,
high — the seed: "For high-stakes domains like healthcare or legal review, set [RISK_LEVEL] to high" —
whatever the item's risk tier; else the test's ``metadata.risk_tier`` mapped by the rubric (critical and
high → high, moderate → standard), else standard. Where the level came from is recorded beside it
(``metadata.factuality.risk_level_from``).

Streaming: only finalized outputs are scored. An output promptfoo marks partial (``isPartial``,
``metadata.partial``, or a ``finishReason`` of ``length``) is refused with an ERROR.

Result: ``namedScores`` ``factual_accuracy`` (absent with no verifiable claims or on error),
``factuality.contradicted``, ``factuality.severity.critical`` and ``.major``, ``factuality.ungrounded_verdicts``
(what a reviewer acts on); every count (``factuality.<verification result>``,
``factuality.severity.<level>``) in ``metadata.factuality.scores``; one ``componentResult`` per claim.
``config.downgrade_ungrounded`` (default the rubric's, true) only decides whether an ungrounded Supported
claim counts as Unverifiable or keeps its 1: no setting lets an ungrounded verdict raise the score.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grounding_eval.calls import CALLS, JUDGE_MAX_RETRIES, JUDGE_TIMEOUT_S
from grounding_eval.judge.clients import CHEAP_PROVIDER_ENV
from grounding_eval.outcome import Outcome, unscored_result
from grounding_eval.promptfoo.source_vars import with_source_vars_in
from grounding_eval.provenance import row_provenance

__all__ = ["CHEAP_PROVIDER_ENV", "factuality_assertion"]
_DEFAULT_QUEUE = "results/factuality_review_queue.jsonl"
_DEFAULT_HUMAN_QUEUE = "results/factuality_human_verification.jsonl"
_CHIPS = frozenset({"factual_accuracy", "factuality.contradicted", "factuality.severity.critical",
                    "factuality.severity.major", "factuality.ungrounded_verdicts"})  # fmt: skip


def factuality_assertion(output: Any, context: Any, *, pack_root: Path) -> dict[str, Any]:
    """Judge ``output``'s factual accuracy against its evidence; always returns a GradingResult dict."""
    from grounding_eval.promptfoo.judge_assertion import judged

    return judged(
        lambda: _assert(output, with_source_vars_in(context) if isinstance(context, dict) else {}, pack_root),
        _error,
    )


def _assert(output: Any, context: dict[str, Any], pack_root: Path) -> dict[str, Any]:
    from grounding_eval.errors import DataError
    from grounding_eval.factuality.judge import decide, judge_factuality
    from grounding_eval.factuality.rubric import load_rubric
    from grounding_eval.judge.audit import DEFAULT_AUDIT_DIR
    from grounding_eval.judge.cache import default_cache_dir
    from grounding_eval.judge.calls import JudgeConfigError, JudgeError
    from grounding_eval.judge.clients import judge_client, judges_for
    from grounding_eval.promptfoo.judge_assertion import answer_recording, condition_of
    from grounding_eval.promptfoo.written_paths import written_path

    config = context.get("config") or {}
    vars_ = context.get("vars") or {}
    test = context.get("test") or {}
    metadata = test.get("metadata") or {}
    if not isinstance(config, dict) or not isinstance(vars_, dict) or not isinstance(metadata, dict):
        return _error("assertion config, test vars and test metadata must be mappings")
    partial = _partial(context)
    if partial:
        return _error(f"refused a partial output ({partial}): only complete, finalized responses are scored")
    answer = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    if not answer.strip():
        return _error("the output is empty: nothing to judge")
    prompt_text = str(context.get("prompt") or "")
    condition = condition_of(prompt_text, vars_)
    try:
        rubric_file = Path(str(config["rubric"])) if config.get("rubric") else (
            pack_root / "rubrics" / "factual_accuracy.yaml")  # fmt: skip
        rubric = load_rubric(rubric_file)
        documents = _evidence(config, vars_, metadata, prompt_text, rubric.chunk_chars)
        risk, risk_from = rubric.risk_choice(
            vars_.get("risk_level") or config.get("risk_level"),
            tier=metadata.get("risk_tier"),
            legal=_legal_item(metadata),
        )
        judges = judges_for("factuality", context)  # the cheap stage too (assertions/judges.cjs)
        cache_dir = str(written_path(config, "cache_dir", default_cache_dir()))
        review_queue = written_path(config, "review_queue", _DEFAULT_QUEUE)
        human_queue = written_path(config, "human_queue", _DEFAULT_HUMAN_QUEUE)
        audit_dir = written_path(config, "audit_dir", DEFAULT_AUDIT_DIR)
        timeout = float(config.get("timeout", JUDGE_TIMEOUT_S))
        retries = int(config.get("max_retries", JUDGE_MAX_RETRIES))
        # Built once per process, as the other judges' (a recording restarted for every row).
        capable = judge_client(judges.judge, cache_dir, timeout, retries)
        cheap = judge_client(judges.cheap, cache_dir, timeout, retries) if judges.cheap else None
        constraints = config.get("domain_constraints") or []
        constraints = [constraints] if isinstance(constraints, str) else [str(c) for c in constraints]
        threshold = float(config.get("pass_threshold", rubric.pass_threshold))
        downgrade = config.get("downgrade_ungrounded")
        if downgrade is not None and not isinstance(downgrade, bool):
            raise ValueError("config.downgrade_ungrounded must be true or false")
    except (DataError, JudgeConfigError, JudgeError, ValueError, KeyError) as exc:
        return _error(str(exc))
    query_id = str(metadata.get("query_id") or vars_.get("query_id") or test.get("description") or "")
    item = {"query_id": query_id, "condition": condition, "description": test.get("description"),
            "risk_tier": metadata.get("risk_tier")}  # fmt: skip
    try:
        result = judge_factuality(
            answer,
            documents,
            rubric,
            capable=capable,
            cheap=cheap,
            fixture_key=f"{rubric.id}/{query_id}/{condition}",
            risk_level=risk,
            domain_constraints=constraints,
            answer_is_recorded=answer_recording(context) is not None,
            downgrade_ungrounded=downgrade,
            review_queue=review_queue,
            human_queue=human_queue,
            audit_dir=audit_dir,
            item=item,
        )
    except DataError as exc:
        return _error(str(exc))
    passed, reason = decide(
        result, pass_threshold=threshold, no_claims_pass=rubric.no_verifiable_claims_passes
    )

    meta = {
        "factuality": {**result.metadata(), "risk_level_from": risk_from},
        "provenance": row_provenance(dataset=metadata.get("dataset"), rubric_path=rubric_file, rubric_id=rubric.id,
                                     rubric_version=rubric.version, prompt_version=rubric.prompt_version,
                                     sample=metadata.get("sample")),
    }  # fmt: skip
    if result.status == "error" or result.assessment is None:
        # The core wrote the reason line (ERROR (factuality unscored|not run): why); the outcome keeps
        # only the why, as the other judges' do, so the label is not said twice.
        return {"pass": False, "score": 0.0, "reason": reason, "namedScores": {},
                "metadata": {**meta, **Outcome.unscored(result.unscored_reason or reason).metadata()}}  # fmt: skip
    a = result.assessment
    named: dict[str, float] = {}
    if result.score is not None:
        named["factual_accuracy"] = round(result.score, 4)
    for name, n in a.counts.items():
        named[f"factuality.{_slug(name)}"] = n
    for level, n in a.severities.items():
        named[f"factuality.severity.{_slug(level)}"] = n
    named["factuality.ungrounded_verdicts"] = a.ungrounded
    # Every count in metadata (the names earlier results gave them as named scores); as chips only what a
    # reviewer acts on: the score, contradicted claims, critical and major findings, ungrounded verdicts.
    meta["factuality"]["scores"] = dict(named)
    chips = {k: v for k, v in named.items() if k in _CHIPS}
    return {
        "pass": passed,
        "score": round(result.score, 4) if result.score is not None else 0.0,
        "reason": reason,
        "namedScores": chips,
        # A claim is red only on a failing row: a passing row must not read as failed (issue 21).
        "componentResults": [_component(c, row_passed=passed) for c in a.claims],
        "metadata": meta,
    }


def _component(claim: Any, *, row_passed: bool) -> dict[str, Any]:
    v = claim.verdict
    severity = f" [{v.severity}]" if v.severity else ""
    check = claim.evidence_check
    if claim.ungrounded:  # a verdict whose evidence cannot be verified never lifts the score
        check += (
            ", UNGROUNDED_VERDICT: scored as Unverifiable" if claim.downgraded else ", UNGROUNDED_VERDICT"
        )
    where = f" in {', '.join(claim.chunk_ids)}" if claim.chunk_ids else ""
    quote = f' — quote "{_short(v.evidence_quote)}" ({check}{where})' if v.evidence_quote else ""
    counted = "not scored" if claim.score is None else f"score {claim.score:g}"
    return {
        "pass": row_passed or (not claim.ungrounded and (claim.score is None or claim.score >= 1)),
        "score": claim.score if claim.score is not None else 0.0,
        "reason": f"claim {v.claim_id}: {v.verification_result}{severity} ({counted}) — "
        f'"{_short(v.claim_text)}"{quote} — {_short(v.judge_rationale)}',
        "assertion": {"type": "python", "value": f"factuality claim {v.claim_id}"},
    }


def _legal_item(metadata: dict[str, Any]) -> bool:
    """Whether the row is a legal-aid item: the legal-aid test generator names each item's jurisdiction
    (``metadata.jurisdiction``); a docs-QA question or a hand-written test does not."""
    return bool(str(metadata.get("jurisdiction") or "").strip())


def _short(text: str | None, limit: int = 240) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit] + "…"


def _slug(name: str) -> str:
    return "_".join(name.lower().split())


def _partial(context: dict[str, Any]) -> str | None:
    response = context.get("providerResponse")
    response = response if isinstance(response, dict) else {}
    meta = context.get("metadata") if isinstance(context.get("metadata"), dict) else {}
    if response.get("isPartial") or (isinstance(meta, dict) and meta.get("partial")):
        return "marked partial"
    finish = str(response.get("finishReason") or "").lower()
    if finish in ("length", "max_tokens"):
        return f"finishReason {finish}"
    return None


def _evidence(
    config: dict[str, Any], vars_: dict[str, Any], metadata: dict[str, Any], prompt: str, max_chars: int
) -> list[Any]:
    from grounding_eval.factuality.evidence import chunk_documents, load_article_evidence, load_evidence_files

    files = config.get("evidence_files")
    if files:
        return load_evidence_files([str(f) for f in ([files] if isinstance(files, str) else files)],
                                   max_chars=max_chars)  # fmt: skip
    names = config.get("evidence_vars")
    if names:
        names = [names] if isinstance(names, str) else [str(n) for n in names]
        missing = [n for n in names if not str(vars_.get(n) or "").strip()]
        if missing:
            raise ValueError(f"evidence var(s) {', '.join(missing)} missing or empty")
        return chunk_documents([(n, str(vars_[n])) for n in names], max_chars=max_chars)
    shown = str(vars_.get("jkb_full_content") or "").strip()
    ids = metadata.get("full_content_ids") or []
    if not (shown and shown in prompt and ids and metadata.get("dataset")):
        raise ValueError(
            "no evidence: set config.evidence_files or config.evidence_vars, or run a C1.5 prompt on tests "
            "generated from a dataset (the articles the model was shown are the evidence)"
        )
    return load_article_evidence(str(metadata["dataset"]), [str(i) for i in ids], max_chars=max_chars)


def _error(message: str) -> dict[str, Any]:
    factuality = {"status": "error", "score": None, "reason": message}
    return unscored_result(CALLS["factuality"].failed, message, factuality=factuality)
