"""Judge calibration against people: draw a grading sheet, then measure agreement, kappa and confusion.

``grounding-eval calibrate sample`` draws a stratified random sample of a results file's rows (10–20 %,
seeded) and writes a CSV sheet with one line per (item, condition, criterion) — the question, the
answer, the sources the model was shown, the criterion's definition, and blank ``human_verdict`` /
``human_note`` columns. The judge's verdict is *not* on the sheet (a grader who sees it anchors on it);
it goes to a key file beside it (``<sheet>.key.json``, with the results file's sha256 and the seed) for
the record. ``calibrate score`` reads the judge's verdicts from the results file again and compares.

What counts as a unit (one sheet line):

* a rubric judge row (v3, v4, Round 3): each criterion it answered, Yes / Partial / No;
* a docs-QA row: each applicable criterion (pass / fail; a person may also answer n/a);
* a factual-accuracy row: each claim with an id (supported / partially_supported / contradicted /
  unverifiable); a row whose judge left no claims to match is one unit, the row's pass / fail.

``calibrate score RESULTS`` without a sheet reads people's ratings from promptfoo's viewer instead: a
row rated 👍/👎 carries a component whose ``assertion.type`` is ``human`` in the JSON export; it is
compared with the pass of the row's judge component (row-level agreement).
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from grounding_eval.analysis.effects import decisions
from grounding_eval.analysis.summary import GROUP_KEYS, ReportRow, load_results
from grounding_eval.errors import DataError, clip

if TYPE_CHECKING:
    from grounding_eval.judge.rubric import Rubric

__all__ = ["SHEET_COLUMNS", "Drawn", "Unit", "format_score", "score", "units", "write_sample"]

SHEET_COLUMNS = (
    "unit_id",
    "round",
    "condition",
    "provider",
    "item_id",
    "criterion",
    "scale",
    "allowed_verdicts",
    "definition",
    "question",
    "answer",
    "sources",
    "human_verdict",
    "human_note",
)
# Each scale's categories, in the order of the confusion matrix (ordinal scales: worst to best).
SCALES: dict[str, tuple[str, ...]] = {
    "yes_partial_no": ("No", "Partial", "Yes"),
    "pass_fail": ("fail", "pass", "n/a"),
    # The factual-accuracy seed's verification_result labels, verbatim.
    "claim": ("Contradicted", "Partially Supported", "Supported", "Unverifiable"),
}
_ORDINAL = {"yes_partial_no"}


@dataclass(frozen=True)
class Unit:
    """One thing a person grades: a row's verdict on one criterion (or one claim, or the whole row)."""

    unit_id: str
    row: ReportRow
    criterion: str
    scale: str
    judge_verdict: str
    definition: str


def units(rows: Sequence[ReportRow]) -> list[Unit]:
    """Every gradable unit of ``rows``, in row order; ids are unique and stable for the same file."""
    out: list[Unit] = []
    seen: dict[str, int] = defaultdict(int)
    for row in rows:
        for criterion, scale, verdict, definition in _row_units(row):
            base = "|".join(
                (row.keys["round"], row.keys["condition"], row.keys["provider"], row.query_id, criterion)
            )
            seen[base] += 1
            uid = base if seen[base] == 1 else f"{base}|#{seen[base]}"
            out.append(Unit(uid, row, criterion, scale, verdict, definition))
    return out


def _row_units(row: ReportRow) -> list[tuple[str, str, str, str]]:
    setup = decisions()["calibration"]
    out = []
    if row.verdicts and row.rubric:
        rubric_id = row.rubric.split("@", 1)[0]
        definitions = _rubric_definitions(rubric_id, row.test_metadata)
        for criterion, verdict in row.verdicts.items():
            text = definitions.get(criterion, f"(criterion {criterion} is not in rubric {rubric_id})")
            out.append((f"{rubric_id}.{criterion}", "yes_partial_no", verdict, text))
    docs = setup["docs_qa_definitions"]
    for criterion, verdict in row.docs_qa.items():
        if verdict != "n/a":
            out.append((f"docs_qa.{criterion}", "pass_fail", verdict, docs.get(criterion, criterion)))
    claim_labels = _human_codes("claim")
    for claim in row.claims:
        label = claim_labels.get(claim.verdict.lower())  # the judge's label, read as a person's would be
        if label is not None:
            text = setup["claim_definition"] + claim.claim_text
            out.append((f"factuality.claim.{claim.claim_id}", "claim", label, text))
    if row.factuality_status is not None and not row.claims and row.judge_pass is not None:
        out.append(
            ("factuality.row", "pass_fail", "pass" if row.judge_pass else "fail", setup["row_definition"])
        )
    return out


