"""grounding-eval report: judge versus verifier on the Round 3 safety checks.

Two results files under tests/fixtures/report/: ``safety_agreement.json``, hand-made, one row per cell
(both No, judge No only, verifier No only, both Yes, judge Partial against each verifier answer, judge
unscored, judge ERROR, verifier ERROR, provider error, and a Round 2b row that is out of scope); and
``round3_sample.json``, a real ``configs/round3.yaml`` run on the sample data trimmed by
``trim_results.py`` (its docstring says how to remake it). The text outputs are golden files beside them;
after an intended change, regenerate them with
``UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_report_safety_agreement.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.analysis.report_row import ReportRow
from grounding_eval.analysis.summary import (
    AGREEMENT_CELLS,
    load_rows,
    safety_agreement,
    safety_split_table,
)
from grounding_eval.cli import main
from grounding_eval.errors import DataError
from grounding_eval.scoring.composite import ROUND3_SAFETY_CHECKS
from tests.scores import query_id

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "report"
HAND_MADE = FIXTURES / "safety_agreement.json"
REAL = FIXTURES / "round3_sample.json"
CHECK = "hallucinated_citation"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["report", *args]) == 0
    out: str = capsys.readouterr().out
    return out


def _golden(name: str, text: str) -> None:
    path = FIXTURES / name
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden {path.name}: run with UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text(encoding="utf-8")


def _row(judge: str | None, verifier_no: bool | None) -> ReportRow:
    """A Round 3 row: the judge's verdict on CHECK (None: unscored) and the verifier's (None: not run)."""
    return ReportRow(
        keys={"round": "3", "condition": "C1", "provider": "p"},
        passed=False,
        unscored=judge is None or verifier_no is None,
        composite=None,
        judge=None,
        verifier=None,
        safety_no=(CHECK,) if verifier_no else (),
        query_id="q",
        verifier_ran=verifier_no is not None,
        judge_safety={} if judge is None else {CHECK: judge},
        judge_missing="the judge reply could not be scored" if judge is None else None,
        safety_scope=True,
    )


class TestAgreementCell:
    """One row, one check: the cell follows from the two verdicts; a missing side is never guessed."""

    @pytest.mark.parametrize(
        ("judge", "verifier_no", "cell"),
        [
            ("No", True, "both_no"),
            ("No", False, "judge_only_no"),
            ("Yes", True, "verifier_only_no"),
            ("Yes", False, "both_yes"),
            ("Partial", True, "judge_partial_verifier_no"),
            ("Partial", False, "judge_partial_verifier_yes"),
            (None, True, "not_comparable"),
            (None, False, "not_comparable"),
            ("No", None, "not_comparable"),
            ("Yes", None, "not_comparable"),
            (None, None, "not_comparable"),
        ],
        ids=lambda v: repr(v),
    )
    def test_cell(self, judge: str | None, verifier_no: bool | None, cell: str) -> None:
        got, why = _row(judge, verifier_no).agreement(CHECK)
        assert got == cell
        assert (why is None) == (cell != "not_comparable")

    def test_reasons_name_each_missing_side(self) -> None:
        _, why = _row(None, None).agreement(CHECK)
        assert why == "the judge reply could not be scored; the verifier did not run (or returned an error)"

    def test_a_check_the_judge_was_not_asked(self) -> None:
        row = _row("No", True)
        assert row.agreement("org_attribution_correct") == (
            "not_comparable",
            "the judge gave no verdict for org_attribution_correct",
        )


class TestHandMade:
    """Every cell of the hand-made file lands where its row's name says."""

    def test_cells_per_check(self) -> None:
        tables = {t.check: t for t in safety_agreement(load_rows(HAND_MADE), ["condition"])}
        assert list(tables) == list(ROUND3_SAFETY_CHECKS)
        # 9 Round 3 rows; the Round 2b row (v4 judge, no safety checks) is out of scope.
        assert tables[CHECK].total == {
            "rows": 9,
            "both_no": 1,
            "judge_only_no": 1,
            "verifier_only_no": 1,
            "both_yes": 1,
            "judge_partial_verifier_no": 1,
            "judge_partial_verifier_yes": 0,
            "not_comparable": 4,
        }
        assert tables["jurisdiction_correct"].total["both_no"] == 1
        assert tables["org_attribution_correct"].total["judge_partial_verifier_yes"] == 1
        items = tables[CHECK].items
        assert [i["query_id"] for i in items["judge_only_no"]] == ["q-judge-only"]
        assert [i["query_id"] for i in items["verifier_only_no"]] == ["q-verifier-only"]
        assert items["judge_partial_verifier_no"] == [
            {"query_id": "q-partial", "condition": "C1.5", "provider": "recorded",
             "said": "verifier: hallucinated URL https://example.org/gone (not in allowlist; snapshot: HTTP 404)"}
        ]  # fmt: skip
        assert {i["query_id"]: i["reason"] for i in items["not_comparable"]} == {
            "q-judge-unscored": "the judge reply could not be scored",
            "q-judge-error": "the judge did not run (or returned an error)",
            "q-no-verifier": "the verifier did not run (or returned an error)",
            "q-provider-error": "the judge did not run (or returned an error); "
            "the verifier did not run (or returned an error)",
        }

    def test_text_golden(self, capsys: pytest.CaptureFixture[str]) -> None:
        _golden("safety_agreement.txt", _cli(capsys, str(HAND_MADE), "--by", "condition"))

    def test_json_structure(self, capsys: pytest.CaptureFixture[str]) -> None:
        report = json.loads(_cli(capsys, str(HAND_MADE), "--by", "condition", "--json"))
        assert list(report) == ["by", "groups", "findings", "safety_split", "safety_agreement", "judge_calls",
                                "unsafe", "grounding_records", "answer_length", "statistics"]  # fmt: skip
        assert report["by"] == ["condition"]
        agreement = report["safety_agreement"]
        assert agreement["rows"] == 9
        first = agreement["checks"][0]
        assert list(first) == ["check", "total", "groups", "items"]
        assert first["check"] == CHECK
        assert [g["condition"] for g in first["groups"]] == ["C0", "C1", "C1.5"]
        assert first["groups"][1] == {"condition": "C1", "rows": 3, "both_no": 0, "judge_only_no": 0,
                                      "verifier_only_no": 1, "both_yes": 1, "judge_partial_verifier_no": 0,
                                      "judge_partial_verifier_yes": 0, "not_comparable": 1}  # fmt: skip
        assert list(first["items"]) == [c for c in AGREEMENT_CELLS if c not in ("both_no", "both_yes")]
        assert first["items"]["judge_partial_verifier_yes"] == []


