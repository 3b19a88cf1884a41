"""The docs-QA test generator: one test per question, the record in metadata, the dataset chosen by config."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounding_eval.errors import DataError
from grounding_eval.promptfoo.docs_qa_tests import DATASET_ENV, generate_tests

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "docs_qa" / "tiny"


def test_one_test_per_question_with_shared_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATASET_ENV, raising=False)
    tests = generate_tests({"dataset": str(TINY)}, pack_root=REPO)
    assert [t["vars"]["query_id"] for t in tests] == ["T01", "Q07", "T03"]
    q07 = tests[1]
    assert q07["metadata"]["question_type"] == "multi-section"
    assert q07["metadata"]["must_include"][2] == "logbook entry with serial number"
    assert q07["metadata"]["dataset"] == str(TINY) and q07["metadata"]["docs"] == str(TINY / "docs")
    context = q07["vars"]["docs_context"]
    assert context.startswith(
        "----- maintenance-procedure.md (sections: #propeller-replacement, #prerequisites,"
    )
    assert "The propeller nut takes 0.6 N·m." in context


def test_filters_and_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATASET_ENV, str(TINY))
    tests = generate_tests({"dataset": "datasets/docs_qa", "types": ["out-of-scope"]}, pack_root=REPO)
    assert [t["vars"]["query_id"] for t in tests] == ["T03"]
    with pytest.raises(DataError, match="no question matches the configured types/ids"):
        generate_tests({"ids": ["nope"]}, pack_root=REPO)


def test_relative_dataset_resolves_against_the_pack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(DATASET_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    tests = generate_tests({"dataset": "datasets/docs_qa"}, pack_root=REPO)
    assert len(tests) == 24 and tests[0]["metadata"]["dataset"] == str(REPO / "datasets" / "docs_qa")


def test_no_dataset_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATASET_ENV, raising=False)
    with pytest.raises(DataError, match=r"set config.dataset \(or \$GROUNDING_EVAL_DOCS_QA_DATASET\)"):
        generate_tests({}, pack_root=REPO)
