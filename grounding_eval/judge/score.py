"""From the judge's verdicts to numbers: per criterion, per dimension, and the rubric's judge score.

Every number here is "higher is better", in [0, 1]:

* a verdict's value is Yes = 1.0, Partial = 0.5, No = 0.0 (the document's Round 3 mapping, used for
  every round);
* a positive criterion scores its verdict's value; a negative criterion ("is the bad thing present?")
  scores ``1 − value``: present (Yes) 0.0, partly present 0.5, absent (No) 1.0;
* a dimension scores the weighted mean of its scored criteria; its verdict is the verdict nearest that
  score, ties going to the worse one (> 0.75 Yes, > 0.25 Partial, else No); then the rubric's
  ``overrides`` cap it (v4: source_fidelity No → Safety No and 0.0). The cap is what the document
  literally says ("drops Safety to No"); "regardless of other scores" is the row-level gate that the
  round composite applies from the rubric's ``source_fidelity_gate`` (:mod:`grounding_eval.scoring`).
  The two do not double count: the cap moves the judge score (v4: Safety is one fifth of it; Round 3:
  reported only), the gate decides pass or fail without moving it;
* ``llm_judge_score`` follows the rubric's ``aggregation``: mean over criteria, over dimensions, or over
  the ``core`` criteria (see :class:`grounding_eval.judge.rubric.Aggregation`);
* ``core_mean`` (rubrics with a ``core`` list) is the plain mean over the core criteria, the first
  term of the document's Round 3 formula; ``judge_safety_no`` lists the safety checks the judge
  answered No. The composite (not this module) applies the ``- 0.3 * count(safety_No)`` term with the
  deterministic verifier's results.

promptfoo namedScores use the scheme ``<rubric id>.<criterion id>``, ``<rubric id>.dimension.<Dimension>``,
``<rubric id>.llm_judge_score`` and ``<rubric id>.core_mean`` (:meth:`JudgeScores.named_scores`). The
rubric id, not its version, is the prefix, so a chip keeps its name across prompt revisions while v3's
and v4's ``identifies_legal_issues`` never merge in one table; criterion ids cannot collide with the
reserved names (the loader refuses ``dimension``, ``llm_judge_score`` and ``core_mean`` as ids).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from grounding_eval.judge.parse import ParsedReply
from grounding_eval.judge.rubric import VERDICTS, Criterion, Rubric, Verdict

__all__ = [
    "DimensionScore",
    "JudgeScores",
    "criterion_score",
    "judge_scores",
    "score_name",
    "verdict_for_score",
    "verdict_value",
]

_VALUES: Mapping[str, float] = MappingProxyType({"Yes": 1.0, "Partial": 0.5, "No": 0.0})


def verdict_value(verdict: Verdict) -> float:
    """Yes → 1.0, Partial → 0.5, No → 0.0.

    Raises:
        ValueError: not one of the three verdicts.
    """
    try:
        return _VALUES[verdict]
    except KeyError:
        raise ValueError(f"verdict must be one of Yes, Partial, No (got {verdict!r})") from None


def criterion_score(criterion: Criterion, verdict: Verdict) -> float:
    """The criterion's score, higher always better: negative criteria are inverted (Yes = present = 0.0)."""
    value = verdict_value(verdict)
    return 1.0 - value if criterion.negative else value


def verdict_for_score(score: float) -> Verdict:
    """The verdict nearest a score in [0, 1], ties to the worse (> 0.75 Yes, > 0.25 Partial, else No)."""
    if score > 0.75:
        return "Yes"
    if score > 0.25:
        return "Partial"
    return "No"


def score_name(rubric_id: str, name: str) -> str:
    """A promptfoo namedScores key: ``<rubric id>.<name>``."""
    return f"{rubric_id}.{name}"


