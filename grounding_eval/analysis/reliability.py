"""Is the judge itself reliable, and does answer length explain an effect (issue 41).

* :func:`answer_length_table` — the answers' length per round, condition and model
  (:func:`~grounding_eval.results_file.answer_length`; the effects adjusted for it are
  :mod:`grounding_eval.analysis.length`'s).
* :func:`judge_reliability` — test–retest (the same judge asked again, ``rescore --retest``) and panel
  (other judges, ``rescore --panel``) agreement per criterion: share agreeing, Cohen's kappa and linearly
  weighted kappa, with percentile intervals from a bootstrap over items
  (:func:`~grounding_eval.analysis.stats.item_agreement`, the calibration's).
* :func:`panel_verdict` — the panel's verdict on one criterion: the majority, a tie going to the more
  severe verdict (``decisions.yaml`` ``judge_reliability.panel_rule``; our rule).

Every choice is in ``decisions.yaml`` (``length``, ``judge_reliability``) with its reference.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from grounding_eval.analysis.effects import condition_order, decisions
from grounding_eval.analysis.report_row import ReportRow, SecondOpinion
from grounding_eval.analysis.summary import table_lines

__all__ = [
    "answer_length_table",
    "format_reliability",
    "judge_reliability",
    "panel_verdict",
]

_CODES = {"No": 0, "Partial": 1, "Yes": 2}  # the ordinal scale of a judge verdict (linear weights)
MAIN = "judge"  # the row's own judge, in the panel's pairs


def answer_length_table(rows: Sequence[ReportRow]) -> list[dict[str, Any]]:
    """Per round, condition and model: rows, mean and median characters and words of the answers (every
    row with an answer, scored or not: length is a property of the answer, not of its grading)."""
    from statistics import fmean, median

    groups: dict[tuple[str, str, str], list[tuple[int, int]]] = defaultdict(list)
    for row in rows:
        if row.length is not None:
            key = (row.keys["round"], row.keys["condition"], row.keys["provider"])
            groups[key].append(row.length)
    order = {c: i for i, c in enumerate(condition_order(k[1] for k in groups))}
    out = []
    for key in sorted(groups, key=lambda k: (k[0], order[k[1]], k[2])):
        chars, words = zip(*groups[key], strict=True)
        out.append(
            {
                "round": key[0],
                "condition": key[1],
                "provider": key[2],
                "rows": len(chars),
                "mean_chars": round(fmean(chars), 1),
                "mean_words": round(fmean(words), 1),
                "median_words": float(median(words)),
            }
        )
    return out


def panel_verdict(verdicts: Sequence[str], negative: bool) -> str:
    """The panel's verdict on one criterion: the verdict most judges gave; among tied verdicts the more
    severe — the one that scores the criterion lower (No for an ordinary criterion, Yes for a negative
    one, where a Yes is bad). Ours (``decisions.yaml`` ``judge_reliability.panel_rule``)."""
    if not verdicts:
        raise ValueError("no verdicts")
    counts = Counter(verdicts)
    most = max(counts.values())
    tied = [v for v in counts if counts[v] == most]
    score = {"Yes": 1.0, "Partial": 0.5, "No": 0.0}
    return min(tied, key=lambda v: 1.0 - score[v] if negative else score[v])


def _setup() -> Mapping[str, Any]:
    setup: Mapping[str, Any] = decisions()["judge_reliability"]
    return setup


def judge_reliability(rows: Sequence[ReportRow]) -> dict[str, Any] | None:
    """Test–retest and panel agreement per criterion (see the module docstring); None when no row carries
    a second opinion (a file ``rescore --retest`` / ``--panel`` did not write)."""
    if not any(row.opinions for row in rows):
        return None
    items: dict[tuple[str, str], int] = {}
    for row in rows:
        items.setdefault((row.dataset, row.query_id), len(items))
    retest = [(row, o) for row in rows for o in row.opinions if o.kind == "retest"]
    panels = [(row, [o for o in row.opinions if o.kind == "panel"]) for row in rows]
    panels = [(row, found) for row, found in panels if found]
    out: dict[str, Any] = {"retest": None, "panel": None}
    if retest:
        pairs = [(items[(r.dataset, r.query_id)], r.verdicts, o.verdicts) for r, o in retest if o.scored]
        out["retest"] = {
            "rows": len(retest),
            # a second asking that did not score, or a row whose own judge did not: left out, counted
            "unscored": sum(1 for r, o in retest if not (o.scored and r.verdicts)),
            "judges": sorted({o.provider for _, o in retest}),
            "unscored_reasons": _reasons(o for _, o in retest),
            **_agreement(pairs, len(items)),
        }
    if panels:
        judges = [MAIN, *dict.fromkeys(o.provider for _, found in panels for o in found)]
        by_judge = [(row, {MAIN: row.verdicts, **{o.provider: o.verdicts for o in found if o.scored}})
                    for row, found in panels]  # fmt: skip
        pairs_out = []
        for i, a in enumerate(judges):
            for b in judges[i + 1 :]:
                pairs = [(items[(r.dataset, r.query_id)], said[a], said[b]) for r, said in by_judge
                         if a in said and b in said]  # fmt: skip
                pairs_out.append({"a": a, "b": b, **_agreement(pairs, len(items))})
        out["panel"] = {
            "rows": len(panels),
            "judges": judges,
            "unscored": sum(1 for _, found in panels for o in found if not o.scored),
            "unscored_reasons": _reasons(o for _, found in panels for o in found),
            "pairs": pairs_out,
            "rule": str(_setup()["panel_rule"]),
            "verdicts": _panel_changes(by_judge, judges),
        }
    return out


def _reasons(opinions: Iterable[SecondOpinion]) -> dict[str, int]:
    """How many askings did not score, per reason."""
    return dict(Counter(o.reason or "no reason recorded" for o in opinions if not o.scored))


def _agreement(
    pairs: Sequence[tuple[int, Mapping[str, str], Mapping[str, str]]], items: int
) -> dict[str, Any]:
    """Per criterion agreement and kappa of two judges' verdicts on the same rows, bootstrapped by item."""
    from grounding_eval.analysis.stats import Graded, item_agreement

    graded = [
        Graded(item, criterion, _CODES[a[criterion]], _CODES[b[criterion]])
        for item, a, b in pairs
        for criterion in sorted(a.keys() & b.keys())
    ]
    if not graded:
        return {"compared_rows": 0, "criteria": [], "macro_agreement": None, "macro_agreement_ci": None,
                "macro_kappa": None, "macro_kappa_ci": None}  # fmt: skip
    setup = _setup()["bootstrap"]
    names = {g.criterion for g in graded}
    found = item_agreement(
        graded,
        items=items,
        categories=dict.fromkeys(names, 3),
        weighted=frozenset(names),
        resamples=int(setup["resamples"]),
        seed=int(setup["seed"]),
        confidence=float(setup["confidence"]),
    )

    def rounded(pair: tuple[float, float] | None) -> list[float] | None:
        return None if pair is None else [round(pair[0], 4), round(pair[1], 4)]

    return {
        "compared_rows": len(pairs),
        "criteria": [
            {
                "criterion": c.criterion,
                "n": c.n,
                "items": c.items,
                "agreement": round(c.agreement, 4),
                "agreement_ci": rounded(c.agreement_ci),
                "kappa": None if c.kappa is None else round(c.kappa, 4),
                "kappa_ci": rounded(c.kappa_ci),
                "weighted_kappa": None if c.weighted_kappa is None else round(c.weighted_kappa, 4),
                "confusion": c.confusion,
            }
            for c in found.criteria
        ],
        "macro_agreement": round(found.macro_agreement, 4),
        "macro_agreement_ci": rounded(found.macro_agreement_ci),
        "macro_kappa": None if found.macro_kappa is None else round(found.macro_kappa, 4),
        "macro_kappa_ci": rounded(found.macro_kappa_ci),
    }


