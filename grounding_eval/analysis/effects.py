"""Did grounding help, and by how much: paired condition effects, pass rates with intervals, verdict shares.

Built on :class:`~grounding_eval.analysis.report_row.ReportRow` (the rows ``grounding-eval report`` reads);
the choices (condition order, metrics, resamples, seed, the test) are data in ``decisions.yaml``.

* :func:`paired_effects` — per model (provider label) and round, for each pair of conditions (C1 − C0,
  C1.5 − C1, C1.5 − C0), per metric (a named score): the mean per-item difference (later − earlier),
  the interval inverted from the paired sign-flip test, the number of items, and that test's p-value
  (raw and Holm-adjusted within its family). Items
  missing a condition or unscored are counted (``n_missing``, ``n_unscored``) and left out. The item is
  the resampling unit: one draw per comparison serves all its metrics, so a report over 100,000 rows
  costs a few matrix products, not a draw per metric.
* :func:`pass_rates` — pass rate per round × condition × model over the scored rows, with a Wilson
  interval.
* :func:`criterion_shares` — per criterion, the share of Yes / Partial / No (or pass / fail / n/a for
  docs-QA) per condition.
* :func:`question_type_table` — docs-QA pass rate and n per question type, then overall (the seed's table).
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from grounding_eval.analysis.length import length_adjusted
from grounding_eval.analysis.report_row import ReportRow
from grounding_eval.analysis.summary import PassRate, format_rate, outage_note, pass_rate, table_lines
from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml

__all__ = [
    "PASS",
    "Effect",
    "Primary",
    "adjust",
    "ci_text",
    "condition_order",
    "condition_pairs",
    "criterion_shares",
    "decisions",
    "declared_primary",
    "family_of",
    "format_effects",
    "format_question_types",
    "format_rates",
    "format_shares",
    "interval_note",
    "paired_effects",
    "parse_primary",
    "pass_rates",
    "question_type_groups",
    "question_type_table",
]

DECISIONS = Path(__file__).with_name("decisions.yaml")


@functools.cache
def decisions() -> Mapping[str, Any]:
    """The analysis's recorded choices (``decisions.yaml``)."""

    data = read_yaml(DECISIONS)
    if not isinstance(data, dict):
        raise DataError(DECISIONS, "expected a mapping")
    return data


PASS = "pass"  # the metric of a pass-rate difference: an item's share of passing scored rows


@dataclass(frozen=True)
class Effect:
    """One paired comparison: ``metric`` under ``to`` minus under ``from_``, over the items with both.

    ``p_value`` is the test's own (``test``: the sign-flip test, or the exact McNemar test for a pass-rate
    difference whose items each have one verdict per condition); ``p_holm`` is it adjusted by Holm's
    step-down within ``family`` (:func:`family_of`); ``primary``: the study's declared primary endpoint.
    ``discordant`` (pass only): items passing under ``to`` only, and under ``from_`` only.
    """

    provider: str
    round: str
    from_: str
    to: str
    metric: str
    n: int
    mean_diff: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n_missing: int
    n_unscored: int
    p_holm: float | None = None
    family: str = ""
    primary: bool = False
    test: str = "sign-flip"
    discordant: tuple[int, int] | None = None
    length: Mapping[str, Any] | None = None  # the effect adjusted for answer length (LengthFit.as_dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with ``from`` for ``from_``."""
        out = asdict(self)
        out["from"] = out.pop("from_")
        keys = ("provider", "round", "from", "to", "metric", "n", "mean_diff", "ci_low", "ci_high", "p_value",
                "p_holm", "family", "primary", "test")  # fmt: skip
        extra = ("discordant",) if self.discordant is not None else ()
        return {
            **{
                k: (list(out[k]) if k == "discordant" else out[k])
                for k in (*keys, *extra, "n_missing", "n_unscored")
            },
            "length_adjusted": dict(self.length) if self.length is not None else None,
        }


