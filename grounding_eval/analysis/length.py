"""How long an answer is, and a paired effect adjusted for the difference in length (issue 41).

Judges tend to favour longer answers, and a grounded condition may answer at another length, so a condition
effect may be partly one of length. The report counts each answer from the row's ``response.output`` (the
text the judge saw): every results file has it. ``decisions.yaml`` ``length`` records the choices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["LengthFit", "length_adjusted"]


@dataclass(frozen=True)
class LengthFit:
    """A paired effect adjusted for answer length (:func:`length_adjusted`).

    Attributes:
        n: items in the fit.
        mean_length_diff: mean difference in words (to − from).
        slope: change in the item's difference per 100 words of length difference.
        adjusted: the intercept: the difference the line predicts at equal length.
        ci_low, ci_high: its t interval (n − 2 degrees of freedom).
        p_value: its two-sided t-test p.
    """

    n: int
    mean_length_diff: float
    slope: float
    adjusted: float
    ci_low: float
    ci_high: float
    p_value: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean_words_diff": round(self.mean_length_diff, 2),
            "slope_per_100_words": round(self.slope, 6),
            "adjusted_diff": round(self.adjusted, 6),
            "adjusted_ci_low": round(self.ci_low, 6),
            "adjusted_ci_high": round(self.ci_high, 6),
            "adjusted_p": round(self.p_value, 6),
        }


def length_adjusted(
    diffs: Sequence[float], length_diffs: Sequence[float], confidence: float = 0.95
) -> LengthFit | None:
    """The paired effect at equal answer length: least squares ``d_i = a + b·(Δw_i / 100) + e_i``.

    ``d_i`` is an item's difference in the metric (to − from), ``Δw_i`` its difference in answer words.
    The intercept ``a`` is the effect the line predicts for two answers of the same length — analysis of
    covariance on the paired differences with the covariate's own difference (Snedecor & Cochran 1989,
    *Statistical Methods*, 8th ed., ch. 18; length as a judge's confounder: Dubois et al. 2024,
    "Length-Controlled AlpacaEval", arXiv:2404.04475). Its interval is the t interval,
    ``a ± t(1 − α/2, n − 2)·se(a)``, ``se(a) = s·sqrt(1/n + x̄² / Sxx)``. None with fewer than 3 items
    or when every item has the same length difference (no slope can be fitted).
    """
    from scipy import stats  # type: ignore[import-untyped]

    n = len(diffs)
    if n != len(length_diffs):
        raise ValueError("one length difference per item")
    if n < 3:
        return None
    x = [w / 100.0 for w in length_diffs]
    mx, my = math.fsum(x) / n, math.fsum(diffs) / n
    sxx = math.fsum((xi - mx) ** 2 for xi in x)
    if sxx <= 1e-12 * max(1.0, mx * mx) * n:
        return None
    slope = math.fsum((xi - mx) * (yi - my) for xi, yi in zip(x, diffs, strict=True)) / sxx
    intercept = my - slope * mx
    residual = math.fsum((yi - intercept - slope * xi) ** 2 for xi, yi in zip(x, diffs, strict=True))
    s2 = residual / (n - 2)
    se = math.sqrt(s2 * (1 / n + mx * mx / sxx))
    t = float(stats.t.ppf(1 - (1 - confidence) / 2, n - 2))
    exact = 1.0 if intercept == 0 else 0.0  # residuals all 0: the line is exact
    p = exact if se == 0 else float(2 * stats.t.sf(abs(intercept) / se, n - 2))
    return LengthFit(n, mx * 100, slope, intercept, intercept - t * se, intercept + t * se, p)