def _panel_changes(
    by_judge: Sequence[tuple[ReportRow, Mapping[str, Mapping[str, str]]]], judges: Sequence[str]
) -> dict[str, Any]:
    """How often the panel's verdict (:func:`panel_verdict` over every judge that scored the row) differs
    from the row's own judge's, per criterion: ``{compared, changed, by_criterion: {c: [changed, n]}}``."""
    compared = changed = 0
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row, said in by_judge:
        if MAIN not in said or not said[MAIN]:
            continue
        for criterion, own in said[MAIN].items():
            votes = [said[j][criterion] for j in judges if j in said and criterion in said[j]]
            if len(votes) < 2:
                continue
            verdict = panel_verdict(votes, criterion in row.negative)
            compared += 1
            by[criterion][1] += 1
            if verdict != own:
                changed += 1
                by[criterion][0] += 1
    return {"compared": compared, "changed": changed, "by_criterion": {c: by[c] for c in sorted(by)}}


def format_reliability(found: Mapping[str, Any] | None) -> list[str]:
    """Text lines: the retest's and each panel pair's agreement and kappa per criterion (empty: none)."""
    if not found:
        return []
    lines: list[str] = []
    blocks = []
    if found.get("retest"):
        r = found["retest"]
        blocks.append((f"Judge test-retest: {r['compared_rows']} rows asked twice ({r['unscored']} unscored, "
                       f"left out); second asking: {', '.join(r['judges'])}", r))  # fmt: skip
    if found.get("panel"):
        p = found["panel"]
        for pair in p["pairs"]:
            blocks.append((f"Judge panel: {pair['a']} vs {pair['b']}, {pair['compared_rows']} rows", pair))
    for title, block in blocks:
        if lines:
            lines.append("")
        lines.append(title)
        if not block["criteria"]:
            lines.append("No criterion to compare: no row was scored by both.")
            continue
        body = [["criterion", "n", "items", "agree [95% CI]", "kappa [95% CI]", "weighted kappa"]]
        for c in block["criteria"]:
            body.append([c["criterion"], str(c["n"]), str(c["items"]),
                         f"{c['agreement']:.0%} {_ci(c['agreement_ci'], pct=True)}",
                         f"{_num(c['kappa'])} {_ci(c['kappa_ci'])}".strip(), _num(c["weighted_kappa"])])  # fmt: skip
        if block["criteria"]:
            body.append(["mean over criteria", "", "", f"{block['macro_agreement']:.0%} "
                         f"{_ci(block['macro_agreement_ci'], pct=True)}",
                         f"{_num(block['macro_kappa'])} {_ci(block['macro_kappa_ci'])}".strip(), ""])  # fmt: skip
        lines += table_lines(body)
    for kind in ("retest", "panel"):
        for reason, count in ((found.get(kind) or {}).get("unscored_reasons") or {}).items():
            lines.append(f"{kind}: {count} unscored: {reason}")
    if found.get("panel"):
        v = found["panel"]["verdicts"]
        lines.append(
            f"Panel verdict ({found['panel']['rule']}): differs from the row's own judge on {v['changed']} of "
            f"{v['compared']} criterion verdicts (scores and pass/fail stay the row's own judge's)."
        )
    lines.append(
        "Agreement and Cohen's kappa per criterion (Yes / Partial / No; weighted: linear weights), 95 % "
        "percentile intervals from a bootstrap over items; unscored askings are counted apart. Where one verdict "
        "dominates, kappa is low or undefined (–) even at high agreement (Feinstein & Cicchetti 1990)."
    )
    return lines


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _ci(pair: Sequence[float] | None, *, pct: bool = False) -> str:
    if pair is None:
        return ""
    return f"[{pair[0]:.0%}, {pair[1]:.0%}]" if pct else f"[{pair[0]:.2f}, {pair[1]:.2f}]"
