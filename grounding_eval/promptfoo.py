"""The thin layer between promptfoo and the pure checks: read ``context``, run, return a GradingResult.

promptfoo starts a fresh Python process for every assertion call, so everything here is lazy and the
data files are parsed once per process (``functools.cache``). Whatever the output holds, a
GradingResult comes back: an unreadable data file or an unexpected exception becomes an explicit
``ERROR`` result (pass false, no named scores) whose reason names the problem — never a quiet score.

Assertion ``config:`` keys (all optional):

``allowlist``, ``orgs``
    Allowlist and organization directory files (default: the pack's ``allowlists/allowlist.txt`` and
    ``allowlists/organizations.yaml``). Relative paths are relative to the directory promptfoo runs in.
``liveness``
    ``offline`` (default; or the ``GROUNDING_EVAL_LIVENESS`` environment variable) or ``live``.
``liveness_snapshot``, ``liveness_cache``, ``allow_hosts``
    A recorded liveness CSV consulted first; the on-disk cache (default
    ``.cache/grounding-eval/liveness.sqlite``); hosts exempt from the private-address refusal.
``jurisdiction_var``
    The var holding the user's state (default ``jurisdiction``).
``source_vars``
    Vars holding source text (default ``[jkb_full_content, jkb_directory]``). Only sources that appear
    in the rendered prompt count as *given to the model*: under C0 no quote can be checked.
``question_var``
    The var holding the user's question (default ``question``): quotes of it are not source claims.
``quote_near``, ``quote_partial``
    Override the quotation thresholds.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["verifier_assertion"]

_DEFAULT_SOURCE_VARS = ("jkb_full_content", "jkb_directory")
_SCORE_NAMES = {
    "url_allowlist": "url_allowlist_score",
    "phone_org": "phone_org_score",
    "url_org": "url_org_score",
    "jurisdiction": "jurisdiction_score",
    "quotation": "quotation_score",
}


def verifier_assertion(output: Any, context: Any, *, pack_root: Path) -> dict[str, Any]:
    """Run the deterministic verifier on a promptfoo output; always returns a GradingResult dict."""
    try:
        return _grade(output, context if isinstance(context, dict) else {}, pack_root)
    except Exception as exc:
        return _error(f"{type(exc).__name__}: {exc}")


def _grade(output: Any, context: dict[str, Any], pack_root: Path) -> dict[str, Any]:
    from grounding_eval.errors import DataError
    from grounding_eval.states import parse_state
    from grounding_eval.verifier.report import verify

    config = context.get("config") or {}
    vars_ = context.get("vars") or {}
    if not isinstance(config, dict) or not isinstance(vars_, dict):
        return _error("assertion config and test vars must be mappings")
    try:
        resources = _resources(
            _path(config.get("allowlist"), pack_root / "allowlists" / "allowlist.txt"),
            _path(config.get("orgs"), pack_root / "allowlists" / "organizations.yaml"),
            str(config.get("liveness") or os.environ.get("GROUNDING_EVAL_LIVENESS") or "offline"),
            _optional_path(config.get("liveness_snapshot")),
            _path(config.get("liveness_cache"), Path(".cache/grounding-eval/liveness.sqlite")),
            tuple(str(h) for h in config.get("allow_hosts") or ()),
            _thresholds_key(config),
        )
    except DataError as exc:
        return _error(exc.one_line())
    jurisdiction_var = str(config.get("jurisdiction_var") or "jurisdiction")
    if jurisdiction_var not in vars_:
        return _error(f"the test has no var {jurisdiction_var!r} (the user's two-letter state code)")
    try:
        jurisdiction = parse_state(vars_[jurisdiction_var])
    except ValueError as exc:
        return _error(f"var {jurisdiction_var!r}: {exc}")
    prompt = str(context.get("prompt") or "")
    source_vars = config.get("source_vars") or _DEFAULT_SOURCE_VARS
    sources = [
        str(vars_[name]) for name in source_vars if vars_.get(name) and str(vars_[name]).strip() in prompt
    ]
    question = vars_.get(str(config.get("question_var") or "question"))
    report = verify(
        _as_text(output),
        jurisdiction=jurisdiction,
        sources=sources,
        resources=resources,
        question=str(question) if question else None,
    )
    return _grading_result(report, liveness_mode=resources.liveness_mode)


def _grading_result(report: Any, *, liveness_mode: str) -> dict[str, Any]:
    from grounding_eval.verifier.explain import check_lines, summary_line

    scores = report.check_scores
    named = {_SCORE_NAMES[k]: round(v, 4) for k, v in scores.items() if v is not None}
    failures_by_check: dict[str, list[str]] = {}
    for failure in report.hard_failures:
        failures_by_check.setdefault(failure.check, []).append(failure.detail)
    components = []
    lines = check_lines(report)
    for check, value in scores.items():
        if value is None:
            continue
        assertion = {
            "type": "python",
            "value": f"grounding_eval verifier: {check}",
            "metric": _SCORE_NAMES[check],
        }
        components.append(
            {
                "pass": check not in failures_by_check,
                "score": round(value, 4),
                "reason": lines[check],
                "assertion": assertion,
            }
        )
    score = report.score
    if score is None:  # only when no check applies, which the jurisdiction check (always on here) prevents
        return _error("no verifier check applied to this output")
    named["deterministic_verifier_score"] = round(score, 4)
    reason = "\n".join([summary_line(report), *lines.values()])
    return {
        "pass": report.passed,
        "score": round(score, 4),
        "reason": reason,
        "namedScores": named,
        "componentResults": components,
        "metadata": {"verifier": report.to_json(), "liveness_mode": liveness_mode},
    }


def _error(message: str) -> dict[str, Any]:
    return {"pass": False, "score": 0.0, "reason": f"ERROR (verifier not run): {message}", "namedScores": {}}


def _as_text(output: Any) -> str:
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    if isinstance(output, bytes):
        return output.decode("utf-8", errors="replace")
    try:
        return json.dumps(output, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(output)


def _path(value: Any, default: Path) -> Path:
    return Path(str(value)).expanduser() if value else default


def _optional_path(value: Any) -> Path | None:
    return Path(str(value)).expanduser() if value else None


def _thresholds_key(config: dict[str, Any]) -> tuple[float | None, float | None]:
    near, partial = config.get("quote_near"), config.get("quote_partial")
    return (None if near is None else float(near), None if partial is None else float(partial))


@cache
def _resources(
    allowlist: Path,
    orgs: Path,
    liveness: str,
    snapshot: Path | None,
    cache_path: Path,
    allow_hosts: tuple[str, ...],
    thresholds: tuple[float | None, float | None],
) -> Any:
    from grounding_eval.verifier.setup import load_resources

    return load_resources(
        allowlist=allowlist,
        orgs=orgs,
        liveness=liveness,
        snapshot=snapshot,
        cache_path=cache_path,
        allow_hosts=allow_hosts,
        quote_near=thresholds[0],
        quote_partial=thresholds[1],
    )