@dataclass(frozen=True)
class Primary:
    """A study's declared primary endpoint: ``metric`` under ``to`` minus under ``from_``, for every model."""

    metric: str
    from_: str
    to: str

    def matches(self, effect: Effect) -> bool:
        return (effect.metric, effect.from_, effect.to) == (self.metric, self.from_, self.to)

    def text(self) -> str:
        return f"{self.metric}: {self.to} − {self.from_}"


def parse_primary(text: str, where: str = "--primary") -> Primary:
    """``METRIC:TO-FROM`` (``composite:C1.5-C0``; ``−`` for ``-`` too) as a :class:`Primary`.

    Raises:
        DataError: not of that form (naming ``where``).
    """
    metric, colon, pair = text.rpartition(":")
    pair = pair.replace("−", "-")
    parts = [p.strip() for p in pair.split("-")]
    if not colon or not metric.strip() or len(parts) != 2 or not all(parts):
        raise DataError(
            where, f"{text!r} is not METRIC:TO-FROM (e.g. composite:C1.5-C0: C1.5 minus C0, every model)"
        )
    return Primary(metric.strip(), parts[1], parts[0])


PRIMARY_KEY = "primary_endpoint"  # a test's metadata key (defaultTest.metadata in a config sets every test's)


def declared_primary(rows: Sequence[ReportRow], option: str | None = None) -> Primary | None:
    """The primary endpoint: ``option`` (``report --primary``) when given, else the rows' test metadata
    ``primary_endpoint`` (one value across the rows that have it), else None.

    Raises:
        DataError: a malformed value, or rows that declare different ones.
    """
    if option is not None:
        return parse_primary(option)
    found = {
        str(r.test_metadata[PRIMARY_KEY]) for r in rows if r.test_metadata.get(PRIMARY_KEY) not in (None, "")
    }
    if not found:
        return None
    if len(found) > 1:
        raise DataError(
            f"metadata.{PRIMARY_KEY}",
            f"the rows declare {len(found)} primary endpoints ({', '.join(sorted(found))}): one study, one; "
            "or choose with report --primary",
        )
    return parse_primary(found.pop(), f"metadata.{PRIMARY_KEY}")


def family_of(effect: Effect, primary: Primary | None) -> str:
    """The family whose comparisons Holm's adjustment counts together (``decisions.yaml``
    ``effects.family``): the declared primary endpoint's comparisons in one round (every model), else
    one metric in one round: every condition pair × model."""
    if primary is not None and primary.matches(effect):
        return f"round {effect.round} · primary ({primary.text()})"
    return f"round {effect.round} · {effect.metric}"


def adjust(effects: Sequence[Effect], primary: Primary | None = None) -> list[Effect]:
    """``effects`` with their family, Holm-adjusted p and primary flag; the primary endpoint's first
    (in their order), then the rest in theirs."""
    from dataclasses import replace

    from grounding_eval.analysis.stats import holm

    families: dict[str, list[int]] = defaultdict(list)
    named = [family_of(e, primary) for e in effects]
    for i, (e, family) in enumerate(zip(effects, named, strict=True)):
        if e.p_value is not None:
            families[family].append(i)
    adjusted: dict[int, float] = {}
    for members in families.values():
        for i, p in zip(members, holm([effects[i].p_value for i in members]), strict=True):  # type: ignore[misc]
            adjusted[i] = round(p, 6)
    out = [
        replace(e, family=family, p_holm=adjusted.get(i), primary=primary is not None and primary.matches(e))
        for i, (e, family) in enumerate(zip(effects, named, strict=True))
    ]
    return [e for e in out if e.primary] + [e for e in out if not e.primary]


def _condition_key(label: str) -> tuple[int, str]:
    order = list(decisions()["effects"]["condition_order"])
    return (order.index(label), "") if label in order else (len(order), label)


def condition_order(conditions: Iterable[str]) -> list[str]:
    """The distinct ``conditions`` in study order: ``effects.condition_order``, then others alphabetically."""
    return sorted(set(conditions), key=_condition_key)


