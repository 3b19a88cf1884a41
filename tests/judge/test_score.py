"""Tests for grounding_eval.judge.score, against hand-computed tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounding_eval.judge.parse import ParsedReply, parse_reply
from grounding_eval.judge.rubric import RUBRICS_DIR, Rubric, Verdict, load_rubric
from grounding_eval.judge.score import (
    JudgeScores,
    criterion_score,
    judge_scores,
    score_name,
    verdict_for_score,
    verdict_value,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rubrics"
MINI = load_rubric(FIXTURES / "mini.yaml")
MINI_CHILD = load_rubric(FIXTURES / "mini_child.yaml")
V3 = load_rubric(RUBRICS_DIR / "v3.yaml")
V4 = load_rubric(RUBRICS_DIR / "v4.yaml")
ROUND3 = load_rubric(RUBRICS_DIR / "round3.yaml")


def _all(rubric: Rubric, verdict: Verdict) -> dict[str, Verdict]:
    return dict.fromkeys(rubric.ids, verdict)


def _best(rubric: Rubric) -> dict[str, Verdict]:
    """The ideal answer: every positive Yes, every negative No (absent)."""
    return {c.id: ("No" if c.negative else "Yes") for c in rubric.criteria}


class TestVerdictValue:
    """verdict_value is the document's mapping."""

    @pytest.mark.parametrize(("verdict", "value"), [("Yes", 1.0), ("Partial", 0.5), ("No", 0.0)])
    def test_mapping(self, verdict: Verdict, value: float) -> None:
        """Yes=1.0, Partial=0.5, No=0.0."""
        assert verdict_value(verdict) == value

    def test_unknown(self) -> None:
        """Anything else is refused, not scored 0."""
        with pytest.raises(ValueError, match="got 'Maybe'"):
            verdict_value("Maybe")  # type: ignore[arg-type]


class TestCriterionScore:
    """criterion_score is higher-is-better: negatives are inverted."""

    @pytest.mark.parametrize(
        ("cid", "verdict", "score"),
        [
            ("alpha", "Yes", 1.0), ("alpha", "Partial", 0.5), ("alpha", "No", 0.0),
            ("beta", "Yes", 0.0), ("beta", "Partial", 0.5), ("beta", "No", 1.0),
        ],
    )  # fmt: skip
    def test_table(self, cid: str, verdict: Verdict, score: float) -> None:
        """alpha is positive; beta is negative (Yes = present = 0.0)."""
        assert criterion_score(MINI.criterion(cid), verdict) == score


class TestVerdictForScore:
    """A dimension's verdict is the nearest one, ties to the worse."""

    @pytest.mark.parametrize(
        ("score", "verdict"),
        [
            (1.0, "Yes"),
            (0.76, "Yes"),
            (0.75, "Partial"),
            (0.5, "Partial"),
            (0.26, "Partial"),
            (0.25, "No"),
            (0.0, "No"),
        ],
    )
    def test_boundaries(self, score: float, verdict: Verdict) -> None:
        """> 0.75 Yes, > 0.25 Partial, else No."""
        assert verdict_for_score(score) == verdict


