"""Judge calibration against people: draw a grading sheet, then measure agreement, kappa and confusion.

``grounding-eval calibrate sample`` draws a stratified random sample of a results file's rows, seeded:
exactly the requested share of the rows (10–20 %), spread over the strata by largest remainder
(:func:`allocate`), and writes a CSV sheet with one line per (item, condition, criterion) — the question,
the answer, the sources the model was shown, the criterion's definition, and blank ``human_verdict`` /
``human_note`` columns. The judge's verdict is *not* on the sheet (a grader who sees it anchors on it);
it goes to a key file beside it (``<sheet>.key.json``, with the results file's sha256, the seed and the
drawn share). An existing sheet or key file is refused unless ``--force``: a sheet may hold people's
verdicts. Every cell is written by :func:`sheet_cell` and read back by :func:`read_cell`, so that a round
trip gives the text back: inert for a spreadsheet (OWASP's leading apostrophe before a formula start),
UTF-8 (a lone surrogate becomes U+FFFD), and within a spreadsheet's 32,767-character cell limit (a longer
answer, question, definition or sources cell keeps its start after a marker the reader recognises; key
columns are never clipped). ``calibrate score`` refuses a results file whose sha256 is not the key's, reads the
judge's verdicts from the results file again and compares: per criterion first (agreement, Cohen's
kappa), then the mean over criteria and the share of rows agreeing on every core criterion, with
intervals from one bootstrap over rows (a row's criteria travel together: the row is what was drawn).

What counts as a unit (one sheet line):

* a rubric judge row (v3, v4, Round 3): each criterion it answered, Yes / Partial / No;
* a docs-QA row: each applicable criterion (pass / fail; a person may also answer n/a);
* a factual-accuracy row: each claim with an id (supported / partially_supported / contradicted /
  unverifiable); a row whose judge left no claims to match is one unit, the row's pass / fail.

``calibrate score RESULTS --ratings EXPORT`` reads people's ratings from promptfoo's viewer instead: a
row rated 👍/👎 carries a component whose ``assertion.type`` is ``human`` in the JSON export; it is
compared with the row's final verdict (the composite's pass) in the eval's own results file. The
graders saw the judge's chips, so this is labelled non-blind and never held against the 90 % bar.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import math
import os
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from grounding_eval.analysis.effects import decisions
from grounding_eval.analysis.report_row import ReportRow
from grounding_eval.analysis.summary import GROUP_KEYS, Results, load_results, table_lines
from grounding_eval.encodable import utf8_encodable
from grounding_eval.errors import DataError, clip
from grounding_eval.files import RESULTS, read_bytes, read_json, read_text, write_text_atomic
from grounding_eval.judge.rubric import load_rubric, rubric_path

if TYPE_CHECKING:
    from grounding_eval.judge.rubric import Rubric

__all__ = [
    "CELL_LIMIT",
    "NON_BLIND",
    "SHEET_COLUMNS",
    "Allocation",
    "Cell",
    "Drawn",
    "Unit",
    "allocate",
    "format_score",
    "read_cell",
    "read_sheet",
    "score",
    "sheet_cell",
    "sheet_text",
    "units",
    "write_sample",
]

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
    """Every gradable unit of ``rows``, in row order; ids are unique and stable for the same file.

    An unscored row (an error, an unscorable judge reply, a composite that could not score it) has
    none: what its judge left is not a verdict to compare with (a factual-accuracy judge's ERROR is no
    "fail"), so it is counted apart, never drawn.
    """
    out: list[Unit] = []
    seen: dict[str, int] = defaultdict(int)
    for row in rows:
        if row.unscored:
            continue
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


Stratum = tuple[str, ...]


@dataclass(frozen=True)
class Allocation:
    """How many rows each stratum gives to a sample of ``fraction`` of ``population`` rows.

    Attributes:
        population: rows that have something to grade.
        requested: the fraction asked for.
        target: the rows the share asks for (see :func:`allocate`), before the one-per-stratum rule.
        per_stratum: rows drawn from each stratum, in sorted stratum order.
        sizes: rows in each stratum.
        topped_up: the one-per-stratum rule was applied (some stratum would otherwise be below it).
        empty: strata that give no row (named to the user when the rule could not be kept).
        rule_total: the rows a sample keeping the one-per-stratum rule needs: K, or the strata's minimums
            when those add up to more (== ``total`` when the rule was kept).
    """

    population: int
    requested: float
    target: int
    per_stratum: Mapping[Stratum, int]
    sizes: Mapping[Stratum, int]
    topped_up: bool
    empty: tuple[Stratum, ...]
    rule_total: int

    @property
    def total(self) -> int:
        """Rows drawn."""
        return sum(self.per_stratum.values())

    @property
    def share(self) -> float:
        """Rows drawn over the population."""
        return self.total / self.population


def _exact(value: float) -> Fraction:
    """The decimal the user wrote (``0.1`` is 1/10, not the binary float just above it)."""
    return Fraction(repr(float(value)))


def _largest_remainder(sizes: Mapping[Stratum, int], k: int) -> dict[Stratum, int]:
    """Hamilton's method: ``k`` rows shared in proportion to ``sizes`` (ties: larger stratum, then sorted)."""
    n = sum(sizes.values())
    quotas = {s: Fraction(k * size, n) for s, size in sizes.items()}
    drawn = {s: math.floor(q) for s, q in quotas.items()}
    left = k - sum(drawn.values())
    order = sorted(sizes, key=lambda s: (-(quotas[s] - drawn[s]), -sizes[s], s))
    for s in order[:left]:
        drawn[s] += 1
    return drawn


