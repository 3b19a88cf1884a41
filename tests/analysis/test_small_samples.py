"""Statistics at the study's own sizes (issue 41), each method against an independent implementation.

* The interval the sign-flip test inverts: every shift SciPy's ``permutation_test`` does not reject on a
  fine grid, exactly; its agreement with the reported p; its coverage at 8 and 10 items.
* Holm's adjustment against the step-down rejection rule written out; exact McNemar against the exact
  sign-flip test and ``scipy.stats.binomtest``; Wilson bounds against SciPy's.
* The item as the unit: repeating every row three times leaves pass-rate and composite intervals as
  they were (they narrowed before); calibration's bootstrap draws a query's rows together.
* The docs-QA table per model: a second, failing model leaves the first model's seed table exact.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats  # type: ignore[import-untyped]

from grounding_eval.analysis.effects import PASS, paired_effects, parse_primary, pass_rates
from grounding_eval.analysis.report_data import ReportData
from grounding_eval.analysis.stats import (
    Graded,
    holm,
    item_agreement,
    mcnemar_exact,
    rows_to_show,
    sign_flip_intervals,
    sign_flip_p,
    sign_flip_pvalues,
    wilson,
    wilson_bounds,
)
from grounding_eval.analysis.summary import load_rows
from grounding_eval.cli import main
from grounding_eval.errors import DataError
from tests.analysis.rows import row, write
from tests.analysis.test_question_types import SEED_TABLE, _docs_row, _seed_rows

ALPHA = 0.05


def _scipy_p(d: np.ndarray) -> float:
    """SciPy's exact two-sided paired sign-flip p of the mean of ``d``."""
    found = stats.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", vectorized=True,
        n_resamples=np.inf, alternative="two-sided",
    )  # fmt: skip
    return min(1.0, float(found.pvalue))


class TestSignFlipInterval:
    """The interval is every shift δ the sign-flip test does not reject on d − δ."""

    @pytest.mark.parametrize(
        "d",
        [
            [0.4, -0.1, 0.6, 0.3, 0.9, 0.05, -0.2, 0.5],
            [1.0, 0.0, 1.0, 1.0, -1.0, 0.0, 1.0, 0.0, 1.0, 0.0],  # pass/fail differences: ties
            [0.0714, 0.2143, -0.1429, 0.5, 0.2857, 0.0, 0.0714, 0.3571, -0.0714],  # a composite's grid
            [2.3, 0.1, 0.2, 0.15, 0.05, 0.3, 0.1, 0.25, 0.2, 0.0, 0.1],  # skewed, 11 items
        ],
        ids=["continuous-8", "pass-fail-10", "composite-9", "skewed-11"],
    )
    def test_equals_scipy_inverted_on_a_grid(self, d: list[float]) -> None:
        x = np.asarray(d)
        (ci,) = sign_flip_intervals(x[:, None], permutations=9999, seed=13)
        assert ci is not None
        low, high = ci
        span = x.max() - x.min()
        for delta in np.linspace(x.min() - 0.1 * span, x.max() + 0.1 * span, 121):
            if min(abs(delta - low), abs(delta - high)) < 1e-9:
                continue  # the ends themselves: a tie SciPy's rounding may count either way
            accepted = _scipy_p(x - delta) > ALPHA
            assert accepted == (low <= delta <= high), (delta, ci)

    def test_excludes_zero_exactly_when_p_is_at_most_alpha(self) -> None:
        """Exact (n ≤ 13) and drawn (more items): the interval and the reported p never disagree."""
        rng = np.random.default_rng(41)
        grid = np.array([-1.0, -0.5, 0.0, 0.0, 1 / 3, 0.5, 1.0])
        for trial in range(120):
            n = int(rng.integers(6, 31))
            d = rng.choice(grid, size=n) + rng.choice([0.0, 0.25])
            (ci,) = sign_flip_intervals(d[:, None], permutations=999, seed=trial)
            (p,) = sign_flip_pvalues(d[:, None], permutations=999, seed=trial)
            assert p is not None
            excluded = ci is not None and (ci[0] > 0 or ci[1] < 0)
            assert excluded == (p <= ALPHA), (d.tolist(), ci, p)

    def test_drawn_patterns_approach_the_exact_interval(self) -> None:
        d = np.array([0.3, -0.1, 0.5, 0.2, 0.0, 0.7, -0.3, 0.4, 0.1, 0.6, 0.25, -0.05])  # 12 items
        (exact,) = sign_flip_intervals(d[:, None], permutations=9999, seed=1)  # 4,096 patterns ≤ 9,999
        (drawn,) = sign_flip_intervals(d[:, None], permutations=3999, seed=1)  # 3,999 drawn
        assert exact is not None and drawn is not None
        assert drawn == pytest.approx(exact, abs=0.03)

    def test_unbounded_when_the_test_cannot_reject(self) -> None:
        # Five items: the least two-sided p is 2/32 > 0.05, so no shift is ever rejected.
        assert sign_flip_intervals(
            np.array([[0.1], [0.5], [0.9], [0.2], [0.4]]), permutations=9999, seed=1
        ) == [None]

    def test_a_column_with_unscored_items_is_its_scored_items_interval(self) -> None:
        values = np.array(
            [[0.1, 0.1], [0.5, 0.5], [0.9, 9.0], [0.2, 0.2], [0.4, 0.4], [0.3, 0.3], [0.6, 0.6]]
        )
        scored = np.ones_like(values, dtype=bool)
        scored[2, 1] = False  # 9.0 is not a value of column 1
        own = np.delete(values[:, 1], 2)[:, None]
        got = sign_flip_intervals(values, scored, permutations=9999, seed=1)
        assert got[1] == sign_flip_intervals(own, permutations=9999, seed=1)[0]

    def test_drawn_column_with_unscored_items_agrees_with_its_p(self) -> None:
        rng = np.random.default_rng(3)
        values = rng.normal(0.15, 0.4, size=(40, 3))
        scored = rng.random((40, 3)) > 0.25
        cis = sign_flip_intervals(values, scored, permutations=1999, seed=5)
        ps = sign_flip_pvalues(values, scored, permutations=1999, seed=5)
        for j in range(3):
            mean = values[scored[:, j], j].mean()
            ci, p = cis[j], ps[j]
            assert ci is not None and p is not None and ci[0] <= mean <= ci[1]
            assert (ci[0] > 0 or ci[1] < 0) == (p <= ALPHA)


