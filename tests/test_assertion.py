"""The promptfoo assertion: always a GradingResult with a reason, whatever the output or the config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.entry_points import load_entry_point
from tests.outcomes import unscored_reason
from tests.scores import row_scores

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "verifier"
CONFIG = {
    "allowlist": str(FIX / "allowlist.txt"),
    "orgs": str(FIX / "orgs.yaml"),
    "liveness": "offline",
    "liveness_snapshot": str(FIX / "liveness_snapshot.csv"),
}
SOURCE = "The lessor may not require the tenant to vacate the covered dwelling unit before 30 days."


get_assert: Callable[[Any, Any], dict[str, Any]] = load_entry_point("verifier")


def _context(**overrides: Any) -> dict[str, Any]:
    context: dict[str, Any] = {
        "vars": {"jurisdiction": "IL", "jkb_full_content": SOURCE},
        "prompt": f"Authoritative source articles:\n{SOURCE}\nUser question: ...",
        "config": dict(CONFIG),
        "test": {},
    }
    context.update(overrides)
    return context


def _is_grading_result(result: Any) -> bool:
    return (
        isinstance(result, dict)
        and isinstance(result.get("pass"), bool)
        and isinstance(result.get("score"), float | int)
        and 0 <= result["score"] <= 1
        and isinstance(result.get("reason"), str)
        and result["reason"] != ""
    )


class TestGradingResult:
    """A normal answer gets every named score and a reason listing each finding."""

    def test_named_scores_and_components(self) -> None:
        answer = 'Call Legal Aid Chicago at (312) 341-1070. The law says "the lessor may not require the tenant to vacate".'
        result = get_assert(answer, _context())
        assert result["pass"] is True
        # One chip; each check's score in metadata.verifier.scores, each check a component (no chip of its own).
        assert result["namedScores"] == {"deterministic_verifier_score": 1.0}
        assert result["metadata"]["verifier"]["scores"] == {
            "phone_org_score": 1.0, "jurisdiction_score": 1.0, "quotation_score": 1.0}  # fmt: skip
        assert [c["assertion"]["value"] for c in result["componentResults"]] == [
            "grounding_eval verifier: phone_org", "grounding_eval verifier: jurisdiction",
            "grounding_eval verifier: quotation"]  # fmt: skip
        assert all("metric" not in c["assertion"] for c in result["componentResults"])
        # each check's line is its component's, findings counted (none here needs a look, so none listed)
        lines = [c["reason"] for c in result["componentResults"]]
        assert lines == ["phone_org: 1.00 [1 MATCH]", "jurisdiction: 1.00 (user in IL: no organization from "
                         "another state)", "quotation: 1.00 [1 EXACT]"]  # fmt: skip
        assert "MATCH" not in result["reason"] and "EXACT" not in result["reason"]
        assert result["metadata"]["verifier"]["pass"] is True

    def test_check_chips_when_asked(self) -> None:
        answer = "Call Legal Aid Chicago at (312) 341-1070."
        context = _context()
        context["config"] = {**context.get("config", {}), "chips": "checks"}
        result = get_assert(answer, context)
        assert result["namedScores"] == {
            "phone_org_score": 1.0, "jurisdiction_score": 1.0, "deterministic_verifier_score": 1.0}  # fmt: skip
        context["config"]["chips"] = "all"
        bad = get_assert(answer, context)
        assert "'chips'" in unscored_reason(bad) and "'all'" in unscored_reason(bad)

    def test_hard_failure_fails_row_and_names_it(self) -> None:
        result = get_assert("Call Lone Star Legal Aid at (888) 529-5277.", _context())
        assert result["pass"] is False and result["score"] == 0.0
        assert result["reason"].startswith("FAIL deterministic verifier 0.00")
        assert "belongs to Legal Aid of NorthWest Texas" in result["reason"]
        assert row_scores(result)["phone_org_score"] == 0.0

    def test_the_reference_text_counts_whether_or_not_it_is_in_the_prompt(self) -> None:
        """Under C0 the article is in vars but not in the prompt: a fabricated quote is NO_MATCH all the
        same (issue 18); ``quote_sources: shown`` restores the old rule (NO_SOURCE, not scored)."""
        answer = 'It says "the landlord must pay triple damages within ten days".'
        with_source = get_assert(answer, _context())
        without = get_assert(answer, _context(prompt="User question: ..."))
        for result in (with_source, without):
            assert result["metadata"]["verifier"]["quotes"][0]["status"] == "NO_MATCH"
            assert row_scores(result)["quotation_score"] == 0.0 and result["pass"] is False
        old_rule = get_assert(
            answer, _context(prompt="User question: ...", config={**CONFIG, "quote_sources": "shown"})
        )
        assert old_rule["metadata"]["verifier"]["quotes"][0]["status"] == "NO_SOURCE"
        assert "quotation_score" not in row_scores(old_rule)

    def test_a_finding_says_whether_the_model_was_shown_the_text(self) -> None:
        answer = 'It says "the lessor may not require the tenant to vacate".'
        shown = get_assert(answer, _context())["metadata"]["verifier"]["quotes"][0]
        unshown = get_assert(answer, _context(prompt="User question: ..."))["metadata"]["verifier"]["quotes"][
            0
        ]
        unknown = get_assert(answer, {k: v for k, v in _context().items() if k != "prompt"})
        assert (shown["source"], shown["shown_to_model"]) == ("jkb_full_content (shown to the model)", True)
        assert (unshown["source"], unshown["shown_to_model"]) == (
            "jkb_full_content (not shown to the model)",
            False,
        )
        assert unknown["metadata"]["verifier"]["quotes"][0]["shown_to_model"] is None
        assert {shown["status"], unshown["status"]} == {"EXACT"}

    @pytest.mark.parametrize("key", ["quote_sources", "meaning_change"])
    def test_bad_quote_option_is_an_explicit_error(self, key: str) -> None:
        result = get_assert("Call 211.", _context(config={**CONFIG, key: "sometimes"}))
        assert unscored_reason(result).startswith(f"config '{key}' must be ")
        assert result["pass"] is False and result["namedScores"] == {}


class TestExplicitErrors:
    """Problems become explicit ERROR results: failed, no named scores, the problem in the reason."""

    @pytest.mark.parametrize(
        ("context", "message"),
        [
            pytest.param(_context(vars={}), "the test has no var 'jurisdiction'", id="no-jurisdiction"),
            pytest.param(_context(vars={"jurisdiction": "ZZ"}), "unknown state code 'ZZ'", id="bad-state"),
            pytest.param(_context(config={**CONFIG, "orgs": "/nonexistent/orgs.yaml"}),
                         "/nonexistent/orgs.yaml: file not found", id="missing-orgs"),
            pytest.param(_context(config={**CONFIG, "liveness": "sometimes"}),
                         "liveness: must be one of offline, live", id="bad-liveness"),
            pytest.param(_context(config="nonsense"), "must be mappings", id="config-not-mapping"),
            pytest.param(None, "the test has no var 'jurisdiction'", id="no-context"),
        ],
    )  # fmt: skip
    def test_error_result(self, context: Any, message: str) -> None:
        result = get_assert("Call (312) 341-1070.", context)
        assert result["pass"] is False and result["score"] == 0.0
        assert message in unscored_reason(result)
        assert result["namedScores"] == {}


JUNK_OUTPUTS = [
    pytest.param("", id="empty"),
    pytest.param(None, id="none"),
    pytest.param({"answer": "Call (312) 341-1070"}, id="json-object"),
    pytest.param(["a", 1, None], id="json-list"),
    pytest.param(b"\xff\xfe\x00\x01binary", id="bytes"),
    pytest.param("\x00\x01\x02\ufffd\U0001f600" * 1000, id="control-and-emoji"),
    pytest.param("\u202e\u200b\u200d“unbalanced quote " * 200, id="bidi-zero-width"),
    pytest.param("https://" * 5000, id="url-prefixes"),
    pytest.param('"' * 10000, id="quote-marks"),
    pytest.param("(312) 341-1070 " * 2000, id="many-phones"),
    pytest.param("word " * 200_000, id="1mb-words"),
    pytest.param("x" * 1_000_000, id="1mb-one-token"),
]


class TestNeverRaises:
    """Whatever the output holds, a GradingResult comes back."""

    @pytest.mark.parametrize("output", JUNK_OUTPUTS)
    def test_junk_outputs(self, output: Any) -> None:
        assert _is_grading_result(get_assert(output, _context()))

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.text(alphabet=st.characters(codec="utf-8"), max_size=2000))
    def test_arbitrary_text(self, output: str) -> None:
        assert _is_grading_result(get_assert(output, _context()))

    @settings(max_examples=60, deadline=None)
    @given(
        st.lists(
            st.sampled_from([
                "Legal Aid Chicago", "LAC", "(312) 341-1070", "https://www.pslegal.org", "lanwt.org/x",
                '"', "“", "”", "...", "…", "\n", "> ", ". ", "[x](", ")", "https://trusted.org@evil.test/",
                "the lessor may not require the tenant to vacate", "Lone Star Legal Aid", "888-529-5277",
            ]),
            max_size=40,
        )
    )  # fmt: skip
    def test_adversarial_mixtures(self, parts: list[str]) -> None:
        """Shuffled fragments of every construct the checks look for."""
        assert _is_grading_result(get_assert(" ".join(parts), _context()))


def test_report_read_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter reads the report (JSON, reason lines) with the cyclic collector paused, as verify
    runs its checks (a hostile answer's 10^5 findings are not walked while they are read), and leaves
    it running afterwards."""
    import gc

    from grounding_eval.verifier import explain

    seen: list[bool] = []
    real = explain.check_lines

    def watched(report: Any) -> dict[str, str]:
        seen.append(gc.isenabled())
        return real(report)

    monkeypatch.setattr(explain, "check_lines", watched)
    assert gc.isenabled()
    result = get_assert("Call Legal Aid Chicago at (312) 341-1070.", _context())
    assert gc.isenabled()
    assert seen == [False] and _is_grading_result(result)


