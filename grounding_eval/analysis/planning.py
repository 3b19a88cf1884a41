"""``grounding-eval plan``: how large an effect a round can detect, and how many items a target effect needs.

The test planned for is the paired comparison of two conditions over items (the report's effects). Power
is the two-sided paired t-test's, exact under normal item differences: with ``n`` items, standard
deviation ``sd`` of the item differences and true mean difference ``δ``, the statistic follows a
noncentral t with ``n − 1`` degrees of freedom and noncentrality ``δ·√n / sd`` (Cohen 1988, *Statistical
Power Analysis for the Behavioral Sciences*, 2nd ed., ch. 2; Julious 2004, *Stat. Med.* 23:1921–1986).
The report's sign-flip test has the t-test's power asymptotically on normal differences (its Pitman
efficiency is 1: Lehmann & Romano 2005, *Testing Statistical Hypotheses*, §15.2); at 8–10 items an exact
sign-flip test is a little less powerful (its p-values are discrete), so the figures are a floor on what is
needed, not a promise.

Multiplicity: the comparison must clear Holm's first step to be declared, ``α / m`` for a family of ``m``
comparisons (``decisions.yaml`` ``effects.family``), so power is computed at ``α / m`` — conservative for
every comparison but the one with the smallest p. ``decisions.yaml`` ``planning`` records these choices.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Plan", "detectable_effect", "format_plans", "items_needed", "pilot_plans", "plan", "power"]


def power(effect: float, sd: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired t-test at level ``alpha`` with ``n`` items (noncentral t)."""
    from scipy import stats  # type: ignore[import-untyped]

    if n < 2 or sd <= 0:
        raise ValueError("power needs at least 2 items and a positive SD")
    df = n - 1
    critical = float(stats.t.ppf(1 - alpha / 2, df))
    shift = abs(effect) * math.sqrt(n) / sd
    found = float(stats.nct.sf(critical, df, shift) + stats.nct.cdf(-critical, df, shift))
    if not math.isfinite(found):
        raise ValueError(f"power not computable at {n} items (noncentrality {shift:.3g})")
    return found


def detectable_effect(sd: float, n: int, alpha: float, target: float = 0.8) -> float:
    """The smallest mean difference detected with power ``target`` (bisection on :func:`power`, which
    rises with the effect), to 1e-6 of ``sd``."""
    low, high = 0.0, sd
    while power(high, sd, n, alpha) < target:
        high *= 2
        if high > 1e6 * sd:
            raise ValueError(f"no effect reaches power {target} with {n} items")
    while high - low > 1e-6 * sd:
        mid = (low + high) / 2
        if power(mid, sd, n, alpha) >= target:
            high = mid
        else:
            low = mid
    return high


def items_needed(
    effect: float, sd: float, alpha: float, target: float = 0.8, *, most: int = 100_000
) -> int | None:
    """The fewest items (≥ 2) at which :func:`power` reaches ``target``; None beyond ``most``."""
    if effect == 0:
        return None
    low, high = 2, 2
    while power(effect, sd, high, alpha) < target:  # doubling: SciPy's noncentral t fails (NaN) far out
        low, high = high + 1, 2 * high
        if high > most:
            return None
    while low < high:  # power rises with n at a fixed effect and SD
        mid = (low + high) // 2
        if power(effect, sd, mid, alpha) >= target:
            high = mid
        else:
            low = mid + 1
    return low


@dataclass(frozen=True)
class Plan:
    """One comparison's plan: its pilot (or stated) SD, items, family size and what they give."""

    label: str
    metric: str
    n: int
    sd: float
    family: int
    alpha: float
    power: float
    detectable: float
    target: float | None
    needed: int | None
    pilot_mean: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "comparison": self.label,
            "metric": self.metric,
            "items": self.n,
            "sd": round(self.sd, 6),
            "pilot_mean_diff": None if self.pilot_mean is None else round(self.pilot_mean, 6),
            "family_size": self.family,
            "alpha": self.alpha,
            "alpha_per_test": round(self.alpha / self.family, 8),
            "power": self.power,
            "detectable_effect": round(self.detectable, 6),
            "target_effect": self.target,
            "items_needed": self.needed,
        }