class TestCoverage:
    """The held-out check in small: 1,000 studies with a known effect at 8 and 10 items, every sign
    pattern counted (the benchmark runs more shapes and sizes: benchmarks/interval_coverage.py --check)."""

    @pytest.mark.parametrize("n", [8, 10])
    @pytest.mark.parametrize("shape", ["normal", "composite"])
    def test_covers_at_least_93_percent(self, shape: str, n: int) -> None:
        from benchmarks.interval_coverage import DISTRIBUTIONS, true_effect

        draw, _ = DISTRIBUTIONS[shape]
        effect = true_effect(shape)
        d = draw(np.random.default_rng([7, n]), (n, 1000))
        cis = sign_flip_intervals(d, permutations=9999, seed=13)
        covered = [ci is None or ci[0] - 1e-9 <= effect <= ci[1] + 1e-9 for ci in cis]
        assert np.mean(covered) >= 0.93

    def test_the_benchmarks_bca_is_scipys(self) -> None:
        """The benchmark's BCa and percentile intervals (vectorized over studies) against
        scipy.stats.bootstrap on one study, up to the Monte-Carlo error of 4,000 resamples."""
        from benchmarks.interval_coverage import bootstrap_family

        d = np.array([0.05, 0.4, -0.1, 0.6, 0.3, 0.9, 0.2, -0.2, 0.35, 0.1])
        ours = bootstrap_family(d[:, None])
        for method, name in (("BCa", "bca"), ("percentile", "percentile")):
            ref = stats.bootstrap(
                (d,), np.mean, method=method, n_resamples=20000, random_state=3
            ).confidence_interval
            assert ours[name][:, 0] == pytest.approx([ref.low, ref.high], abs=0.03), method