class TestSplit:
    """Per condition, rows with a No on any check from the verifier, the judge, both, the judge alone."""

    def test_hand_made_counts(self) -> None:
        """Worked from the rows' names: C0 holds both-no, judge-only and judge-error; C1 verifier-only,
        both-yes and no-verifier (the Round 2b row is out of scope); C1.5 partial (judge Partial on
        hallucinated_citation, both No on jurisdiction_correct), judge-unscored and provider-error."""
        split = {g["condition"]: g for g in safety_split_table(load_rows(HAND_MADE), ["condition"])}
        keys = ("rows", "verifier_no", "judge_no", "both_no", "judge_disagrees", "verifier_only_no",
                "not_comparable")  # fmt: skip
        assert {c: tuple(g[k] for k in keys) for c, g in split.items()} == {
            "C0": (3, 1, 2, 1, 1, 0, 1),
            "C1": (3, 1, 0, 0, 0, 1, 1),
            "C1.5": (3, 1, 1, 1, 0, 1, 2),
        }
        assert all(g["sources"] == {"not recorded": 3} for g in split.values())

    def test_real_run_disagreements_match_the_agreement_tables(self) -> None:
        """A row the judge disagrees on is a judge-only No on some check, and only such rows are."""
        rows = load_rows(REAL)
        judge_only = {
            (i["query_id"], i["condition"])
            for t in safety_agreement(rows, ["condition"])
            for i in t.items["judge_only_no"]
        }
        flagged = set()
        for row in rows:
            split = row.safety_split()
            assert split is not None
            if split.judge_disagrees:
                flagged.add((row.query_id, row.keys["condition"]))
        assert flagged == judge_only and len(flagged) == 5
        total = sum(g["judge_disagrees"] for g in safety_split_table(rows, ["condition"]))
        assert total == 5

    def test_a_judge_answering_two_of_three_checks_is_compared_on_those_two(self) -> None:
        """The judge answered two checks (No on one the verifier also found No): the row is both.No, as the
        per-check table says, and not comparable for the third only (reviewer's partial file: both.No 0)."""
        first, second, _ = ROUND3_SAFETY_CHECKS
        row = ReportRow(
            keys={"round": "3", "condition": "C1", "provider": "p"}, passed=False, unscored=False,
            composite=None, judge=None, verifier=None, safety_no=(first,), query_id="q", verifier_ran=True,
            judge_safety={first: "No", second: "Yes"}, safety_scope=True,
        )  # fmt: skip
        assert [row.agreement(c)[0] for c in ROUND3_SAFETY_CHECKS] == [
            "both_no",
            "both_yes",
            "not_comparable",
        ]
        (group,) = safety_split_table([row], ["condition"])
        keys = ("verifier_no", "judge_no", "both_no", "judge_disagrees", "verifier_only_no", "not_comparable")
        assert tuple(group[k] for k in keys) == (1, 1, 1, 0, 0, 1)

    @pytest.mark.parametrize("path", [HAND_MADE, REAL], ids=["hand-made", "real"])
    def test_the_split_counts_what_the_per_check_tables_count(self, path: Path) -> None:
        """A row is both.No / judge.disagrees / verifier.No.only in the split exactly when some check of it
        is in that cell of the per-check tables (verifier.No.only: the judge answered Yes or Partial)."""
        rows = [r for r in load_rows(path) if r.safety_scope]
        cells = {"both_no": {"both_no"}, "judge_disagrees": {"judge_only_no"},
                 "verifier_only_no": {"verifier_only_no", "judge_partial_verifier_no"}}  # fmt: skip
        for column, cell in cells.items():
            expected: dict[str, int] = {}
            for row in rows:
                if any(row.agreement(c)[0] in cell for c in ROUND3_SAFETY_CHECKS):
                    expected[row.keys["condition"]] = expected.get(row.keys["condition"], 0) + 1
            got = {g["condition"]: g[column] for g in safety_split_table(rows, ["condition"]) if g[column]}
            assert got == expected, column

    def test_recorded_source_is_read(self, tmp_path: Path) -> None:
        data = json.loads(HAND_MADE.read_text(encoding="utf-8"))
        rows = data["results"]["results"]
        rows[0]["gradingResult"]["metadata"] = {"safety": {"source": "judge", "judge_disagrees": False}}
        path = tmp_path / "r.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        (c0,) = [g for g in safety_split_table(load_rows(path), ["condition"]) if g["condition"] == "C0"]
        assert c0["sources"] == {"judge": 1, "not recorded": 2}
        rows[0]["gradingResult"]["metadata"] = {"safety": {"source": ["judge"]}}
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(DataError, match=r"gradingResult\.metadata\.safety\.source is a list"):
            load_rows(path)