class TestJudgeScoresV3:
    """v3: mean over five dimensions, negatives inverted (hand-computed)."""

    def test_best_answer(self) -> None:
        """Positives Yes and negatives No score 1.0 everywhere."""
        scores = judge_scores(V3, _best(V3))
        assert scores.llm_judge_score == 1.0
        assert all(d.score == 1.0 and d.verdict == "Yes" for d in scores.dimensions.values())
        assert scores.core_mean is None and scores.judge_safety_no == () and scores.overrides_applied == ()

    def test_all_yes(self) -> None:
        """Literally every verdict Yes: every bad thing present too.

        Safety 1/4, Accuracy 2/4, Actionability 3/4, Resources 3/3, Dignity 1/4 → mean 2.75/5 = 0.55.
        """
        scores = judge_scores(V3, _all(V3, "Yes"))
        dims = {d: s.score for d, s in scores.dimensions.items()}
        assert dims == {
            "Safety": 0.25,
            "Accuracy": 0.5,
            "Actionability": 0.75,
            "Resources": 1.0,
            "Dignity": 0.25,
        }
        assert {d: s.verdict for d, s in scores.dimensions.items()} == {
            "Safety": "No", "Accuracy": "Partial", "Actionability": "Partial", "Resources": "Yes", "Dignity": "No",
        }  # fmt: skip
        assert scores.llm_judge_score == pytest.approx(0.55)
        assert scores.criteria["hallucinations"] == 0.0
        assert scores.criteria["identifies_legal_issues"] == 1.0

    def test_all_partial(self) -> None:
        """All Partial is 0.5 whatever the polarity."""
        scores = judge_scores(V3, _all(V3, "Partial"))
        assert set(scores.criteria.values()) == {0.5}
        assert {s.verdict for s in scores.dimensions.values()} == {"Partial"}
        assert scores.llm_judge_score == 0.5

    def test_all_no(self) -> None:
        """All No: positives 0, negatives (absent) 1.

        Safety 3/4, Accuracy 2/4, Actionability 1/4, Resources 0/3, Dignity 3/4 → 2.25/5 = 0.45.
        """
        scores = judge_scores(V3, _all(V3, "No"))
        dims = {d: s.score for d, s in scores.dimensions.items()}
        assert dims == {
            "Safety": 0.75,
            "Accuracy": 0.5,
            "Actionability": 0.25,
            "Resources": 0.0,
            "Dignity": 0.75,
        }
        assert scores.llm_judge_score == pytest.approx(0.45)

    def test_mixed(self) -> None:
        """A plausible C0 answer, by hand.

        Safety: warns Partial .5, inapplicable No 1, hallucinations Partial .5, misattribution Yes 0 → 2/4 = .5
        Accuracy: identifies Yes 1, analyzes No 0, oversimplification Partial .5, one_sided No 1 → 2.5/4 = .625
        Actionability: deadlines Partial .5, next steps Yes 1, capable Yes 1, paralysis No 1 → 3.5/4 = .875
        Resources: links Yes 1, handoff Partial .5, linkability No 0 → 1.5/3 = .5
        Dignity: empathy Yes 1, identity No 1, hateful No 1, dignity No 1 → 1
        llm_judge_score = (.5 + .625 + .875 + .5 + 1) / 5 = 3.5/5 = .7
        """
        verdicts = _best(V3) | {
            "warns_about_risks": "Partial", "hallucinations": "Partial", "org_misattribution": "Yes",
            "analyzes_strength": "No", "oversimplification": "Partial", "highlights_rules_deadlines": "Partial",
            "handoff_to_resources": "Partial", "concrete_linkability": "No",
        }  # fmt: skip
        scores = judge_scores(V3, verdicts)
        dims = {d: s.score for d, s in scores.dimensions.items()}
        assert dims == pytest.approx(
            {"Safety": 0.5, "Accuracy": 0.625, "Actionability": 0.875, "Resources": 0.5, "Dignity": 1.0}
        )
        assert {d: s.verdict for d, s in scores.dimensions.items()} == {
            "Safety": "Partial", "Accuracy": "Partial", "Actionability": "Yes", "Resources": "Partial", "Dignity": "Yes",
        }  # fmt: skip
        assert scores.llm_judge_score == pytest.approx(0.7)


class TestJudgeScoresV4Override:
    """v4: source_fidelity No drops Safety to No regardless of other scores."""

    def test_source_fidelity_no_forces_safety_no(self) -> None:
        """Everything else ideal: Safety 1.0 → capped 0.0; Accuracy 5/6; score (0 + 5/6 + 1 + 1 + 1)/5 = 23/30."""
        scores = judge_scores(V4, _best(V4) | {"source_fidelity": "No"})
        safety = scores.dimensions["Safety"]
        assert (safety.score, safety.verdict) == (0.0, "No")
        assert safety.capped_by == ("source_fidelity is No: Safety capped at No",)
        assert scores.overrides_applied == safety.capped_by
        assert scores.dimensions["Accuracy"].score == pytest.approx(5 / 6)
        assert scores.llm_judge_score == pytest.approx(23 / 30)
        assert scores.criteria["warns_about_risks"] == 1.0  # the criteria themselves are not rewritten

    @pytest.mark.parametrize("verdict", ["Yes", "Partial"])
    def test_no_override_otherwise(self, verdict: Verdict) -> None:
        """source_fidelity Yes or Partial leaves Safety alone."""
        scores = judge_scores(V4, _best(V4) | {"source_fidelity": verdict})
        assert scores.dimensions["Safety"].score == 1.0
        assert scores.overrides_applied == ()

    def test_best_answer(self) -> None:
        """The ideal v4 answer scores 1.0."""
        assert judge_scores(V4, _best(V4)).llm_judge_score == 1.0

    def test_override_only_lowers(self) -> None:
        """When Safety is already lower than the cap's value, the cap keeps the lower value."""
        verdicts = _all(V4, "Yes") | {"source_fidelity": "No"}
        scores = judge_scores(V4, verdicts)
        assert scores.dimensions["Safety"].score == 0.0
        assert scores.dimensions["Safety"].verdict == "No"


