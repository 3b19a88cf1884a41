"""``share --redact``: a promptfoo results file with no text of a High-Risk item left in it.

The methods document publishes no share links for high-risk rounds. A redacted results file keeps, for
a High-Risk item's row, only what compares studies: ids, scores, pass, named scores, the judge's
verdicts (and its components' scores with their names, ``judge <rubric>: <id>``), the types of the
verifier's findings, the composite's record (scored or not, the safety split: the report reads both)
and the provenance. Everything else of that row (the question, the answer, the sources in vars and in
the rendered prompt, every reason, the SME fields) is
dropped, never masked. The fields kept are an allowlist read from ``policy.yaml`` (a grounding-eval
decision), so a field promptfoo adds tomorrow is dropped too. Rows of other items are kept whole; the
file's own header keeps only the eval id, timestamp, description and the prompts' labels.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from grounding_eval.files import read_yaml
from grounding_eval.results_file import REDACTED_LENGTH, answer_length, verdict

__all__ = ["is_high_risk", "policy", "redact_results", "redact_row"]

REDACTED = "[redacted: High-Risk item]"
# The value of a judge component (``judge <rubric>: <check>`` or ``…: dimension.<Dimension>``): ids only.
_CRITERION = re.compile(r"judge [A-Za-z0-9_.-]{1,64}: [A-Za-z0-9_.]{1,80}")
_ID = re.compile(r"[A-Za-z0-9_]{1,64}")


@cache
def policy() -> dict[str, Any]:
    """The sharing decisions (``grounding_eval/share/policy.yaml``)."""

    data = read_yaml(Path(__file__).with_name("policy.yaml"))
    assert isinstance(data, dict)
    return data


def is_high_risk(row: Mapping[str, Any]) -> bool:
    """The row grades a High-Risk Challenge item: its test metadata carries the marker field."""
    marker = str(policy()["high_risk"]["marker_field"])
    for holder in (row.get("testCase"), row):
        meta = holder.get("metadata") if isinstance(holder, Mapping) else None
        if isinstance(meta, Mapping) and meta.get(marker) is not None:
            return True
    return False


def _keep(mapping: Any, keys: list[str]) -> dict[str, Any]:
    return {k: mapping[k] for k in keys if isinstance(mapping, Mapping) and k in mapping}


def _findings(verifier: Any, fields: list[str]) -> dict[str, Any]:
    """The verifier's findings reduced to their types: per list, each entry's type fields only."""
    if not isinstance(verifier, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key, value in verifier.items():
        if isinstance(value, list):
            out[key] = [_keep(entry, fields) for entry in value if isinstance(entry, Mapping)]
        elif isinstance(value, bool | int | float) or value is None:
            out[key] = value
    return out


def _undecided(record: Mapping[str, Any]) -> dict[str, Any]:
    """The verifier's undecided record: its count, and its kinds whose names are the verifier's words
    (a kind dropped here is counted by the report as ``other``); never its items (they quote the answer)."""
    fields = [str(f) for f in policy()["redact"]["undecided_fields"]]
    out: dict[str, Any] = {}
    if (
        "count" in fields
        and isinstance(record.get("count"), int | float)
        and not isinstance(record["count"], bool)
    ):
        out["count"] = record["count"]
    if "kinds" in fields and isinstance(record.get("kinds"), Mapping):
        out["kinds"] = {k: v for k, v in _numbers(record["kinds"]).items() if _ID.fullmatch(k)}
    return out


def _judge(judge: Any) -> dict[str, Any]:
    if not isinstance(judge, Mapping):
        return {}
    kept = _keep(judge, ["rubric_id", "rubric_version", "prompt_version", "model", "condition", "status"])
    verdicts = judge.get("verdicts")
    if isinstance(verdicts, Mapping):  # each the word, or {"verdict": word} in older files: kept as given
        kept["verdicts"] = {
            str(c): _keep(v, ["verdict"]) if isinstance(v, Mapping) else v
            for c, v in verdicts.items()
            if isinstance(v, Mapping) or verdict(v) is not None
        }
    if isinstance(judge.get("negative"), list):  # criterion ids: each criterion's score from its verdict
        kept["negative"] = [c for c in judge["negative"] if isinstance(c, str) and _ID.fullmatch(c)]
    for key in ("llm_judge_score", "core_mean", "judge_safety_no"):
        if key in judge:
            kept[key] = judge[key]
    if isinstance(judge.get("scores"), Mapping):
        kept["scores"] = _numbers(judge["scores"])
    return kept


def _numbers(scores: Mapping[str, Any]) -> dict[str, Any]:
    """A ``scores`` mapping: its numbers only (the names are the rubric's and the verifier's)."""
    return {str(k): v for k, v in scores.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def _component(component: Any, fields: list[str]) -> dict[str, Any]:
    if not isinstance(component, Mapping):
        return {}
    out = _keep(component, ["pass", "score", "namedScores"])
    assertion = component.get("assertion")
    if isinstance(assertion, Mapping):
        out["assertion"] = _keep(assertion, ["type", "metric"])
        if isinstance(assertion.get("value"), str) and _CRITERION.fullmatch(assertion["value"]):
            out["assertion"]["value"] = assertion["value"]  # a judge criterion's name: its score's key
    out["reason"] = REDACTED
    meta = component.get("metadata")
    if isinstance(meta, Mapping):
        kept: dict[str, Any] = {}
        if "verifier" in meta:
            kept["verifier"] = _findings(meta["verifier"], fields)
            if isinstance(meta["verifier"], Mapping) and isinstance(meta["verifier"].get("scores"), Mapping):
                kept["verifier"]["scores"] = _numbers(meta["verifier"]["scores"])
            if isinstance(meta["verifier"], Mapping) and isinstance(
                meta["verifier"].get("undecided"), Mapping
            ):
                kept["verifier"]["undecided"] = _undecided(meta["verifier"]["undecided"])
        if "judge" in meta:
            kept["judge"] = _judge(meta["judge"])
        if isinstance(meta.get("provenance"), Mapping):
            kept["provenance"] = dict(meta["provenance"])
        if isinstance(meta.get("judge_usage"), Mapping):
            kept["judge_usage"] = _judge_usage(meta["judge_usage"])
        out["metadata"] = kept
    return out


_USAGE_COUNTS = ("calls", "model", "cache", "recorded", "failed", "invalid", "tokens", "cost")


def _judge_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    """What the judges' calls cost: per judge (named by :func:`~grounding_eval.judge.pipeline.judge_label`,
    no local path), its counts, numbers only."""
    providers = usage.get("providers")
    if not isinstance(providers, Mapping):
        return {}
    return {"providers": {
        str(judge): {k: v for k, v in counts.items() if k in _USAGE_COUNTS and isinstance(v, int | float)
                     and not isinstance(v, bool)}
        for judge, counts in providers.items() if isinstance(counts, Mapping)
    }}  # fmt: skip


def _grading_metadata(meta: Any, rules: Mapping[str, Any]) -> dict[str, Any]:
    """The composite's record (``policy.yaml``'s ``grading_metadata``): each kept field's value only when
    it is one of the words allowed for it (``checks``: a list of Round 3's safety check names)."""
    from grounding_eval.scoring.composite import ROUND3_SAFETY_CHECKS

    out: dict[str, Any] = {}
    for section, fields in rules.items():
        given = meta.get(section) if isinstance(meta, Mapping) else None
        if not isinstance(given, Mapping):
            continue
        kept: dict[str, Any] = {}
        for field, allowed in fields.items():
            value = given.get(field)
            if allowed == "checks" and isinstance(value, list):
                kept[field] = [c for c in value if isinstance(c, str) and c in ROUND3_SAFETY_CHECKS]
            elif isinstance(allowed, list) and any(value is a or (value == a and type(value) is type(a))
                                                   for a in allowed):  # fmt: skip
                kept[field] = value
        out[section] = kept
    return out


def redact_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A High-Risk row reduced to the fields ``policy.yaml`` keeps (its ids, scores, verdicts, finding types)."""
    rules = policy()["redact"]
    out = _keep(row, list(rules["row_fields"]))
    out["testCase"] = {
        "metadata": _keep((row.get("testCase") or {}).get("metadata"), list(rules["test_metadata"]))
    }
    prompt = row.get("prompt")
    if isinstance(prompt, Mapping):
        out["prompt"] = _keep(prompt, ["label"])
    provider = row.get("provider")
    if isinstance(provider, Mapping):
        out["provider"] = _keep(provider, ["id", "label"])
    grading = row.get("gradingResult")
    if isinstance(grading, Mapping):
        fields = list(rules["finding_fields"])
        out["gradingResult"] = {
            **_keep(grading, ["pass", "score", "namedScores"]),
            "reason": REDACTED,
            "componentResults": [_component(c, fields) for c in grading.get("componentResults") or ()],
        }
        kept_meta = _grading_metadata(grading.get("metadata"), rules["grading_metadata"])
        if kept_meta:
            out["gradingResult"]["metadata"] = kept_meta
    # The answer's length, not the answer: the report's answer-length table and length-adjusted effects read
    # it on a redacted row as on the original.
    response = row.get("response")
    output = response.get("output") if isinstance(response, Mapping) else None
    if isinstance(output, str) and output:
        chars, words = answer_length(output)
        out[REDACTED_LENGTH] = {"chars": chars, "words": words}
    elif isinstance(kept := row.get(REDACTED_LENGTH), Mapping):  # redacted before: its counts, numbers only
        counts = {k: kept.get(k) for k in ("chars", "words")}
        if all(type(v) is int for v in counts.values()):
            out[REDACTED_LENGTH] = counts
    out["redacted"] = True
    return out


def redact_results(results: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
    """The redacted copy of a promptfoo results file, and how many rows were redacted."""
    body = results.get("results")
    body = body if isinstance(body, Mapping) else {}
    rows = body.get("results")
    rows = rows if isinstance(rows, list) else []
    redacted = 0
    out_rows: list[Any] = []
    for row in rows:
        if isinstance(row, Mapping) and is_high_risk(row):
            out_rows.append(redact_row(row))
            redacted += 1
        else:
            out_rows.append(row)
    prompts = [_keep(p, ["label", "provider"]) for p in body.get("prompts") or () if isinstance(p, Mapping)]
    config = results.get("config")
    header: dict[str, Any] = {
        "evalId": results.get("evalId"),
        "config": _keep(config, ["description"]),
        "results": {
            "version": body.get("version"),
            "timestamp": body.get("timestamp"),
            "prompts": prompts,
            "results": out_rows,
        },
    }
    header["redaction"] = {"high_risk_rows": redacted, "rule": "grounding_eval/share/policy.yaml"}
    return header, redacted
