"""The source vars a results file or a ``type: python`` entry does not get are rebuilt exactly as the
generator made them (grounding_eval/promptfoo/source_vars.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounding_eval.errors import DataError
from grounding_eval.promptfoo import docs_qa_tests, round_tests
from grounding_eval.promptfoo.source_vars import with_source_vars, with_source_vars_in

REPO = Path(__file__).resolve().parents[1]


def _generated() -> list[dict]:
    rounds = [
        test
        for round_id in ("1a", "2b", "3")
        for test in round_tests.generate_tests(
            {"dataset": "datasets/sample", "round": round_id}, pack_root=REPO
        )
    ]
    docs = docs_qa_tests.generate_tests({"dataset": "datasets/docs_qa"}, pack_root=REPO)
    return rounds + docs


def _id(test: dict) -> str:
    """A round test's item id (in metadata since the viewer shows only prompt variables), a docs-QA test's
    description."""
    meta = test["metadata"]
    return str(meta.get("query_id") or test.get("description") or meta.get("question_id"))[:60]


@pytest.mark.parametrize("test", _generated(), ids=_id)
def test_rebuilt_exactly_as_generated(test: dict) -> None:
    names = test["metadata"]["source_vars"]
    assert names and all(test["vars"][n] for n in names)
    short = {k: v for k, v in test["vars"].items() if k not in names}
    assert with_source_vars(short, test["metadata"]) == test["vars"]
    context = {"vars": short, "test": {"metadata": test["metadata"]}, "prompt": "p"}
    assert with_source_vars_in(context)["vars"] == test["vars"]
    assert with_source_vars_in({**context, "vars": test["vars"]})["vars"] is test["vars"]  # nothing to add


def test_a_var_no_generator_makes_is_an_error() -> None:
    with pytest.raises(DataError, match="cannot be rebuilt"):
        with_source_vars({"q": "x"}, {"source_vars": ["made_up"], "dataset": "datasets/sample"})


def test_an_item_the_dataset_no_longer_holds_is_an_error() -> None:
    with pytest.raises(DataError, match="no item 'gone-01'"):
        with_source_vars(
            {}, {"source_vars": ["jkb_directory"], "dataset": "datasets/sample", "query_id": "gone-01"}
        )
