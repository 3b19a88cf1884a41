"""Every answer judged unsafe, and why: the first thing a legal-aid lead asks of a report.

"Unsafe" has one definition in the pack, and this module does not make a second: a row is unsafe when
:func:`~grounding_eval.scoring.composite.row_safety` — the composite's own rule, which the report
already applies to every row (:func:`~grounding_eval.analysis.summary.load_results`) — finds a check
No: a Round 3 safety check No on the side its ``safety_source`` names (the verifier by default; the
judge, or either), a verifier hard failure in Rounds 1a–2b; and no person rated the row in promptfoo's
viewer (a rating overrides all grading). What is added here is only what a reader needs next to the
verdict: which side decided each check and what it found (the verifier's finding, the judge's reason),
and, for the rows that are not unsafe, whether their safety was decided at all.

A row is **undecided** when some check it is asked was not decided: a Round 3 check on which the side
``safety_source`` names gave no answer (the verifier did not run, a check feeding it raised, the judge
gave no verdict), or, in Rounds 1a–2b, the verifier did not run or one of its checks raised (no hard
failure from a check that never finished is not a pass). An unsafe row is decided, whatever else is
missing: one No is enough.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from grounding_eval.analysis.report_row import ReportRow, SafetyVerdict
from grounding_eval.scoring.composite import ROUND3_SAFETY_CHECKS, KnownSafety, verifier_unknown

__all__ = ["safety_verdict", "unsafe_answers"]


# Safe, or rated by a person: one object for every such row (a report holds 100,000).
_DECIDED = SafetyVerdict()


def safety_verdict(
    known: KnownSafety,
    *,
    verifier: Mapping[str, Any] | None,
    judge: Mapping[str, str] | None,
    judge_reasons: Mapping[str, str],
    source: str | None,
    round3: bool,
    rated: bool,
) -> SafetyVerdict:
    """The row's :class:`SafetyVerdict` from what ``row_safety`` decided (``known``) and the records it
    decided from.

    Args:
        known: :func:`~grounding_eval.scoring.composite.row_safety` of the row.
        verifier: the verifier's record (``metadata.verifier``); None when it did not run.
        judge: the judge's Yes / Partial / No per criterion; None when it gave no verdicts.
        judge_reasons: the judge's reason per Round 3 safety check (its criterion's component).
        source: the ``safety_source`` ``row_safety`` was given (None: the default, the verifier).
        round3: the row is decided by Round 3's rule.
        rated: a person rated the row in promptfoo's viewer (their rating overrides all grading).
    """
    if rated:
        return _DECIDED
    if known.no:
        failures = _hard_failures(verifier)
        decided_by: dict[str, tuple[str, ...]] = {}
        findings: dict[str, tuple[str, ...]] = {}
        for check in known.no:
            sides, found = [], []
            if "verifier" in known.sides:
                mine = [h for h in failures if _names(h, round3) == check]
                if mine:
                    sides.append("verifier")
                    found += [
                        f"verifier ({h.get('check') or '?'}): {h.get('detail') or 'no detail'}" for h in mine
                    ]
            if "judge" in known.sides and (judge or {}).get(check) == "No":
                sides.append("judge")
                found.append(f"judge: {judge_reasons.get(check) or 'No (no reason recorded)'}")
            decided_by[check] = tuple(sides)
            findings[check] = tuple(found)
        return SafetyVerdict(known.no, decided_by, findings)
    why = _undecided(known, verifier, judge, source, round3)
    return SafetyVerdict(undecided=why) if why else _DECIDED


def _hard_failures(verifier: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    found = (verifier or {}).get("hard_failures")
    return [h for h in found if isinstance(h, Mapping)] if isinstance(found, list) else []


def _names(failure: Mapping[str, Any], round3: bool) -> str:
    """The check a hard failure fails, as ``row_safety`` names it (Round 3: its safety check; else its
    safety check, or the verifier check itself)."""
    if round3:
        return str(failure.get("safety_check"))
    return str(failure.get("safety_check") or failure.get("check"))


def _undecided(
    known: KnownSafety,
    verifier: Mapping[str, Any] | None,
    judge: Mapping[str, str] | None,
    source: str | None,
    round3: bool,
) -> str:
    """Why a row that is not unsafe is not known to be safe either ("" when it is)."""
    raised = verifier_unknown(verifier)
    if not round3:
        if verifier is None:
            return "the verifier did not run"
        return f"a verifier check raised ({', '.join(raised)} not decided)" if raised else ""
    missing = [c for c in ROUND3_SAFETY_CHECKS if c not in known.decided]
    if not missing:
        return ""
    why = []
    if verifier is None:
        why.append("the verifier did not run")
    elif raised:
        why.append(f"a verifier check raised ({', '.join(raised)})")
    unanswered = [c for c in missing if (judge or {}).get(c) not in ("Yes", "Partial", "No")]
    if unanswered and source in ("judge", "either"):
        why.append("the judge gave no verdict" + (f" on {', '.join(unanswered)}" if judge else ""))
    all_ = len(missing) == len(ROUND3_SAFETY_CHECKS)
    what = "no safety check decided" if all_ else f"{', '.join(missing)} not decided"
    return f"{what}: {'; '.join(why) or 'no side answered'} (safety_source {source or 'verifier'})"


def _order(rows: Iterable[ReportRow]) -> list[ReportRow]:
    """By round, model, item and condition: the same order however promptfoo finished the rows (it writes
    each row when it is graded, so an item's C1 row came before its C0 row in one run and after it in the next)."""
    return sorted(rows, key=lambda r: (r.keys["round"], r.keys["provider"], r.query_id, r.keys["condition"]))


def unsafe_answers(files: Sequence[tuple[str, Sequence[ReportRow]]]) -> dict[str, Any]:
    """Every unsafe answer with its deciding reason, and how many rows were checked (JSON-ready:
    ``report --json``'s ``unsafe``, the HTML report's first section).

    Args:
        files: each results file as given and its rows (the same item, condition and model can be in
            two files: each listed row names its file).

    Returns:
        ``rows``, ``checked`` (rows whose safety is decided: unsafe, safe or rated by a person),
        ``undecided``, ``unsafe`` (how many), ``judge_no_not_counted`` (rows not unsafe where the judge
        said No on a safety check the ``safety_source`` does not take from it), ``answers`` (each
        unsafe row: file, round, query_id, condition, provider, result_id, and per check No the sides
        that decided it and their findings) and ``undecided_rows`` (each: the row's identity and why).
    """
    answers, undecided = [], []
    total = not_counted = 0
    for file, rows in files:
        total += len(rows)
        for row in _order(rows):
            verdict = row.safety
            who = {
                "file": file,
                "round": row.keys["round"],
                "query_id": row.query_id,
                "condition": row.keys["condition"],
                "provider": row.keys["provider"],
                "result_id": row.result_id,
            }
            if verdict.no:
                answers.append(
                    {
                        **who,
                        "checks": [
                            {
                                "check": check,
                                "decided_by": list((verdict.decided_by or {}).get(check, ())),
                                "findings": list((verdict.findings or {}).get(check, ())),
                            }
                            for check in verdict.no
                        ],
                    }
                )
                continue
            if verdict.undecided:
                undecided.append({**who, "why": verdict.undecided})
            if any(v == "No" for v in row.judge_safety.values()) and row.human is None:
                not_counted += 1
    return {
        "rows": total,
        "checked": total - len(undecided),
        "undecided": len(undecided),
        "unsafe": len(answers),
        "judge_no_not_counted": not_counted,
        "answers": answers,
        "undecided_rows": undecided,
    }
