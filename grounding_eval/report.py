"""Summarize a promptfoo results file (``promptfoo eval -o results.json``) the way the rounds are read.

The viewer shows rows side by side; a methods comparison needs the aggregates: per round, condition
(C0 / C1 / C1.5) and model — how many rows passed, the mean composite, judge and verifier scores, how
often each Round 3 safety check was No, and how many rows could not be scored (an error or an
unscorable judge reply), which are counted apart and never averaged in as zeros.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from grounding_eval.errors import DataError
from grounding_eval.files import read_text
from grounding_eval.scoring.composite import ROUND3_SAFETY_CHECKS

__all__ = ["GROUP_KEYS", "Group", "ReportRow", "load_rows", "summarize"]

GROUP_KEYS = ("round", "condition", "provider", "jurisdiction", "topic", "risk_tier")


@dataclass(frozen=True)
class ReportRow:
    """What the report needs from one promptfoo result row."""

    keys: Mapping[str, str]
    passed: bool
    unscored: bool
    composite: float | None
    judge: float | None
    verifier: float | None
    safety_no: tuple[str, ...]


@dataclass
class Group:
    """The aggregate of the rows sharing one value of each grouping key."""

    key: tuple[str, ...]
    rows: int = 0
    passed: int = 0
    unscored: int = 0
    composites: list[float] = field(default_factory=list)
    judges: list[float] = field(default_factory=list)
    verifiers: list[float] = field(default_factory=list)
    safety_no: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROUND3_SAFETY_CHECKS, 0))

    def as_dict(self, by: Sequence[str]) -> dict[str, Any]:
        """The group as JSON-ready values (means are None when no row had that score)."""
        return {
            **dict(zip(by, self.key, strict=True)),
            "rows": self.rows,
            "passed": self.passed,
            "pass_rate": self.passed / self.rows if self.rows else None,
            "unscored": self.unscored,
            "mean_composite": _mean(self.composites),
            "mean_judge": _mean(self.judges),
            "mean_verifier": _mean(self.verifiers),
            "safety_no": dict(self.safety_no),
        }


def _mean(values: list[float]) -> float | None:
    return round(fmean(values), 4) if values else None


def load_rows(path: str | Path) -> list[ReportRow]:
    """Read the rows of a promptfoo JSON results file.

    Raises:
        DataError: the file is missing, not JSON, or not a promptfoo results file.
    """
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not JSON ({exc.msg} at line {exc.lineno})") from None
    rows = (data.get("results") or {}).get("results") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise DataError(
            path, "not a promptfoo results file (no results.results list; write it with -o FILE.json)"
        )
    return [_row(r) for r in rows if isinstance(r, dict)]


def _row(raw: dict[str, Any]) -> ReportRow:
    named = raw.get("namedScores") or {}
    metadata = (raw.get("testCase") or {}).get("metadata") or {}
    provider = raw.get("provider") or {}
    grading = raw.get("gradingResult") or {}
    judge_meta = verifier_meta = None
    for component in grading.get("componentResults") or ():
        meta = (component or {}).get("metadata") or {}
        judge_meta = judge_meta or meta.get("judge")
        verifier_meta = verifier_meta or meta.get("verifier")
    judge_score = next((v for k, v in named.items() if k.endswith(".llm_judge_score")), None)
    failed = {h.get("safety_check") for h in (verifier_meta or {}).get("hard_failures") or ()}
    keys = {
        "round": str(metadata.get("round") or "-"),
        "condition": str((raw.get("prompt") or {}).get("label") or "?").split(":", 1)[0],
        "provider": str(provider.get("label") or provider.get("id") or "?"),
        "jurisdiction": str(
            metadata.get("jurisdiction") or (raw.get("vars") or {}).get("jurisdiction") or "-"
        ),
        "topic": str(metadata.get("topic") or "-"),
        "risk_tier": str(metadata.get("risk_tier") or "-"),
    }
    unscored = (
        raw.get("failureReason") == 2
        or (judge_meta or {}).get("status") == "unscored"
        or (judge_meta is None and judge_score is None and "composite" not in named and verifier_meta is None)
    )
    return ReportRow(
        keys=keys,
        passed=bool(raw.get("success")),
        unscored=unscored,
        composite=named.get("composite"),
        judge=judge_score,
        verifier=named.get("deterministic_verifier_score"),
        safety_no=tuple(c for c in ROUND3_SAFETY_CHECKS if c in failed),
    )


def summarize(
    rows: Iterable[ReportRow], by: Sequence[str] = ("round", "condition", "provider")
) -> list[Group]:
    """Group ``rows`` by the ``by`` keys (in :data:`GROUP_KEYS`), sorted by key."""
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise DataError("--by", f"unknown key(s) {', '.join(unknown)}: use {', '.join(GROUP_KEYS)}")
    groups: dict[tuple[str, ...], Group] = defaultdict(lambda: Group(()))
    for row in rows:
        key = tuple(row.keys[k] for k in by)
        group = groups[key]
        group.key = key
        group.rows += 1
        group.passed += row.passed
        if row.unscored:
            group.unscored += 1
            continue  # an unscored row is counted, never averaged in
        for value, bucket in (
            (row.composite, group.composites),
            (row.judge, group.judges),
            (row.verifier, group.verifiers),
        ):
            if value is not None:
                bucket.append(float(value))
        for check in row.safety_no:
            group.safety_no[check] += 1
    return [groups[k] for k in sorted(groups)]