class TestHolm:
    def test_hand_case(self) -> None:
        # Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → running max 0.06.
        assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])

    def test_adjusted_p_at_most_alpha_is_holms_rejection(self) -> None:
        """Holm 1979's procedure written out: reject H_(1), H_(2), … while p_(i) ≤ α / (m − i + 1)."""
        rng = np.random.default_rng(9)
        for _ in range(200):
            p = rng.choice([rng.random(), rng.random() * 0.05, 0.01, 0.02], size=int(rng.integers(1, 12)))
            adjusted = holm(p.tolist())
            for alpha in (0.01, 0.05, 0.1):
                rejected = set()
                for i, k in enumerate(np.argsort(p, kind="stable")):
                    if p[k] > alpha / (len(p) - i):
                        break
                    rejected.add(int(k))
                assert {k for k, a in enumerate(adjusted) if a <= alpha} == rejected


class TestPairedPassRate:
    def test_mcnemar_is_the_exact_sign_flip_and_the_binomial_test(self) -> None:
        for up, down, zeros in ((6, 1, 1), (5, 0, 3), (3, 3, 4), (0, 0, 8), (9, 2, 2)):
            d = [1.0] * up + [-1.0] * down + [0.0] * zeros
            p = mcnemar_exact(up, down)
            assert p == pytest.approx(sign_flip_p(d, permutations=99999, seed=1))
            if up + down:
                assert p == pytest.approx(stats.binomtest(up, up + down).pvalue)
        assert mcnemar_exact(6, 1) == pytest.approx(16 / 128)  # 2 · (1 + 7) / 2**7

    def test_report_pairs_items_and_counts_discordant(self, tmp_path: Path) -> None:
        # Items pass under C0 / C1: i1 0/1, i2 0/1, i3 1/1, i4 1/0, i5 0/0, i6 0/1, i7 0/1, i8 0/1:
        # 5 pass under C1 only, 1 under C0 only.
        passes = {"i1": (0, 1), "i2": (0, 1), "i3": (1, 1), "i4": (1, 0), "i5": (0, 0), "i6": (0, 1),
                  "i7": (0, 1), "i8": (0, 1)}  # fmt: skip
        rows = [row(i, c, composite=float(v), success=bool(v)) for i, pair in passes.items()
                for c, v in zip(("C0", "C1"), pair, strict=True)]  # fmt: skip
        (effect,) = [
            e for e in paired_effects(load_rows(write(tmp_path / "r.json", rows))) if e.metric == PASS
        ]
        assert (effect.test, effect.discordant, effect.n) == ("exact McNemar", (5, 1), 8)
        assert effect.mean_diff == pytest.approx(4 / 8)
        assert effect.p_value == pytest.approx(stats.binomtest(5, 6).pvalue)

    def test_fractional_item_rates_take_the_sign_flip_test(self, tmp_path: Path) -> None:
        rows = [row(f"i{k}", "C0", composite=0.0, success=False) for k in range(6)]
        rows += [row(f"i{k}", "C1", composite=1.0, success=k % 2 == 0) for k in range(6) for _ in range(2)]
        rows.append(row("i0", "C1", composite=1.0, success=False))  # i0 under C1: 2 of 3 rows pass
        (effect,) = [
            e for e in paired_effects(load_rows(write(tmp_path / "r.json", rows))) if e.metric == PASS
        ]
        assert effect.test == "sign-flip" and effect.discordant is None
        assert effect.mean_diff == pytest.approx((2 / 3 + 1 + 1) / 6)


