"""One typed reading of a results row's results (grounding_eval/result_rows.py), shared by report, audit,
provenance and rescore: what it finds in a row, and that a field of the wrong type is refused by each of
them with the same message, naming the field."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.analysis.summary import report_row
from grounding_eval.errors import DataError
from grounding_eval.judge.audit_cli import _row_audits
from grounding_eval.provenance import results_provenance
from grounding_eval.rescore import check_row
from grounding_eval.result_rows import result_row
from grounding_eval.results_file import RowProblem
from tests.test_results_file import base_row

VERIFIER, JUDGE = 0, 1  # the base row's components


def _row(**changes: Any) -> dict[str, Any]:
    """The base row with components' metadata merged: ``{0: {...}, 1: {...}}`` by component index."""
    row = base_row(1)
    for index, metadata in changes.get("metadata", {}).items():
        row["gradingResult"]["componentResults"][index]["metadata"].update(metadata)
    return row


class TestWhatARowHolds:
    def test_the_first_record_of_each_kind_and_the_first_judges_pass(self) -> None:
        row = _row()
        second = {"pass": False, "metadata": {"judge": {"rubric_id": "v4"}, "docs_qa": {"criteria": {}}}}
        row["gradingResult"]["componentResults"].append(second)
        parsed = result_row(row)
        assert parsed.judge("judge") == {"rubric_id": "round3", "status": "scored", "verdicts": {}}
        assert parsed.judge("docs_qa") == {"criteria": {}}  # the only one, from the second result
        assert parsed.judge("factuality") is None
        assert parsed.judge_passed is True  # the first result holding a judge's record passed
        assert parsed.verifier is not None and parsed.verifier.hard_failures == ()
        assert [c.where for c in parsed.components] == [
            f"gradingResult.componentResults[{i}]" for i in range(3)
        ]

    def test_an_empty_record_says_the_check_ran_but_a_full_one_wins(self) -> None:
        row = _row(metadata={VERIFIER: {"verifier": {}}})
        assert result_row(row).verifier is not None
        assert report_row(row).verifier_ran
        row["gradingResult"]["componentResults"].append(
            {"metadata": {"verifier": {"hard_failures": [{"x": 1}]}}}
        )
        verifier = result_row(row).verifier
        assert verifier is not None and verifier.hard_failures == ({"x": 1},)

    def test_no_results_no_records(self) -> None:
        parsed = result_row({"failureReason": 2, "error": "provider timed out"})
        assert (parsed.components, parsed.verifier, parsed.judges, parsed.judge_passed) == (
            (),
            None,
            (),
            None,
        )
        assert parsed.errored
        assert not result_row(base_row(1)).errored

    def test_audits_in_order_with_the_default_folder(self) -> None:
        row = _row(metadata={VERIFIER: {"verifier": {"audit_id": "aa"}}, JUDGE: {"judge": {"audit_id": "bb",
                   "audit_dir": "/study/audit"}, "factuality": {"audit_id": "cc", "audit_dir": ""}}})  # fmt: skip
        assert result_row(row).audits("results/audit") == [
            ("results/audit", "aa"), ("/study/audit", "bb"), ("results/audit", "cc"),
        ]  # fmt: skip

    def test_the_sample_is_the_results_else_the_rows(self) -> None:
        row = _row(metadata={JUDGE: {"provenance": {"sample": {"n": 4}}}})
        row["metadata"] = {"sample": {"n": 9}}
        assert result_row(row).sample() == {"n": 4}
        del row["gradingResult"]
        assert result_row(row).sample() == {"n": 9}


