"""The statistics on small inputs: hand-computed tables, and reference values from scikit-learn / statsmodels.

Reference values were computed once (scikit-learn 1.7.2 ``cohen_kappa_score``, statsmodels 0.15.0
``proportion_confint(method="wilson")``, in a scratch venv on 2026-11-30) and are recorded here; the hand
computations are written out beside each case.
"""

from __future__ import annotations

import math

import pytest

from grounding_eval.analysis.stats import agreement, bootstrap_mean_ci, cohen_kappa, sign_flip_p, wilson


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