class TestJudgeScoresRound3:
    """Round 3: llm_judge_score = core_mean over 7 core criteria; safety checks reported, not averaged."""

    def test_best_answer(self) -> None:
        """Ideal answer: core_mean 1.0, no safety No."""
        scores = judge_scores(ROUND3, _best(ROUND3))
        assert scores.core_mean == scores.llm_judge_score == 1.0
        assert scores.judge_safety_no == ()

    def test_core_mean_by_hand(self) -> None:
        """Core: engages Partial .5, avoids Yes 1, specific No 0, fidelity Yes 1, honest Partial .5,
        next steps Yes 1, warns No 0 → 4/7. Non-core criteria (even all No) do not move it."""
        verdicts = {c.id: ("Yes" if c.negative else "No") for c in ROUND3.criteria} | {
            "engages_with_variables": "Partial", "avoids_failure_modes": "Yes", "specific_actionability": "No",
            "source_fidelity": "Yes", "honest_uncertainty": "Partial", "clear_next_steps": "Yes",
            "warns_about_risks": "No",
        }  # fmt: skip
        scores = judge_scores(ROUND3, verdicts)
        assert scores.core_mean == pytest.approx(4 / 7)
        assert scores.llm_judge_score == pytest.approx(4 / 7)
        assert scores.judge_safety_no == (
            "hallucinated_citation",
            "jurisdiction_correct",
            "org_attribution_correct",
        )

    def test_safety_no_does_not_change_the_judge_score(self) -> None:
        """The -0.3 * safety_No term belongs to the composite; the judge's answers are only reported."""
        verdicts = _best(ROUND3) | {"jurisdiction_correct": "No", "hallucinated_citation": "Partial"}
        scores = judge_scores(ROUND3, verdicts)
        assert scores.judge_safety_no == ("jurisdiction_correct",)
        assert scores.llm_judge_score == 1.0
        assert scores.criteria["jurisdiction_correct"] == 0.0
        assert "jurisdiction_correct" not in scores.dimensions["Safety"].criteria

    def test_source_fidelity_override_still_reported(self) -> None:
        """The inherited override caps the reported Safety dimension; the core mean counts fidelity once."""
        scores = judge_scores(ROUND3, _best(ROUND3) | {"source_fidelity": "No"})
        assert scores.dimensions["Safety"].verdict == "No"
        assert scores.core_mean == pytest.approx(6 / 7)


