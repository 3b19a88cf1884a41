"""The statistics behind ``report --effects`` and ``calibrate score``, on NumPy and SciPy.

Imported only by the commands that need it (NumPy and SciPy cost ≈ 0.3 s to import; the assertion path
and the CLI's parser never import this module). Distributions and intervals come from SciPy; the
resampling procedures (the paired bootstrap, the sign-flip test and the item bootstrap of calibration)
are a few lines of NumPy, seeded, and the tests check the sign-flip test against SciPy's
``permutation_test``. SciPy's own ``bootstrap`` resamples one flat sample per statistic; calibration needs
one draw of rows shared by every criterion's statistic, the macro mean and the row-level figure, so
``item_agreement`` draws it here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats  # type: ignore[import-untyped]

__all__ = [
    "Agreement",
    "CriterionAgreement",
    "Graded",
    "ItemAgreement",
    "agreement",
    "bootstrap_mean_ci",
    "cohen_kappa",
    "item_agreement",
    "kappa_from_confusion",
    "percentile_interval",
    "resample_counts",
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
    """Raw agreement, kappa (and weighted kappa when ``ordinal``), base rate, confusion and bootstrap CIs,
    when every unit is its own item (:func:`item_agreement` on one criterion, one unit per item)."""
    graded = [Graded(i, "units", int(h), int(j)) for i, (h, j) in enumerate(zip(human, judge, strict=True))]
    (entry,) = item_agreement(
        graded,
        items=len(graded),
        categories={"units": k},
        weighted=frozenset({"units"}) if ordinal else frozenset(),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    ).criteria
    assert entry.agreement_ci is not None  # every resample has all n units
    return Agreement(
        n=entry.n,
        agreement=entry.agreement,
        kappa=entry.kappa,
        weighted_kappa=entry.weighted_kappa,
        base_rate=entry.base_rate,
        confusion=entry.confusion,
        agreement_ci=entry.agreement_ci,
        kappa_ci=entry.kappa_ci,
    )


def resample_counts(n: int, *, resamples: int, seed: int) -> np.ndarray:
    """How often each of ``n`` items is drawn in each bootstrap resample: an int array (resamples, n).

    The seed contract: the drawn indices are ``numpy.random.default_rng(seed).integers(0, n, size=
    (resamples, n))``, one resample per line (the draw ``bootstrap_mean_ci`` makes); entry ``[b, i]``
    counts item ``i`` in line ``b``. Whatever is computed per item is weighted by these counts, so every
    statistic of one report sees the same resampled items.
    """
    if n <= 0:
        raise ValueError("no items to resample")
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    flat = (idx + np.arange(resamples)[:, None] * n).ravel()
    return np.bincount(flat, minlength=resamples * n).reshape(resamples, n)


def kappa_from_confusion(
    confusion: np.ndarray | Sequence[Sequence[float]], *, weighted: bool = False
) -> np.ndarray:
    """Cohen's kappa of confusion matrices (the last two axes, k × k), NaN where undefined.

    The definition of :func:`cohen_kappa` (linear weights when ``weighted``), computed for a whole stack
    of matrices at once (one per bootstrap resample). Undefined: no units, or no expected disagreement
    (both raters used one and the same category throughout).
    """
    c = np.asarray(confusion, dtype=float)
    k = c.shape[-1]
    total = c.sum(axis=(-2, -1))
    i, j = np.indices((k, k))
    w = np.abs(i - j) / max(k - 1, 1) if weighted else (i != j).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = c.sum(axis=-1)[..., :, None] * c.sum(axis=-2)[..., None, :] / total[..., None, None]
        denominator = (w * expected).sum(axis=(-2, -1))
        kappa = 1 - (w * c).sum(axis=(-2, -1)) / denominator
    return np.where(denominator > 0, kappa, np.nan)


def percentile_interval(
    values: np.ndarray | Sequence[float], confidence: float
) -> tuple[float, float] | None:
    """Percentile interval of the finite ``values`` (NumPy's linear interpolation); None when none is."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(v, [tail, 100 - tail])
    return float(low), float(high)


@dataclass(frozen=True)
class Graded:
    """One unit both a person and the judge graded: its item (the resampling unit), criterion and codes."""

    item: int
    criterion: str
    human: int
    judge: int


@dataclass(frozen=True)
class CriterionAgreement:
    """People versus the judge on one criterion (codes 0 … k−1 of its scale).

    Attributes:
        criterion: the criterion's name.
        n: units graded; items: the items (rows) they come from.
        agreement: share of units with the same verdict.
        kappa: Cohen's kappa; None when undefined (both used one and the same category only).
        weighted_kappa: linearly weighted kappa, when asked for and defined.
        base_rate: share of each category among the people's verdicts.
        confusion: counts, rows = people's verdict, columns = the judge's.
        agreement_ci, kappa_ci: percentile intervals over the item bootstrap (None when undefined).
    """

    criterion: str
    n: int
    items: int
    agreement: float
    agreement_ci: tuple[float, float] | None
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    weighted_kappa: float | None
    base_rate: list[float]
    confusion: list[list[int]]


@dataclass(frozen=True)
class ItemAgreement:
    """Per criterion, the macro mean over criteria and the row-level figure, all from one item bootstrap.

    Attributes:
        items: items (rows) resampled.
        criteria: one entry per criterion, sorted by name.
        macro_agreement: mean of the criteria's agreement.
        macro_kappa: mean of the criteria's kappa, over ``kappa_criteria`` (None when none is defined).
        kappa_criteria: the criteria whose kappa is defined (and enters the macro mean).
        rows_compared: items whose row-level verdict was given (``row_agree`` not None).
        rows_agreeing: of those, the items where person and judge agree throughout.
        rows_share: ``rows_agreeing / rows_compared`` (None when no item was compared).
        *_ci: percentile intervals over the same resamples (None when undefined).
    """

    items: int
    criteria: tuple[CriterionAgreement, ...]
    macro_agreement: float
    macro_agreement_ci: tuple[float, float] | None
    macro_kappa: float | None
    macro_kappa_ci: tuple[float, float] | None
    kappa_criteria: tuple[str, ...]
    rows_compared: int
    rows_agreeing: int
    rows_share: float | None
    rows_share_ci: tuple[float, float] | None


def _nan_mean(stack: np.ndarray) -> np.ndarray:
    """Mean over axis 0 of the finite entries; NaN where none is (without NumPy's empty-slice warning)."""
    finite = np.isfinite(stack)
    count = finite.sum(axis=0)
    total = np.where(finite, stack, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def item_agreement(
    graded: Sequence[Graded],
    *,
    items: int,
    categories: dict[str, int],
    weighted: frozenset[str] = frozenset(),
    row_agree: Sequence[bool | None] | None = None,
    resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> ItemAgreement:
    """Agreement and kappa per criterion, their macro means, and the row-level share, bootstrapped by item.

    The resampling unit is the item (a row: item × condition × model): each resample draws ``items``
    items with replacement (:func:`resample_counts`) and every unit of a drawn item comes along, all its
    criteria together; each statistic is recomputed on the resample and the interval is the percentile
    interval of the resamples where it is defined. A criterion no drawn item has is left out of that
    resample's macro mean; the macro kappa averages, in the sample and in each resample, the criteria of
    ``kappa_criteria`` whose kappa is defined there.

    Args:
        graded: the units, each with its item's index (0 … items−1).
        items: how many items there are (an item without units still counts as drawable).
        categories: each criterion's number of categories.
        weighted: criteria (ordinal scales) that also get a linearly weighted kappa.
        row_agree: per item, whether person and judge agree on every unit that decides the row, or None
            when the item is not compared at row level.
    """
    if not graded:
        raise ValueError("no graded units")
    counts = resample_counts(items, resamples=resamples, seed=seed).astype(float)
    by: dict[str, list[Graded]] = {}
    for g in graded:
        by.setdefault(g.criterion, []).append(g)
    entries, boot_agree, boot_kappa, defined = [], [], [], []
    for name in sorted(by):
        k = categories[name]
        per_item = np.zeros((items, k * k))
        for g in by[name]:
            per_item[g.item, g.human * k + g.judge] += 1
        observed = per_item.sum(axis=0).reshape(k, k)
        boot = (counts @ per_item).reshape(resamples, k, k)
        n_boot = boot.sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            agree = np.trace(boot, axis1=1, axis2=2) / n_boot
        kappa_boot = kappa_from_confusion(boot)
        kappa = float(kappa_from_confusion(observed))
        n = int(observed.sum())
        wk = float(kappa_from_confusion(observed, weighted=True)) if name in weighted and k > 2 else math.nan
        entries.append(
            CriterionAgreement(
                criterion=name,
                n=n,
                items=len({g.item for g in by[name]}),
                agreement=float(np.trace(observed)) / n,
                agreement_ci=percentile_interval(agree, confidence),
                kappa=None if math.isnan(kappa) else kappa,
                kappa_ci=None if math.isnan(kappa) else percentile_interval(kappa_boot, confidence),
                weighted_kappa=None if math.isnan(wk) else wk,
                base_rate=[float(x) for x in observed.sum(axis=1) / n],
                confusion=observed.astype(int).tolist(),
            )
        )
        boot_agree.append(agree)
        if not math.isnan(kappa):
            defined.append(name)
            boot_kappa.append(kappa_boot)
    kappas = [e.kappa for e in entries if e.kappa is not None]
    rows_compared = rows_agreeing = 0
    rows_share: float | None = None
    rows_ci = None
    if row_agree is not None:
        if len(row_agree) != items:
            raise ValueError("row_agree needs one entry per item")
        mask = np.array([a is not None for a in row_agree])
        agree_row = np.array([bool(a) for a in row_agree], dtype=float)
        rows_compared, rows_agreeing = int(mask.sum()), int(agree_row[mask].sum())
        if rows_compared:
            rows_share = rows_agreeing / rows_compared
            with np.errstate(invalid="ignore", divide="ignore"):
                share_boot = (counts[:, mask] @ agree_row[mask]) / counts[:, mask].sum(axis=1)
            rows_ci = percentile_interval(share_boot, confidence)
    return ItemAgreement(
        items=items,
        criteria=tuple(entries),
        macro_agreement=float(np.mean([e.agreement for e in entries])),
        macro_agreement_ci=percentile_interval(_nan_mean(np.array(boot_agree)), confidence),
        macro_kappa=float(np.mean(kappas)) if kappas else None,
        macro_kappa_ci=percentile_interval(_nan_mean(np.array(boot_kappa)), confidence) if kappas else None,
        kappa_criteria=tuple(defined),
        rows_compared=rows_compared,
        rows_agreeing=rows_agreeing,
        rows_share=rows_share,
        rows_share_ci=rows_ci,
    )
