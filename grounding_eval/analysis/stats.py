"""The statistics behind ``report --effects`` and ``calibrate score``, on NumPy and SciPy.

Imported only by the commands that need it (NumPy and SciPy cost ≈ 0.3 s to import; the assertion path
and the CLI's parser never import this module). Distributions and intervals come from SciPy; the two
resampling procedures (the paired bootstrap and the sign-flip test) are a few lines of NumPy, seeded, and
the tests check the sign-flip test against SciPy's ``permutation_test``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats  # type: ignore[import-untyped]

__all__ = [
    "Agreement",
    "agreement",
    "bootstrap_mean_ci",
    "cohen_kappa",
    "sign_flip_p",
    "wilson",
]


def bootstrap_mean_ci(
    diffs: Sequence[float], *, resamples: int, seed: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``diffs`` (paired differences, one per item).

    Each resample draws ``len(diffs)`` items with replacement; an item's difference travels whole, so the
    pairing is kept. Seeded: the same input gives the same interval.
    """
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        raise ValueError("no differences to resample")
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(resamples, d.size))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def sign_flip_p(diffs: Sequence[float], *, permutations: int, seed: int) -> float:
    """Two-sided paired sign-flip permutation p-value of the mean difference.

    Under "no effect" each item's difference is as likely to have either sign; the p-value is the share
    of sign patterns whose |mean| reaches the observed one. Exact (every pattern) when
    ``2 ** len(diffs) <= permutations``; otherwise ``permutations`` random patterns, seeded, counted as
    ``(hits + 1) / (permutations + 1)``. All-zero differences, or a single item, give 1.0. This is the
    test ``scipy.stats.permutation_test((diffs,), np.mean, permutation_type="samples")`` runs (the tests
    check the two agree); done here in NumPy because SciPy's takes ≈ 0.35 s per comparison at 1,000
    items, and a report makes dozens.
    """
    d = np.abs(np.asarray(diffs, dtype=float))
    if d.size == 0:
        raise ValueError("no differences to test")
    observed = abs(float(np.mean(diffs)))
    if not np.any(d) or d.size == 1:
        return 1.0  # every sign pattern reaches the observed |mean| (one item: its two signs tie)
    # Relative tolerance, as SciPy's: a pattern equal to the observed up to rounding counts as reaching it.
    threshold = observed * (1 - 1e-12)
    if 2**d.size <= permutations:
        patterns = ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1) * 2 - 1
        return float(np.mean(np.abs(patterns @ d) / d.size >= threshold))
    rng = np.random.default_rng(seed)
    hits, left = 0, permutations
    while left:
        batch = min(left, 1000)
        signs = rng.choice((-1.0, 1.0), size=(batch, d.size))
        hits += int(np.count_nonzero(np.abs(signs @ d) / d.size >= threshold))
        left -= batch
    return (hits + 1) / (permutations + 1)


def wilson(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of ``passed / n`` (SciPy's ``binomtest().proportion_ci``); None when n = 0."""
    if n == 0:
        return None
    ci = stats.binomtest(passed, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def cohen_kappa(a: Sequence[int], b: Sequence[int], k: int, *, weighted: bool = False) -> float | None:
    """Cohen's kappa of two raters' category codes (0 … k−1); linearly weighted when ``weighted``.

    ``kappa = 1 − Σ w·observed / Σ w·expected`` with disagreement weights ``w[i][j] = |i − j| / (k − 1)``
    (linear) or ``1`` off the diagonal (unweighted) — the same definition as scikit-learn's
    ``cohen_kappa_score``. None when it is undefined (expected disagreement 0: both raters used one and
    the same category throughout).
    """
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two equally long, non-empty rating lists")
    observed = _confusion(a, b, k).astype(float)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    i, j = np.indices((k, k))
    w = np.abs(i - j) / max(k - 1, 1) if weighted else (i != j).astype(float)
    denominator = float((w * expected).sum())
    if denominator == 0:
        return None
    return 1 - float((w * observed).sum()) / denominator


def _confusion(a: Sequence[int], b: Sequence[int], k: int) -> np.ndarray:
    matrix = np.zeros((k, k), dtype=int)
    np.add.at(matrix, (np.asarray(a), np.asarray(b)), 1)
    return matrix


@dataclass(frozen=True)
class Agreement:
    """People versus the judge on one set of graded units (codes 0 … k−1 on one scale).

    Attributes:
        n: units both graded.
        agreement: share of units with the same verdict.
        kappa: Cohen's kappa (None when undefined).
        weighted_kappa: linearly weighted kappa, for ordinal scales (None otherwise or when undefined).
        base_rate: share of each category among the people's verdicts.
        confusion: counts, rows = people's verdict, columns = the judge's.
        agreement_ci, kappa_ci: percentile bootstrap intervals over units (None when undefined).
    """

    n: int
    agreement: float
    kappa: float | None
    weighted_kappa: float | None
    base_rate: list[float]
    confusion: list[list[int]]
    agreement_ci: tuple[float, float]
    kappa_ci: tuple[float, float] | None


def agreement(
    human: Sequence[int],
    judge: Sequence[int],
    k: int,
    *,
    ordinal: bool,
    resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> Agreement:
    """Raw agreement, kappa (and weighted kappa when ``ordinal``), base rate, confusion and bootstrap CIs."""
    h, j = np.asarray(human), np.asarray(judge)
    n = h.size
    confusion = _confusion(human, judge, k)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    same = (h == j).astype(float)
    agree_boot = same[idx].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    kappas = [cohen_kappa(h[row].tolist(), j[row].tolist(), k) for row in idx]
    defined = [x for x in kappas if x is not None]
    kappa_ci = None
    if cohen_kappa(human, judge, k) is not None and defined:
        low, high = np.percentile(defined, [tail, 100 - tail])
        kappa_ci = (float(low), float(high))
    a_low, a_high = np.percentile(agree_boot, [tail, 100 - tail])
    return Agreement(
        n=n,
        agreement=float(same.mean()),
        kappa=cohen_kappa(human, judge, k),
        weighted_kappa=cohen_kappa(human, judge, k, weighted=True) if ordinal and k > 2 else None,
        base_rate=[float(x) for x in np.bincount(h, minlength=k) / n],
        confusion=confusion.tolist(),
        agreement_ci=(float(a_low), float(a_high)),
        kappa_ci=kappa_ci,
    )
