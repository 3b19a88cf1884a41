"""The thin layer between promptfoo and the pure checks: read ``context``, run, return a GradingResult.

promptfoo starts a fresh Python process for every assertion call, so everything here is lazy and the
data files are parsed once per process (``functools.cache``). Whatever the output holds, a
GradingResult comes back: an unreadable data file or an unexpected exception becomes an explicit
``ERROR`` result (pass false, no named scores) whose reason names the problem — never a quiet score.

Assertion ``config:`` keys (all optional):

``allowlist``, ``orgs``
    Allowlist and organization directory files. Default: the dataset's own — ``allowlist.txt`` (or
    ``.csv``) and ``organizations.yaml`` in the test's dataset folder (``metadata.dataset``, set by the
    test generator; else ``config.dataset``; else ``$GROUNDING_EVAL_DATASET``). A dataset without an
    allowlist file gets one built from its index on load; a dataset without a directory, and a test with
    no dataset at all, use the pack's sample files (``datasets/sample/``). The reason and
    ``metadata.verifier_inputs`` name the files used and their record counts. Relative paths are
    relative to the directory promptfoo runs in.
``liveness``
    ``offline`` (default) or ``live``. ``$GROUNDING_EVAL_LIVENESS`` beats the config, so one variable
    switches every shipped config to live checking without editing it.
``liveness_snapshot``, ``liveness_cache``, ``allow_hosts``, ``dns_server``
    A recorded liveness CSV consulted first; the on-disk cache (default
    ``.cache/grounding-eval/liveness.sqlite``); hosts exempt from the private-address refusal; the DNS
    server (``host[:port]``) asked in live mode (default: the system's resolver).
``url_deadline``, ``answer_budget``, ``max_urls_checked``
    Live mode's limits: seconds one URL may take in all (default 10), seconds of checks one answer may
    spend (default 30), URLs checked per answer (default 50); past them a URL is UNCHECKED and says why.
``jurisdiction_var``
    The var holding the user's state (default ``jurisdiction``).
``source_vars``
    Vars holding source text the model was shown *in full* (default ``[jkb_full_content]``). A source
    counts only if its text is in the rendered prompt, so under C0 and C1 every quote is ``NO_SOURCE``
    (C1's directory of titles and 200-character descriptions is not source text a quote can come from).
``quote_sources``
    ``shown`` (default): quotes are checked against the sources above. ``article_cache``: also against
    every article in the dataset's article cache; a quote found in an article the model was not shown
    says so, with the article id. Either way the verdict depends on the answer text alone, never on the
    condition, wherever the model was shown the same full text.
``quotation``
    ``scored`` or ``information``. Default: the round's rule from the test's ``metadata.quotation`` (the
    methods document scores quotes in Rounds 2b and 3 only), else ``scored``.
``question_var``
    The var holding the user's question (default ``question``): quotes of it are not source claims.
``quote_near``, ``quote_partial``
    Override the quotation thresholds.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["verifier_assertion"]

_DEFAULT_SOURCE_VARS = ("jkb_full_content",)
_DATASET_ENV = "GROUNDING_EVAL_DATASET"  # grounding_eval.data.dataset.DATASET_ENV, without its import
_CONFIG_KEYS = frozenset({
    "allowlist", "orgs", "dataset", "liveness", "liveness_snapshot", "liveness_cache", "allow_hosts",
    "dns_server", "url_deadline", "answer_budget", "max_urls_checked", "jurisdiction_var", "source_vars",
    "quote_sources", "quotation", "question_var", "quote_near", "quote_partial",
})  # fmt: skip
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
    from grounding_eval.verifier.limits import answer_too_large
    from grounding_eval.verifier.verdict import verify

    config = context.get("config") or {}
    vars_ = context.get("vars") or {}
    test = context.get("test") or {}
    metadata = test.get("metadata") if isinstance(test, dict) else None
    metadata = metadata if isinstance(metadata, dict) else {}
    if not isinstance(config, dict) or not isinstance(vars_, dict):
        return _error("assertion config and test vars must be mappings")
    unknown = set(config) - _CONFIG_KEYS
    if unknown:
        return _error(f"unknown assertion config key(s): {', '.join(sorted(unknown))}")
    quotation = str(config.get("quotation") or metadata.get("quotation") or "scored")
    if quotation not in ("scored", "information"):
        return _error(f"config 'quotation' must be scored or information, not {quotation!r}")
    quote_sources = str(config.get("quote_sources") or "shown")
    if quote_sources not in ("shown", "article_cache"):
        return _error(f"config 'quote_sources' must be shown or article_cache, not {quote_sources!r}")
    dataset = metadata.get("dataset") or config.get("dataset") or os.environ.get(_DATASET_ENV)
    try:
        resources = _resources(
            _optional_path(config.get("allowlist")),
            _optional_path(config.get("orgs")),
            _optional_path(dataset),
            pack_root,
            str(os.environ.get("GROUNDING_EVAL_LIVENESS") or config.get("liveness") or "offline"),
            _optional_path(config.get("liveness_snapshot")),
            _path(config.get("liveness_cache"), Path(".cache/grounding-eval/liveness.sqlite")),
            tuple(str(h) for h in config.get("allow_hosts") or ()),
            str(config["dns_server"]) if config.get("dns_server") else None,
            _limits_key(config),
            _thresholds_key(config),
        )
        if quote_sources == "article_cache" and dataset is None:
            raise DataError("quote_sources", "article_cache needs a dataset (metadata.dataset or config)")
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
    if isinstance(source_vars, str):
        source_vars = [source_vars]
    shown = [
        (str(name), str(vars_[name]))
        for name in source_vars
        if vars_.get(name) and str(vars_[name]).strip() in prompt
    ]
    sources = [text for _, text in shown]
    labels = [f"the text shown to the model ({name})" for name, _ in shown]
    if quote_sources == "article_cache":
        try:
            unshown = _unshown_articles(Path(str(dataset)), prompt)
        except DataError as exc:
            return _error(exc.one_line())
        sources += [text for _, text in unshown]
        labels += [f"article {article_id} (not shown to the model)" for article_id, _ in unshown]
    question = vars_.get(str(config.get("question_var") or "question"))
    answer = _as_text(output)
    too_large = answer_too_large(answer)
    if too_large is not None:  # an explicit refusal, never a verdict on a truncated text
        return {"pass": False, "score": 0.0, "reason": f"ERROR ({too_large})", "namedScores": {}}
    report = verify(
        answer,
        jurisdiction=jurisdiction,
        sources=sources,
        resources=resources.verifier,
        question=str(question) if question else None,
        quotation_scored=quotation == "scored",
        source_labels=labels,
    )
    from grounding_eval.share.provenance import row_provenance

    result = _grading_result(report, resources)
    if "metadata" in result:  # what produced this verdict (issue 10): pack version and dataset
        result["metadata"]["provenance"] = row_provenance(dataset=dataset)
    return result


def _grading_result(report: Any, resources: _Resources) -> dict[str, Any]:
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
    inputs = resources.inputs
    used = (
        f"checked against allowlist {inputs['allowlist']['path']} ({inputs['allowlist']['urls']} URLs) and "
        f"directory {inputs['directory']['path']} ({inputs['directory']['organizations']} organizations); "
        f"liveness {resources.verifier.liveness_mode}"
    )
    reason = "\n".join([summary_line(report), *lines.values(), used])
    return {
        "pass": report.passed,
        "score": round(score, 4),
        "reason": reason,
        "namedScores": named,
        "componentResults": components,
        "metadata": {
            "verifier": report.to_json(),
            "liveness_mode": resources.verifier.liveness_mode,
            "quotation_scored": report.quotation_scored,
            "unchecked_urls": report.unchecked_urls,
            "verifier_inputs": inputs,
        },
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


def _limits_key(config: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """The live-check limits the config sets, as a hashable key (unset ones keep their defaults)."""
    from grounding_eval.errors import DataError

    out: list[tuple[str, float]] = []
    for key in ("url_deadline", "answer_budget", "max_urls_checked"):
        if config.get(key) is not None:
            try:
                value = float(config[key])
            except (TypeError, ValueError):
                raise DataError(key, f"must be a number, not {str(config[key])[:40]!r}") from None
            out.append((key, int(value) if key == "max_urls_checked" and value.is_integer() else value))
    return tuple(out)


def _thresholds_key(config: dict[str, Any]) -> tuple[float | None, float | None]:
    near, partial = config.get("quote_near"), config.get("quote_partial")
    return (None if near is None else float(near), None if partial is None else float(partial))


@dataclass(frozen=True)
class _Resources:
    verifier: Any  # VerifierResources (imported lazily)
    inputs: dict[str, Any]  # which allowlist and directory were used, and how big they are


@cache
def _resources(
    allowlist: Path | None,
    orgs: Path | None,
    dataset: Path | None,
    pack_root: Path,
    liveness: str,
    snapshot: Path | None,
    cache_path: Path,
    allow_hosts: tuple[str, ...],
    dns_server: str | None,
    limits: tuple[tuple[str, float], ...],
    thresholds: tuple[float | None, float | None],
) -> _Resources:
    """Load the verifier's resources once per process; the dataset's own files win over the pack's."""
    from grounding_eval.verifier.allowlist import Allowlist
    from grounding_eval.verifier.setup import load_resources

    sample = pack_root / "datasets" / "sample"
    chosen: Path | Allowlist | None = allowlist
    if dataset is not None:  # the dataset module (and what it imports) only when a dataset is named
        from grounding_eval.data.dataset import find_allowlist, find_directory, find_index, index_allowlist

        if chosen is None:
            chosen = find_allowlist(dataset) or index_allowlist(find_index(dataset), inside=dataset)
        if orgs is None:
            orgs = find_directory(dataset)
    loaded = load_resources(
        allowlist=chosen or sample / "allowlist.txt",
        orgs=orgs or sample / "organizations.yaml",
        liveness=liveness,
        snapshot=snapshot,
        cache_path=cache_path,
        cache_dir=cache_path.parent,  # the compiled allowlist and directory, beside the liveness cache
        allow_hosts=allow_hosts,
        quote_near=thresholds[0],
        quote_partial=thresholds[1],
        dns_server=dns_server,
        **dict(limits),  # type: ignore[arg-type]  # numbers, checked by load_resources
    )
    inputs = {
        "allowlist": {"path": loaded.allowlist.path, "urls": len(loaded.allowlist.urls)},
        "directory": {
            "path": loaded.directory.path,
            "organizations": len(loaded.directory.organizations),
        },
    }
    return _Resources(loaded, inputs)


def _unshown_articles(dataset: Path, prompt: str) -> list[tuple[str, str]]:
    """The dataset's cached articles whose text is not in the prompt, as (id, text)."""
    return [(article_id, text) for article_id, text in _article_cache(dataset) if text.strip() not in prompt]


@cache
def _article_cache(dataset: Path) -> tuple[tuple[str, str], ...]:
    from grounding_eval.data.dataset import find_index, load_articles
    from grounding_eval.data.load import load_index

    index_path = find_index(dataset)
    index = load_index(index_path, inside=dataset)
    articles = load_articles(dataset / "articles", index, str(index_path), root=dataset)
    return tuple((article_id, article.text) for article_id, article in articles.items())
