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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from scipy import stats  # type: ignore[import-untyped]

__all__ = [
    "Agreement",
    "CriterionAgreement",
    "Graded",
    "ItemAgreement",
    "agreement",
    "bootstrap_mean_ci",
    "bootstrap_mean_intervals",
    "cohen_kappa",
    "holm",
    "item_agreement",
    "kappa_from_confusion",
    "mcnemar_exact",
    "percentile_interval",
    "resample_counts",
    "rows_to_show",
    "sign_flip_intervals",
    "sign_flip_p",
    "sign_flip_pvalues",
    "wilson",
    "wilson_bounds",
]


_R = TypeVar("_R")
_BLOCK = 1 << 22  # matrix entries per block of resamples or sign patterns (32 MB of float64)
_PER_LINE = 4096  # from this many items on, each resample is counted on its own (fits the cache)
_COLUMNS = 1024  # columns per pass: past this, the same draw is made again for the next columns


def _lines(total: int, width: int) -> Iterator[int]:
    """Heights of the blocks that cut ``total`` lines of ``width`` entries into ≈ 32 MB pieces."""
    step = max(1, _BLOCK // max(width, 1))
    for start in range(0, total, step):
        yield min(step, total - start)


def _draw_counts(rng: np.random.Generator, lines: int, n: int) -> np.ndarray:
    """The next ``lines`` resamples of ``n`` items from ``rng``, as counts per item (float, lines × n).

    The drawn indices are ``rng.integers(0, n, size=(lines, n))``; drawing them as int32 gives the same
    values as the default int64 (both take one 32-bit word per index below 2**32) and drawing in blocks
    continues the same stream, so any split of the resamples into blocks gives the same counts.
    """
    idx = rng.integers(0, n, size=(lines, n), dtype=np.int32)
    if n < _PER_LINE:
        flat = (idx + np.arange(lines, dtype=np.int64)[:, None] * n).ravel()
        return np.bincount(flat, minlength=lines * n).reshape(lines, n).astype(float)
    out = np.empty((lines, n))
    for line, drawn in enumerate(idx):
        out[line] = np.bincount(drawn, minlength=n)
    return out


def _in_passes(compute: Callable[..., list[_R]], v: np.ndarray, s: np.ndarray, **options: Any) -> list[_R]:
    """``compute`` over :data:`_COLUMNS` columns at a time (each pass draws the same again), joined."""
    return [
        out
        for start in range(0, v.shape[1], _COLUMNS)
        for out in compute(v[:, start : start + _COLUMNS], s[:, start : start + _COLUMNS], **options)
    ]


def _as_columns(
    values: np.ndarray | Sequence[Sequence[float]], scored: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError("expected a non-empty (items, columns) array")
    s = np.ones(v.shape, dtype=bool) if scored is None else np.asarray(scored, dtype=bool)
    if s.shape != v.shape:
        raise ValueError("scored must have the shape of values")
    return np.where(s, v, 0.0), s


def bootstrap_mean_intervals(
    values: np.ndarray | Sequence[Sequence[float]],
    scored: np.ndarray | None = None,
    *,
    resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> list[tuple[float, float] | None]:
    """Percentile bootstrap interval of each column's mean, every column from the same resampled items.

    ``values`` is an (items, columns) array: one line per item (the resampling unit), one column per
    statistic (a metric of a comparison); ``scored[i, j]`` says whether item ``i`` has a value in column
    ``j`` (all do when None). Each resample draws ``items`` items with replacement — the indices are
    ``numpy.random.default_rng(seed).integers(0, items, size=(resamples, items))``, as in
    :func:`resample_counts` — and an item's line travels whole, so a column's statistic on a resample is
    the mean of its values over the drawn items that have one (an item drawn twice counts twice). A
    resample that draws none of a column's scored items leaves that column out; a column scored nowhere
    gets None. A column every item has is exactly :func:`bootstrap_mean_ci` of that column.

    One draw serves every column, in blocks of resamples (memory stays near 32 MB whatever the size), and
    the means are one matrix product per block: that is what makes a report's dozens of comparisons over
    100,000 rows take seconds. (The mean is summed in another order than ``d[idx].mean()``: a resample's
    mean can differ from it in the last bit.)
    """
    v, s = _as_columns(values, scored)
    n, columns = v.shape
    if columns > _COLUMNS:  # the resample means are resamples × columns: bounded per pass
        return _in_passes(
            bootstrap_mean_intervals, v, s, resamples=resamples, seed=seed, confidence=confidence
        )
    masks, which = np.unique(s.T, axis=0, return_inverse=True)  # columns scored on the same items
    rng = np.random.default_rng(seed)
    means = np.empty((resamples, columns))
    done = 0
    for lines in _lines(resamples, n):
        counts = _draw_counts(rng, lines, n)
        sizes = counts @ masks.T.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            means[done : done + lines] = (counts @ v) / sizes[:, np.ravel(which)]
        done += lines
    return [percentile_interval(means[:, j], confidence) for j in range(columns)]


def bootstrap_mean_ci(
    diffs: Sequence[float], *, resamples: int, seed: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``diffs`` (paired differences, one per item).

    Each resample draws ``len(diffs)`` items with replacement; an item's difference travels whole, so the
    pairing is kept. Seeded: the same input gives the same interval. (One column of
    :func:`bootstrap_mean_intervals`.)
    """
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        raise ValueError("no differences to resample")
    (interval,) = bootstrap_mean_intervals(d[:, None], resamples=resamples, seed=seed, confidence=confidence)
    assert interval is not None  # every resample draws n of the n items
    return interval


def sign_flip_pvalues(
    values: np.ndarray | Sequence[Sequence[float]],
    scored: np.ndarray | None = None,
    *,
    permutations: int,
    seed: int,
) -> list[float | None]:
    """:func:`sign_flip_p` of each column's scored values (None for a column scored nowhere).

    Columns exact under :func:`sign_flip_p` (``2 ** n <= permutations``) are enumerated one by one; the
    others share one set of random sign patterns, one sign per item line, drawn as ``sign_flip_p`` draws
    them for ``items`` differences (``default_rng(seed)``, ``integers(0, 2)`` → −1 / +1, a line per
    pattern). An item outside a column's scored set has value 0 there, so its sign changes nothing: each
    column sees independent fair signs on its own items, which is the test. A column every item has gets
    exactly ``sign_flip_p`` of that column.
    """
    v, s = _as_columns(values, scored)
    n, columns = v.shape
    if columns > _COLUMNS:
        return _in_passes(sign_flip_pvalues, v, s, permutations=permutations, seed=seed)
    out: list[float | None] = [None] * columns
    drawn: list[int] = []
    for j in range(columns):
        d = v[s[:, j], j]
        if d.size == 0:
            continue
        if 2**d.size <= permutations or d.size == 1 or not np.any(d):
            out[j] = _sign_flip_exact(d)
        else:
            drawn.append(j)
    if not drawn:
        return out
    a = np.abs(v[:, drawn])
    sizes = s[:, drawn].sum(axis=0)
    threshold = np.array([_reach(v[s[:, j], j]) for j in drawn])
    rng = np.random.default_rng(seed)
    hits = np.zeros(len(drawn), dtype=np.int64)
    total = a.sum(axis=0)
    for lines in _lines(permutations, n):
        # integers(0, 2) is the top bit of each 32-bit word the generator gives (Lemire's method with a
        # range of 2 never rejects), so the words themselves are drawn: the same signs, twice as fast.
        plus = rng.integers(0, 2**32, size=(lines, n), dtype=np.uint32) >= 2**31
        sums = 2 * (plus.astype(float) @ a) - total  # Σ sign·|d| with sign = +1 where plus, else −1
        hits += np.count_nonzero(np.abs(sums) / sizes >= threshold, axis=0)
    for j, h in zip(drawn, hits, strict=True):
        out[j] = (int(h) + 1) / (permutations + 1)
    return out


def sign_flip_intervals(
    values: np.ndarray | Sequence[Sequence[float]],
    scored: np.ndarray | None = None,
    *,
    permutations: int,
    seed: int,
    confidence: float = 0.95,
) -> list[tuple[float, float] | None]:
    """The interval each column's sign-flip test inverts: every shift δ it would not reject at 1 − confidence.

    For a shift δ the test of :func:`sign_flip_pvalues` runs on ``d − δ`` with the same sign patterns
    (every pattern when exact, else the same seeded draw): the interval is the set of δ whose p-value is
    above ``1 − confidence``, so it excludes 0 exactly when the reported p is at most ``1 − confidence``
    (Hartigan 1969; Good, *Permutation Tests*, §3.2). For δ below the mean, a pattern that flips the items
    of a set G reaches the observed |mean| of ``d − δ`` when the mean of ``d`` over G, or over the items
    it leaves, is at most δ; so the p-value counts subset means at or below δ, and the lower end is the
    k-th smallest subset mean with k the least count whose p is above the level (the upper end likewise
    from the top). Exact, with no search. None when the column is scored nowhere, or when the test cannot
    reject at this level whatever the data (n ≤ 5 at 95 %, exact): the interval is unbounded.
    """
    v, s = _as_columns(values, scored)
    n, columns = v.shape
    if columns > _COLUMNS:
        return _in_passes(
            sign_flip_intervals, v, s, permutations=permutations, seed=seed, confidence=confidence
        )
    alpha = 1 - confidence
    out: list[tuple[float, float] | None] = [None] * columns
    drawn: list[int] = []
    for j in range(columns):
        d = v[s[:, j], j]
        if d.size == 0:
            continue
        if 2**d.size <= permutations or d.size == 1 or not np.any(d):
            out[j] = _exact_interval(d, alpha)
        else:
            drawn.append(j)
    if not drawn:
        return out
    vd, sd = v[:, drawn], s[:, drawn]
    # A drawn pattern's signs are those sign_flip_pvalues gives |d| (+ where the bit is set): on d itself
    # an item is flipped when its bit and its sign disagree (a 0 counts as +). G = the flipped items.
    negative = (vd < 0) & sd
    nonnegative = (vd >= 0) & sd
    on_bit = np.concatenate(
        [np.where(negative, vd, 0.0), negative, np.where(nonnegative, vd, 0.0), nonnegative], axis=1
    )
    width = len(drawn)
    total, sizes = vd.sum(axis=0), sd.sum(axis=0)
    pos_sum, pos_count = on_bit[:, 2 * width : 3 * width].sum(axis=0), nonnegative.sum(axis=0)
    k = math.floor(alpha * (permutations + 1) - 1) + 1  # hits ≥ k ⟺ (hits + 1) / (B + 1) > α
    low = np.full((0, width), np.inf)
    high = np.full((0, width), -np.inf)
    rng = np.random.default_rng(seed)
    for lines in _lines(permutations, max(n, 4 * width)):
        plus = (rng.integers(0, 2**32, size=(lines, n), dtype=np.uint32) >= 2**31).astype(float)
        products = plus @ on_bit
        neg_sum, neg_count = products[:, :width], products[:, width : 2 * width]
        g_sum = neg_sum + pos_sum - products[:, 2 * width : 3 * width]
        g_size = neg_count + pos_count - products[:, 3 * width :]
        sums = np.concatenate([g_sum, total - g_sum])
        counts = np.concatenate([g_size, sizes - g_size])
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / counts
        empty = counts == 0
        low = _smallest(np.concatenate([low, np.where(empty, -np.inf, means)]), k)
        high = -_smallest(np.concatenate([-high, np.where(empty, -np.inf, -means)]), k)
    for i, j in enumerate(drawn):
        out[j] = _bounded(float(low[k - 1, i]), float(high[k - 1, i]), v[s[:, j], j])
    return out


def _smallest(stack: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` smallest entries of each column of ``stack``, sorted (all of them when fewer)."""
    if stack.shape[0] > k:
        stack = np.partition(stack, k - 1, axis=0)[:k]
    return np.sort(stack, axis=0)


def _exact_interval(d: np.ndarray, alpha: float) -> tuple[float, float] | None:
    """:func:`sign_flip_intervals` of one column over all 2**n sign patterns."""
    if not np.any(d):
        return (0.0, 0.0)
    n = d.size
    # Each pattern's flipped set G and the set it leaves both run over all 2**n subsets, so the counts
    # are twice the subset counts: p(δ) = 2·#{G: mean_G ≤ δ} / 2**n, the empty set counting always.
    k = math.floor(alpha * 2 ** (n - 1)) + 1  # the least subset count whose p is above α
    if k == 1:
        return None  # only the empty set is needed: the test never rejects, the interval is unbounded
    members = (np.arange(1, 2**n)[:, None] >> np.arange(n)) & 1
    means = (members @ d) / members.sum(axis=1)
    ordered = np.sort(means)
    return _bounded(float(ordered[k - 2]), float(ordered[-(k - 1)]), d)


def _bounded(low: float, high: float, d: np.ndarray) -> tuple[float, float] | None:
    """The interval, None when an end is unbounded; an end within rounding of 0 is 0, as the p-value's
    tolerance (:func:`_reach`) counts a pattern within rounding of the observed one as reaching it."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    tolerance = 1e-12 * float(np.mean(np.abs(d)))
    return (0.0 if abs(low) <= tolerance else low, 0.0 if abs(high) <= tolerance else high)


def _reach(diffs: np.ndarray) -> float:
    """The |mean| a sign pattern must reach to count: the observed one, less rounding at the data's scale.

    A pattern equal to the observed up to rounding counts as reaching it. The tolerance is taken at the
    scale of the differences (1e-12 × their mean size), not of the observed mean, as SciPy's relative one
    is: when the differences cancel (+1/3, −1/3, −1/4, −1/12 …) the observed mean is 0 up to rounding, every
    pattern reaches it (p = 1), and a relative tolerance of a 1e-17 mean would leave that to rounding noise
    (0.854 or 0.896 depending on how the sums were ordered).
    """
    return max(0.0, abs(float(np.mean(diffs))) - 1e-12 * float(np.mean(np.abs(diffs))))


def _sign_flip_exact(diffs: np.ndarray) -> float:
    """Every sign pattern counted (or 1.0 when all differences are 0, or there is one item)."""
    d = np.abs(diffs)
    if not np.any(d) or d.size == 1:
        return 1.0  # every sign pattern reaches the observed |mean| (one item: its two signs tie)
    threshold = _reach(diffs)
    patterns = ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1) * 2 - 1
    return float(np.mean(np.abs(patterns @ d) / d.size >= threshold))


def sign_flip_p(diffs: Sequence[float], *, permutations: int, seed: int) -> float:
    """Two-sided paired sign-flip permutation p-value of the mean difference.

    Under "no effect" each item's difference is as likely to have either sign; the p-value is the share
    of sign patterns whose |mean| reaches the observed one. Exact (every pattern) when
    ``2 ** len(diffs) <= permutations``; otherwise ``permutations`` random patterns, seeded, counted as
    ``(hits + 1) / (permutations + 1)``. All-zero differences, or a single item, give 1.0. This is the
    test ``scipy.stats.permutation_test((diffs,), np.mean, permutation_type="samples")`` runs (the tests
    check the two agree); done here in NumPy because SciPy's takes ≈ 0.35 s per comparison at 1,000
    items, and a report makes dozens. (One column of :func:`sign_flip_pvalues`.)
    """
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        raise ValueError("no differences to test")
    (p,) = sign_flip_pvalues(d[:, None], permutations=permutations, seed=seed)
    assert p is not None
    return p


def wilson(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of ``passed / n`` (SciPy's ``binomtest().proportion_ci``); None when n = 0."""
    if n == 0:
        return None
    ci = stats.binomtest(passed, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979, "A simple sequentially rejective multiple test
    procedure", Scand. J. Statist. 6:65–70), in the order given.

    With the m p-values sorted, p_(1) ≤ … ≤ p_(m), the i-th adjusted value is
    ``max_{j ≤ i} min(1, (m − j + 1) · p_(j))``: a hypothesis is rejected at level α by Holm's procedure
    exactly when its adjusted p is at most α. Controls the family-wise error rate under any dependence.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (p.size - np.arange(p.size)) * p[order])
    out = np.empty(p.size)
    out[order] = np.maximum.accumulate(scaled)
    return [float(x) for x in out]


def mcnemar_exact(up: int, down: int) -> float:
    """Exact (conditional) McNemar p of paired pass/fail verdicts: ``up`` items pass under the later
    condition only, ``down`` under the earlier only; the two-sided binomial test of ``up`` among the
    discordant items at 1/2 (McNemar 1947; Fagerland, Lydersen & Laake 2013, BMC Med. Res. Methodol.
    13:91). 1.0 when no item is discordant."""
    if up + down == 0:
        return 1.0
    return float(stats.binomtest(up, up + down, 0.5).pvalue)


def wilson_bounds(
    successes: float, n: float, confidence: float = 0.95, *, sided: int = 2
) -> tuple[float, float] | None:
    """Wilson score interval of ``successes / n`` (Wilson 1927), also for a fractional count and size.

    The item is the unit: a share whose items have several rows (``--repeat``) is given here as the sum
    of the items' own shares over the number of items, Kish's effective size with an item's rows counted
    as one (Kish 1965, *Survey Sampling*, §8.2), so repeating a row never narrows the interval. For whole
    counts it is SciPy's ``binomtest(...).proportion_ci(method="wilson")``. ``sided=1``: the one-sided
    bounds at ``confidence`` (the lower is a lower confidence bound). None when n = 0.
    """
    if n <= 0:
        return None
    z = float(stats.norm.ppf(1 - (1 - confidence) / sided))
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def rows_to_show(
    share: float, threshold: float, confidence: float = 0.95, *, most: int = 100_000
) -> int | None:
    """The fewest items at which an observed ``share`` has a one-sided Wilson lower bound at
    ``confidence`` of at least ``threshold`` (:func:`wilson_bounds`); None when the share is not above the
    threshold (no number of items shows it) or it would take more than ``most``."""
    if share <= threshold:
        return None
    low, high = 1, most
    bound = wilson_bounds(share * most, most, confidence, sided=1)
    if bound is None or bound[0] < threshold:
        return None
    while low < high:  # the lower bound rises with n at a fixed share: bisect
        mid = (low + high) // 2
        found = wilson_bounds(share * mid, mid, confidence, sided=1)
        assert found is not None
        if found[0] >= threshold:
            high = mid
        else:
            low = mid + 1
    return low


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
    return _draw_counts(np.random.default_rng(seed), resamples, n).astype(int)


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
    row_items: Sequence[int] | None = None,
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
        row_agree: per row, whether person and judge agree on every unit that decides the row, or None
            when the row is not compared at row level; one row per item unless ``row_items`` is given.
        row_items: the item (0 … items−1) of each row of ``row_agree``, when an item has several rows (a
            query answered under several conditions and models): the rows of a drawn item come along.
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
        owner = np.arange(items) if row_items is None else np.asarray(row_items, dtype=int)
        if len(row_agree) != len(owner):
            raise ValueError("row_agree needs one entry per row of row_items (per item without it)")
        mask = np.array([a is not None for a in row_agree], dtype=float)
        agree_row = np.array([bool(a) for a in row_agree], dtype=float) * mask
        rows_compared, rows_agreeing = int(mask.sum()), int(agree_row.sum())
        if rows_compared:
            rows_share = rows_agreeing / rows_compared
            compared_per_item = np.bincount(owner, weights=mask, minlength=items)
            agreeing_per_item = np.bincount(owner, weights=agree_row, minlength=items)
            with np.errstate(invalid="ignore", divide="ignore"):
                share_boot = (counts @ agreeing_per_item) / (counts @ compared_per_item)
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
