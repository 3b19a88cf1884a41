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
    Effect,
    criterion_shares,
    decisions,
    paired_effects,
    pass_rates,
    question_type_table,
)
from grounding_eval.errors import DataError

if TYPE_CHECKING:
    from grounding_eval.analysis.summary import ReportRow

__all__ = ["MAX_PAIRS", "ReportData"]

MAX_PAIRS = 15  # condition pairs per model and round (six conditions' worth), neighbours first


class ReportData:
    """What the report's figures and tables are computed from, each computed once."""

    def __init__(self, rows: Sequence[ReportRow]) -> None:
        self.rows = rows

    @cached_property
    def rates(self) -> list[dict[str, Any]]:
        return pass_rates(self.rows)

    @cached_property
    def composite_ci(self) -> dict[tuple[str, str, str], tuple[float, float]]:
        """Per (round, condition, model): the bootstrap interval of the mean composite over its scored rows.

        The groups are read in one pass, and groups of equally many rows share one draw (the seed gives
        them the same draw anyway): one call of
        :func:`~grounding_eval.analysis.stats.bootstrap_mean_intervals` per group size, whatever the
        number of conditions.
        """
        import numpy as np

        from grounding_eval.analysis.stats import bootstrap_mean_intervals

        setup = decisions()["effects"]
        values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        for x in self.rows:
            if not x.unscored and "composite" in x.scores:
                values[(x.keys["round"], x.keys["condition"], x.keys["provider"])].append(
                    x.scores["composite"]
                )
        by_size: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
        for key, found in values.items():
            by_size[len(found)].append(key)
        out: dict[tuple[str, str, str], tuple[float, float]] = {}
        for keys in by_size.values():
            intervals = bootstrap_mean_intervals(
                np.array([values[k] for k in keys]).T,
                resamples=int(setup["resamples"]),
                seed=int(setup["seed"]),
            )
            out.update((k, ci) for k, ci in zip(keys, intervals, strict=True) if ci is not None)
        return out

    @cached_property
    def effects(self) -> list[Effect]:
        return paired_effects(self.rows, max_pairs=MAX_PAIRS)

    @cached_property
    def headline_effects(self) -> list[Effect]:
        """The effects on the composite, the judge's score and the verifier's score."""
        return [
            e
            for e in self.effects
            if e.metric == "composite"
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
        from grounding_eval.judge.rubric import load_rubric, rubric_path

        out: set[str] = set().union(*(r.negative for r in self.rows))
        for rubric_id in sorted({r.rubric.split("@", 1)[0] for r in self.rows if r.rubric}):
            try:
                rubric = load_rubric(rubric_path(rubric_id))
            except DataError:
                continue  # a rubric not shipped here: its criteria are drawn Yes = good, and not marked
            out |= {c.id for c in rubric.criteria if c.polarity == "negative"}
        return out
