"""The statistics on small inputs: hand-computed tables, and reference values from scikit-learn / statsmodels.

Reference values were computed once (scikit-learn 1.7.2 ``cohen_kappa_score``, statsmodels 0.15.0
``proportion_confint(method="wilson")``, in a scratch venv on 2026-11-30) and are recorded here; the hand
computations are written out beside each case.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.analysis.stats import (
    agreement,
    bootstrap_mean_ci,
    bootstrap_mean_intervals,
    cohen_kappa,
    sign_flip_p,
    sign_flip_pvalues,
    wilson,
)


class TestSignFlip:
    """Exact two-sided sign-flip p: the share of the 2**n sign patterns whose |mean| reaches the observed."""

    @pytest.mark.parametrize(
        ("diffs", "p"),
        [
            ([1.0, 1.0, 1.0], 2 / 8),  # only +++ and --- reach |mean| 1
            ([0.5, 0.5, -0.5, 1.0], 8 / 16),  # sums ±0.5±0.5±0.5±1: 8 of 16 reach |1.5|
            ([0.4, -0.1, 0.6], 4 / 8),  # 1.1, 0.9, -0.9, -1.1 reach |0.9|
            ([1.0, 2.0, 3.0, 4.0, 5.0], 2 / 32),
            ([0.0, 0.0], 1.0),
        ],
        ids=["three-equal", "mixed-four", "effects-table", "five-increasing", "all-zero"],
    )
    def test_exact(self, diffs: list[float], p: float) -> None:
        assert sign_flip_p(diffs, permutations=9999, seed=1) == pytest.approx(p)

    def test_monte_carlo_is_seeded(self) -> None:
        diffs = [0.1 * (i % 7) - 0.2 for i in range(40)]
        assert sign_flip_p(diffs, permutations=999, seed=5) == sign_flip_p(diffs, permutations=999, seed=5)


class TestBootstrap:
    """Percentile bootstrap of the mean, items resampled with replacement."""

    def test_constant_differences_have_a_point_interval(self) -> None:
        assert bootstrap_mean_ci([0.5, 0.5, 0.5], resamples=2000, seed=1) == (0.5, 0.5)

    def test_interval_reaches_the_extremes_when_they_are_likely(self) -> None:
        # Three items: a resample of three copies of -0.1 has probability 1/27 = 3.7 % > 2.5 %.
        low, high = bootstrap_mean_ci([0.4, -0.1, 0.6], resamples=4000, seed=13)
        assert (low, high) == (pytest.approx(-0.1), pytest.approx(0.6))

    def test_seeded(self) -> None:
        diffs = [0.1, 0.3, -0.2, 0.5, 0.0, 0.25]
        assert bootstrap_mean_ci(diffs, resamples=2000, seed=3) == bootstrap_mean_ci(
            diffs, resamples=2000, seed=3
        )
        low, high = bootstrap_mean_ci(diffs, resamples=2000, seed=3)
        assert low < sum(diffs) / len(diffs) < high


def _wilson_by_hand(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


class TestWilson:
    # statsmodels 0.15.0 proportion_confint(k, n, alpha=0.05, method="wilson")
    @pytest.mark.parametrize(
        ("k", "n", "low", "high"),
        [
            (19, 20, 0.7638688065532577, 0.9911185511992044),
            (9, 12, 0.46769466506643426, 0.9110583316059453),
            (6, 10, 0.31267376973365824, 0.8318196702937638),
            (4, 8, 0.2152160622138775, 0.7847839377861225),
            (38, 50, 0.6258731624205707, 0.8570260860300827),
            (0, 5, 0.0, 0.43448246478317487),
        ],
    )
    def test_reference_and_hand(self, k: int, n: int, low: float, high: float) -> None:
        got = wilson(k, n)
        assert got == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
        assert got == pytest.approx(_wilson_by_hand(k, n), abs=1e-9)

    def test_no_rows(self) -> None:
        assert wilson(0, 0) is None


class TestKappa:
    def test_wikipedia_two_by_two(self) -> None:
        """20 both yes, 5 A-only, 10 B-only, 15 both no: po = 0.7, pe = 0.5·0.6 + 0.5·0.4 = 0.5, kappa 0.4."""
        a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
        b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
        assert cohen_kappa(a, b, 2) == pytest.approx(0.4)

    def test_three_categories_hand_and_sklearn(self) -> None:
        """Confusion [[2,1,0],[0,2,1],[0,1,3]]: po = 0.7, pe = (3·2 + 3·4 + 4·4)/100 = 0.34, kappa = 0.36/0.66.

        Linear weights |i−j|/2: observed weighted disagreement 3·0.5/10 = 0.15, expected 43/100, so
        weighted kappa = 1 − 0.15/0.43. scikit-learn 1.7.2: 0.5454545454545454 and 0.6511627906976745.
        """
        a = [0, 0, 1, 1, 2, 2, 2, 1, 0, 2]
        b = [0, 1, 1, 1, 2, 1, 2, 2, 0, 2]
        assert cohen_kappa(a, b, 3) == pytest.approx(0.36 / 0.66) == pytest.approx(0.5454545454545454)
        assert cohen_kappa(a, b, 3, weighted=True) == pytest.approx(1 - 0.15 / 0.43)
        assert cohen_kappa(a, b, 3, weighted=True) == pytest.approx(0.6511627906976745)

    def test_undefined_when_both_use_one_category(self) -> None:
        assert cohen_kappa([1, 1, 1], [1, 1, 1], 2) is None

    def test_agreement_summary(self) -> None:
        a = [0, 0, 1, 1, 2, 2, 2, 1, 0, 2]
        b = [0, 1, 1, 1, 2, 1, 2, 2, 0, 2]
        result = agreement(a, b, 3, ordinal=True, resamples=500, seed=1)
        assert result.n == 10 and result.agreement == pytest.approx(0.7)
        assert result.confusion == [[2, 1, 0], [0, 2, 1], [0, 1, 3]]
        assert result.base_rate == pytest.approx([0.3, 0.3, 0.4])
        assert result.weighted_kappa == pytest.approx(0.6511627906976745)
        low, high = result.agreement_ci
        assert 0.3 <= low < 0.7 < high <= 1.0
        assert result.kappa_ci is not None and result.kappa_ci[0] < 0.5454 < result.kappa_ci[1]


class TestSignFlipAgainstScipy:
    """The NumPy sign-flip test is SciPy's permutation_test with permutation_type="samples" on one sample."""

    @pytest.mark.parametrize(
        "diffs",
        [
            [0.4, -0.1, 0.6],
            [0.5, 0.5, -0.5, 1.0, 0.0, 0.25, -0.75],
            [1.0, 0.5, 0.5, 0.5, -0.5, 0.0, 1.0, 0.5, 0.5, 0.25],
        ],
    )
    def test_exact_cases_equal(self, diffs: list[float]) -> None:
        import numpy as np
        from scipy import stats  # type: ignore[import-untyped]

        def mean(x: np.ndarray, axis: int) -> np.ndarray:
            return np.asarray(np.mean(x, axis=axis))

        reference = stats.permutation_test(
            (np.asarray(diffs),),
            mean,
            permutation_type="samples",
            vectorized=True,
            n_resamples=9999,
            alternative="two-sided",
        ).pvalue
        assert sign_flip_p(diffs, permutations=9999, seed=1) == pytest.approx(min(1.0, reference))

    def test_monte_carlo_close_to_scipy(self) -> None:
        import numpy as np
        from scipy import stats

        diffs = [((i * 7) % 11 - 4) / 10 for i in range(60)]

        def mean(x: np.ndarray, axis: int) -> np.ndarray:
            return np.asarray(np.mean(x, axis=axis))

        reference = stats.permutation_test(
            (np.asarray(diffs),), mean, permutation_type="samples", vectorized=True, n_resamples=9999,
            alternative="two-sided", rng=np.random.default_rng(0),
        ).pvalue  # fmt: skip
        assert sign_flip_p(diffs, permutations=9999, seed=13) == pytest.approx(reference, abs=0.02)

    def test_single_item(self) -> None:
        assert sign_flip_p([0.7], permutations=9999, seed=1) == 1.0


