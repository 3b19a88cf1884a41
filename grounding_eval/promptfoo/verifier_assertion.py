"""The thin layer between promptfoo and the pure checks: read ``context``, run, return a GradingResult.

promptfoo starts a fresh Python process for every assertion call, so everything here is lazy and the
data files are parsed once per process (``functools.cache``). Whatever the output holds, a
GradingResult comes back: an unreadable data file or an unexpected exception becomes an explicit
``ERROR`` result (pass false, no named scores, ``metadata.outcome`` unscored with its ``unscored_reason``:
:mod:`grounding_eval.outcome`) whose reason names the problem — never a quiet score.

The assertion's ``config:`` keys, their defaults and why (``source_vars`` is the item's reference text in
every condition; ``quote_sources: shown`` biases C1.5 − C0, measured): docs/reference/assertions.md#the-verifier.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from grounding_eval.calls import CALLS
from grounding_eval.outcome import Outcome, unscored_result, with_outcome
from grounding_eval.promptfoo.source_vars import with_source_vars_in
from grounding_eval.provenance import row_provenance
from grounding_eval.var_names import REFERENCE_VARS

__all__ = ["verifier_assertion"]

_QUOTE_SOURCES = ("reference", "article_cache", "shown")
_DATASET_ENV = "GROUNDING_EVAL_DATASET"  # grounding_eval.data.dataset.DATASET_ENV, without its import
_CONFIG_KEYS = frozenset({
    "allowlist", "orgs", "citations", "dataset", "liveness", "liveness_snapshot", "liveness_cache", "allow_hosts",
    "dns_server", "url_deadline", "answer_budget", "max_urls_checked", "jurisdiction_var", "source_vars",
    "quote_sources", "quotation", "question_var", "quote_near", "quote_partial", "meaning_change", "chips",
    "citation_check",
})  # fmt: skip
# The config keys with a fixed set of values: the key, its values, its default, and whether the test's
# metadata may set it when the config does not (the round's tests do).
_CHOICES = (
    ("quotation", ("scored", "information"), "scored", True),
    ("citation_check", ("hard", "information"), "information", True),
    ("quote_sources", ("reference", "article_cache", "shown"), "reference", False),
    ("chips", ("verdict", "checks"), "verdict", False),
    ("meaning_change", ("hard", "soft"), "hard", False),
)
_SCORE_NAMES = {
    "url_allowlist": "url_allowlist_score",
    "phone_org": "phone_org_score",
    "url_org": "url_org_score",
    "jurisdiction": "jurisdiction_score",
    "quotation": "quotation_score",
    "citations": "citation_score",  # information only (never in the score): VerifierReport.citation_score
}
# Chips shown even in the default one-chip layout, when there is one: a legal citation is what a
# reviewer of a legal answer reads first after the verdict.
_ALWAYS_CHIPS = frozenset({"citation_score"})


def verifier_assertion(output: Any, context: Any, *, pack_root: Path) -> dict[str, Any]:
    """Run the deterministic verifier on a promptfoo output; always returns a GradingResult dict."""
    try:
        return with_outcome(
            _grade(output, with_source_vars_in(context) if isinstance(context, dict) else {}, pack_root)
        )
    except Exception as exc:
        return _error(f"{type(exc).__name__}: {exc}")


def _grade(output: Any, context: dict[str, Any], pack_root: Path) -> dict[str, Any]:
    from grounding_eval.errors import DataError
    from grounding_eval.promptfoo.written_paths import written_path
    from grounding_eval.states import parse_state
    from grounding_eval.user_cache import cache_root
    from grounding_eval.verifier.limits import answer_too_large
    from grounding_eval.verifier.verdict import collector_paused, verify

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
    # Each choice: the config's value, else (quotation, citation_check) the test metadata's, else the
    # default; a value that is present and not one of the choices (false, "", HARD) is an error.
    # Citations are neutral: UNKNOWN and another state's law are hard failures only where a seed safety
    # check covers them (Round 3: hard), information elsewhere (the default).
    choices: dict[str, str] = {}
    for key, allowed, default, in_metadata in _CHOICES:
        where, source = (
            ("config", config) if key in config or not in_metadata else ("test metadata", metadata)
        )
        value = source.get(key, default)
        if not isinstance(value, str) or value not in allowed:
            return _error(f"{where} {key!r} must be {' or '.join(allowed)}, not {value!r}")
        choices[key] = value
    quotation, citation_check, quote_sources, chips, meaning_change = (choices[key] for key, *_ in _CHOICES)
    dataset = metadata.get("dataset") or config.get("dataset") or os.environ.get(_DATASET_ENV)
    try:
        resources = _resources(
            _optional_path(config.get("allowlist")),
            _optional_path(config.get("orgs")),
            _optional_path(config.get("citations")),
            _optional_path(dataset),
            pack_root,
            str(os.environ.get("GROUNDING_EVAL_LIVENESS") or config.get("liveness") or "offline"),
            _optional_path(config.get("liveness_snapshot")),
            written_path(config, "liveness_cache", cache_root() / "liveness.sqlite"),
            tuple(str(h) for h in config.get("allow_hosts") or ()),
            str(config["dns_server"]) if config.get("dns_server") else None,
            _limits_key(config),
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
    answer = _as_text(output)
    too_large = answer_too_large(answer)
    if too_large is not None:  # an explicit refusal, never a verdict on a truncated text
        return {"pass": False, "score": 0.0, "reason": f"ERROR ({too_large})", "namedScores": {},
                "metadata": Outcome.unscored(too_large).metadata()}  # fmt: skip
    try:
        reference = _reference(config, vars_, metadata, dataset, quote_sources, answer, resources)
    except DataError as exc:
        return _error(exc.one_line())
    prompt = context.get("prompt")
    prompt = None if prompt is None else str(prompt)  # no prompt in the context: "shown" is not known
    if quote_sources == "shown":
        reference = [r for r in reference if _in_prompt(r.text, prompt)]
    question = vars_.get(str(config.get("question_var") or "question"))
    from grounding_eval.judge.checkpoint import checkpoint

    checkpoint()  # a configuration check stops before the verdict
    with collector_paused():  # the report's findings, JSON and lines hold no cycles (collector_paused)
        try:
            report = verify(
                answer,
                jurisdiction=jurisdiction,
                sources=[r.text for r in reference],
                resources=resources.verifier,
                question=str(question) if question else None,
                quotation_scored=quotation == "scored",
                source_labels=[r.label for r in reference],
                source_shown=[None if prompt is None else _in_prompt(r.text, prompt) for r in reference],
                meaning_change=meaning_change,
                citation_check=citation_check,
            )
        except DataError as exc:  # the dataset's articles, read when a quote is looked up outside the item's
            return _error(exc.one_line())
        result = _grading_result(report, resources, check_chips=chips == "checks")

    if "metadata" in result:  # what produced this verdict (issue 10): pack version and dataset
        result["metadata"]["provenance"] = row_provenance(dataset=dataset, sample=metadata.get("sample"))
    return result


def _grading_result(report: Any, resources: _Resources, *, check_chips: bool = False) -> dict[str, Any]:
    from grounding_eval.verifier.explain import check_lines, summary_line

    scores = report.check_scores
    named = {_SCORE_NAMES[k]: round(v, 4) for k, v in scores.items() if v is not None}
    if report.citation_score is not None:  # information, never in deterministic_verifier_score
        named[_SCORE_NAMES["citations"]] = round(report.citation_score, 4)
    failures_by_check: dict[str, list[str]] = {}
    for failure in report.hard_failures:
        failures_by_check.setdefault(failure.check, []).append(failure.detail)
    components = []
    lines = check_lines(report)
    for check, value in scores.items():
        if value is None:
            continue
        assertion = {"type": "python", "value": f"grounding_eval verifier: {check}"}
        components.append(
            {
                "pass": check not in failures_by_check,
                "score": round(value, 4),
                "reason": lines[check],
                "assertion": assertion,
            }
        )
    score = report.score
    metadata = {
        "verifier": {**report.to_json(), "scores": {}},
        "liveness_mode": resources.verifier.liveness_mode,
        "quotation_scored": report.quotation_scored,
        "citation_check": report.citation_check,
        "unchecked_urls": report.unchecked_urls,
        "verifier_inputs": resources.inputs,
    }
    if score is None:  # no check decided a score: the jurisdiction check (always on here) raised
        first = summary_line(report).removeprefix("UNSCORED deterministic verifier: ")
        result = unscored_result("UNSCORED (verifier)", first, **metadata)
        result["reason"] = "\n".join([result["reason"], *lines.values()])
        return result
    checks = dict(named)  # each check's score: metadata, a chip only when asked (config.chips: checks)
    shown = checks if check_chips else {k: v for k, v in checks.items() if k in _ALWAYS_CHIPS}
    named = {**shown, "deterministic_verifier_score": round(score, 4)}
    # Each check's line once: in its component, or here when it has none (n/a, or quotes not scored).
    # Which allowlist and directory were used is provenance: metadata.verifier_inputs, not the reason.
    unscored = [lines[check] for check, value in scores.items() if value is None]
    reason = "\n".join([summary_line(report), *unscored])
    return {
        "pass": report.passed,
        "score": round(score, 4),
        "reason": reason,
        "namedScores": named,
        "componentResults": components,
        "metadata": {**metadata, "verifier": {**metadata["verifier"], "scores": checks}},
    }


def _error(message: str) -> dict[str, Any]:
    return unscored_result(CALLS["verifier"].failed, message)


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
    citations: Path | None,
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
    from grounding_eval.user_cache import cache_root
    from grounding_eval.verifier.allowlist import Allowlist
    from grounding_eval.verifier.setup import load_resources

    sample = pack_root / "datasets" / "sample"
    chosen: Path | Allowlist | None = allowlist
    if dataset is not None:  # the dataset module (and what it imports) only when a dataset is named
        from grounding_eval.data.dataset import (
            find_allowlist,
            find_citation_index,
            find_directory,
            find_index,
        )
        from grounding_eval.verifier.allowlist import index_allowlist

        if chosen is None:
            chosen = find_allowlist(dataset) or index_allowlist(find_index(dataset), inside=dataset)
        if orgs is None:
            orgs = find_directory(dataset)
        if citations is None:
            citations = find_citation_index(dataset)
    loaded = load_resources(
        allowlist=chosen or sample / "allowlist.txt",
        orgs=orgs or pack_root / "datasets" / "directory" / "organizations.yaml",  # every state's
        liveness=liveness,
        snapshot=snapshot,
        cache_path=cache_path,
        cache_dir=cache_root(),  # the compiled allowlist, directory and index: the user's, sealed
        allow_hosts=allow_hosts,
        quote_near=thresholds[0],
        quote_partial=thresholds[1],
        dns_server=dns_server,
        citations=citations,
        dataset=dataset,  # its articles: where a quote the item's sources do not hold is looked up
        **dict(limits),  # type: ignore[arg-type]  # numbers, checked by load_resources
    )
    inputs = {
        "allowlist": {"path": loaded.allowlist.path, "urls": len(loaded.allowlist.urls)},
        "directory": {
            "path": loaded.directory.path,
            "organizations": len(loaded.directory.organizations),
        },
    }
    if loaded.citations is not None:
        inputs["citations"] = {"path": loaded.citations.path, "entries": loaded.citations.entries}
    return _Resources(loaded, inputs)


@dataclass(frozen=True)
class _Reference:
    """One reference text quotes are checked against, and its label in the report."""

    text: str
    label: str


def _reference(
    config: dict[str, Any],
    vars_: dict[str, Any],
    metadata: dict[str, Any],
    dataset: Any,
    quote_sources: str,
    answer: str,
    resources: _Resources,
) -> list[_Reference]:
    """The item's reference texts: the same whatever the condition or round (see ``source_vars``).

    The default var is split into the item's articles only when the answer has a quote to check
    (naming the article is all the split changes), so an answer without quotes reads no article.

    Raises:
        DataError: the dataset's article cache cannot be read (``article_cache``, or a split).
    """
    from grounding_eval.errors import DataError
    from grounding_eval.verifier.quotes import extract_quotes

    names = config.get("source_vars") or REFERENCE_VARS
    names = [str(names)] if isinstance(names, str) else [str(n) for n in names]
    # The generator marks a block that came out empty (metadata.grounding_missing: {var: why}) and puts
    # a placeholder in its var: that item has no reference text there, so its quotes are NO_SOURCE.
    missing = metadata.get("grounding_missing")
    absent = set(missing) if isinstance(missing, dict) else set()
    texts = [
        (name, str(vars_[name]))
        for name in names
        if name not in absent and vars_.get(name) and str(vars_[name]).strip()
    ]
    widen = quote_sources == "article_cache"
    if widen and dataset is None:
        raise DataError("quote_sources", "article_cache needs a dataset (metadata.dataset or config)")
    th = resources.verifier.quote_thresholds
    if not widen and not extract_quotes(answer, min_words=th.min_words, max_chars=th.max_quote_chars):
        return [_Reference(text, name) for name, text in texts]
    ids = metadata.get("full_content_ids")
    split = "source_vars" not in config and dataset is not None and isinstance(ids, list) and bool(ids)
    out: list[_Reference] = []
    for name, text in texts:
        pieces = None
        if split and isinstance(ids, list):
            item_ids = tuple(str(i) for i in ids)
            pieces = _split_articles(text, item_ids, _item_articles(Path(str(dataset)), item_ids))
        out += pieces or [_Reference(text, name)]
    if widen:
        out += [
            _Reference(text, label)
            for label, text in resources.verifier.outside_texts.texts()
            if text.strip() and not any(text.strip() in r.text for r in out)
        ]
    return out


def _split_articles(text: str, ids: tuple[str, ...], cache: dict[str, str]) -> list[_Reference] | None:
    """``text`` cut into one piece per article of ``ids`` (each ending with that article's text, the
    first also holding what comes before it, the last what follows), or None when the articles are
    not all in it, in order (a user's own template or var: the text stays whole)."""
    pieces: list[_Reference] = []
    start = end = 0
    for n, article_id in enumerate(ids):
        body = cache.get(article_id, "").strip()
        found = text.find(body, end) if body else -1
        if found < 0:
            return None
        end = len(text) if n == len(ids) - 1 else found + len(body)
        pieces.append(_Reference(text[start:end], f"article {article_id}"))
        start = end
    return pieces


@cache
def _item_articles(dataset: Path, ids: tuple[str, ...]) -> dict[str, str]:
    """The cached text of the articles ``ids`` (``articles/<id>.txt`` or ``.md``, as the dataset loader
    reads them), without the rest of the dataset: all a split needs, at a fresh process's cost of a few
    files. An id with no file is left out (its var then stays whole)."""
    from grounding_eval.files import ARTICLE, read_text

    out = {}
    for article_id in ids:
        for suffix in (".txt", ".md"):
            path = dataset / "articles" / f"{article_id}{suffix}"
            if path.is_file():
                out[article_id] = read_text(path, ARTICLE, inside=dataset).strip()
                break
    return out


def _in_prompt(text: str, prompt: str | None) -> bool:
    return prompt is not None and text.strip() in prompt