@functools.cache
def _rubric(rubric_id: str) -> Rubric:
    from grounding_eval.judge.rubric import load_rubric, rubric_path

    return load_rubric(rubric_path(rubric_id))


def _rubric_definitions(rubric_id: str, item: Mapping[str, Any]) -> dict[str, str]:
    """Criterion id → its question and verdict definitions, from the shipped rubric of that id.

    A criterion written as a template (Round 3's scenario criteria) is rendered with the item's fields
    from the test's metadata, as the judge saw it; when a field is missing the template text stays, with
    the error after it, so the grader sees that something is missing.
    """
    from grounding_eval.judge.render import judge_environment

    rubric = _rubric(rubric_id)
    values = {k: v for k, v in item.items() if k in rubric.item_variables}
    env = judge_environment()
    out = {}
    for c in rubric.criteria:
        parts = []
        for label, text in (("", c.question), ("Yes: ", c.yes), ("Partial: ", c.partial), ("No: ", c.no)):
            if "{" in text:
                try:
                    text = env.from_string(text).render(values)
                except jinja2.UndefinedError as exc:
                    text = f"{text} (not rendered: {exc.message}; the test's metadata lacks it)"
            parts.append(label + text.strip())
        out[c.id] = " ".join(parts)
    return out


@dataclass(frozen=True)
class Drawn:
    """What ``write_sample`` drew: sheet lines, rows drawn, rows with units, strata, the key file."""

    lines: int
    rows: int
    population: int
    strata: int
    key: Path


def _key_path(sheet: Path) -> Path:
    return sheet.with_name(sheet.stem + ".key.json")


