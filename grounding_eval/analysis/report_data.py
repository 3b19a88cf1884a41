"""What the report's figures and tables are computed from (:class:`ReportData`), each part once.

The HTML report's tables and the figures (:mod:`grounding_eval.analysis.figures`) read the same pass
rates, intervals, effects and verdict shares; computed here once per report, on first use.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from grounding_eval.analysis.effects import (
    PASS,
    Effect,
    Primary,
    criterion_shares,
    decisions,
    paired_effects,
    pass_rates,
    question_type_table,
)
from grounding_eval.errors import DataError
from grounding_eval.judge.rubric import load_rubric, rubric_path

if TYPE_CHECKING:
    from grounding_eval.analysis.report_row import ReportRow

__all__ = ["MAX_PAIRS", "ReportData"]

MAX_PAIRS = 15  # condition pairs per model and round (six conditions' worth), neighbours first


class ReportData:
    """What the report's figures and tables are computed from, each computed once."""

    def __init__(self, rows: Sequence[ReportRow], *, primary: Primary | None = None) -> None:
        self.rows = rows
        self.primary = primary

    @cached_property
    def rates(self) -> list[dict[str, Any]]:
        return pass_rates(self.rows)

    @cached_property
    def composite_ci(self) -> dict[tuple[str, str, str], tuple[float, float]]:
        """Per (round, condition, model): the interval of the mean composite over its items.

        The item is the unit: an item's scored rows (its repeats) are averaged first, and the interval is
        the one the sign-flip test inverts about the mean (:func:`~grounding_eval.analysis.stats.
        sign_flip_intervals`, the effects' interval), or the percentile bootstrap when ``effects.interval``
        says so. Groups of equally many items go in one call; a group whose interval is unbounded (5 items
        or fewer) has none.
        """
        import numpy as np

        from grounding_eval.analysis.stats import bootstrap_mean_intervals, sign_flip_intervals

        setup = decisions()["effects"]
        per_item: dict[tuple[str, str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for x in self.rows:
            if not x.unscored and "composite" in x.scores:
                key = (x.keys["round"], x.keys["condition"], x.keys["provider"])
                per_item[key][x.query_id].append(x.scores["composite"])
        values = {key: [sum(v) / len(v) for v in items.values()] for key, items in per_item.items()}
        by_size: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
        for key, found in values.items():
            by_size[len(found)].append(key)
        out: dict[tuple[str, str, str], tuple[float, float]] = {}
        for keys in by_size.values():
            table = np.array([values[k] for k in keys]).T
            if setup["interval"] == "sign-flip":
                intervals = sign_flip_intervals(
                    table,
                    permutations=int(setup["permutations"]),
                    seed=int(setup["seed"]),
                    confidence=float(setup["confidence"]),
                )
            else:
                intervals = bootstrap_mean_intervals(
                    table, resamples=int(setup["resamples"]), seed=int(setup["seed"])
                )
            out.update((k, ci) for k, ci in zip(keys, intervals, strict=True) if ci is not None)
        return out

    @cached_property
    def effects(self) -> list[Effect]:
        return paired_effects(self.rows, max_pairs=MAX_PAIRS, primary=self.primary)

    @cached_property
    def headline_effects(self) -> list[Effect]:
        """The primary endpoint's effects, then those on the composite, the pass rate, the judge's score and
        the verifier's score."""
        return [
            e
            for e in self.effects
            if e.primary
            or e.metric in ("composite", PASS)
            or e.metric.endswith(".llm_judge_score")
            or e.metric == "deterministic_verifier_score"
        ]

    @cached_property
    def shares(self) -> list[dict[str, Any]]:
        return criterion_shares(self.rows)

    @cached_property
    def question_types(self) -> list[dict[str, Any]]:
        return question_type_table(self.rows)

    @cached_property
    def negative(self) -> set[str]:
        """The criteria whose good answer is No: those the rows' judge metadata lists as negative, and
        (for older files, which do not list them) negative polarity in the rows' rubrics, when readable."""

        out: set[str] = set().union(*(r.negative for r in self.rows))
        for rubric_id in sorted({r.rubric.split("@", 1)[0] for r in self.rows if r.rubric}):
            try:
                rubric = load_rubric(rubric_path(rubric_id))
            except DataError:
                continue  # a rubric not shipped here: its criteria are drawn Yes = good, and not marked
            out |= {c.id for c in rubric.criteria if c.polarity == "negative"}
        return out
