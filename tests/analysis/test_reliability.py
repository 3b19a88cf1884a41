"""Issue 41, second half: answer length and the length-adjusted effect, the judge's test–retest and panel
agreement, the panel's rule, and planning — each checked against an independent computation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from grounding_eval.analysis.length import length_adjusted
from grounding_eval.analysis.planning import detectable_effect, items_needed, power
from grounding_eval.analysis.reliability import judge_reliability, panel_verdict
from grounding_eval.analysis.report_row import ReportRow, SecondOpinion
from grounding_eval.results_file import answer_length


class TestAnswerLength:
    """Characters are code points; words are runs of non-whitespace."""

    def test_counts(self) -> None:
        assert answer_length("Call 211 now.\n\tThen  legal aid — é") == (
            34,
            8,
        )  # "—" is a word: a run of non-whitespace
        assert answer_length("") == (0, 0)


class TestLengthAdjusted:
    """The intercept of the differences on the length differences, as SciPy and NumPy fit it."""

    @pytest.mark.parametrize("seed", [0, 1, 2, 3])
    def test_matches_linregress_and_lstsq(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        n = int(rng.integers(5, 40))
        words = rng.normal(0, 60, n).round()
        diffs = 0.2 + 0.001 * words + rng.normal(0, 0.2, n)
        fit = length_adjusted(diffs.tolist(), words.tolist())
        assert fit is not None and fit.n == n
        ref = stats.linregress(words / 100, diffs)
        assert fit.adjusted == pytest.approx(ref.intercept, abs=1e-12)
        assert fit.slope == pytest.approx(ref.slope, abs=1e-12)
        half = stats.t.ppf(0.975, n - 2) * ref.intercept_stderr
        assert (fit.ci_low, fit.ci_high) == pytest.approx(
            (ref.intercept - half, ref.intercept + half), abs=1e-12
        )
        p = 2 * stats.t.sf(abs(ref.intercept / ref.intercept_stderr), n - 2)
        assert fit.p_value == pytest.approx(p, rel=1e-9)
        design = np.column_stack([np.ones(n), words / 100])
        (a, b), *_ = np.linalg.lstsq(design, diffs, rcond=None)
        assert (fit.adjusted, fit.slope) == pytest.approx((a, b), abs=1e-10)

    def test_equal_length_differences_give_the_plain_mean(self) -> None:
        """Length differences of 0 on average: the intercept is the mean difference (no adjustment)."""
        fit = length_adjusted([0.1, 0.5, 0.3, 0.1], [-20, 20, -10, 10])
        assert fit is not None and fit.adjusted == pytest.approx(0.25) and fit.mean_length_diff == 0

    def test_undefined(self) -> None:
        assert length_adjusted([0.1, 0.2], [3, 4]) is None  # fewer than 3 items
        assert length_adjusted([0.1, 0.2, 0.4], [5, 5, 5]) is None  # no spread in length: no slope


class TestPanelVerdict:
    """Majority; a tie goes to the more severe verdict (lower criterion score)."""

    @pytest.mark.parametrize(
        ("votes", "negative", "expected"),
        [
            pytest.param(["Yes", "Yes", "No"], False, "Yes", id="majority"),
            pytest.param(["Yes", "No"], False, "No", id="two-judges-tie-harsher"),
            pytest.param(["Yes", "Partial"], False, "Partial", id="tie-partial-below-yes"),
            pytest.param(["Yes", "No"], True, "Yes", id="negative-criterion-yes-is-bad"),
            pytest.param(["Partial", "No"], True, "Partial", id="negative-partial-worse-than-no"),
            pytest.param(["Yes", "Partial", "No"], False, "No", id="three-way-tie"),
            pytest.param(["No", "No", "Yes", "Yes", "Partial"], False, "No", id="two-two-one"),
        ],
    )
    def test_rule(self, votes: list[str], negative: bool, expected: str) -> None:
        assert panel_verdict(votes, negative) == expected


def _row(query: str, condition: str, verdicts: dict[str, str], *opinions: SecondOpinion) -> ReportRow:
    keys = {"round": "3", "condition": condition, "provider": "m", "jurisdiction": "-", "topic": "-",
            "risk_tier": "-", "question_type": "-"}  # fmt: skip
    return ReportRow(keys=keys, passed=True, unscored=False, composite=None, judge=None, verifier=None,
                     safety_no=(), query_id=query, verdicts=verdicts, opinions=opinions)  # fmt: skip


def _kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa written out: (po − pe) / (1 − pe)."""
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in ("Yes", "Partial", "No"))
    return (po - pe) / (1 - pe)