def plan(
    label: str, metric: str, *, sd: float, n: int, family: int, alpha: float, target_power: float,
    target: float | None, pilot_mean: float | None = None,
) -> Plan:  # fmt: skip
    """A :class:`Plan` at ``alpha / family``."""
    level = alpha / family
    return Plan(
        label, metric, n, sd, family, alpha, target_power,
        detectable_effect(sd, n, level, target_power),
        target, items_needed(target, sd, level, target_power) if target else None, pilot_mean,
    )  # fmt: skip


def pilot_plans(
    rows: Sequence[Any], *, metric: str, target: float | None, alpha: float, target_power: float,
    family: int | None = None, items: int | None = None, primary: Any = None,
) -> list[Plan]:  # fmt: skip
    """Per comparison of the pilot (model × round × condition pair) of ``metric``: the SD of the paired
    item differences (``ddof = 1``), at the pilot's item count (or ``items``), in a family of the size the
    report would make (:func:`~grounding_eval.analysis.effects.family_of`) unless ``family`` is given."""
    from statistics import stdev

    from grounding_eval.analysis.effects import paired_effects

    effects = paired_effects(rows, primary=primary)
    sizes: dict[str, int] = defaultdict(int)
    for e in effects:
        if e.p_value is not None:
            sizes[e.family] += 1
    diffs = _item_diffs(rows, metric)
    out = []
    for e in effects:
        if e.metric != metric or e.n < 3:
            continue
        values = diffs.get((e.provider, e.round, e.from_, e.to), [])
        if len(values) < 3 or stdev(values) == 0:
            continue
        out.append(
            plan(
                f"{e.provider} · round {e.round} · {e.to} − {e.from_}",
                metric,
                sd=stdev(values),
                n=items or e.n,
                family=family or sizes[e.family] or 1,
                alpha=alpha,
                target_power=target_power,
                target=target,
                pilot_mean=e.mean_diff,
            )
        )
    return out


def _item_diffs(rows: Sequence[Any], metric: str) -> Mapping[tuple[str, str, str, str], list[float]]:
    """The paired items' differences of ``metric`` per (provider, round, from, to), as the effects make them."""
    import numpy as np

    from grounding_eval.analysis.effects import _value_table, condition_pairs

    cells: dict[tuple[str, str], dict[str, dict[str, list[Any]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for row in rows:
        cells[(row.keys["provider"], row.keys["round"])][row.keys["condition"]][row.query_id].append(row)
    out: dict[tuple[str, str, str, str], list[float]] = {}
    for (provider, round_), by_condition in cells.items():
        index = {item: i for i, item in enumerate(sorted({i for b in by_condition.values() for i in b}))}
        table = {c: _value_table(b, index, {metric: 0}) for c, b in by_condition.items()}
        for a, b in condition_pairs(by_condition):
            (before, has_a), (after, has_b) = table[a], table[b]
            d = (after[:, 0] - before[:, 0])[has_a & has_b]
            out[(provider, round_, a, b)] = [float(x) for x in d[~np.isnan(d)]]
    return out


def format_plans(plans: Sequence[Plan]) -> str:
    """Text table of :func:`pilot_plans` (or one stated plan), with the method in one sentence."""
    from grounding_eval.analysis.summary import table_lines

    if not plans:
        return (
            "Nothing to plan from: no comparison of this metric has 3 or more paired items with any spread."
        )
    body = [["comparison", "metric", "items", "SD of diffs", "family", "α per test", "detectable effect",
             "target", "items needed"]]  # fmt: skip
    for p in plans:
        body.append([p.label, p.metric, str(p.n), f"{p.sd:.3f}", str(p.family), f"{p.alpha / p.family:.4g}",
                     f"{p.detectable:.3f}", "–" if p.target is None else f"{p.target:g}",
                     "–" if p.target is None else (str(p.needed) if p.needed else "> 100000")])  # fmt: skip
    first = plans[0]
    return "\n".join([
        *table_lines(body),
        f"Detectable effect: the smallest mean paired difference the two-sided paired t-test detects with power "
        f"{first.power:.0%} at α / family (Holm's first step: α {first.alpha:g}); power from the noncentral t "
        "(Cohen 1988, ch. 2). The report's sign-flip test is a little less powerful at 8–10 items: treat these "
        "as floors.",
    ])  # fmt: skip