# The implementation before issue 19, kept here as the reference: one draw per comparison, gathered and
# averaged (bootstrap), and sign patterns drawn with ``rng.choice`` in batches of 1,000 (sign flip).
def _reference_bootstrap(diffs: list[float], resamples: int, seed: int) -> tuple[float, float]:
    import numpy as np

    d = np.asarray(diffs, dtype=float)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(resamples, d.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def _reference_sign_flip(diffs: list[float], permutations: int, seed: int) -> float:
    import numpy as np

    d = np.abs(np.asarray(diffs, dtype=float))
    observed = abs(float(np.mean(diffs)))
    if not np.any(d) or d.size == 1:
        return 1.0
    threshold = max(0.0, observed - 1e-12 * float(np.mean(d)))  # rounding at the data's scale
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


_SCORES = [0.0, 0.25, 0.5, 0.75, 1.0, 1 / 3, 0.1]


@pytest.mark.parametrize("permutations", [9999, 499], ids=["exact", "drawn"])
def test_differences_that_cancel_give_p_one(permutations: int) -> None:
    """The observed mean is 0 (up to rounding): every sign pattern reaches it, so p = 1, exact or drawn
    (found by the batched-against-reference property: rounding made it 0.854 or 0.896)."""
    diffs = [1 / 3, 0.0, 1 / 3, 0.0, 0.0, -1 / 3, 0.0, -0.25, 0.25 - 1 / 3]  # 2**9 patterns: 512
    assert abs(sum(diffs)) < 1e-15
    assert sign_flip_p(diffs, permutations=permutations, seed=0) == 1.0
    assert _reference_sign_flip(diffs, permutations, 0) == 1.0


class TestBatchedAgainstTheReference:
    """The batched bootstrap and sign-flip test (one draw for many columns, in blocks) give, for a column
    every item has, what the one-comparison code gave: the same draws (int32 indices, sign bits taken
    from the generator's words), so the same interval up to the last bit and the same p exactly."""

    @settings(max_examples=40, deadline=None)
    @given(
        n=st.integers(1, 40),
        columns=st.integers(1, 4),
        seed=st.integers(0, 2**32 - 1),
        data=st.data(),
    )
    def test_full_columns_match(self, n: int, columns: int, seed: int, data: st.DataObject) -> None:
        import numpy as np

        values = np.array(
            [[data.draw(st.sampled_from(_SCORES)) - data.draw(st.sampled_from(_SCORES)) for _ in range(columns)]
             for _ in range(n)]
        )  # fmt: skip
        cis = bootstrap_mean_intervals(values, resamples=300, seed=seed)
        ps = sign_flip_pvalues(values, permutations=499, seed=seed)
        event(f"sign flip {'exact' if 2**n <= 499 else 'drawn'}")
        for j in range(columns):
            column = values[:, j].tolist()
            assert cis[j] == pytest.approx(_reference_bootstrap(column, 300, seed), abs=1e-12)
            assert ps[j] == _reference_sign_flip(column, 499, seed)

    @pytest.mark.parametrize(
        ("setting", "value"),
        [("_BLOCK", 1), ("_BLOCK", 7), ("_BLOCK", 1 << 22), ("_COLUMNS", 2)],
        ids=["one-entry-blocks", "seven-entry-blocks", "default-blocks", "two-column-passes"],
    )
    def test_blocks_and_passes_change_nothing(
        self, setting: str, value: int, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Drawing in blocks continues one stream, and each pass of columns draws the same again: any block
        or pass size gives the same draws (the same p; an interval up to the last bit, as the matrix
        products are cut differently)."""
        import numpy as np

        from grounding_eval.analysis import stats

        rng = np.random.default_rng(0)
        values = rng.choice(_SCORES, size=(90, 5)) - rng.choice(_SCORES, size=(90, 5))
        scored = rng.random((90, 5)) > 0.2
        want = (
            bootstrap_mean_intervals(values, scored, resamples=200, seed=4),
            sign_flip_pvalues(values, scored, permutations=999, seed=4),
        )
        monkeypatch.setattr(stats, setting, value)
        got = bootstrap_mean_intervals(values, scored, resamples=200, seed=4)
        assert got == [pytest.approx(ci, abs=1e-12) for ci in want[0]]
        assert sign_flip_pvalues(values, scored, permutations=999, seed=4) == want[1]

    def test_large_items_are_counted_line_by_line_the_same(self) -> None:
        """From 4,096 items on each resample is counted on its own: the counts are the same."""
        from grounding_eval.analysis.stats import resample_counts

        counts = resample_counts(5000, resamples=3, seed=2)
        import numpy as np

        idx = np.random.default_rng(2).integers(0, 5000, size=(3, 5000))
        assert (counts == np.stack([np.bincount(line, minlength=5000) for line in idx])).all()

    def test_a_column_scored_nowhere_has_no_statistics(self) -> None:
        values = [[0.5, 0.0], [0.25, 0.0]]
        scored = [[True, False], [True, False]]
        cis = bootstrap_mean_intervals(values, scored, resamples=100, seed=1)
        ps = sign_flip_pvalues(values, scored, permutations=99, seed=1)
        assert cis[1] is None and ps[1] is None
        assert cis[0] == pytest.approx((0.25, 0.5)) and ps[0] == 0.5

    def test_partial_columns_match_in_distribution(self) -> None:
        """A column with unscored items resamples all the comparison's items (its own drawn ones averaged):
        its interval and p agree with the reference on the scored items alone up to Monte-Carlo error."""
        import numpy as np

        rng = np.random.default_rng(11)
        n = 600
        values = rng.normal(0.05, 0.3, size=(n, 4))
        scored = np.ones((n, 4), dtype=bool)
        scored[rng.random(n) < 0.15, 1] = False
        scored[rng.random(n) < 0.5, 2] = False
        scored[: n // 3, 3] = False
        cis = bootstrap_mean_intervals(values, scored, resamples=4000, seed=13)
        ps = sign_flip_pvalues(values, scored, permutations=9999, seed=13)
        for j in range(4):
            own = values[scored[:, j], j].tolist()
            low, high = _reference_bootstrap(own, 4000, 13)
            got = cis[j]
            assert got is not None
            width = high - low
            assert abs(got[0] - low) < 0.08 * width and abs(got[1] - high) < 0.08 * width, (
                j,
                got,
                (low, high),
            )
            reference = _reference_sign_flip(own, 9999, 13)
            p = ps[j]
            assert (
                p is not None
                and abs(p - reference) < 4 * math.sqrt(reference * (1 - reference) / 9999) + 2e-4
            )