def condition_pairs(conditions: Iterable[str], limit: int | None = None) -> list[tuple[str, str]]:
    """``(earlier, later)`` pairs in study order, neighbours first: (C0, C1), (C1, C1.5), (C0, C1.5).

    ``limit`` stops after that many pairs (k conditions make k·(k−1)/2 of them).
    """
    ordered = condition_order(conditions)
    pairs = (
        (ordered[i], ordered[i + gap]) for gap in range(1, len(ordered)) for i in range(len(ordered) - gap)
    )
    return list(pairs if limit is None else itertools.islice(pairs, limit))


def _metrics(rows: Sequence[ReportRow]) -> list[str]:
    named = {name for row in rows for name in row.scores}
    listed = [m for m in decisions()["effects"]["metrics"] if m in named]
    judges = sorted(name for name in named if name.endswith(".llm_judge_score"))
    judges += sorted(name for name in named if ".dimension." in name)
    head = listed[:1] if listed[:1] == ["composite"] else []  # the pass rate follows the composite
    return [*head, PASS, *judges, *listed[len(head) :]]


def paired_effects(
    rows: Sequence[ReportRow],
    *,
    resamples: int | None = None,
    seed: int | None = None,
    metrics: Sequence[str] | None = None,
    max_pairs: int | None = None,
    primary: Primary | None = None,
) -> list[Effect]:
    """Every paired comparison in ``rows`` (see the module docstring), sorted by provider and round.

    ``max_pairs`` keeps, per provider and round, only the first that many condition pairs of
    :func:`condition_pairs` (neighbours first): the HTML page computes no more than it lists.
    ``primary`` (the study's declared primary endpoint) comes first, in a family of its own (:func:`adjust`).

    The metric ``pass`` (:data:`PASS`) is the pass-rate difference: an item's value is the share of its
    scored rows that passed (1 or 0 with one row per condition). When every paired item has one verdict
    per condition its p is the exact McNemar test (the two-sided binomial test of the discordant items,
    McNemar 1947; Fagerland, Lydersen & Laake 2013), which is the sign-flip test of these differences
    counted exactly at any size; with fractional item rates (``--repeat``) the sign-flip test.

    The unit is the item (an item's repeats averaged first): a metric's differences are those of the
    items with a scored row under both conditions. The interval is the one the sign-flip test inverts
    (``effects.interval: sign-flip``, :func:`~grounding_eval.analysis.stats.sign_flip_intervals`), so it
    excludes 0 exactly when p ≤ 1 − confidence; ``interval: percentile`` restores the paired percentile
    bootstrap (:func:`~grounding_eval.analysis.stats.bootstrap_mean_intervals`, one draw of items shared
    by the comparison's metrics), which covers the true effect only 88–91 % of the time at 8–10 items
    (``benchmarks/interval_coverage.py``).
    """
    import numpy as np

    from grounding_eval.analysis.stats import (
        bootstrap_mean_intervals,
        sign_flip_intervals,
        sign_flip_pvalues,
    )

    setup = decisions()["effects"]
    resamples = int(setup["resamples"]) if resamples is None else resamples
    seed = int(setup["seed"]) if seed is None else seed
    # cells[(provider, round)][condition][item] = that item's rows under the condition
    cells: dict[tuple[str, str], dict[str, dict[str, list[ReportRow]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for row in rows:
        cells[(row.keys["provider"], row.keys["round"])][row.keys["condition"]][row.query_id].append(row)
    chosen = list(metrics) if metrics is not None else _metrics(rows)
    columns = {metric: j for j, metric in enumerate(chosen)}
    compared: list[_Comparison] = []
    for (provider, round_), by_condition in sorted(cells.items()):
        items = sorted({item for by_item in by_condition.values() for item in by_item})
        index = {item: i for i, item in enumerate(items)}
        table = {c: _value_table(by_item, index, columns) for c, by_item in by_condition.items()}
        words = {c: _words(by_item, index) for c, by_item in by_condition.items()}
        for a, b in condition_pairs(by_condition, max_pairs):
            (before, has_a), (after, has_b) = table[a], table[b]
            exists = ~np.all(np.isnan(before), axis=0) | ~np.all(np.isnan(after), axis=0)
            kept = [m for m in chosen if exists[columns[m]]]  # a metric absent from both: no comparison
            if not kept:
                continue
            both = has_a & has_b
            picked = [columns[m] for m in kept]
            diff = after[both][:, picked] - before[both][:, picked]  # NaN: unscored under one condition
            compared.append(
                _Comparison(
                    provider,
                    round_,
                    a,
                    b,
                    kept,
                    diff,
                    int(np.count_nonzero(has_a ^ has_b)),
                    length_diff=words[b][both] - words[a][both],
                )
            )
    # Comparisons with equally many paired items share one draw (the same seed draws the same anyway).
    by_size: dict[int, list[_Comparison]] = defaultdict(list)
    for comparison in compared:
        by_size[comparison.diff.shape[0]].append(comparison)
    for size, group in by_size.items():
        if size == 0:
            continue
        values = np.concatenate([c.diff for c in group], axis=1)
        scored = ~np.isnan(values)
        permutations = int(setup["permutations"])
        confidence = float(setup["confidence"])
        if setup["interval"] == "sign-flip":
            cis = sign_flip_intervals(
                values, scored, permutations=permutations, seed=seed, confidence=confidence
            )
        else:
            cis = bootstrap_mean_intervals(
                values, scored, resamples=resamples, seed=seed, confidence=confidence
            )
        ps = sign_flip_pvalues(values, scored, permutations=permutations, seed=seed)
        start = 0
        for c in group:
            c.cis, c.ps = cis[start : start + len(c.kept)], ps[start : start + len(c.kept)]
            start += len(c.kept)
    return adjust([effect for c in compared for effect in c.effects()], primary)


@dataclass
class _Comparison:
    """One pair of conditions of one model and round: the paired items' differences per metric."""

    provider: str
    round: str
    from_: str
    to: str
    kept: list[str]
    diff: Any  # items with a row under both conditions × kept metrics; NaN where unscored under one
    missing: int  # items with a row under one condition only
    cis: Sequence[tuple[float, float] | None] = ()
    ps: Sequence[float | None] = ()
    length_diff: Any = None  # per paired item: mean answer words under ``to`` − under ``from_``

    def effects(self) -> list[Effect]:
        import numpy as np

        out = []
        for j, metric in enumerate(self.kept):
            column = self.diff[:, j]
            diffs = column[~np.isnan(column)].tolist()
            fit = None
            if self.length_diff is not None:
                both = ~np.isnan(column) & ~np.isnan(self.length_diff)
                found = length_adjusted(column[both].tolist(), self.length_diff[both].tolist())
                fit = found.as_dict() if found is not None else None
            ci = self.cis[j] if diffs else None
            p = self.ps[j] if diffs else None
            test, discordant = "sign-flip", None
            if metric == PASS and diffs and all(d in (-1.0, 0.0, 1.0) for d in diffs):
                from grounding_eval.analysis.stats import mcnemar_exact

                up, down = diffs.count(1.0), diffs.count(-1.0)
                test, discordant, p = "exact McNemar", (up, down), mcnemar_exact(up, down)
            out.append(
                Effect(
                    provider=self.provider,
                    round=self.round,
                    from_=self.from_,
                    to=self.to,
                    metric=metric,
                    n=len(diffs),
                    mean_diff=round(fmean(diffs), 6) if diffs else None,
                    ci_low=round(ci[0], 6) if ci else None,
                    ci_high=round(ci[1], 6) if ci else None,
                    p_value=round(p, 6) if p is not None else None,
                    n_missing=self.missing,
                    n_unscored=len(column) - len(diffs),
                    test=test,
                    discordant=discordant,
                    length=fit,
                )
            )
        return out


def _words(by_item: Mapping[str, list[ReportRow]], index: Mapping[str, int]) -> Any:
    """Per item of ``index``: the mean number of words of its answers (every row with one, scored or
    not; NaN when none): :attr:`~grounding_eval.analysis.report_row.ReportRow.length`."""
    import numpy as np

    out = np.full(len(index), np.nan)
    for item, rows in by_item.items():
        lengths = [r.length[1] for r in rows if r.length is not None]
        if lengths:
            out[index[item]] = fmean(lengths)
    return out


def _value_table(
    by_item: Mapping[str, list[ReportRow]], index: Mapping[str, int], columns: Mapping[str, int]
) -> tuple[Any, Any]:
    """Per item of ``index``: each metric's value (:func:`_value`: NaN when no scored row has it), and
    whether the item has a row at all."""
    import numpy as np

    values = np.full((len(index), len(columns)), np.nan)
    present = np.zeros(len(index), dtype=bool)
    nan = float("nan")
    lines: list[int] = []
    single: list[list[float]] = []  # items with one scored row (the common case), read in one assignment
    for item, rows in by_item.items():
        i = index[item]
        present[i] = True
        scored = [r for r in rows if not r.unscored]
        if len(scored) == 1:
            get = scored[0].scores.get
            lines.append(i)
            single.append([float(scored[0].passed) if name == PASS else get(name, nan) for name in columns])
        elif scored:
            for name, j in columns.items():
                mean = _value(scored, name)
                if mean is not None:
                    values[i, j] = mean
    if lines:
        values[lines] = np.array(single, dtype=float).reshape(len(lines), len(columns))
    return values, present


def _value(rows: Sequence[ReportRow] | ReportRow, metric: str) -> float | None:
    """The mean of ``metric`` over the scored rows (an item's repeats); None when no scored row has it."""
    rows = [rows] if isinstance(rows, ReportRow) else rows
    if metric == PASS:
        return (
            fmean(float(r.passed) for r in rows if not r.unscored)
            if any(not r.unscored for r in rows)
            else None
        )
    values = [r.scores[metric] for r in rows if not r.unscored and metric in r.scores]
    return fmean(values) if values else None


def pass_rates(
    rows: Sequence[ReportRow], by: Sequence[str] = ("round", "condition", "provider")
) -> list[dict[str, Any]]:
    """Pass rate over the scored rows per group (:func:`~grounding_eval.analysis.summary.pass_rate`), with a
    Wilson interval on the items; unscored rows counted apart.

    The item is the unit: ``items`` counts the group's items with a scored row. When each has one, the
    interval is the Wilson interval of passed ÷ scored; when an item has several (``--repeat``), each
    item's share of passing rows counts once, the Wilson interval of their sum over the items
    (:func:`~grounding_eval.analysis.stats.wilson_bounds`): repeating a row never narrows it. The mean
    composite is the mean of the items' means.
    """
    from grounding_eval.analysis.stats import wilson, wilson_bounds

    confidence = float(decisions()["pass_rates"]["confidence"])
    groups: dict[tuple[str, ...], list[ReportRow]] = defaultdict(list)
    for row in rows:
        groups[tuple(row.keys[k] for k in by)].append(row)
    out = []
    for key in sorted(
        groups,
        key=lambda k: tuple(
            _condition_key(v) if name == "condition" else (0, v) for name, v in zip(by, k, strict=True)
        ),
    ):
        members = groups[key]
        rate = pass_rate(members)
        verdicts: dict[str, list[bool]] = defaultdict(list)
        composite_of: dict[str, list[float]] = defaultdict(list)
        for r in members:
            if not r.unscored:
                verdicts[r.query_id].append(r.passed)
                if "composite" in r.scores:
                    composite_of[r.query_id].append(r.scores["composite"])
        if all(len(v) == 1 for v in verdicts.values()):
            ci = wilson(rate.passed, rate.scored, confidence)
        else:
            ci = wilson_bounds(sum(fmean(v) for v in verdicts.values()), len(verdicts), confidence)
        composites = [fmean(v) for v in composite_of.values()]
        out.append(
            {
                **dict(zip(by, key, strict=True)),
                "rows": rate.rows,
                "unscored": rate.unscored,
                "unsafe_no_composite": rate.unsafe_no_composite,
                "selected_by_outage": rate.selected_by_outage,
                "n": rate.scored,
                "items": len(verdicts),
                "passed": rate.passed,
                "pass_rate": rate.rate,
                "ci_low": ci[0] if ci else None,
                "ci_high": ci[1] if ci else None,
                "mean_composite": round(fmean(composites), 4) if composites else None,
            }
        )
    return out


def criterion_shares(rows: Sequence[ReportRow]) -> list[dict[str, Any]]:
    """Per round, model, criterion and condition: how many rows got each verdict, and the shares.

    Judge rubric criteria count Yes / Partial / No (rows the judge scored); docs-QA criteria count
    pass / fail / n/a.
    """
    # Counted per (round, model, condition) first, a row's (criterion, verdict) pairs in one update.
    tallies: dict[tuple[str, str, str], tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]] = {}
    for row in rows:
        key = (row.keys["round"], row.keys["provider"], row.keys["condition"])
        if key not in tallies:
            tallies[key] = (Counter(), Counter())
        judge, docs_qa = tallies[key]
        judge.update(row.verdicts.items())
        docs_qa.update(row.docs_qa.items())
    counts: dict[tuple[str, str, str, str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (round_, provider, condition), pair in tallies.items():
        for source, found in zip(("judge", "docs_qa"), pair, strict=True):
            for (criterion, verdict), n in found.items():
                counts[(round_, provider, source, criterion, condition)][verdict] += n
    out = []
    for (round_, provider, source, criterion, condition), tally in sorted(
        counts.items(), key=lambda kv: (*kv[0][:4], _condition_key(kv[0][4]))
    ):
        scale = ("Yes", "Partial", "No") if source == "judge" else ("pass", "fail", "n/a")
        total = sum(tally.values())
        out.append(
            {
                "round": round_,
                "provider": provider,
                "source": source,
                "criterion": criterion,
                "condition": condition,
                "rows": total,
                "counts": {v: tally.get(v, 0) for v in scale},
                "shares": {v: round(tally.get(v, 0) / total, 4) for v in scale},
            }
        )
    return out


def question_type_table(rows: Sequence[ReportRow]) -> list[dict[str, Any]]:
    """Docs-QA pass rate and n per question type (the seed's order, others after), then ``overall``, for
    each model (provider label) and, where the rows have several, each condition: never pooled across
    models (a second model's answers would change the first model's figures).

    Each entry carries its ``provider`` and ``condition``; the groups come in the order of their models'
    first rows, conditions in study order. Rows without a ``question_type`` are left out. Pass rates are
    over the scored rows, with a Wilson interval on the items (:func:`pass_rates`); each entry also
    carries its unscored count.
    """
    setup = decisions()["question_types"]
    order = list(setup["order"])
    typed = [r for r in rows if r.keys["question_type"] != "-"]
    groups: dict[tuple[str, str], list[ReportRow]] = {}
    for r in typed:
        groups.setdefault((r.keys["provider"], r.keys["condition"]), []).append(r)
    providers = list(dict.fromkeys(provider for provider, _ in groups))
    out: list[dict[str, Any]] = []
    for provider, condition in sorted(groups, key=lambda k: (providers.index(k[0]), _condition_key(k[1]))):
        members = groups[(provider, condition)]
        entries = pass_rates(members, ("question_type",))
        entries.sort(
            key=lambda e: (
                (order.index(e["question_type"]), "")
                if e["question_type"] in order
                else (len(order), e["question_type"])
            )
        )
        for entry in entries:
            entry["label"] = setup["labels"].get(entry["question_type"], entry["question_type"])
        (overall,) = pass_rates([_relabel(r) for r in members], ("question_type",))
        overall["label"] = setup["overall_label"]
        entries.append(overall)
        for entry in entries:
            entry.pop("mean_composite", None)
            entry["rows"], entry["scored"] = entry.pop("rows"), entry.pop("n")
            out.append({"provider": provider, "condition": condition, **entry})
    return out


def _relabel(row: ReportRow) -> ReportRow:
    from dataclasses import replace

    return replace(row, keys={**row.keys, "question_type": "overall"})


def question_type_groups(entries: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """:func:`question_type_table`'s entries cut per model (and condition where there are several): a
    heading (``""`` when there is one group) and the group's entries, in order."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for e in entries:
        groups.setdefault((e["provider"], e["condition"]), []).append(e)
    conditions = {condition for _, condition in groups}
    out = []
    for (provider, condition), members in groups.items():
        heading = (
            ""
            if len(groups) == 1
            else f"Model {provider}" + (f", condition {condition}" if len(conditions) > 1 else "")
        )
        out.append((heading, members))
    return out


def format_question_types(entries: Sequence[Mapping[str, Any]]) -> str:
    """The seed's table, ``| Question type | Pass rate | n |``, one line per type, then Overall; one table
    per model (and condition, where the rows have several), each under a heading when there are several."""
    if not entries:
        return "No row has a docs-QA question type (test metadata.question_type)."
    lines: list[str] = []
    for heading, members in question_type_groups(entries):
        if lines:
            lines.append("")
        if heading:
            lines.append(heading)
        lines += ["| Question type | Pass rate | n |", "|---|---|---|"]
        lines += [f"| {e['label']} | {format_rate(e['pass_rate'])} | {e['scored']} |" for e in members]
    unscored = sum(e["unscored"] for e in entries if e["question_type"] != "overall")
    note = "Pass rate over the scored rows (n), per model, never pooled across models"
    return "\n".join([*lines, "", f"{note}; unscored rows, counted apart: {unscored}."])


def format_rates(rates: Sequence[Mapping[str, Any]]) -> str:
    """Text table: pass rate per round, condition and model over the scored rows, with Wilson intervals."""
    return "\n".join(_rates_lines(rates))


def _rates_lines(rates: Sequence[Mapping[str, Any]]) -> list[str]:
    body = [
        ["round", "condition", "provider", "n", "pass", "pass rate [95% Wilson]", "composite", "unsafe.nc",
         "unscored"]
    ]  # fmt: skip
    selected = []
    for r in rates:
        if r["selected_by_outage"]:
            counts = PassRate(r["rows"], r["n"], r["passed"], r["unsafe_no_composite"])
            selected.append(f"{r['round']} {r['condition']} {r['provider']}: {outage_note(counts)}")
        ci = f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]" if r["ci_low"] is not None else ""
        rate = f"{format_rate(r['pass_rate'])} {ci}".rstrip()
        comp = f"{r['mean_composite']:.3f}" if r["mean_composite"] is not None else "–"
        body.append([r["round"], r["condition"], r["provider"], str(r["n"]), str(r["passed"]), rate, comp,
                     str(r["unsafe_no_composite"]), str(r["unscored"])])  # fmt: skip
    return [
        "Pass rate per round, condition and model (over scored rows; unsafe.nc: failed as unsafe with no "
        "composite)",
        *table_lines(body),
        *selected,
    ]


def format_shares(shares: Sequence[Mapping[str, Any]]) -> str:
    """Text table: per criterion and condition, the count and share of each verdict."""

    if not shares:
        return "No judge verdicts per criterion in these rows."
    body = [["round", "provider", "criterion", "condition", "rows", "verdicts"]]
    for s in shares:
        verdicts = "  ".join(f"{v} {n} ({s['shares'][v]:.0%})" for v, n in s["counts"].items())
        body.append([s["round"], s["provider"], s["criterion"], s["condition"], str(s["rows"]), verdicts])
    return "\n".join(table_lines(body))


def interval_note() -> str:
    """One sentence saying which interval, test and adjustment the effects carry (text and HTML)."""
    setup = decisions()["effects"]
    exact = max(n for n in range(1, 64) if 2**n <= int(setup["permutations"]))
    if setup["interval"] == "sign-flip":
        interval = (
            f"{setup['confidence']:.0%} interval inverted from the two-sided paired sign-flip test (every sign "
            f"pattern up to {exact} items, else {setup['permutations']} seeded patterns), so it excludes 0 "
            f"exactly when p ≤ {1 - setup['confidence']:.2g}; unbounded when the test cannot reject at that level "
            "(5 items or fewer)"
        )
    else:
        interval = (
            f"{setup['confidence']:.0%} paired percentile bootstrap interval ({setup['resamples']} resamples, "
            f"seed {setup['seed']})"
        )
    return (
        f"{interval}. p: the two-sided sign-flip test (pass: the exact McNemar test when each item has one "
        "verdict per condition); Holm: p adjusted by Holm's step-down within its family (the study's primary "
        "endpoint in one round; else one metric in one round, every condition pair × model)."
    )


LENGTH_METRICS = ("composite",)  # the text and HTML tables; --json has every metric's adjustment


def length_lines(effects: Sequence[Effect]) -> list[str]:
    """Text table: the composite's and the judges' scores' effects beside the same adjusted for the
    difference in answer length (:func:`~grounding_eval.analysis.length.length_adjusted`)."""

    shown = [e for e in effects if e.length is not None and _length_shown(e.metric)]
    if not shown:
        return []
    body = [["provider", "round", "to − from", "metric", "n", "words diff", "mean diff", "at equal length",
             "95% t CI", "p", "per 100 words"]]  # fmt: skip
    for e in shown:
        fit = e.length
        assert fit is not None and e.mean_diff is not None
        body.append([e.provider, e.round, f"{e.to} − {e.from_}", e.metric, str(fit["n"]),
                     f"{fit['mean_words_diff']:+.0f}", f"{e.mean_diff:+.3f}", f"{fit['adjusted_diff']:+.3f}",
                     f"[{fit['adjusted_ci_low']:+.3f}, {fit['adjusted_ci_high']:+.3f}]",
                     f"{fit['adjusted_p']:.3g}", f"{fit['slope_per_100_words']:+.3f}"])  # fmt: skip
    return [
        "Effects adjusted for answer length (words of response.output)",
        *table_lines(body),
        "at equal length: the intercept of the items' differences regressed on their differences in words "
        "(least squares), the effect predicted for answers of equal length, with its t interval; per 100 "
        "words: the slope. Beside the unadjusted effect, not instead of it.",
    ]


def _length_shown(metric: str) -> bool:
    return metric in LENGTH_METRICS or metric.endswith(".llm_judge_score")


def ci_text(e: Effect) -> str:
    """An effect's interval as text: ``[-0.100, +0.600]``, ``unbounded`` or ``–`` (no items)."""
    if e.mean_diff is None:
        return "–"
    if e.ci_low is None or e.ci_high is None:
        return "unbounded"
    return f"[{e.ci_low:+.3f}, {e.ci_high:+.3f}]"


def format_effects(
    effects: Sequence[Effect], rates: Sequence[Mapping[str, Any]], primary: Primary | None = None
) -> str:
    """Text tables: pass rates with Wilson intervals, then the paired effects (the primary endpoint first)."""

    lines = [*_rates_lines(rates), ""]
    lines.append("Paired condition effects (to − from, mean over items, an item's repeats averaged first)")
    if primary is not None:
        lines.append(f"Primary endpoint: {primary.text()}, every model (listed first; * marks it)")
    body = [
        ["provider", "round", "to − from", "metric", "n", "mean diff", "95% CI", "p", "p Holm", "missing",
         "unscored"]
    ]  # fmt: skip
    for e in effects:
        body.append(
            [
                e.provider,
                e.round,
                f"{e.to} − {e.from_}",
                f"{e.metric} *" if e.primary else e.metric,
                str(e.n),
                f"{e.mean_diff:+.3f}" if e.mean_diff is not None else "–",
                ci_text(e),
                (f"{e.p_value:.3g}" if e.p_value is not None else "–")
                + (" McNemar" if e.test != "sign-flip" else ""),
                f"{e.p_holm:.3g}" if e.p_holm is not None else "–",
                str(e.n_missing),
                str(e.n_unscored),
            ]
        )
    lines += table_lines(body)
    lines.append(interval_note())
    lines += ["", *length_lines(effects)]
    lines.append(
        "pass: the difference of the items' pass rates (an item's share of passing scored rows). Items missing "
        "a condition (missing) or unscored under one (unscored) are left out, never imputed."
    )
    return "\n".join(lines)