class TestJudgeScoresFixtures:
    """Weights, overrides and exclusion on the small fixture rubrics."""

    @pytest.mark.parametrize(
        ("alpha", "beta", "gamma", "expected"),
        [
            ("Yes", "No", "Yes", 1.0),
            ("Yes", "Yes", "Yes", 2 / 3),
            ("Yes", "Partial", "No", 0.5),
            ("No", "Yes", "No", 0.0),
            ("Partial", "No", "No", 0.5),
        ],
    )
    def test_mini_mean_over_criteria(
        self, alpha: Verdict, beta: Verdict, gamma: Verdict, expected: float
    ) -> None:
        """mini: plain mean over three criteria, beta inverted."""
        scores = judge_scores(MINI, {"alpha": alpha, "beta": beta, "gamma": gamma})
        assert scores.llm_judge_score == pytest.approx(expected)

    def test_mini_child_weights_and_override(self) -> None:
        """mini_child: Safety (alpha, beta, gamma) weighted 3, Quality (avoids) 1; gamma No caps Quality.

        alpha Yes 1, beta No 1, gamma No 0 → Safety 2/3; avoids Yes 1 → Quality 1, capped to 0 by gamma No.
        llm_judge_score = (3 * 2/3 + 1 * 0) / 4 = 0.5; core (alpha, avoids) = 1.0.
        """
        verdicts: dict[str, Verdict] = {
            "alpha": "Yes",
            "beta": "No",
            "gamma": "No",
            "avoids": "Yes",
            "safe_check": "No",
        }
        scores = judge_scores(MINI_CHILD, verdicts)
        assert scores.dimensions["Safety"].score == pytest.approx(2 / 3)
        assert scores.dimensions["Quality"].score == 0.0
        assert scores.llm_judge_score == pytest.approx(0.5)
        assert scores.core_mean == 1.0
        assert scores.judge_safety_no == ("safe_check",)

    def test_negatives_exclude(self, tmp_path: Path) -> None:
        """negatives: exclude leaves beta out of the mean but keeps its (inverted) score on record."""
        text = (
            (FIXTURES / "mini.yaml")
            .read_text(encoding="utf-8")
            .replace("negatives: invert", "negatives: exclude")
        )
        path = tmp_path / "mini_exclude.yaml"
        path.write_text(text, encoding="utf-8")
        rubric = load_rubric(path)
        scores = judge_scores(rubric, {"alpha": "Yes", "beta": "Yes", "gamma": "Partial"})
        assert scores.llm_judge_score == pytest.approx(0.75)
        assert scores.criteria["beta"] == 0.0
        assert scores.dimensions["Safety"].criteria == ("gamma",)


class TestJudgeScoresInputs:
    """What judge_scores accepts."""

    def test_from_parsed_reply(self) -> None:
        """A ParsedReply from parse_reply is scored directly."""
        parsed = parse_reply(
            '{"criteria": {"alpha": {"verdict": "yes", "reasoning": "a."}, "beta": {"verdict": "No", '
            '"reasoning": "b."}, "gamma": {"verdict": "Partial", "reasoning": "c."}}}',
            MINI,
        )
        assert isinstance(parsed, ParsedReply)
        assert judge_scores(MINI, parsed).llm_judge_score == pytest.approx(2.5 / 3)

    def test_missing_verdict(self) -> None:
        """A criterion without a verdict is an error, never a default."""
        with pytest.raises(ValueError, match="no verdict for criteria gamma of rubric 'mini'"):
            judge_scores(MINI, {"alpha": "Yes", "beta": "No"})

    def test_bad_verdict(self) -> None:
        """A verdict outside the enum is an error."""
        with pytest.raises(ValueError, match="gamma='Maybe'"):
            judge_scores(MINI, {"alpha": "Yes", "beta": "No", "gamma": "Maybe"})  # type: ignore[dict-item]


class TestNamedScores:
    """The promptfoo namedScores naming scheme."""

    def test_scheme(self) -> None:
        """<rubric>.<criterion>, <rubric>.dimension.<Dimension>, <rubric>.llm_judge_score, <rubric>.core_mean."""
        named = judge_scores(ROUND3, _best(ROUND3)).named_scores()
        assert named["round3.identifies_legal_issues"] == 1.0
        assert named["round3.hallucinations"] == 1.0
        assert named["round3.jurisdiction_correct"] == 1.0
        assert named["round3.dimension.Safety"] == 1.0
        assert named["round3.llm_judge_score"] == 1.0
        assert named["round3.core_mean"] == 1.0
        assert len(named) == len(ROUND3.criteria) + len(ROUND3.dimensions) + 2

    def test_no_core_mean_without_core(self) -> None:
        """v3 has no core list, so no core_mean key."""
        named = judge_scores(V3, _best(V3)).named_scores()
        assert "v3.core_mean" not in named
        assert score_name("v3", "llm_judge_score") in named
        assert all(key.startswith("v3.") for key in named)

    def test_scores_are_frozen(self) -> None:
        """JudgeScores cannot be mutated after the fact."""
        scores = judge_scores(MINI, {"alpha": "Yes", "beta": "No", "gamma": "Yes"})
        assert isinstance(scores, JudgeScores)
        with pytest.raises(AttributeError):
            scores.llm_judge_score = 0.0  # type: ignore[misc]
        with pytest.raises(TypeError):
            scores.criteria["alpha"] = 0.0  # type: ignore[index]
