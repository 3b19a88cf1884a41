"""The recorded sample answers really produce the outcomes their ``covers`` field claims.

Run through the same assertion promptfoo calls, with each condition's prompt rendered from the shipped
templates, so the labels in datasets/sample/recorded_answers.yaml stay true — and together they cover
every verifier outcome the demo is meant to show.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.data.recorded_answers import load_recorded_answers
from grounding_eval.promptfoo.round_tests import generate_tests
from tests.entry_points import load_entry_point
from tests.scores import query_id

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "datasets" / "sample"
PROMPTS = {"C0": "c0.txt", "C1": "c1.txt", "C1.5": "c1_5.txt"}
CONFIG = {  # allowlist and directory: the dataset's own, found through the test's metadata.dataset
    "liveness": "offline",
    "liveness_snapshot": str(SAMPLE / "liveness_snapshot.fixture.csv"),
}
EVERY_OUTCOME = {
    "IN_ALLOWLIST", "REAL_NOT_IN_ALLOWLIST", "HALLUCINATED_URL", "UNCHECKED",
    "phone MATCH", "phone MISMATCH", "phone UNKNOWN_NUMBER", "phone UNPAIRED",
    "url_org MATCH", "url_org MISATTRIBUTED", "jurisdiction leak",
    "EXACT", "NEAR", "PARTIAL", "NO_MATCH",
    "citation IN_SOURCES", "citation KNOWN", "citation UNKNOWN", "citation WRONG_JURISDICTION",
    "citation UNCHECKED",
}  # fmt: skip
# NO_SOURCE is not among them: quotes are checked against the item's articles in every condition
# (issue 18), and every sample item has articles. An item without any is tested in
# tests/test_condition_fairness.py.

get_assert = load_entry_point("verifier")


def _tests() -> dict[str, dict[str, Any]]:
    tests = generate_tests({"dataset": str(SAMPLE)}, pack_root=REPO)
    return {query_id(t): t for t in tests}


def _render(condition: str, vars_: dict[str, Any]) -> str:
    template = (REPO / "prompts" / PROMPTS[condition]).read_text(encoding="utf-8")
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: str(vars_[m.group(1)]), template)


def _outcomes(report: dict[str, Any]) -> set[str]:
    found = {u["status"] for u in report["urls"]}
    found |= {f"phone {p['status']}" for p in report["phones"]}
    found |= {
        f"url_org {u['status']}" for u in report["url_orgs"] if u["status"] in {"MATCH", "MISATTRIBUTED"}
    }
    found |= {"jurisdiction leak"} if report["jurisdiction"]["leaks"] else set()
    found |= {q["status"] for q in report["quotes"]}
    found |= {f"citation {c['status']}" for c in report["citations"]}
    return found


ANSWERS = load_recorded_answers(SAMPLE / "recorded_answers.yaml")
TESTS = _tests()


@pytest.mark.parametrize("key", [pytest.param(k, id=f"{k[0]}-{k[1]}") for k in ANSWERS])
def test_recorded_answer_is_graded(key: tuple[str, str]) -> None:
    """Every recording belongs to a sample item and condition and is graded (no ERROR); where it says
    what it covers, the verifier finds exactly that."""
    recorded = ANSWERS[key]
    assert recorded.query_id in TESTS, f"no sample item {recorded.query_id!r}"
    assert recorded.condition in PROMPTS
    test = TESTS[recorded.query_id]
    vars_ = test["vars"]
    context = {
        "vars": vars_,
        "test": {"metadata": test["metadata"]},
        "prompt": _render(recorded.condition, vars_),
        "config": CONFIG,
    }
    result = get_assert(recorded.answer, context)
    assert result["metadata"]["outcome"] != "unscored", result["reason"]
    if recorded.covers:
        assert _outcomes(result["metadata"]["verifier"]) == set(recorded.covers), result["reason"]


def test_every_outcome_is_covered_by_the_demo() -> None:
    covered = {c for answer in ANSWERS.values() for c in answer.covers}
    assert covered == EVERY_OUTCOME
    demo = [q for q, v in TESTS.items() if q in {a.query_id for a in ANSWERS.values() if a.covers}]
    assert {(q, c) for q in demo for c in PROMPTS} <= set(ANSWERS)


def test_every_item_and_condition_is_recorded() -> None:
    """The replay provider can answer every sample item under every condition."""
    missing = sorted({(q, c) for q in TESTS for c in PROMPTS} - set(ANSWERS))
    assert not missing, f"{len(missing)} pairs have no recorded answer, e.g. {missing[:5]}"