def allocate(
    sizes: Mapping[Stratum, int], *, fraction: float, low: float, high: float, min_per_stratum: int
) -> Allocation:
    """Share ``fraction`` of the rows out among the strata so that the total is the share asked for.

    1. Target: ``K = round(fraction × N)``, halves up. When ``K / N`` falls outside ``[low, high]`` (the
       seed's 10–20 %), K moves to the nearest count inside (``ceil(low × N)`` or ``floor(high × N)``);
       when no whole number of rows is inside, the request cannot be met (ValueError).
    2. Largest remainder (Hamilton): stratum s of ``n_s`` rows gets ``floor(K × n_s / N)``; the rows left
       over go one each to the largest remainders ``K × n_s / N − floor(…)``; ties go to the larger
       stratum, then to the stratum first in sorted order.
    3. At least ``m = min_per_stratum`` rows per stratum (no more than it has), within the K rows when
       they are enough: a stratum step 2 leaves below m is fixed at m and the other strata share the
       rest of the K rows by step 2 again, until none is below m (the total stays K). When the K rows
       are too few (more strata than K), every stratum gets m rows if that total is at most
       ``high × N``; otherwise step 2 stands and the strata left without a row are named.

    Raises:
        ValueError: no whole number of rows is a share within ``[low, high]`` of the population.
    """
    n = sum(sizes.values())
    f, lo, hi = _exact(fraction), _exact(low), _exact(high)
    target = math.floor(f * n + Fraction(1, 2))
    if Fraction(target, n) < lo:
        target = math.ceil(lo * n)
    elif Fraction(target, n) > hi:
        target = math.floor(hi * n)
    if not lo <= Fraction(target, n) <= hi:
        nearest = math.ceil(lo * n)
        raise ValueError(
            f"{n} rows to draw from: no whole number of rows is a {100 * low:g}–{100 * high:g} % "
            "share of them "
            f"({nearest} {'row is' if nearest == 1 else 'rows are'} {_pct(nearest / n)})"
        )
    drawn = _largest_remainder(sizes, target)
    floor_of = {s: min(min_per_stratum, size) for s, size in sizes.items()}
    rule_total = max(target, sum(floor_of.values()))
    topped_up = any(drawn[s] < floor_of[s] for s in sizes) and Fraction(rule_total, n) <= hi
    if topped_up and rule_total > target:
        drawn = dict(floor_of)  # more strata than K rows: m each, still within the bound
    elif topped_up:
        fixed: dict[Stratum, int] = {}
        while True:
            free = {s: size for s, size in sizes.items() if s not in fixed}
            drawn = {**fixed, **_largest_remainder(free, target - sum(fixed.values()))}
            low_strata = {s: floor_of[s] for s in free if drawn[s] < floor_of[s]}
            if not low_strata:
                break
            fixed.update(low_strata)
    return Allocation(
        population=n,
        requested=fraction,
        target=target,
        per_stratum={s: drawn[s] for s in sorted(drawn)},
        sizes={s: sizes[s] for s in sorted(sizes)},
        topped_up=topped_up,
        empty=tuple(s for s in sorted(drawn) if drawn[s] == 0),
        rule_total=rule_total,
    )


@dataclass(frozen=True)
class Drawn:
    """What ``write_sample`` drew: sheet lines, the allocation over strata, the strata keys, the key file,
    the rows not drawn (``unscored``, ``no_judge_verdict``), counted apart, and the cells clipped to a
    spreadsheet's cell limit."""

    lines: int
    allocation: Allocation
    by: tuple[str, ...]
    key: Path
    not_drawn: Mapping[str, int]
    clipped: int = 0

    @property
    def rows(self) -> int:
        """Rows drawn."""
        return self.allocation.total

    @property
    def population(self) -> int:
        """Rows that had something to grade."""
        return self.allocation.population

    @property
    def strata(self) -> int:
        """Strata the rows were grouped into."""
        return len(self.allocation.sizes)

    def summary(self) -> list[str]:
        """What ``calibrate sample`` prints: the drawn share, then the strata that give no row, if any."""
        a = self.allocation
        lines = [
            f"drew {a.total} of {a.population} rows ({_pct(a.share)}; asked {100 * a.requested:g} %) from "
            f"{self.strata} {'stratum' if self.strata == 1 else 'strata'}: {self.lines} "
            + ("line" if self.lines == 1 else "lines")
        ]
        left = self.not_drawn
        if any(left.values()):
            lines.append(
                f"not drawn, counted apart: {left['unscored']} unscored rows, {left['no_judge_verdict']} "
                "rows without a judge verdict"
            )
        if self.clipped:
            lines.append(
                f"{self.clipped} {'cell' if self.clipped == 1 else 'cells'} longer than a spreadsheet cell "
                f"holds ({CELL_LIMIT:,} characters) clipped, each with a marker at its start; the whole "
                "texts are in the results file"
            )
        if a.empty:
            names = ", ".join(_stratum_label(self.by, s) for s in a.empty)
            lines.append(
                f"no row drawn from {len(a.empty)} of {self.strata} strata (one per stratum would draw "
                f"{a.rule_total} of {a.population} rows, {_pct(a.rule_total / a.population)}, above "
                f"{100 * _bounds()[1]:g} %): {names}"
            )
        return lines