# Each field the typed record walks, as (path into the row, the field's name in messages, its JSON kind).
FIELDS = [
    (("gradingResult",), "gradingResult", "object"),
    (("gradingResult", "componentResults"), "gradingResult.componentResults", "list"),
    (("gradingResult", "componentResults", JUDGE), "gradingResult.componentResults[1]", "object"),
    (("gradingResult", "componentResults", VERIFIER, "metadata"), "gradingResult.componentResults[0].metadata",
     "object"),
    (("gradingResult", "componentResults", JUDGE, "assertion"), "gradingResult.componentResults[1].assertion",
     "object"),
    (("gradingResult", "componentResults", JUDGE, "reason"), "gradingResult.componentResults[1].reason", "text"),
    (("gradingResult", "componentResults", VERIFIER, "metadata", "verifier"),
     "gradingResult.componentResults[0].metadata.verifier", "object"),
    (("gradingResult", "componentResults", JUDGE, "metadata", "judge"),
     "gradingResult.componentResults[1].metadata.judge", "object"),
    (("gradingResult", "componentResults", JUDGE, "metadata", "provenance"),
     "gradingResult.componentResults[1].metadata.provenance", "object"),
    (("gradingResult", "componentResults", VERIFIER, "metadata", "verifier", "hard_failures"),
     "metadata.verifier.hard_failures", "list"),
    (("gradingResult", "componentResults", VERIFIER, "metadata", "verifier", "hard_failures", 0),
     "metadata.verifier.hard_failures[0]", "object"),
    (("gradingResult", "componentResults", VERIFIER, "metadata", "verifier", "urls", 0),
     "metadata.verifier.urls[0]", "object"),
]  # fmt: skip
# A value of each JSON kind but the field's own (null reads as absent, so it is never wrong).
WRONG = {
    "object": st.one_of(st.lists(st.integers(), max_size=2), st.text(max_size=5), st.integers(), st.booleans()),
    "list": st.one_of(st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.text(max_size=5),
                      st.floats(allow_nan=False, allow_infinity=False), st.booleans()),
    "text": st.one_of(st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=3),
                      st.integers(), max_size=2), st.booleans()),
}  # fmt: skip


def _set(row: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    target: Any = row
    for key in path[:-1]:
        target = target[key]
        if isinstance(target, dict) and key == "verifier":  # give the lists an entry to corrupt
            target["urls"] = target.get("urls") or [{"url": "https://example.org", "status": "OK"}]
            target["hard_failures"] = target.get("hard_failures") or [{"safety_check": "jurisdiction"}]
    target[path[-1]] = value


@st.composite
def corrupted(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    path, name, kind = draw(st.sampled_from(FIELDS))
    row = copy.deepcopy(base_row(1))
    _set(row, path, draw(WRONG[kind]))
    return row, name


def _refusal(read: Any) -> str | None:
    try:
        read()
    except (RowProblem, DataError) as exc:
        return str(exc)
    return None


@settings(max_examples=120, deadline=None)
@given(corrupted())
def test_a_wrong_type_is_refused_by_every_reader_with_the_same_message(
    case: tuple[dict[str, Any], str],
) -> None:
    row, name = case
    event(f"field {name}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.json"
        path.write_text(json.dumps({"results": {"version": 3, "results": [row]}}), encoding="utf-8")
        said = {
            "report": _refusal(lambda: report_row(row)),
            "rescore": _refusal(lambda: check_row(row)),
            "provenance": _refusal(lambda: results_provenance({"results": {"results": [row]}})),
            "audit": _refusal(lambda: _row_audits(path, "r1")),
        }
    problem = said["report"]
    assert problem is not None and problem.startswith(f"{name} is ") and "expected" in problem, said
    assert said["rescore"] == problem
    assert said["provenance"] == f"row 1 of results.results: {problem}"
    assert said["audit"] == f"{path}: row 1 of results.results: {problem}"


@pytest.mark.parametrize("bad", [7, ["x"], True])
def test_an_audit_folder_that_is_not_text_is_refused(bad: Any) -> None:
    row = _row(metadata={JUDGE: {"judge": {"audit_id": "bb", "audit_dir": bad}}})
    with pytest.raises(
        RowProblem, match=r"componentResults\[1\]\.metadata\.judge\.audit_dir is .*, expected text"
    ):
        result_row(row).audits("results/audit")