def test_other_rounds_print_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file with no row judged with a rubric that asks the safety checks: one line, an empty JSON list."""
    data = json.loads(HAND_MADE.read_text(encoding="utf-8"))
    data["results"]["results"] = [r for r in data["results"]["results"] if query_id(r) == "q-round2b"]
    path = tmp_path / "r2b.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out = _cli(capsys, str(path))
    assert out.endswith(
        "\n\nJudge versus verifier on the Round 3 safety checks: no row was judged with a rubric that asks them.\n"
    )
    report = json.loads(_cli(capsys, str(path), "--json"))
    assert report["safety_agreement"] == {"rows": 0, "checks": []} and report["safety_split"] == []


class TestRealRound3Run:
    """A real configs/round3.yaml run: every row compared, and the two sides read from the right places."""

    def test_text_golden(self, capsys: pytest.CaptureFixture[str]) -> None:
        _golden("round3_sample.txt", _cli(capsys, str(REAL)))

    def test_every_row_compared(self) -> None:
        rows = load_rows(REAL)
        tables = safety_agreement(rows, ["condition"])
        assert [t.check for t in tables] == list(ROUND3_SAFETY_CHECKS)
        for table in tables:
            assert table.total["rows"] == len(rows) and table.total["not_comparable"] == 0
            assert sum(table.total[c] for c in AGREEMENT_CELLS) == len(rows)

    def test_sides_match_the_named_scores(self) -> None:
        """The judge's side is its own chip ``round3.<check>``; the verifier's is ``safety.<check>``."""
        raw: list[dict[str, Any]] = json.loads(REAL.read_text(encoding="utf-8"))["results"]["results"]
        value = {"Yes": 1.0, "Partial": 0.5, "No": 0.0}
        for named, row in zip((r["namedScores"] for r in raw), load_rows(REAL), strict=True):
            for check in ROUND3_SAFETY_CHECKS:
                assert value[row.judge_safety[check]] == named[f"round3.{check}"], (row.query_id, check)
                assert (check in row.safety_no) == (named[f"safety.{check}"] == 0.0), (row.query_id, check)