def _tripled(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every row three times (promptfoo --repeat 3 with the same answers and verdicts)."""
    out = []
    for r in rows:
        for k in range(3):
            out.append({**r, "id": f"{r['id']}~{k}"})
    return out


class TestItemIsTheUnit:
    """--repeat 3 adds no item: no interval may narrow (before issue 41 C1's went [0.41, 0.93] → [0.55, 0.88])."""

    def _rows(self) -> list[dict[str, Any]]:
        values = [0.9, 0.7, 0.2, 0.8, 0.95, 0.6, 0.3, 0.75]
        return [row(f"i{k}", "C1", composite=v, success=v >= 0.5) for k, v in enumerate(values)]

    def test_pass_rate_interval(self, tmp_path: Path) -> None:
        once = pass_rates(load_rows(write(tmp_path / "a.json", self._rows())))
        thrice = pass_rates(load_rows(write(tmp_path / "b.json", _tripled(self._rows()))))
        assert (once[0]["ci_low"], once[0]["ci_high"]) == pytest.approx(wilson(6, 8))
        assert (thrice[0]["ci_low"], thrice[0]["ci_high"]) == pytest.approx(
            (once[0]["ci_low"], once[0]["ci_high"])
        )
        assert (thrice[0]["n"], thrice[0]["items"]) == (24, 8)

    def test_composite_interval(self, tmp_path: Path) -> None:
        once = ReportData(load_rows(write(tmp_path / "a.json", self._rows()))).composite_ci
        thrice = ReportData(load_rows(write(tmp_path / "b.json", _tripled(self._rows())))).composite_ci
        assert once and thrice.keys() == once.keys()
        assert all(thrice[k] == pytest.approx(once[k], abs=1e-12) for k in once)

    def test_wilson_bounds(self) -> None:
        for passed, n in ((6, 8), (0, 10), (10, 10), (19, 20)):
            assert wilson_bounds(passed, n) == pytest.approx(wilson(passed, n))
            one_sided = wilson_bounds(passed, n, 0.95, sided=1)
            ref = stats.binomtest(passed, n).proportion_ci(confidence_level=0.90, method="wilson")
            assert one_sided == pytest.approx((ref.low, ref.high))  # one-sided 95 % = two-sided 90 %

    def test_rows_to_show(self) -> None:
        for share in (0.92, 0.95, 0.99, 1.0):
            m = rows_to_show(share, 0.90)
            assert m is not None
            low = wilson_bounds(share * m, m, sided=1)
            before = wilson_bounds(share * (m - 1), m - 1, sided=1) if m > 1 else None
            assert low is not None and low[0] >= 0.90 and (before is None or before[0] < 0.90)
        assert rows_to_show(0.9, 0.9) is None and rows_to_show(0.85, 0.9) is None
        assert rows_to_show(1.0, 0.9) == 25  # n / (n + z²) ≥ 0.9 with z = 1.645: n ≥ 9·2.706 = 24.35

    def test_calibration_draws_a_querys_rows_together(self) -> None:
        """item_agreement with rows nested in items equals a naive bootstrap over items written plainly."""
        # Four items; items 0 and 2 have two rows (two conditions) each. Per row: (person, judge) codes.
        rows = [(0, [(1, 1)]), (0, [(0, 1)]), (1, [(1, 1)]), (2, [(0, 0)]), (2, [(1, 0)]), (3, [(1, 1)])]
        graded = [Graded(item, "c", h, j) for item, pairs in rows for h, j in pairs]
        agree = [h == j for _, pairs in rows for h, j in pairs]
        owner = [item for item, _ in rows]
        got = item_agreement(graded, items=4, categories={"c": 2}, row_agree=agree, row_items=owner,
                             resamples=2000, seed=3)  # fmt: skip
        idx = np.random.default_rng(3).integers(0, 4, size=(2000, 4))
        per_item_agree = np.bincount(owner, weights=agree, minlength=4)
        per_item_n = np.bincount(owner, minlength=4)
        shares = per_item_agree[idx].sum(axis=1) / per_item_n[idx].sum(axis=1)
        low, high = np.percentile(shares, [2.5, 97.5])
        assert got.criteria[0].agreement_ci == pytest.approx((low, high))
        assert got.rows_share_ci == pytest.approx((low, high))
        assert (got.rows_compared, got.rows_agreeing) == (6, 4)


class TestPrimaryAndFamilies:
    def _results(self, tmp_path: Path, **extra: Any) -> Path:
        rng = np.random.default_rng(2)
        rows = []
        for provider in ("model-a", "model-b"):
            for k in range(10):
                base = float(rng.random())
                for c, lift in (("C0", 0.0), ("C1", 0.1), ("C1.5", 0.3)):
                    r = row(f"i{k}", c, composite=min(1.0, base + lift), provider=provider)
                    r["testCase"]["metadata"].update(extra)
                    rows.append(r)
        return write(tmp_path / "r.json", rows)

    def test_cli_primary_first_in_a_family_of_its_own(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        assert (
            main(
                [
                    "report",
                    str(self._results(tmp_path)),
                    "--effects",
                    "--json",
                    "--primary",
                    "composite:C1.5-C0",
                ]
            )
            == 0
        )
        entries = json.loads(capsys.readouterr().out)
        assert [(e["provider"], e["primary"]) for e in entries[:2]] == [("model-a", True), ("model-b", True)]
        assert not any(e["primary"] for e in entries[2:])
        primary = [e["p_value"] for e in entries[:2]]
        assert [e["p_holm"] for e in entries[:2]] == pytest.approx(holm(primary), abs=1e-6)
        assert {e["family"] for e in entries[:2]} == {"round 3 · primary (composite: C1.5 − C0)"}
        # The rest of the composite comparisons: 2 pairs × 2 models, one family.
        rest = [e for e in entries if e["metric"] == "composite" and not e["primary"]]
        assert len(rest) == 4 and {e["family"] for e in rest} == {"round 3 · composite"}
        assert [e["p_holm"] for e in rest] == pytest.approx(holm([e["p_value"] for e in rest]), abs=1e-6)
        assert all(e["p_holm"] >= e["p_value"] for e in entries if e["p_value"] is not None)

    def test_declared_in_the_tests_metadata(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = self._results(tmp_path, primary_endpoint="composite: C1 − C0")
        assert main(["report", str(path), "--effects"]) == 0
        out = capsys.readouterr().out
        assert "Primary endpoint: composite: C1 − C0, every model" in out
        first = out.split("Primary endpoint:")[1].splitlines()[2]
        assert "C1 − C0" in first and "composite *" in first

    @pytest.mark.parametrize("text", ["composite", "composite:C1.5", ":C1-C0", "composite:C1-C0-C1.5"])
    def test_a_malformed_primary_is_one_line(self, text: str) -> None:
        with pytest.raises(DataError, match="is not METRIC:TO-FROM"):
            parse_primary(text)


class TestQuestionTypesPerModel:
    def _two_models(self) -> list[dict[str, Any]]:
        failing = []
        for r in _seed_rows():
            r = _docs_row(int(r["vars"]["query_id"][1:]), r["testCase"]["metadata"]["question_type"], False)
            r["provider"] = {"id": "openai:chat:model-b", "label": "model-b"}
            r["id"] += "-b"
            failing.append(r)
        return [*_seed_rows(), *failing]

    def test_a_second_failing_model_leaves_the_seed_table(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = write(tmp_path / "docs.json", self._two_models())
        assert main(["report", str(path), "--by", "question_type"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("Model model-a\n" + SEED_TABLE + "\n\nModel model-b\n")
        assert "| Direct lookup | 0% | 20 |" in out

    def test_json_per_model(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = write(tmp_path / "docs.json", self._two_models())
        assert main(["report", str(path), "--by", "question_type", "--json"]) == 0
        entries = json.loads(capsys.readouterr().out)
        first = [
            (e["question_type"], e["scored"], e["passed"]) for e in entries if e["provider"] == "model-a"
        ]
        assert first == [("direct-lookup", 20, 19), ("multi-section", 12, 9), ("reworded", 10, 6),
                         ("out-of-scope", 8, 4), ("overall", 50, 38)]  # fmt: skip
        assert math.isclose(entries[0]["ci_low"], 0.7638688065532577)


class TestHtml:
    def test_effects_show_holm_family_and_the_primary_endpoint(self, tmp_path: Path) -> None:
        path = TestPrimaryAndFamilies()._results(tmp_path, primary_endpoint="composite:C1.5-C0")
        assert main(["report", str(path), "--html", str(tmp_path / "r.html")]) == 0
        page = (tmp_path / "r.html").read_text(encoding="utf-8")
        assert "<th>p Holm</th>" in page and "<th>family</th>" in page
        assert "Primary endpoint: composite: C1.5 − C0, every model" in page
        assert page.count("composite (primary)") == 4  # two models, in the headline and the full table

    def test_docs_qa_tables_per_model(self, tmp_path: Path) -> None:
        path = write(tmp_path / "docs.json", TestQuestionTypesPerModel()._two_models())
        assert main(["report", str(path), "--html", str(tmp_path / "r.html")]) == 0
        page = (tmp_path / "r.html").read_text(encoding="utf-8")
        section = page.split('<section id="docsqa">')[1].split("</section>")[0]
        assert "<h3>Model model-a</h3>" in section and "<h3>Model model-b</h3>" in section
        assert section.count("<figure>") == 2