class TestJudgeReliability:
    """Per-criterion agreement and kappa of the first and second asking, and of each panel pair."""

    def test_retest_and_panel(self) -> None:
        rng = np.random.default_rng(5)
        words = ["Yes", "Partial", "No"]
        rows, first, second, other = [], [], [], []
        for i in range(30):
            a = str(words[rng.integers(3)])
            b = a if rng.random() < 0.7 else str(words[rng.integers(3)])
            c = a if rng.random() < 0.5 else str(words[rng.integers(3)])
            retest = (SecondOpinion("retest", "j", True, {"clear": b}),) if i % 2 == 0 else ()
            panel = SecondOpinion("panel", "other", True, {"clear": c})
            rows.append(_row(f"q{i // 3}", ("C0", "C1", "C1.5")[i % 3], {"clear": a}, *retest, panel))
            if retest:
                first.append(a)
                second.append(b)
            other.append(c)
        found = judge_reliability(rows)
        assert found is not None
        (retest,) = found["retest"]["criteria"]
        assert retest["n"] == 15 and retest["items"] == len({f"q{i // 3}" for i in range(0, 30, 2)})
        assert retest["agreement"] == pytest.approx(
            sum(x == y for x, y in zip(first, second, strict=True)) / 15, abs=1e-4
        )
        assert retest["kappa"] == pytest.approx(_kappa(first, second), abs=1e-4)
        (pair,) = found["panel"]["pairs"]
        assert (pair["a"], pair["b"]) == ("judge", "other")
        (entry,) = pair["criteria"]
        assert entry["kappa"] == pytest.approx(_kappa([r.verdicts["clear"] for r in rows], other), abs=1e-4)
        low, high = entry["kappa_ci"]
        assert low <= entry["kappa"] <= high
        changed = sum(
            panel_verdict([r.verdicts["clear"], c], False) != r.verdicts["clear"]
            for r, c in zip(rows, other, strict=True)
        )
        assert found["panel"]["verdicts"]["changed"] == changed

    def test_an_unscored_asking_is_counted_apart(self) -> None:
        rows = [
            _row("a", "C0", {"x": "Yes"}, SecondOpinion("retest", "j", False, {})),
            _row("b", "C0", {"x": "No"}, SecondOpinion("retest", "j", True, {"x": "No"})),
            _row("c", "C0", {"x": "Yes"}, SecondOpinion("retest", "j", True, {"x": "Yes"})),
        ]
        found = judge_reliability(rows)
        assert found is not None and found["retest"]["unscored"] == 1
        assert found["retest"]["criteria"][0]["n"] == 2 and found["retest"]["criteria"][0]["agreement"] == 1.0

    def test_none_without_second_opinions(self) -> None:
        assert judge_reliability([_row("a", "C0", {"x": "Yes"})]) is None


def _simulated_power(effect: float, sd: float, n: int, alpha: float, studies: int = 20000) -> float:
    """The paired t-test run on simulated normal differences: the share of studies it rejects."""
    rng = np.random.default_rng(11)
    d = rng.normal(effect, sd, size=(studies, n))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    return float(np.mean(np.abs(t) > stats.t.ppf(1 - alpha / 2, n - 1)))


class TestPlanning:
    """Power of the paired t-test from the noncentral t, against simulation and textbook values."""

    @pytest.mark.parametrize(("effect", "sd", "n", "alpha"), [(0.3, 0.4, 10, 0.05), (0.2, 0.45, 40, 0.05 / 3),
                                                              (0.5, 0.3, 8, 0.05 / 9)])  # fmt: skip
    def test_power_matches_simulation(self, effect: float, sd: float, n: int, alpha: float) -> None:
        assert power(effect, sd, n, alpha) == pytest.approx(_simulated_power(effect, sd, n, alpha), abs=0.012)

    def test_textbook_sample_sizes(self) -> None:
        """One-sample (paired) t, two-sided α 0.05, power 0.80: d = 0.5 needs 34 items, d = 0.8 needs 15
        (Cohen 1988, Table 2.4.1's one-sample case; G*Power gives the same)."""
        assert items_needed(0.5, 1.0, 0.05, 0.8) == 34
        assert items_needed(0.8, 1.0, 0.05, 0.8) == 15

    @pytest.mark.parametrize(("effect", "alpha"), [(0.25, 0.05), (0.1, 0.05 / 9), (0.4, 0.01)])
    def test_items_needed_near_the_normal_formula(self, effect: float, alpha: float) -> None:
        """Guenther's (1981) correction of the normal approximation: n ≈ (z_α/2 + z_β)² / d² + z_α/2² / 2."""
        z = stats.norm.ppf(1 - alpha / 2)
        approx = (z + stats.norm.ppf(0.8)) ** 2 / effect**2 + z**2 / 2
        needed = items_needed(effect, 1.0, alpha, 0.8)
        assert needed is not None and abs(needed - math.ceil(approx)) <= 1
        assert power(effect, 1.0, needed, alpha) >= 0.8 > power(effect, 1.0, needed - 1, alpha)

    def test_detectable_effect_is_the_inverse(self) -> None:
        mde = detectable_effect(0.4, 10, 0.05 / 3)
        assert power(mde, 0.4, 10, 0.05 / 3) == pytest.approx(0.8, abs=1e-5)
        assert power(mde * 0.99, 0.4, 10, 0.05 / 3) < 0.8


class TestPlanCommand:
    """grounding-eval plan: a stated SD prints the plan; a missing input is one line naming the option."""

    def test_stated_sd(self, capsys: pytest.CaptureFixture[str]) -> None:
        from grounding_eval.cli import main

        assert (
            main(["plan", "--sd", "0.4", "--items", "10", "--target", "0.2", "--family", "9", "--json"]) == 0
        )
        (found,) = json.loads(capsys.readouterr().out)
        assert found["alpha_per_test"] == pytest.approx(0.05 / 9)
        assert found["items_needed"] == items_needed(0.2, 0.4, 0.05 / 9)
        assert found["detectable_effect"] == pytest.approx(detectable_effect(0.4, 10, 0.05 / 9), abs=1e-6)

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            ([], "plan: give a pilot results file (RESULTS_JSON) or --sd SD --items N"),
            (["--sd", "0.4"], "--sd: needs a positive SD and --items N"),
            (["--sd", "0.4", "--items", "10", "--power", "1.2"], "--power: 1.2 is out of range"),
        ],
    )
    def test_one_line_errors(self, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
        from grounding_eval.cli import main

        assert main(["plan", *args]) != 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