def write_sample(results: Path, sheet: Path, *, fraction: float, by: Sequence[str], seed: int) -> Drawn:
    """Draw ``fraction`` of each stratum's rows (at least one), seeded, and write the sheet and its key.

    Raises:
        DataError: the fraction is outside the seed's 10–20 %, a stratum key is unknown, the results file
            is unreadable, or no row has anything to grade.
    """
    bounds = decisions()["calibration"]["sample_fraction"]
    if not bounds["min"] <= fraction <= bounds["max"]:
        raise DataError(
            "--fraction", f"{fraction} is outside {bounds['min']}–{bounds['max']} (a 10–20 % sample)"
        )
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise DataError("--by", f"unknown key(s) {', '.join(unknown)}: use {', '.join(GROUP_KEYS)}")
    all_units = units(load_results(results).rows)
    by_row: dict[int, list[Unit]] = defaultdict(list)
    for unit in all_units:
        by_row[id(unit.row)].append(unit)
    if not by_row:
        raise DataError(results, "no row has a judge verdict to grade (every row unscored, or no judge ran)")
    strata: dict[tuple[str, ...], list[int]] = defaultdict(list)
    first = {rid: us[0].row for rid, us in by_row.items()}
    for rid, row in first.items():
        strata[tuple(row.keys[k] for k in by)].append(rid)
    rng = random.Random(seed)
    chosen: list[int] = []
    for key in sorted(strata):
        members = strata[key]
        k = max(int(decisions()["calibration"]["min_per_stratum"]), round(fraction * len(members)))
        chosen += rng.sample(members, min(k, len(members)))
    order = {rid: i for i, rid in enumerate(by_row)}
    chosen.sort(key=order.__getitem__)
    drawn = [u for rid in chosen for u in by_row[rid]]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(SHEET_COLUMNS)
    for u in drawn:
        row = u.row
        sources = "\n\n".join(f"[{name}]\n{text}" for name, text in row.sources) or "(no sources shown)"
        writer.writerow(
            [
                u.unit_id,
                row.keys["round"],
                row.keys["condition"],
                row.keys["provider"],
                row.query_id,
                u.criterion,
                u.scale,
                " / ".join(SCALES[u.scale]),
                u.definition,
                row.question,
                row.answer,
                sources,
                "",
                "",
            ]
        )
    key_record = {
        "results": str(results),
        "results_sha256": hashlib.sha256(Path(results).read_bytes()).hexdigest(),
        "fraction": fraction,
        "by": list(by),
        "seed": seed,
        "units": [
            {
                "unit_id": u.unit_id,
                "criterion": u.criterion,
                "scale": u.scale,
                "judge_verdict": u.judge_verdict,
            }
            for u in drawn
        ],
    }
    sheet.write_text(buffer.getvalue(), encoding="utf-8")
    key_path = _key_path(sheet)
    key_path.write_text(json.dumps(key_record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return Drawn(len(drawn), len(chosen), len(by_row), len(strata), key_path)


def _human_codes(scale: str) -> Mapping[str, str]:
    spellings: Mapping[str, str] = decisions()["calibration"]["human_verdicts"][scale]
    return {str(k).lower(): str(v) for k, v in spellings.items()}


def _read_sheet(results_units: Mapping[str, Unit], sheet: Path) -> tuple[list[tuple[Unit, str]], int]:
    """The graded lines (unit, person's verdict) and how many lines were left ungraded."""
    from grounding_eval.files import read_text

    text = read_text(sheet)
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    missing = [c for c in ("unit_id", "human_verdict") if c not in header]
    if missing:
        raise DataError(sheet, f"not a grading sheet: the header lacks {', '.join(missing)}")
    graded, ungraded, seen = [], 0, set()
    for row in reader:
        line = reader.line_num
        if None in row:
            raise DataError(sheet, f"line {line}: more fields than the header's {len(header)}")
        uid = (row.get("unit_id") or "").strip()
        if not uid:
            raise DataError(sheet, f"line {line}: unit_id is empty")
        if uid not in results_units:
            raise DataError(sheet, f"line {line}: unit_id {clip(uid)} is not in the results file")
        if uid in seen:
            raise DataError(sheet, f"line {line}: unit_id {clip(uid)} appears twice")
        seen.add(uid)
        unit = results_units[uid]
        verdict = (row.get("human_verdict") or "").strip()
        if row.get("human_verdict") is None:
            raise DataError(sheet, f"line {line}: fewer fields than the header (no human_verdict)")
        if not verdict:
            ungraded += 1
            continue
        codes = _human_codes(unit.scale)
        if verdict.lower() not in codes:
            allowed = " / ".join(SCALES[unit.scale])
            raise DataError(sheet, f"line {line}: human_verdict {clip(verdict)} is not one of {allowed}")
        graded.append((unit, codes[verdict.lower()]))
    return graded, ungraded


def _viewer_ratings(rows: Sequence[ReportRow]) -> tuple[list[tuple[Unit, str]], int]:
    """Rows rated in promptfoo's viewer (a ``human`` component) against their judge component's pass."""
    graded, unrated = [], 0
    for row in rows:
        if row.judge_pass is None:
            continue
        if row.human is None:
            unrated += 1
            continue
        uid = "|".join((row.keys["round"], row.keys["condition"], row.keys["provider"], row.query_id, "row"))
        unit = Unit(uid, row, "row (viewer rating)", "pass_fail", "pass" if row.judge_pass else "fail", "")
        graded.append((unit, "pass" if row.human["pass"] else "fail"))
    return graded, unrated


def score(results: Path, sheet: Path | None, *, threshold: float | None = None) -> dict[str, Any]:
    """People versus the judge, per criterion and overall per scale (the JSON ``calibrate score`` prints)."""
    from grounding_eval.analysis.stats import agreement

    setup = decisions()["calibration"]
    threshold = float(setup["threshold"]["agreement"]) if threshold is None else threshold
    rows = load_results(results).rows
    if sheet is None:
        graded, ungraded = _viewer_ratings(rows)
        source = "promptfoo viewer ratings (row level)"
        if not graded:
            raise DataError(
                results,
                "no row carries a human rating (rate rows in promptfoo's viewer, then export the eval as JSON)",
            )
    else:
        graded, ungraded = _read_sheet({u.unit_id: u for u in units(rows)}, sheet)
        source = f"grading sheet {sheet}"
    boot = setup["bootstrap"]
    groups: dict[tuple[str, str], list[tuple[Unit, str]]] = defaultdict(list)
    for unit, human in graded:
        groups[(unit.criterion, unit.scale)].append((unit, human))
        groups[("overall", unit.scale)].append((unit, human))

    def measure(name: str, scale: str, pairs: list[tuple[Unit, str]]) -> dict[str, Any]:
        cats = SCALES[scale]
        h = [cats.index(human) for _, human in pairs]
        j = [cats.index(unit.judge_verdict) for unit, _ in pairs]
        a = agreement(
            h,
            j,
            len(cats),
            ordinal=scale in _ORDINAL,
            resamples=int(boot["resamples"]),
            seed=int(boot["seed"]),
            confidence=float(boot["confidence"]),
        )
        return {
            "criterion": name,
            "scale": scale,
            "n": a.n,
            "agreement": round(a.agreement, 4),
            "agreement_ci": [round(x, 4) for x in a.agreement_ci],
            "kappa": _r(a.kappa),
            "kappa_ci": [round(x, 4) for x in a.kappa_ci] if a.kappa_ci else None,
            "weighted_kappa": _r(a.weighted_kappa),
            "base_rate": dict(zip(cats, (round(x, 4) for x in a.base_rate), strict=True)),
            "confusion": {"rows": "person", "columns": "judge", "labels": list(cats), "matrix": a.confusion},
            "below_threshold": a.agreement < threshold,
        }

    criteria = [measure(c, s, p) for (c, s), p in sorted(groups.items()) if c != "overall"]
    overall = [measure("overall", s, p) for (c, s), p in sorted(groups.items()) if c == "overall"]
    agree_all = sum(unit.judge_verdict == human for unit, human in graded) / len(graded) if graded else None
    return {
        "source": source,
        "results": str(results),
        "graded": len(graded),
        "ungraded": ungraded,
        "threshold": threshold,
        "threshold_provenance": setup["threshold"]["provenance"],
        "published_range": setup["published_range"]["text"],
        "agreement_all": _r(agree_all),
        "criteria": criteria,
        "overall": overall,
        "below_threshold": [c["criterion"] for c in criteria if c["below_threshold"]],
    }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def format_score(report: Mapping[str, Any]) -> str:
    """The calibration report as text: one line per criterion, then overall, then the criteria to fix."""
    from grounding_eval.analysis.summary import table_lines

    lines = [
        f"Judge versus people ({report['source']}): {report['graded']} graded, {report['ungraded']} ungraded "
        "(not counted as disagreement)",
    ]
    body = [
        [
            "criterion",
            "scale",
            "n",
            "agreement [95% CI]",
            "kappa [95% CI]",
            "w.kappa",
            "base rate (person)",
            "confusion (person × judge)",
        ]
    ]
    for entry in [*report["criteria"], *report["overall"]]:
        ci = entry["agreement_ci"]
        kci = entry["kappa_ci"]
        kappa = (
            "–"
            if entry["kappa"] is None
            else f"{entry['kappa']:.2f}" + (f" [{kci[0]:.2f}, {kci[1]:.2f}]" if kci else "")
        )
        base = " ".join(f"{k}={v:.0%}" for k, v in entry["base_rate"].items())
        matrix = " | ".join(" ".join(str(x) for x in row) for row in entry["confusion"]["matrix"])
        body.append(
            [
                entry["criterion"],
                entry["scale"],
                str(entry["n"]),
                f"{entry['agreement']:.0%} [{ci[0]:.0%}, {ci[1]:.0%}]",
                kappa,
                "–" if entry["weighted_kappa"] is None else f"{entry['weighted_kappa']:.2f}",
                base,
                matrix,
            ]
        )
    lines += table_lines(body)
    below = report["below_threshold"]
    lines.append(
        f"Below the {report['threshold']:.0%} agreement threshold ({report['threshold_provenance']}): "
        + (", ".join(below) if below else "none")
        + f". For comparison, {report['published_range']}."
    )
    return "\n".join(lines)