def _pct(share: float, digits: int = 1) -> str:
    """``0.125`` → ``12.5 %`` (the project writes a space before the sign)."""
    return f"{100 * share:.{digits}f} %"


def _stratum_label(by: Sequence[str], stratum: Stratum) -> str:
    return " ".join(f"{k}={v}" for k, v in zip(by, stratum, strict=True)) or "(all rows)"


def _bounds() -> tuple[float, float]:
    bounds = decisions()["calibration"]["sample_fraction"]
    return float(bounds["min"]), float(bounds["max"])


def _key_path(sheet: Path) -> Path:
    return sheet.with_name(sheet.stem + ".key.json")


# What a spreadsheet opening the sheet reads as the start of a formula (OWASP's list for CSV injection).
_FORMULA_START = "=+-@\t\r"
CELL_LIMIT = 32_767
"""The most characters a spreadsheet cell holds (Excel's limit, in UTF-16 code units): past it Excel
cuts the text without a word, so the writer clips a longer prose cell itself, with a marker."""
_CLIP_OPENING = "[grounding-eval clipped this cell: "
_CLIP_CLOSING = "characters are shown; the whole text is in the results file]\n"
_CLIP_MARK = re.compile(
    re.escape(_CLIP_OPENING) + "the first ([0-9,]+) of ([0-9,]+) " + re.escape(_CLIP_CLOSING)
)
# A text the writer puts one apostrophe before: a formula start, after any apostrophes of its own (so
# that a text of its own starting with ' followed by one is told apart), or the clip marker's opening.
_ESCAPED = re.compile("'*(?:[" + re.escape(_FORMULA_START) + "]|" + re.escape(_CLIP_OPENING) + ")")
# The columns whose text is there for the grader's reading, clipped past CELL_LIMIT; every other column
# is a key the reader matches on, never clipped.
_PROSE_COLUMNS = frozenset({"definition", "question", "answer", "sources", "human_note"})


@dataclass(frozen=True)
class Cell:
    """One sheet cell as read back: the text the writer was given, or its start when it was clipped.

    Attributes:
        text: the cell's text, the writer's apostrophe and clip marker removed.
        length: the whole text's length in characters when the sheet shows only its start, else None.
    """

    text: str
    length: int | None = None

    @property
    def clipped(self) -> bool:
        """Whether the sheet shows only the start of the text."""
        return self.length is not None