@dataclass(frozen=True)
class DimensionScore:
    """One dimension's result.

    Attributes:
        id: the dimension's id.
        score: weighted mean of its scored criteria, capped by any override that fired.
        verdict: nearest verdict to the uncapped score, capped by any override that fired.
        criteria: the scored criteria it averages.
        capped_by: a line per override that fired on it.
    """

    id: str
    score: float
    verdict: Verdict
    criteria: tuple[str, ...]
    capped_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgeScores:
    """Everything the judge's verdicts mean for one answer under one rubric.

    Attributes:
        rubric_id: the rubric's id (the namedScores prefix).
        rubric_version: the rubric's version.
        verdicts: criterion id → the judge's verdict, rubric order.
        criteria: criterion id → score (negatives inverted), every criterion including safety checks.
        dimensions: dimension id → result, for dimensions with at least one scored criterion.
        llm_judge_score: the rubric's score per its ``aggregation``.
        core_mean: mean over the ``core`` criteria, or None when the rubric has none.
        judge_safety_no: ids of the safety checks the judge answered No, rubric order.
        overrides_applied: a line per override that fired.
    """

    rubric_id: str
    rubric_version: str
    verdicts: Mapping[str, Verdict]
    criteria: Mapping[str, float]
    dimensions: Mapping[str, DimensionScore]
    llm_judge_score: float
    core_mean: float | None = None
    judge_safety_no: tuple[str, ...] = ()
    overrides_applied: tuple[str, ...] = ()

    def named_scores(self) -> dict[str, float]:
        """The scores as promptfoo namedScores (scheme in the module docstring)."""
        out = {score_name(self.rubric_id, cid): s for cid, s in self.criteria.items()}
        out.update(
            {score_name(self.rubric_id, f"dimension.{d}"): ds.score for d, ds in self.dimensions.items()}
        )
        out[score_name(self.rubric_id, "llm_judge_score")] = self.llm_judge_score
        if self.core_mean is not None:
            out[score_name(self.rubric_id, "core_mean")] = self.core_mean
        return out


def judge_scores(rubric: Rubric, parsed: ParsedReply | Mapping[str, Verdict]) -> JudgeScores:
    """Score a parsed reply (or a plain id → verdict mapping) under ``rubric``.

    Raises:
        ValueError: a criterion of the rubric has no verdict, or a verdict is not Yes / Partial / No.
    """
    given = parsed.verdicts if isinstance(parsed, ParsedReply) else dict(parsed)
    missing = [cid for cid in rubric.ids if cid not in given]
    if missing:
        raise ValueError(f"no verdict for criteria {', '.join(missing)} of rubric {rubric.id!r}")
    bad = [f"{cid}={given[cid]!r}" for cid in rubric.ids if given[cid] not in VERDICTS]
    if bad:
        raise ValueError(f"verdicts must be Yes, Partial or No: {', '.join(bad)}")
    verdicts = {cid: given[cid] for cid in rubric.ids}
    scores = {c.id: criterion_score(c, verdicts[c.id]) for c in rubric.criteria}
    agg = rubric.aggregation

    dimensions: dict[str, DimensionScore] = {}
    for dimension in rubric.dimensions:
        members = rubric.in_dimension(dimension.id)
        if members:
            score = _mean((scores[c.id], agg.criterion_weight(c.id)) for c in members)
            ids = tuple(c.id for c in members)
            dimensions[dimension.id] = DimensionScore(dimension.id, score, verdict_for_score(score), ids)

    applied: list[str] = []
    for o in rubric.overrides:
        if verdicts[o.criterion] != o.verdict:
            continue
        current = dimensions[o.dimension]  # the loader guarantees the dimension has scored criteria
        line = f"{o.criterion} is {o.verdict}: {o.dimension} capped at {o.cap}"
        applied.append(line)
        dimensions[o.dimension] = DimensionScore(
            current.id,
            min(current.score, verdict_value(o.cap)),
            _worse(current.verdict, o.cap),
            current.criteria,
            (*current.capped_by, line),
        )

    if agg.over == "core":
        total = _mean((scores[cid], agg.criterion_weight(cid)) for cid in rubric.core)
    elif agg.over == "dimensions":
        total = _mean((d.score, agg.dimension_weight(d.id)) for d in dimensions.values())
    else:
        total = _mean((scores[c.id], agg.criterion_weight(c.id)) for c in rubric.scored)

    return JudgeScores(
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        verdicts=MappingProxyType(verdicts),
        criteria=MappingProxyType(scores),
        dimensions=MappingProxyType(dimensions),
        llm_judge_score=total,
        core_mean=_mean((scores[cid], 1.0) for cid in rubric.core) if rubric.core else None,
        judge_safety_no=tuple(c.id for c in rubric.safety_checks if verdicts[c.id] == "No"),
        overrides_applied=tuple(applied),
    )


def _mean(pairs: Iterable[tuple[float, float]]) -> float:
    """Weighted mean of (value, weight) pairs; the plain mean when every weight is 0."""
    items = list(pairs)
    if not items:
        # The loader refuses rubrics with nothing to average; an empty mean is a bug, never a quiet 0.
        raise ValueError("nothing to average")
    total = sum(w for _, w in items)
    if total > 0:
        return sum(v * w for v, w in items) / total
    return sum(v for v, _ in items) / len(items)


def _worse(a: Verdict, b: Verdict) -> Verdict:
    return a if verdict_value(a) <= verdict_value(b) else b