def test_quote_of_the_users_question_is_not_a_fabrication() -> None:
    """Repeating the user's own words in quotes is set apart, not checked against the sources."""
    question = "A landlord told me the unit is not a good fit for kids. Is that legal?"
    answer = 'Saying the unit is "not a good fit for kids" suggests familial-status discrimination.'
    context = _context(vars={"jurisdiction": "OR", "jkb_full_content": SOURCE, "question": question})
    result = get_assert(answer, context)
    assert result["pass"] is True
    assert result["metadata"]["verifier"]["quotes"] == []
    assert "quoting the user's question: 'not a good fit for kids'" in result["reason"]
    no_question = get_assert(answer, _context(vars={"jurisdiction": "OR", "jkb_full_content": SOURCE}))
    assert no_question["metadata"]["verifier"]["quotes"][0]["status"] == "NO_MATCH"


@pytest.mark.parametrize(
    ("near", "partial", "ok"),
    [(40, 30, True), (95, None, True), (None, 95, False), ("abc", None, False)],
)
def test_quote_threshold_overrides(near: Any, partial: Any, ok: bool) -> None:
    """Threshold overrides apply together; an inconsistent pair is an explicit error, not a crash."""
    config = {**CONFIG, **({"quote_near": near} if near is not None else {}),
              **({"quote_partial": partial} if partial is not None else {})}  # fmt: skip
    result = get_assert(
        'It says "the tenant must leave within three days of notice".', _context(config=config)
    )
    assert (result["metadata"]["outcome"] == "unscored") is not ok, result["reason"]