def _utf16_units(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def sheet_cell(text: str, *, clip: bool = True) -> str:
    """The cell the sheet holds for ``text``; :func:`read_cell` gives ``text`` back.

    * A lone surrogate (half an emoji, as promptfoo writes it) becomes U+FFFD: the sheet is UTF-8.
    * A text a spreadsheet would read as a formula (starting with ``=``, ``+``, ``-``, ``@``, a tab or a
      carriage return: the answer is hostile) gets a leading ``'`` (OWASP's advice for CSV injection);
      so does a text starting with apostrophes before one of those, or with the clip marker, so that the
      reader strips exactly the apostrophes the writer added.
    * A cell longer than :data:`CELL_LIMIT` UTF-16 code units (what Excel counts) keeps the text's start,
      after a marker naming how much is shown: ``[grounding-eval clipped this cell: the first N of M
      characters are shown; the whole text is in the results file]`` and a line break. The marker
      starts the cell, so the grader sees it first and no formula can follow it. ``clip=False`` never
      clips (ValueError instead: a key column).

    Raises:
        ValueError: the cell would be over ``CELL_LIMIT`` and ``clip`` is False.
    """
    text = utf8_encodable(text)
    cell = "'" + text if _ESCAPED.match(text) else text
    if len(cell) <= CELL_LIMIT // 2 or _utf16_units(cell) <= CELL_LIMIT:
        return cell
    if not clip:
        raise ValueError(f"{len(text):,} characters, over a spreadsheet cell's {CELL_LIMIT:,}")
    mark = _CLIP_OPENING + "the first {:,} of " + f"{len(text):,} " + _CLIP_CLOSING
    # The head's count is written like CELL_LIMIT's: it is at least half the limit (two units a
    # character at most), so it has as many digits.
    room = CELL_LIMIT - len(mark.format(CELL_LIMIT))
    head = text[:room]
    while _utf16_units(head) > room:  # astral characters take two units each
        head = head[: len(head) - (_utf16_units(head) - room + 1) // 2]
    return mark.format(len(head)) + head


def read_cell(cell: str) -> Cell:
    """The text :func:`sheet_cell` was given (its start and whole length when it was clipped)."""
    if cell.startswith("'") and _ESCAPED.match(cell, 1):
        return Cell(cell[1:])
    mark = _CLIP_MARK.match(cell)
    if mark:
        return Cell(cell[mark.end() :], int(mark[2].replace(",", "")))
    return Cell(cell)


def sheet_text(lines: Iterable[Mapping[str, str]], results: Path) -> tuple[str, int]:
    """The sheet's CSV text and how many of its cells were clipped: the header, then one line per
    mapping of :data:`SHEET_COLUMNS` to text (a column left out is blank).

    Every cell is written by :func:`sheet_cell`; prose columns are clipped to a spreadsheet's cell limit,
    key columns never are.

    Raises:
        DataError: a key column's text (a long provider label, say) is over the cell limit.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(SHEET_COLUMNS)
    clipped = 0
    for line in lines:
        cells = []
        for column in SHEET_COLUMNS:
            text = line.get(column, "")
            try:
                cells.append(sheet_cell(text, clip=column in _PROSE_COLUMNS))
            except ValueError as exc:
                raise DataError(
                    results,
                    f"unit {clip(line.get('unit_id', ''))}: its {column} is {exc} (a key column is "
                    "never clipped)",
                ) from None
            clipped += cells[-1].startswith(_CLIP_OPENING)
        writer.writerow(cells)
    return buffer.getvalue(), clipped


def write_sample(
    results: Path, sheet: Path, *, fraction: float, by: Sequence[str], seed: int, force: bool = False
) -> Drawn:
    """Draw ``fraction`` of the gradable rows, spread over the strata (:func:`allocate`), seeded, and write
    the sheet (:func:`sheet_text`) and its key, each atomically: a failing run leaves what was there.

    Raises:
        DataError: the sheet or its key file exists and ``force`` is not set (a sheet may hold people's
            verdicts); either is the results file itself; the fraction is outside the seed's 10–20 %, a
            stratum key is unknown, the results file is unreadable, no row has anything to grade, or no
            whole number of rows is a 10–20 % share.
    """
    key_path = _key_path(sheet)
    for path in (sheet, key_path):
        if path.exists() and results.exists() and os.path.samefile(path, results):
            raise DataError(path, "is the results file being sampled: write the sheet elsewhere")
        if not force and (path.exists() or path.is_symlink()):
            what = "it may hold people's verdicts" if path == sheet else "the key of a sheet drawn before"
            raise DataError(path, f"exists ({what}): use --force to overwrite")
    setup = decisions()["calibration"]
    low, high = _bounds()
    if not low <= fraction <= high:
        raise DataError("--fraction", f"{fraction} is outside {low}–{high} (a 10–20 % sample)")
    unknown = [k for k in by if k not in GROUP_KEYS]
    if unknown:
        raise DataError("--by", f"unknown key(s) {', '.join(unknown)}: use {', '.join(GROUP_KEYS)}")
    rows = load_results(results).rows
    all_units = units(rows)
    by_row: dict[int, list[Unit]] = defaultdict(list)
    for unit in all_units:
        by_row[id(unit.row)].append(unit)
    unscored = sum(1 for row in rows if row.unscored)
    not_drawn = {"unscored": unscored, "no_judge_verdict": len(rows) - unscored - len(by_row)}
    if not by_row:
        raise DataError(
            results,
            f"no row has a judge verdict to grade ({len(rows)} rows: {unscored} unscored, "
            f"{not_drawn['no_judge_verdict']} without a judge verdict)",
        )
    strata: dict[Stratum, list[int]] = defaultdict(list)
    for rid, us in by_row.items():
        strata[tuple(us[0].row.keys[k] for k in by)].append(rid)
    try:
        allocation = allocate(
            {s: len(m) for s, m in strata.items()},
            fraction=fraction,
            low=low,
            high=high,
            min_per_stratum=int(setup["min_per_stratum"]),
        )
    except ValueError as exc:
        raise DataError(results, str(exc)) from None
    rng = random.Random(seed)
    chosen: list[int] = []
    for stratum, k in allocation.per_stratum.items():
        chosen += rng.sample(strata[stratum], k)
    order = {rid: i for i, rid in enumerate(by_row)}
    chosen.sort(key=order.__getitem__)
    drawn = [u for rid in chosen for u in by_row[rid]]
    lines = []
    for u in drawn:
        row = u.row
        sources = "\n\n".join(f"[{name}]\n{text}" for name, text in row.sources) or "(no sources shown)"
        values = (u.unit_id, row.keys["round"], row.keys["condition"], row.keys["provider"], row.query_id,
                  u.criterion, u.scale, " / ".join(SCALES[u.scale]), u.definition, row.question, row.answer,
                  sources, "", "")  # fmt: skip
        lines.append(dict(zip(SHEET_COLUMNS, values, strict=True)))
    text, clipped = sheet_text(lines, results)
    key_record = {
        "results": str(results),
        "results_sha256": hashlib.sha256(read_bytes(results, RESULTS)).hexdigest(),
        "fraction": fraction,
        "by": list(by),
        "seed": seed,
        "drawn": {
            "rows": allocation.total,
            "population": allocation.population,
            "share": round(allocation.share, 4),
            "target": allocation.target,
            "strata": [
                {"stratum": dict(zip(by, s, strict=True)), "rows": allocation.sizes[s], "drawn": k}
                for s, k in allocation.per_stratum.items()
            ],
            "strata_without_rows": [dict(zip(by, s, strict=True)) for s in allocation.empty],
            "not_drawn": not_drawn,
        },
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
    # Both texts are whole before either file is written; the key goes last, so a sheet without its
    # key is refused by score rather than scored against another draw's verdicts.
    write_text_atomic(sheet, text)
    write_text_atomic(key_path, json.dumps(utf8_encodable(key_record), indent=1, ensure_ascii=False) + "\n")
    return Drawn(len(drawn), allocation, tuple(by), key_path, not_drawn, clipped)


def _human_codes(scale: str) -> Mapping[str, str]:
    spellings: Mapping[str, str] = decisions()["calibration"]["human_verdicts"][scale]
    return {str(k).lower(): str(v) for k, v in spellings.items()}


def read_sheet(sheet: Path) -> tuple[tuple[str, ...], list[tuple[int, dict[str, Cell]]]]:
    """A grading sheet's header and lines, each line as (line number, column → :class:`Cell`), the
    writer's apostrophes and clip markers read back (:func:`read_cell`). Blank lines are skipped; a
    short line maps only the columns it has.

    Raises:
        DataError: not UTF-8 or not CSV (an unterminated quote), no header, a header naming a column
            twice, or a line with more fields than the header — one line naming the sheet.
    """
    text = read_text(sheet)
    # The sheet holds whole answers and sources (a sheet saved by a spreadsheet, or drawn before cells
    # were clipped): no cell is longer than the file, whatever csv's default limit (131,072 characters)
    # says. The limit is process-wide, so it is put back afterwards (the dataset loader refuses
    # over-long cells under the default).
    previous = csv.field_size_limit(max(csv.field_size_limit(), len(text)))
    try:
        return _sheet_cells(text, sheet)
    finally:
        csv.field_size_limit(previous)


def _sheet_cells(text: str, sheet: Path) -> tuple[tuple[str, ...], list[tuple[int, dict[str, Cell]]]]:
    reader = csv.reader(io.StringIO(text))
    records = []
    try:
        header: tuple[str, ...] | None = None
        for fields in reader:
            line_num = reader.line_num
            if not fields:
                continue
            if header is None:
                header = tuple(fields)
                seen: dict[str, int] = {}
                for position, name in enumerate(header, 1):
                    first = seen.setdefault(name.strip(), position)
                    if first != position:
                        raise DataError(
                            sheet,
                            f"the header names column {clip(name.strip())} twice (columns {first} and "
                            f"{position})",
                        )
                continue
            if len(fields) > len(header):
                raise DataError(sheet, f"line {line_num}: more fields than the header's {len(header)}")
            records.append((line_num, {name: read_cell(v) for name, v in zip(header, fields, strict=False)}))
    except csv.Error as exc:
        raise DataError(sheet, f"line {reader.line_num}: not CSV ({exc})") from None
    if header is None:
        raise DataError(sheet, "not a grading sheet: it is empty (no header)")
    return header, records


def _read_sheet(results_units: Mapping[str, Unit], sheet: Path) -> tuple[list[tuple[Unit, str]], int]:
    """The graded lines (unit, person's verdict) and how many lines were left ungraded."""
    header, records = read_sheet(sheet)
    missing = [c for c in ("unit_id", "human_verdict") if c not in header]
    if missing:
        raise DataError(sheet, f"not a grading sheet: the header lacks {', '.join(missing)}")
    # The sheet's ids were made writable (a lone surrogate is U+FFFD there): so are the results' here.
    results_units = {utf8_encodable(uid): unit for uid, unit in results_units.items()}
    graded, ungraded, seen = [], 0, set()
    for line, row in records:
        uid = row["unit_id"].text.strip() if "unit_id" in row else ""
        if not uid:
            raise DataError(sheet, f"line {line}: unit_id is empty")
        if uid not in results_units:
            raise DataError(sheet, f"line {line}: unit_id {clip(uid)} is not in the results file")
        if uid in seen:
            raise DataError(sheet, f"line {line}: unit_id {clip(uid)} appears twice")
        seen.add(uid)
        unit = results_units[uid]
        if "human_verdict" not in row:
            raise DataError(sheet, f"line {line}: fewer fields than the header (no human_verdict)")
        verdict = row["human_verdict"].text.strip()
        if not verdict:
            ungraded += 1
            continue
        codes = _human_codes(unit.scale)
        if verdict.lower() not in codes:
            allowed = " / ".join(SCALES[unit.scale])
            raise DataError(sheet, f"line {line}: human_verdict {clip(verdict)} is not one of {allowed}")
        graded.append((unit, codes[verdict.lower()]))
    return graded, ungraded


NON_BLIND = "non-blind (graders saw the judge's chips)"
_VIEWER_CRITERION = "row (viewer 👍/👎 vs final verdict)"


def _viewer_ratings(results: Results, ratings: Results) -> tuple[list[tuple[Unit, str]], dict[str, int]]:
    """Rows rated 👍/👎 in promptfoo's viewer against the row's final verdict (its composite's pass).

    The verdict comes from ``results`` (the eval's own ``-o`` file): rating a row in the viewer sets that
    row's pass to the rating (promptfoo's ``POST …/rating`` stores ``success = gradingResult.pass``), so
    an export's rated rows no longer hold the verdict the person saw. Rows are matched by promptfoo's
    result id; an unscored row (error, unscorable judge reply) is counted apart, never compared.
    """
    if any(row.human is not None for row in results.rows):
        raise DataError(
            results.path,
            "its rows carry viewer ratings, and a rating replaces the row's verdict: give the eval's own "
            "results file (promptfoo eval -o) as RESULTS_JSON and the export with the ratings as --ratings",
        )
    if "-" not in (results.eval_id, ratings.eval_id) and results.eval_id != ratings.eval_id:
        raise DataError(
            ratings.path,
            f"its ratings are of eval {clip(ratings.eval_id)}, but {results.path} is eval {clip(results.eval_id)}",
        )
    verdicts = {row.result_id: row for row in results.rows if row.result_id}
    graded: list[tuple[Unit, str]] = []
    counts = {"not_rated": 0, "unscored": 0}
    for rated in ratings.rows:
        if rated.human is None:
            counts["not_rated"] += 1
            continue
        row = verdicts.get(rated.result_id)
        if row is None:
            raise DataError(
                ratings.path,
                f"rated row {clip(rated.result_id or '(no id)')} is not in {results.path} (another eval?)",
            )
        if row.unscored:
            counts["unscored"] += 1
            continue
        uid = "|".join((row.keys["round"], row.keys["condition"], row.keys["provider"], row.query_id, "row"))
        verdict = "pass" if row.passed else "fail"
        unit = Unit(uid, row, _VIEWER_CRITERION, "pass_fail", verdict, "")
        graded.append((unit, "pass" if rated.human["pass"] is True else "fail"))
    return graded, counts


def _check_key(results: Path, sheet: Path) -> dict[str, Any]:
    """The sheet's key file, refused in one line when it was drawn from another results file."""
    key_path = _key_path(sheet)
    key = read_json(key_path)
    if not isinstance(key, dict) or not isinstance(key.get("results_sha256"), str):
        raise DataError(key_path, "not a calibration key file: results_sha256 is missing")
    actual = hashlib.sha256(read_bytes(results, RESULTS)).hexdigest()
    if key["results_sha256"] != actual:
        raise DataError(
            sheet,
            f"drawn from {clip(str(key.get('results', '?')), 80)} (sha256 {key['results_sha256'][:12]}…), "
            f"not from {results} (sha256 {actual[:12]}…): score it against the results file it was drawn from",
        )
    return key


def _core_criteria(rubric_id: str) -> frozenset[str]:
    """The criteria that decide a rubric row at row level: the rubric's ``core`` list, else its scored ones."""
    rubric = _rubric(rubric_id)
    return frozenset(rubric.core or tuple(c.id for c in rubric.scored))


def _decides_row(unit: Unit) -> bool:
    """Whether ``unit`` counts in the row-level figure (decisions.yaml ``calibration.row_level``)."""
    if unit.scale != "yes_partial_no" or not unit.row.rubric:
        return True  # docs-QA criteria, factual-accuracy claims or row, a viewer rating: every one
    rubric_id = unit.row.rubric.split("@", 1)[0]
    return unit.criterion.removeprefix(f"{rubric_id}.") in _core_criteria(rubric_id)


def _statistic_criterion(unit: Unit) -> str:
    """The criterion a unit's statistics belong to: a claim's id is its row's, so claims pool as one."""
    return "factuality.claim" if unit.criterion.startswith("factuality.claim.") else unit.criterion


def score(
    results: Path,
    sheet: Path | None = None,
    *,
    ratings: Path | None = None,
    threshold: float | None = None,
) -> dict[str, Any]:
    """People versus the judge, per criterion first, then the macro mean and the row-level figure.

    With ``sheet``: a blind grading sheet drawn by :func:`write_sample` (its key file must be of
    ``results``). With ``ratings``: a promptfoo export with 👍/👎 from the viewer, compared with each
    row's final verdict in ``results``; labelled non-blind and never held against the 90 % bar.

    Raises:
        DataError: neither or both of ``sheet`` and ``ratings``; a key of another results file; a
            malformed sheet; no rating; an export of another eval.
    """
    from grounding_eval.analysis.stats import Graded, item_agreement, rows_to_show, wilson_bounds

    if (sheet is None) == (ratings is None):
        raise DataError(
            None,
            "calibrate score needs a graded SHEET_CSV, or --ratings EXPORT_JSON for ratings made in "
            "promptfoo's viewer (not both)",
        )
    setup = decisions()["calibration"]
    provenance = setup["threshold"]["provenance"] if threshold is None else "set with --threshold"
    threshold = float(setup["threshold"]["agreement"]) if threshold is None else threshold
    if not 0 < threshold <= 1:
        raise DataError("--threshold", f"{threshold} is not an agreement share in (0, 1] (0.90 is 90 %)")
    loaded = load_results(results)
    drawn: dict[str, Any] | None = None
    counts: dict[str, int]
    if ratings is not None:
        graded, counts = _viewer_ratings(loaded, load_results(ratings))
        if not graded:
            raise DataError(
                ratings,
                "no scored row carries a human rating (rate rows in promptfoo's viewer, then export the "
                "eval as JSON)",
            )
        row_units = [u for u, _ in graded]
    else:
        assert sheet is not None
        drawn = _check_key(results, sheet).get("drawn")
        all_units = units(loaded.rows)
        graded, ungraded = _read_sheet({u.unit_id: u for u in all_units}, sheet)
        counts = {"ungraded": ungraded}
        row_units = all_units
        if not graded:
            raise DataError(sheet, f"no line has a human_verdict yet ({ungraded} ungraded)")
    boot = setup["bootstrap"]
    # The item is the resampling unit (issue 41): a query's rows under every condition and model are
    # drawn together, each row's criteria with it.
    row_index: dict[int, int] = {}
    item_index: dict[tuple[str, str], int] = {}
    row_item: list[int] = []
    for unit, _ in graded:
        if id(unit.row) not in row_index:
            row_index[id(unit.row)] = len(row_index)
            row_item.append(item_index.setdefault((unit.row.dataset, unit.row.query_id), len(item_index)))
    people = {u.unit_id: human for u, human in graded}
    # Row level: a graded row is compared when every unit that decides it was graded.
    row_agree: list[bool | None] = [None] * len(row_index)
    deciding: dict[int, list[Unit]] = defaultdict(list)
    for unit in row_units:
        if id(unit.row) in row_index and _decides_row(unit):
            deciding[row_index[id(unit.row)]].append(unit)
    for i, members in deciding.items():
        if all(u.unit_id in people for u in members):
            row_agree[i] = all(people[u.unit_id] == u.judge_verdict for u in members)
    scale_of = {_statistic_criterion(u): u.scale for u, _ in graded}
    stats = item_agreement(
        [
            Graded(
                row_item[row_index[id(u.row)]],
                _statistic_criterion(u),
                SCALES[u.scale].index(human),
                SCALES[u.scale].index(u.judge_verdict),
            )
            for u, human in graded
        ],
        items=len(item_index),
        categories={c: len(SCALES[s]) for c, s in scale_of.items()},
        weighted=frozenset(c for c, s in scale_of.items() if s in _ORDINAL),
        row_agree=row_agree,
        row_items=row_item,
        resamples=int(boot["resamples"]),
        seed=int(boot["seed"]),
        confidence=float(boot["confidence"]),
    )
    blind = sheet is not None
    rows_of: dict[str, set[int]] = defaultdict(set)
    for u, _ in graded:
        rows_of[_statistic_criterion(u)].add(row_index[id(u.row)])
    confidence = float(boot["confidence"])
    criteria = []
    for c in stats.criteria:
        cats = SCALES[scale_of[c.criterion]]
        # The lower confidence bound counts items, not units: Wilson, one-sided, an item's units as one.
        bound = wilson_bounds(c.agreement * c.items, c.items, confidence, sided=1)
        lower = bound[0] if bound is not None else None
        criteria.append(
            {
                "criterion": c.criterion,
                "scale": scale_of[c.criterion],
                "n": c.n,
                "rows": len(rows_of[c.criterion]),
                "items": c.items,
                "agreement": round(c.agreement, 4),
                "agreement_ci": _ci(c.agreement_ci),
                "agreement_lower_bound": _r(lower),
                "shown_at_threshold": (lower is not None and lower >= threshold) if blind else None,
                "items_needed": rows_to_show(c.agreement, threshold, confidence) if blind else None,
                "kappa": _r(c.kappa),
                "kappa_ci": _ci(c.kappa_ci),
                "kappa_undefined": None if c.kappa is not None else _one_category(c.confusion, cats),
                "weighted_kappa": _r(c.weighted_kappa),
                "base_rate": dict(zip(cats, (round(x, 4) for x in c.base_rate), strict=True)),
                "confusion": {
                    "rows": "person",
                    "columns": "judge",
                    "labels": list(cats),
                    "matrix": c.confusion,
                },
                "below_threshold": c.agreement < threshold if blind else None,
            }
        )
    macro_below = stats.macro_agreement < threshold
    return {
        "source": f"grading sheet {sheet}" if blind else f"promptfoo viewer ratings in {ratings}",
        "blind": blind,
        "label": "blind (the sheet does not show the judge's verdicts)" if blind else NON_BLIND,
        "results": str(results),
        "drawn": drawn,
        "graded": len(graded),
        **counts,
        "rows_graded": len(row_index),
        "items_graded": stats.items,
        "bootstrap": {
            "unit": "items (a query's rows under every condition and model together, a row's criteria with it)",
            "resamples": int(boot["resamples"]),
            "seed": int(boot["seed"]),
            "confidence": float(boot["confidence"]),
        },
        "threshold": threshold if blind else None,
        "threshold_provenance": provenance if blind else None,
        "published_range": setup["published_range"]["text"],
        "criteria": criteria,
        "overall": {
            "mean_over": "criteria (macro)",
            "criteria": len(criteria),
            "agreement": round(stats.macro_agreement, 4),
            "agreement_ci": _ci(stats.macro_agreement_ci),
            "kappa": _r(stats.macro_kappa),
            "kappa_ci": _ci(stats.macro_kappa_ci),
            "kappa_criteria": len(stats.kappa_criteria),
            "below_threshold": macro_below if blind else None,
        },
        "row_level": {
            "definition": setup["row_level"]["text"],
            "rows": stats.rows_compared,
            "not_compared": len(row_index) - stats.rows_compared,
            "agreeing": stats.rows_agreeing,
            "agreement": _r(stats.rows_share),
            "agreement_ci": _ci(stats.rows_share_ci),
        },
        "below_threshold": [c["criterion"] for c in criteria if c["below_threshold"]] if blind else None,
    }


def _one_category(confusion: list[list[int]], labels: Sequence[str]) -> str:
    used = [labels[i] for i in range(len(labels)) if confusion[i][i]]
    return f"undefined: person and judge gave one category only ({', '.join(used) or 'none'})"


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _ci(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [round(x, 4) for x in interval]


def _interval(value: float | None, ci: Sequence[float] | None, percent: bool) -> str:
    if value is None:
        return "–"
    text = f"{value:.0%}" if percent else f"{value:.2f}"
    if ci:
        text += f" [{ci[0]:.0%}, {ci[1]:.0%}]" if percent else f" [{ci[0]:.2f}, {ci[1]:.2f}]"
    return text


def _lower_bound_text(entry: Mapping[str, Any]) -> str:
    """The criterion's one-sided lower bound and, below the threshold, the items it would take."""
    lower = entry["agreement_lower_bound"]
    if lower is None:
        return "–"
    if entry["shown_at_threshold"] is None:  # not a blind sheet: no threshold
        return f"{lower:.0%}"
    if entry["shown_at_threshold"]:
        return f"{lower:.0%} shown"
    needed = entry["items_needed"]
    return f"{lower:.0%} needs {needed:,} items" if needed else f"{lower:.0%} not above threshold"


CONFUSION_CORNER = "person ↓ judge →"


def confusion_cells(confusion: Mapping[str, Any]) -> list[list[str]]:
    """A criterion's confusion matrix as a labelled table: the head (the corner, then ``judge <label>``
    per column), then one row per ``person <label>`` with its counts. The matrix alone does not say
    which way it reads (rows are the person's verdicts, columns the judge's, in the scale's order)."""
    labels = [str(label) for label in confusion["labels"]]
    head = [CONFUSION_CORNER, *(f"{confusion['columns']} {label}" for label in labels)]
    return [
        head,
        *(
            [f"{confusion['rows']} {label}", *(str(n) for n in counts)]
            for label, counts in zip(labels, confusion["matrix"], strict=True)
        ),
    ]


def _confusion_lines(criteria: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each criterion's confusion matrix, labelled (:func:`confusion_cells`)."""

    lines = ["Confusion per criterion (counts of units; rows: the person's verdict, columns: the judge's)"]
    for entry in criteria:
        lines.append(f"  {entry['criterion']}")
        lines += [f"    {line}" for line in table_lines(confusion_cells(entry["confusion"]))]
    return lines


def format_score(report: Mapping[str, Any]) -> str:
    """The calibration report as text: per criterion first, then the macro mean and the row-level figure,
    then (for a blind sheet only) the criteria below the agreement threshold."""

    blind = report["blind"]
    boot = report["bootstrap"]
    if blind:
        drawn = report["drawn"]
        share = (
            f" (drew {drawn['rows']} of {drawn['population']} rows, {_pct(drawn['share'])})" if drawn else ""
        )
        lines = [
            f"Judge versus people — {report['label']}: {report['source']}{share}",
            f"{report['graded']} units graded in {report['rows_graded']} rows, {report['ungraded']} ungraded "
            "(not counted as disagreement)",
        ]
    else:
        lines = [
            f"Viewer ratings — {report['label']}: {report['source']}",
            f"{report['graded']} rows rated 👍/👎, compared with each row's final verdict (its composite's pass); "
            f"{report['not_rated']} not rated, {report['unscored']} unscored (counted apart)",
        ]
    lines.append(
        f"Per criterion; intervals: bootstrap over {boot['unit']}, {boot['resamples']} resamples, "
        f"seed {boot['seed']}, {boot['confidence']:.0%} percentile; lower bound: one-sided "
        f"{boot['confidence']:.0%} Wilson over the items (shown: at or above the threshold; else the items, "
        "one graded row each, needed at this agreement)"
    )
    body = [
        [
            "criterion",
            "scale",
            "n",
            "rows",
            "items",
            "agreement [95% CI]",
            "lower bound",
            "kappa [95% CI]",
            "w.kappa",
            "base rate (person)",
        ]
    ]
    for entry in report["criteria"]:
        base = " ".join(f"{k}={v:.0%}" for k, v in entry["base_rate"].items())
        kappa = (
            _interval(entry["kappa"], entry["kappa_ci"], False)
            if entry["kappa"] is not None
            else "undefined (one category only)"
        )
        body.append(
            [
                entry["criterion"],
                entry["scale"],
                str(entry["n"]),
                str(entry["rows"]),
                str(entry["items"]),
                _interval(entry["agreement"], entry["agreement_ci"], True),
                _lower_bound_text(entry),
                kappa,
                "–" if entry["weighted_kappa"] is None else f"{entry['weighted_kappa']:.2f}",
                base,
            ]
        )
    lines += table_lines(body)
    confusion = ["", *_confusion_lines(report["criteria"])] if report["criteria"] else []
    overall, rows = report["overall"], report["row_level"]
    undefined = overall["criteria"] - overall["kappa_criteria"]
    if not blind:  # one rating per row: the criterion above is the row-level figure already
        lines.append(
            "Not a blind sample, so not held against the agreement threshold: draw a sheet with "
            "`calibrate sample` for that."
        )
        return "\n".join(lines + confusion)
    lines.append(
        f"Overall, mean over {overall['criteria']} criteria: agreement "
        f"{_interval(overall['agreement'], overall['agreement_ci'], True)}, kappa "
        f"{_interval(overall['kappa'], overall['kappa_ci'], False)}"
        + (f" (over {overall['kappa_criteria']}; {undefined} undefined)" if undefined else "")
    )
    lines.append(
        f"Rows where the person and the judge agree on every core criterion: {rows['agreeing']} of "
        f"{rows['rows']} "
        + (f"({_interval(rows['agreement'], rows['agreement_ci'], True)})" if rows["rows"] else "")
        + (
            f"; {rows['not_compared']} rows not compared (a core criterion ungraded)"
            if rows["not_compared"]
            else ""
        )
    )
    below = report["below_threshold"]
    lines.append(
        f"Below the {report['threshold']:.0%} agreement threshold ({report['threshold_provenance']}): "
        + (", ".join(below) if below else "none")
        + f". For comparison, {report['published_range']}."
    )
    return "\n".join(lines + confusion)
