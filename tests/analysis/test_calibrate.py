"""grounding-eval calibrate sample / score: the grading sheet, the key, the drawn share, agreement and
kappa per criterion on the unit that was drawn (the row), sheet errors, viewer ratings.

Golden tables: ``tests/golden/calibration_allocation.yaml`` (the share per stratum, worked by hand) and
``tests/golden/calibration_bootstrap.yaml`` (per-criterion, macro and row-level figures, worked by hand;
their intervals checked against a naive row bootstrap written plainly below).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.analysis.calibrate import NON_BLIND, SHEET_COLUMNS, allocate, units
from grounding_eval.analysis.stats import Graded, agreement, item_agreement
from grounding_eval.analysis.summary import load_rows
from grounding_eval.cli import main
from grounding_eval.outcome import unscored_result
from tests.analysis.rows import FIXTURES, REPO, row, write
from tests.judge.test_rubrics import ROUND3_CORE

GOLDEN = REPO / "tests" / "golden"

REAL = FIXTURES / "round3.json"  # a real configs/round3.yaml run: 24 rows, 3 conditions, 27 criteria each

# Ten rows judged on one criterion. People's verdicts against the judge's give the kappa table of
# tests/analysis/test_stats.py: confusion (people × judge) [[2,1,0],[0,2,1],[0,1,3]] over No/Partial/Yes.
SCALE = ("No", "Partial", "Yes")
PEOPLE = [0, 0, 1, 1, 2, 2, 2, 1, 0, 2]
JUDGE = [0, 1, 1, 1, 2, 1, 2, 2, 0, 2]


def _judged(tmp_path: Path) -> Path:
    rows = [row(f"i{k}", "C1", composite=0.5, verdicts={"clear_next_steps": SCALE[v], "warns_about_risks": "Yes"})
            for k, v in enumerate(JUDGE)]  # fmt: skip
    return write(tmp_path / "judged.json", rows)


def _sheet(
    path: Path,
    lines: list[dict[str, str]],
    header: tuple[str, ...] = ("unit_id", "human_verdict", "human_note"),
    *,
    results: Path | None = None,
) -> Path:
    """A graded sheet; with ``results``, also its key file, as if drawn from that results file."""
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(lines)
    if results is not None:
        key = {"results": str(results), "results_sha256": hashlib.sha256(results.read_bytes()).hexdigest()}
        path.with_name(path.stem + ".key.json").write_text(json.dumps(key), encoding="utf-8")
    return path


def _people_sheet(tmp_path: Path, results: Path, *, blank: tuple[int, ...] = ()) -> Path:
    lines = []
    for k, unit in enumerate(
        u for u in units(load_rows(results)) if u.criterion == "round3.clear_next_steps"
    ):
        lines.append(
            {
                "unit_id": unit.unit_id,
                "human_verdict": "" if k in blank else SCALE[PEOPLE[k]],
                "human_note": "",
            }
        )
    return _sheet(tmp_path / "graded.csv", lines, results=results)


class TestSample:
    def test_stratified_sheet_without_the_judge(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        sheet = tmp_path / "sheet.csv"
        args = [
            "calibrate",
            "sample",
            str(REAL),
            "--fraction",
            "0.15",
            "--by",
            "round,condition",
            "--seed",
            "7",
            "-o",
            str(sheet),
        ]
        assert main(args) == 0
        # 3 strata (round 3 × C0, C1, C1.5) of 8 rows: round(0.15 × 24) = 4 rows in all, by largest
        # remainder 2 + 1 + 1 (tests/golden/calibration_allocation.yaml), 27 criteria per row.
        out = capsys.readouterr().out
        assert out.splitlines()[0] == "drew 4 of 24 rows (16.7 %; asked 15 %) from 3 strata: 108 lines"
        lines = list(csv.DictReader(sheet.open(encoding="utf-8")))
        assert tuple(lines[0]) == SHEET_COLUMNS and len(lines) == 108
        assert sorted(line["condition"] for line in lines[::27]) == ["C0", "C0", "C1", "C1.5"]
        assert sorted({line["condition"] for line in lines}) == ["C0", "C1", "C1.5"]
        assert all(line["human_verdict"] == "" and line["human_note"] == "" for line in lines)
        assert not any("judge" in column for column in SHEET_COLUMNS)
        assert all(line["question"] and line["answer"] and line["definition"] for line in lines)
        c0 = next(line for line in lines if line["condition"] == "C0")
        c15 = next(line for line in lines if line["condition"] == "C1.5")
        assert c0["sources"] == "(no sources shown)" and c15["sources"].startswith("[jkb_full_content]")
        key = json.loads((tmp_path / "sheet.key.json").read_text(encoding="utf-8"))
        assert key["seed"] == 7 and key["results_sha256"] == hashlib.sha256(REAL.read_bytes()).hexdigest()
        assert (key["drawn"]["rows"], key["drawn"]["population"], key["drawn"]["share"]) == (4, 24, 0.1667)
        assert [s["drawn"] for s in key["drawn"]["strata"]] == [2, 1, 1]
        assert key["drawn"]["strata_without_rows"] == []
        assert [u["unit_id"] for u in key["units"]] == [line["unit_id"] for line in lines]
        assert {u["judge_verdict"] for u in key["units"]} <= {"Yes", "Partial", "No"}
        # The same seed draws the same sheet.
        again = tmp_path / "again.csv"
        assert main([*args[:-1], str(again)]) == 0
        assert again.read_text(encoding="utf-8") == sheet.read_text(encoding="utf-8")

    def test_an_answer_never_becomes_a_spreadsheet_formula(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        hostile = ['=HYPERLINK("http://x.test","open")', "+1+1", "-2+3", "@SUM(A1)", "\t=1"]
        rows = [row(f"i{k}", "C1", verdicts={"clear_next_steps": "Yes"}) for k in range(10)]
        for k, r in enumerate(rows):
            r["response"]["output"] = hostile[k % len(hostile)]
        results = write(tmp_path / "r.json", rows)
        sheet = tmp_path / "s.csv"
        assert (
            main(["calibrate", "sample", str(results), "--fraction", "0.2", "--seed", "5", "-o", str(sheet)])
            == 0
        )
        lines = list(csv.DictReader(sheet.open(encoding="utf-8", newline="")))
        assert len(lines) == 2  # 20 % of 10 rows, one criterion each
        for line in lines:
            original = hostile[int(line["item_id"][1:]) % len(hostile)]
            assert line["answer"] == "'" + original
            assert line["question"] == f"What about {line['item_id']}?"  # plain text stays as it is

    def test_fraction_outside_the_seeds_range(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        args = [
            "calibrate",
            "sample",
            str(REAL),
            "--fraction",
            "0.3",
            "--seed",
            "1",
            "-o",
            str(tmp_path / "s.csv"),
        ]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err == "grounding-eval: error: --fraction: 0.3 is outside 0.1–0.2 (a 10–20 % sample)\n"

    def test_unknown_stratum_key(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        args = [
            "calibrate",
            "sample",
            str(REAL),
            "--by",
            "colour",
            "--seed",
            "1",
            "-o",
            str(tmp_path / "s.csv"),
        ]
        assert main(args) == 2
        assert capsys.readouterr().err.startswith("grounding-eval: error: --by: unknown key(s) colour")


class TestScore:
    def test_agreement_and_kappa_by_hand(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        results = _judged(tmp_path)
        sheet = _people_sheet(tmp_path, results)
        assert main(["calibrate", "score", str(results), str(sheet), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        (entry,) = report["criteria"]
        assert entry["criterion"] == "round3.clear_next_steps" and entry["n"] == 10
        assert entry["agreement"] == 0.7
        assert entry["kappa"] == pytest.approx(0.5455, abs=1e-4) and entry["weighted_kappa"] == pytest.approx(
            0.6512, abs=1e-4
        )
        assert entry["confusion"] == {"rows": "person", "columns": "judge", "labels": ["No", "Partial", "Yes"],
                                      "matrix": [[2, 1, 0], [0, 2, 1], [0, 1, 3]]}  # fmt: skip
        assert entry["base_rate"] == {"No": 0.3, "Partial": 0.3, "Yes": 0.4}
        assert entry["agreement_ci"][0] < 0.7 < entry["agreement_ci"][1]
        assert entry["rows"] == 10 and entry["kappa_undefined"] is None
        assert report["below_threshold"] == ["round3.clear_next_steps"] and report["threshold"] == 0.9
        # warns_about_risks: Yes from both throughout — agreement 1, kappa undefined (one category only).
        risks = {c["criterion"]: c for c in report["criteria"]}.get("round3.warns_about_risks")
        assert risks is None  # not on the sheet: only clear_next_steps was graded
        assert report["overall"]["criteria"] == 1 and report["overall"]["agreement"] == 0.7
        assert report["blind"] is True and report["bootstrap"]["seed"] == 13
        assert "72–85 %" in report["published_range"]

    def test_text_names_the_threshold_and_the_published_range(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = _judged(tmp_path)
        assert main(["calibrate", "score", str(results), str(_people_sheet(tmp_path, results))]) == 0
        out = capsys.readouterr().out
        assert "Below the 90% agreement threshold (docs-QA seed): round3.clear_next_steps." in out
        assert "published LLM-judge/human agreement is typically 72–85 %, so this threshold is strict" in out

    def test_a_threshold_given_is_named_as_such(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--threshold 0.6 is not the docs-QA seed's bar (before the review the text said it was), and a
        value that is no share (90 for 90 %) stops in one line."""
        results = _judged(tmp_path)
        sheet = str(_people_sheet(tmp_path, results))
        assert main(["calibrate", "score", str(results), sheet, "--threshold", "0.6"]) == 0
        assert "Below the 60% agreement threshold (set with --threshold): none." in capsys.readouterr().out
        assert main(["calibrate", "score", str(results), sheet, "--threshold", "90"]) == 2
        assert capsys.readouterr().err == (
            "grounding-eval: error: --threshold: 90.0 is not an agreement share in (0, 1] (0.90 is 90 %)\n"
        )

    def test_ungraded_lines_are_counted_not_disagreement(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = _judged(tmp_path)
        # Leave out two of the three disagreeing lines: 1 (people No, judge Partial) and 5 (people Yes, judge
        # Partial); line 7 (people Partial, judge Yes) still disagrees: 7 of 8.
        sheet = _people_sheet(tmp_path, results, blank=(1, 5))
        assert main(["calibrate", "score", str(results), str(sheet), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert (report["graded"], report["ungraded"]) == (8, 2)
        assert report["criteria"][0]["agreement"] == pytest.approx(7 / 8)
        # The rows' other core criterion, warns_about_risks, is not on this sheet: no row is compared at
        # row level (the 8 graded rows are counted as not compared; the 2 blank ones are not graded rows).
        assert (report["rows_graded"], report["row_level"]["rows"], report["row_level"]["not_compared"]) == (
            8,
            0,
            8,
        )

    def test_nothing_graded_yet(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        results = _judged(tmp_path)
        sheet = _people_sheet(tmp_path, results, blank=tuple(range(10)))
        assert main(["calibrate", "score", str(results), str(sheet)]) == 2
        assert (
            capsys.readouterr().err
            == f"grounding-eval: error: {sheet}: no line has a human_verdict yet (10 ungraded)\n"
        )

    def test_full_agreement(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A sheet filled from the key file agrees everywhere; the judge's verdict came from the key, not the sheet."""
        sheet = tmp_path / "sheet.csv"
        assert (
            main(["calibrate", "sample", str(REAL), "--fraction", "0.1", "--seed", "3", "-o", str(sheet)])
            == 0
        )
        key = {
            u["unit_id"]: u["judge_verdict"]
            for u in json.loads((tmp_path / "sheet.key.json").read_text())["units"]
        }
        lines = list(csv.DictReader(sheet.open(encoding="utf-8")))
        for line in lines:
            line["human_verdict"] = key[line["unit_id"]].lower()  # case does not matter
        _sheet(sheet, lines, SHEET_COLUMNS)
        capsys.readouterr()
        assert main(["calibrate", "score", str(REAL), str(sheet), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["graded"] == len(lines) and report["below_threshold"] == []
        assert report["overall"]["agreement"] == 1.0 and report["row_level"]["agreement"] == 1.0
        assert report["drawn"]["rows"] == 3  # round(0.1 × 24) = 2 is 8.3 %: 3 rows (12.5 %)

    @pytest.mark.parametrize(
        ("lines", "header", "message"),
        [
            ([{"unit_id": "x", "human_note": ""}], ("unit_id", "human_note"), "not a grading sheet: the header lacks human_verdict"),
            ([{"unit_id": "", "human_verdict": "Yes", "human_note": ""}], None, "line 2: unit_id is empty"),
            ([{"unit_id": "3|C1|model-a|nope|round3.x", "human_verdict": "Yes", "human_note": ""}], None,
             "line 2: unit_id '3|C1|model-a|nope|round3.x' is not in the results file"),
            ([{"unit_id": "3|C1|model-a|i0|round3.clear_next_steps", "human_verdict": "Maybe", "human_note": ""}], None,
             "line 2: human_verdict 'Maybe' is not one of No / Partial / Yes"),
            ([{"unit_id": "3|C1|model-a|i0|round3.clear_next_steps", "human_verdict": "Yes", "human_note": ""},
              {"unit_id": "3|C1|model-a|i0|round3.clear_next_steps", "human_verdict": "No", "human_note": ""}], None,
             "line 3: unit_id '3|C1|model-a|i0|round3.clear_next_steps' appears twice"),
        ],
        ids=["no-verdict-column", "empty-id", "unknown-unit", "bad-verdict", "duplicate"],
    )  # fmt: skip
    def test_malformed_sheet(self, tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[dict[str, str]],
                             header: tuple[str, ...] | None, message: str) -> None:  # fmt: skip
        results = _judged(tmp_path)
        sheet = _sheet(
            tmp_path / "bad.csv", lines, header or ("unit_id", "human_verdict", "human_note"), results=results
        )
        assert main(["calibrate", "score", str(results), str(sheet)]) == 2
        err = capsys.readouterr().err
        assert err == f"grounding-eval: error: {sheet}: {message}\n"

    def test_huge_cells_bom_and_crlf(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A sheet saved by a spreadsheet (BOM, CRLF) with a 200,000-character cell (a long answer or its
        sources) is read. Fails on the code before the review: csv's 131,072-character field limit
        raised an unhandled _csv.Error."""
        results = _judged(tmp_path)
        lines = [{"unit_id": u.unit_id, "human_verdict": SCALE[PEOPLE[k]], "human_note": "x" * 200_000 if k == 0 else ""}
                 for k, u in enumerate(u for u in units(load_rows(results)) if u.criterion == "round3.clear_next_steps")]  # fmt: skip
        sheet = _sheet(tmp_path / "big.csv", lines, results=results)
        sheet.write_bytes(
            b"\xef\xbb\xbf" + sheet.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        )
        limit = csv.field_size_limit()
        assert main(["calibrate", "score", str(results), str(sheet), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["graded"] == 10 and report["criteria"][0]["agreement"] == 0.7
        assert csv.field_size_limit() == limit  # process-wide: the dataset loader relies on the default

    def test_short_and_long_lines(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        results = _judged(tmp_path)
        sheet = _sheet(tmp_path / "ragged.csv", [], results=results)
        sheet.write_text(
            "unit_id,human_verdict,human_note\n3|C1|model-a|i0|round3.clear_next_steps,Yes,ok,extra\n",
            encoding="utf-8",
        )
        assert main(["calibrate", "score", str(results), str(sheet)]) == 2
        assert (
            capsys.readouterr().err
            == f"grounding-eval: error: {sheet}: line 2: more fields than the header's 3\n"
        )
        sheet.write_text(
            "unit_id,human_note,human_verdict\n3|C1|model-a|i0|round3.clear_next_steps\n", encoding="utf-8"
        )
        assert main(["calibrate", "score", str(results), str(sheet)]) == 2
        assert (
            capsys.readouterr().err
            == f"grounding-eval: error: {sheet}: line 2: fewer fields than the header (no human_verdict)\n"
        )


def _claims(*verdicts: str) -> dict[str, Any]:
    claims = [{"claim_id": f"c{i}", "claim_text": f"Claim {i}.", "verification_result": v, "score": 1, "severity": "none",
               "evidence_quote": "", "evidence_check": "n/a", "source_document_ids": []} for i, v in enumerate(verdicts, 1)]  # fmt: skip
    return {"status": "scored", "score": 0.5, "judge_reported_score": 0.5, "claims": claims, "ungrounded_verdicts": 0,
            "model_id": "replay", "prompt_version": "fa-1", "stage": "single", "attempts": 1}  # fmt: skip


class TestOtherJudges:
    def test_docs_qa_and_factuality_units(self, tmp_path: Path) -> None:
        docs = {"criteria": {"correct": {"verdict": "pass", "reason": ""}, "complete": {"verdict": "fail", "reason": ""},
                             "honest_about_gaps": {"verdict": "n/a", "reason": ""}}}  # fmt: skip
        rows = [
            row("q1", "docs", docs_qa=docs, question_type="reworded"),
            row("f1", "C1", factuality=_claims("Supported", "Contradicted")),
            row("f2", "C1", factuality={**_claims(), "status": "no_claims"}, judge_pass=False),
        ]
        got = [
            (u.criterion, u.scale, u.judge_verdict)
            for u in units(load_rows(write(tmp_path / "r.json", rows)))
        ]
        assert got == [
            ("docs_qa.correct", "pass_fail", "pass"), ("docs_qa.complete", "pass_fail", "fail"),  # n/a: not graded
            ("factuality.claim.c1", "claim", "Supported"), ("factuality.claim.c2", "claim", "Contradicted"),
            ("factuality.row", "pass_fail", "fail"),  # no claims to match: the row's verdict
        ]  # fmt: skip

    def test_unscored_rows_are_not_drawn(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A row the report counts as unscored has no unit: a factual-accuracy judge's ERROR is not its
        "fail", and a judge's verdicts on a row its composite could not score are counted apart too.
        Fails on the code before the review: the ERROR row gave a factuality.row unit with verdict fail."""
        errored = row("f0", "C1", factuality={"status": "error", "score": None, "reason": "reply invalid"},
                      judge_pass=False, success=False)  # fmt: skip
        component = errored["gradingResult"]["componentResults"][0]  # as the factuality adapter writes it
        component.update(
            unscored_result("ERROR (factuality unscored)", "reply invalid", **component["metadata"])
        )
        no_composite = row("r0", "C1", verdicts={"clear_next_steps": "Yes"})
        no_composite["gradingResult"]["metadata"] = {"composite": {"status": "unscored"}}
        scored = [row(f"r{i}", "C1", verdicts={"clear_next_steps": "Yes"}) for i in range(1, 10)]
        results = write(tmp_path / "r.json", [errored, no_composite, *scored])
        loaded = load_rows(results)
        assert [r.unscored for r in loaded[:2]] == [True, True]
        assert {u.row.query_id for u in units(loaded)} == {f"r{i}" for i in range(1, 10)}
        sheet = tmp_path / "s.csv"
        assert (
            main(["calibrate", "sample", str(results), "--fraction", "0.1", "--seed", "1", "-o", str(sheet)])
            == 0
        )
        out = capsys.readouterr().out.splitlines()
        # 9 drawable rows: round(0.9) = 1 row, 11.1 %.
        assert out[:2] == [
            "drew 1 of 9 rows (11.1 %; asked 10 %) from 1 stratum: 1 line",
            "not drawn, counted apart: 2 unscored rows, 0 rows without a judge verdict",
        ]
        key = json.loads(sheet.with_name("s.key.json").read_text(encoding="utf-8"))
        assert key["drawn"]["not_drawn"] == {"unscored": 2, "no_judge_verdict": 0}

    def test_claims_scored_per_claim(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        rows = [row(f"f{i}", "C1", factuality=_claims("Supported", "Partially Supported")) for i in range(3)]
        results = write(tmp_path / "r.json", rows)
        lines = [{"unit_id": u.unit_id, "human_verdict": "supported" if u.criterion.endswith("c1") else "Contradicted",
                  "human_note": ""} for u in units(load_rows(results))]  # fmt: skip
        assert (
            main(["calibrate", "score", str(results), str(_sheet(tmp_path / "s.csv", lines, results=results)),
                  "--json"]) == 0
        )  # fmt: skip
        report = json.loads(capsys.readouterr().out)
        # A claim's id is its row's own (c1 of one answer is not c1 of another): claims are one criterion,
        # 6 units in 3 rows, and a row's claims are resampled together.
        (claims,) = report["criteria"]
        assert (claims["criterion"], claims["n"], claims["rows"], claims["agreement"]) == (
            "factuality.claim",
            6,
            3,
            0.5,
        )
        # Every claim decides its row: no row has both claims agreeing.
        assert (report["row_level"]["rows"], report["row_level"]["agreeing"]) == (3, 0)


class TestViewerRatings:
    """👍/👎 from promptfoo's viewer against each row's final verdict: non-blind, never under the 90 % bar."""

    @staticmethod
    def _files(tmp_path: Path, ratings: dict[str, bool | None]) -> tuple[Path, Path]:
        """The eval's own results (final verdicts: i1, i2 pass; i3 fails; i4 pass; i5 unscored) and its
        export after rating, where each rated row's pass is the rating (as the viewer stores it)."""
        v = {"clear_next_steps": "Yes"}
        verdicts = {"i1": True, "i2": True, "i3": False, "i4": True, "i5": False}
        results = [row(i, "C0", verdicts=v, success=ok, judge_status="unscored" if i == "i5" else "scored")
                   for i, ok in verdicts.items()]  # fmt: skip
        export = [
            row(i, "C0", verdicts=v, success=verdicts[i] if ratings.get(i) is None else bool(ratings[i]),
                human=ratings.get(i), judge_status="unscored" if i == "i5" else "scored")
            for i in verdicts
        ]  # fmt: skip
        return write(tmp_path / "results.json", results), write(tmp_path / "export.json", export)

    def test_compared_with_the_final_verdict(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        # i1 👍 on a pass, i2 👎 on a pass, i3 👎 on a fail, i5 rated but unscored, i4 not rated.
        results, export = self._files(tmp_path, {"i1": True, "i2": False, "i3": False, "i5": True})
        assert main(["calibrate", "score", str(results), "--ratings", str(export), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        (entry,) = report["criteria"]
        assert (report["graded"], report["not_rated"], report["unscored"], entry["n"]) == (3, 1, 1, 3)
        assert entry["agreement"] == pytest.approx(2 / 3, abs=1e-4)
        # rows: the person's fail / pass / n/a; columns: the final verdict. i1 pass·pass, i2 fail·pass, i3 fail·fail.
        assert entry["confusion"]["matrix"] == [[1, 1, 0], [0, 1, 0], [0, 0, 0]]
        assert report["blind"] is False and report["label"] == NON_BLIND
        assert report["threshold"] is None and report["below_threshold"] is None
        assert entry["below_threshold"] is None and report["overall"]["below_threshold"] is None

    def test_text_is_labelled_and_has_no_threshold(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results, export = self._files(tmp_path, {"i1": False, "i2": False, "i3": False})
        assert main(["calibrate", "score", str(results), "--ratings", str(export)]) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[0].startswith("Viewer ratings — non-blind (graders saw the judge's chips)")
        assert "Below the" not in out and "threshold (docs-QA seed)" not in out

    def test_the_exports_own_verdicts_are_the_ratings(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Rating a row sets its pass to the rating: the export cannot be its own verdict file."""
        _, export = self._files(tmp_path, {"i1": False})
        assert all(r.passed is False for r in load_rows(export) if r.human is not None)
        assert main(["calibrate", "score", str(export), "--ratings", str(export)]) == 2
        assert capsys.readouterr().err.startswith(
            f"grounding-eval: error: {export}: its rows carry viewer ratings, and a rating replaces the row's verdict"
        )

    def test_another_eval(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        results, export = self._files(tmp_path, {"i1": True})
        other = write(
            tmp_path / "other.json", json.loads(export.read_text())["results"]["results"], evalId="eval-x"
        )
        assert main(["calibrate", "score", str(results), "--ratings", str(other)]) == 2
        assert capsys.readouterr().err == (
            f"grounding-eval: error: {other}: its ratings are of eval 'eval-x', but {results} is eval 'eval-test'\n"
        )
        stranger = write(tmp_path / "stranger.json", [row("zz", "C0", verdicts={"a": "Yes"}, human=True)])
        assert main(["calibrate", "score", str(results), "--ratings", str(stranger)]) == 2
        assert "rated row 'zz-C0-model-a' is not in" in capsys.readouterr().err

    def test_no_ratings(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        results, export = self._files(tmp_path, {})
        assert main(["calibrate", "score", str(results), "--ratings", str(export)]) == 2
        assert "no scored row carries a human rating" in capsys.readouterr().err

    def test_neither_sheet_nor_ratings(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        results, _ = self._files(tmp_path, {})
        assert main(["calibrate", "score", str(results)]) == 2
        assert capsys.readouterr().err == (
            "grounding-eval: error: calibrate score needs a graded SHEET_CSV, or --ratings EXPORT_JSON for "
            "ratings made in promptfoo's viewer (not both)\n"
        )


class TestKeyFile:
    """The sheet is scored only against the results file it was drawn from (the key's results_sha256)."""

    def test_sheet_of_another_run(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        sheet = tmp_path / "sheet.csv"
        assert (
            main(["calibrate", "sample", str(REAL), "--fraction", "0.1", "--seed", "3", "-o", str(sheet)])
            == 0
        )
        other = FIXTURES / "round3_errors.json"  # the same items, another run
        capsys.readouterr()
        assert main(["calibrate", "score", str(other), str(sheet)]) == 2
        real_sha = hashlib.sha256(REAL.read_bytes()).hexdigest()[:12]
        other_sha = hashlib.sha256(other.read_bytes()).hexdigest()[:12]
        assert capsys.readouterr().err == (
            f"grounding-eval: error: {sheet}: drawn from {str(REAL)!r} (sha256 {real_sha}…), not from {other} "
            f"(sha256 {other_sha}…): score it against the results file it was drawn from\n"
        )

    def test_missing_key(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        results = _judged(tmp_path)
        sheet = _sheet(tmp_path / "s.csv", [])
        assert main(["calibrate", "score", str(results), str(sheet)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"grounding-eval: error: {tmp_path / 's.key.json'}: ") and err.count("\n") == 1


def _golden(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = yaml.safe_load((GOLDEN / name).read_text(encoding="utf-8"))["cases"]
    return cases


class TestAllocation:
    """calibrate sample draws the share asked for (tests/golden/calibration_allocation.yaml, by hand)."""

    @pytest.mark.parametrize("case", _golden("calibration_allocation.yaml"), ids=lambda c: c["id"])
    def test_golden(self, case: dict[str, Any]) -> None:
        sizes = {tuple(k.split("/")): v for k, v in case["sizes"].items()}
        if "refused" in case:
            with pytest.raises(ValueError) as caught:
                allocate(sizes, fraction=case["fraction"], low=0.1, high=0.2, min_per_stratum=1)
            assert str(caught.value) == case["refused"]
            return
        got = allocate(sizes, fraction=case["fraction"], low=0.1, high=0.2, min_per_stratum=1)
        expected = case["expected"]
        assert {"/".join(s): k for s, k in got.per_stratum.items() if k} == {
            s: k for s, k in expected["drawn"].items() if k
        }
        assert (got.total, got.topped_up, len(got.empty)) == (
            expected["total"],
            expected["topped_up"],
            expected["empty"],
        )

    @settings(max_examples=300, deadline=None)
    @given(
        sizes=st.lists(st.one_of(st.integers(1, 3), st.integers(1, 40)), min_size=1, max_size=12),
        percent=st.integers(10, 20),
    )
    def test_share_and_quotas(self, sizes: list[int], percent: int) -> None:
        """The total is within 10–20 % and nearest the asked share; with at least as many rows as strata
        it is exactly that share and every stratum has a row; each stratum is within one row of its
        quota when no minimum was needed, and never above its quota's ceiling when one was."""
        strata: dict[tuple[str, ...], int] = {(f"s{i:02d}",): n for i, n in enumerate(sizes)}
        n = sum(sizes)
        fraction = percent / 100
        # Counts within 10–20 % of n, worked with integers: 10·k ≥ n and 5·k ≤ n.
        allowed = [k for k in range(n + 1) if 10 * k >= n and 5 * k <= n]
        if not allowed:
            event("refused")
            with pytest.raises(ValueError):
                allocate(strata, fraction=fraction, low=0.1, high=0.2, min_per_stratum=1)
            return
        got = allocate(strata, fraction=fraction, low=0.1, high=0.2, min_per_stratum=1)
        wanted = Fraction(percent * n, 100)
        nearest = min(allowed, key=lambda k: (abs(k - wanted), -k))  # halves up
        assert got.target == nearest
        assert got.total in allowed
        assert all(0 <= k <= strata[s] for s, k in got.per_stratum.items())
        quotas = {s: Fraction(got.target * strata[s], n) for s in strata}
        if len(sizes) <= nearest:
            event("K rows cover every stratum")
            assert got.total == nearest and min(got.per_stratum.values()) >= 1
            assert all(k <= math.ceil(quotas[s]) for s, k in got.per_stratum.items() if k > 1)
        elif 5 * len(sizes) <= n:
            event("one row each, above K")
            assert set(got.per_stratum.values()) == {1} and got.total == len(sizes)
        else:
            event("too many strata: some named")
            assert got.total == nearest
            assert all(quotas[s] - 1 < k < quotas[s] + 1 for s, k in got.per_stratum.items())
            assert got.empty and set(got.empty) == {s for s, k in got.per_stratum.items() if k == 0}
        if not got.topped_up:
            event("largest remainder only")
            assert all(quotas[s] - 1 < k < quotas[s] + 1 for s, k in got.per_stratum.items())
        assert not got.topped_up or not got.empty


def _hand_kappa(pairs: list[tuple[int, int]], k: int) -> Fraction | None:
    """(po − pe) / (1 − pe), in exact fractions; None when pe = 1."""
    n = len(pairs)
    po = Fraction(sum(h == j for h, j in pairs), n)
    pe = sum(
        Fraction(sum(h == c for h, _ in pairs), n) * Fraction(sum(j == c for _, j in pairs), n)
        for c in range(k)
    )
    return None if pe == 1 else (po - pe) / (1 - pe)


def _hand_stats(
    rows: list[dict[str, list[int]]], k: int, decides: list[str], kappa_criteria: list[str]
) -> dict[str, Any]:
    """Per criterion, macro and row-level figures of ``rows``, by plain loops over the rows."""
    criteria = sorted({c for r in rows for c in r})
    out: dict[str, Any] = {"criteria": {}}
    for c in criteria:
        pairs = [tuple(r[c]) for r in rows if c in r]
        if pairs:
            out["criteria"][c] = {"agreement": Fraction(sum(h == j for h, j in pairs), len(pairs)),
                                  "kappa": _hand_kappa(pairs, k)}  # type: ignore[arg-type]  # fmt: skip
    present = out["criteria"].values()
    out["macro_agreement"] = sum(e["agreement"] for e in present) / len(present)
    kappas = [out["criteria"][c]["kappa"] for c in kappa_criteria if c in out["criteria"]]
    kappas = [x for x in kappas if x is not None]
    out["macro_kappa"] = sum(kappas) / len(kappas) if kappas else None
    compared = [all(r[c][0] == r[c][1] for c in decides if c in r) for r in rows]
    out["rows"] = Fraction(sum(compared), len(compared))
    return out


def _hand_percentile(values: list[float], q: float) -> float:
    """NumPy's default ("linear") percentile, written out: position (n − 1)·q between order statistics."""
    v = sorted(values)
    h = (len(v) - 1) * q
    lo = math.floor(h)
    return v[lo] + (h - lo) * (v[min(lo + 1, len(v) - 1)] - v[lo])


def _run(case: dict[str, Any], *, resamples: int, seed: int) -> Any:
    rows, k = case["rows"], case["k"]
    graded = [Graded(i, c, h, j) for i, r in enumerate(rows) for c, (h, j) in r.items()]
    row_agree = [all(r[c][0] == r[c][1] for c in case["decides"] if c in r) for r in rows]
    return item_agreement(graded, items=len(rows), categories={c: k for c in {g.criterion for g in graded}},
                          row_agree=row_agree, resamples=resamples, seed=seed)  # fmt: skip


class TestItemBootstrap:
    """Statistics on the row, its criteria together (tests/golden/calibration_bootstrap.yaml)."""

    @pytest.mark.parametrize("case", _golden("calibration_bootstrap.yaml"), ids=lambda c: c["id"])
    def test_point_values_by_hand(self, case: dict[str, Any]) -> None:
        got = _run(case, resamples=200, seed=1)
        expected = case["expected"]
        by = {c.criterion: c for c in got.criteria}
        assert sorted(by) == sorted(expected["criteria"])
        for name, e in expected["criteria"].items():
            assert by[name].agreement == pytest.approx(e["agreement"])
            assert (by[name].kappa is None) == (e["kappa"] is None)
            if e["kappa"] is not None:
                assert by[name].kappa == pytest.approx(e["kappa"])
        assert got.macro_agreement == pytest.approx(expected["macro_agreement"])
        assert got.macro_kappa == pytest.approx(expected["macro_kappa"])
        assert (got.rows_compared, got.rows_agreeing) == (
            expected["rows"]["compared"],
            expected["rows"]["agreeing"],
        )
        # Today's pooled figure (every unit of every criterion as one sample) is not what is reported.
        units = [(h, j) for r in case["rows"] for h, j in r.values()]
        pooled = agreement(
            [h for h, _ in units], [j for _, j in units], case["k"], ordinal=False, resamples=50, seed=1
        )
        assert pooled.agreement == pytest.approx(expected["pooled"]["agreement"])
        assert pooled.kappa == pytest.approx(expected["pooled"]["kappa"])

    @pytest.mark.parametrize("seed", [1, 13, 2026])
    @pytest.mark.parametrize("case", _golden("calibration_bootstrap.yaml"), ids=lambda c: c["id"])
    def test_intervals_equal_a_naive_row_bootstrap(self, case: dict[str, Any], seed: int) -> None:
        """Same seed contract, the statistic recomputed on each resample of rows by plain loops."""
        resamples, rows = 300, case["rows"]
        got = _run(case, resamples=resamples, seed=seed)
        idx = np.random.default_rng(seed).integers(0, len(rows), size=(resamples, len(rows)))
        kappa_criteria = list(got.kappa_criteria)
        draws = [
            _hand_stats([rows[i] for i in line], case["k"], case["decides"], kappa_criteria) for line in idx
        ]

        def interval(values: list[Any]) -> tuple[float, float]:
            finite = [float(v) for v in values if v is not None]
            return _hand_percentile(finite, 0.025), _hand_percentile(finite, 0.975)

        for c in got.criteria:
            agree = [
                d["criteria"][c.criterion]["agreement"] if c.criterion in d["criteria"] else None
                for d in draws
            ]
            assert c.agreement_ci == pytest.approx(interval(agree), abs=1e-12)
            if c.kappa is not None:
                kappa = [d["criteria"].get(c.criterion, {}).get("kappa") for d in draws]
                assert c.kappa_ci == pytest.approx(interval(kappa), abs=1e-12)
        assert got.macro_agreement_ci == pytest.approx(
            interval([d["macro_agreement"] for d in draws]), abs=1e-12
        )
        if got.macro_kappa is not None:
            assert got.macro_kappa_ci == pytest.approx(interval([d["macro_kappa"] for d in draws]), abs=1e-12)
        assert got.rows_share_ci == pytest.approx(interval([d["rows"] for d in draws]), abs=1e-12)

    def test_coverage_over_many_seeds(self) -> None:
        """Rows whose criteria agree or disagree together (the person and judge read the same answer):
        over 200 simulated studies of 40 rows × 8 criteria, where a row agrees throughout with probability
        0.8, the row bootstrap's 95 % interval of the macro agreement covers 0.8 in at least 88 % of them
        (binomial sd ≈ 1.5 points at 95 %); the sheet-line bootstrap of the pooled agreement, as the code
        did before, covers it in at most 70 % (it treats 320 lines as independent)."""
        rng = np.random.default_rng(20261201)
        covered_rows = covered_lines = 0
        for study in range(200):
            agrees = rng.random(40) < 0.8
            graded = [Graded(i, f"c{c}", 1, 1 if agrees[i] else 0) for i in range(40) for c in range(8)]
            got = item_agreement(graded, items=40, categories={f"c{c}": 2 for c in range(8)},
                                 resamples=400, seed=study)  # fmt: skip
            low, high = got.macro_agreement_ci or (math.nan, math.nan)
            covered_rows += low <= 0.8 <= high
            flat = agreement([g.human for g in graded], [g.judge for g in graded], 2, ordinal=False,
                             resamples=400, seed=study)  # fmt: skip
            covered_lines += flat.agreement_ci[0] <= 0.8 <= flat.agreement_ci[1]
        assert covered_rows >= 0.88 * 200, covered_rows
        assert covered_lines <= 0.70 * 200, covered_lines


def test_the_issues_case_per_criterion_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A person who disagrees with the judge on all 7 core criteria of every drawn row: today's pooled
    figure was 74 % (κ 0.60); the report now leads with the 7 criteria at 0 % and 0 rows agreeing."""
    sheet = tmp_path / "sheet.csv"
    assert (
        main(["calibrate", "sample", str(REAL), "--fraction", "0.1", "--seed", "13", "-o", str(sheet)]) == 0
    )
    core = set(ROUND3_CORE)  # the seed's seven core criteria, as the rubric tests spell them
    other = {"Yes": "No", "Partial": "No", "No": "Yes"}
    key = {
        u["unit_id"]: u["judge_verdict"]
        for u in json.loads((tmp_path / "sheet.key.json").read_text())["units"]
    }
    lines = list(csv.DictReader(sheet.open(encoding="utf-8")))
    for line in lines:
        verdict = key[line["unit_id"]]
        line["human_verdict"] = other[verdict] if line["criterion"].split(".", 1)[1] in core else verdict
    _sheet(sheet, lines, SHEET_COLUMNS)
    capsys.readouterr()
    assert main(["calibrate", "score", str(REAL), str(sheet), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows_graded"] == 3 and len(report["criteria"]) == 27
    assert sorted(report["below_threshold"]) == sorted(f"round3.{c}" for c in core)
    assert all(c["agreement"] == 0.0 for c in report["criteria"] if c["criterion"].split(".")[1] in core)
    assert report["overall"]["agreement"] == pytest.approx(20 / 27, abs=1e-4)  # the macro mean, beside:
    assert (report["row_level"]["rows"], report["row_level"]["agreeing"]) == (3, 0)
    # Criteria where both gave one category only have no kappa, and say why.
    undefined = [c for c in report["criteria"] if c["kappa"] is None]
    assert undefined and all(c["kappa_undefined"].startswith("undefined: person and judge gave one category only")
                             for c in undefined)  # fmt: skip
    assert report["overall"]["kappa_criteria"] == 27 - len(undefined)
    # The text says the same.
    assert main(["calibrate", "score", str(REAL), str(sheet)]) == 0
    out = capsys.readouterr().out
    assert "Rows where the person and the judge agree on every core criterion: 0 of 3 (0% [0%, 0%])" in out
    assert "Overall, mean over 27 criteria: agreement 74% [74%, 74%]" in out
    assert "undefined (one category only)" in out


def test_sample_leaves_out_rows_without_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real run with a provider error, a judge ERROR and an unscorable reply: 21 of 24 rows can be graded."""
    sheet = tmp_path / "s.csv"
    assert (
        main(
            [
                "calibrate",
                "sample",
                str(FIXTURES / "round3_errors.json"),
                "--fraction",
                "0.2",
                "--seed",
                "1",
                "-o",
                str(sheet),
            ]
        )
        == 0
    )
    # round(0.2 × 21) = 4 rows (19 %); quotas 4·7/21 = 1.33 each: 1 + 1 + 1 and the last to C0.
    # hr-il-voucher-01 C0's judge errored over a hallucinated URL: a scored failure (unsafe, issue 38),
    # with no judge verdict to grade.
    assert capsys.readouterr().out.splitlines()[:2] == [
        "drew 4 of 21 rows (19.0 %; asked 20 %) from 3 strata: 108 lines",
        "not drawn, counted apart: 2 unscored rows, 1 rows without a judge verdict",
    ]


def test_real_factual_accuracy_claims(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real configs/factual_accuracy.yaml run: a sheet line per claim, scored per claim and overall."""
    results = FIXTURES / "factual_accuracy.json"
    graded = units(load_rows(results))
    assert len(graded) == 22 and {u.scale for u in graded} == {"claim"}
    # A person who marks every claim Supported agrees with the judge's 10 Supported of 22.
    lines = [{"unit_id": u.unit_id, "human_verdict": "Supported", "human_note": ""} for u in graded]
    sheet = _sheet(tmp_path / "s.csv", lines, results=results)
    assert main(["calibrate", "score", str(results), str(sheet), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (overall,) = report["criteria"]
    assert overall["n"] == 22 and overall["agreement"] == pytest.approx(10 / 22, abs=1e-4)
    assert overall["confusion"]["labels"] == [
        "Contradicted",
        "Partially Supported",
        "Supported",
        "Unverifiable",
    ]
    assert overall["confusion"]["matrix"][2] == [0, 3, 10, 9] and overall["kappa"] == 0.0


@pytest.mark.parametrize(
    ("fixture", "rubric", "criteria"),
    [("round1a.json", "v3", 19), ("round2b.json", "v4", 22), ("round3.json", "round3", 27)],
)
def test_every_rubric_criterion_has_its_definition(fixture: str, rubric: str, criteria: int) -> None:
    """Real v3 / v4 / Round 3 runs: each sheet line carries the rubric's own question and verdict definitions."""
    graded = units(load_rows(FIXTURES / fixture))
    assert {u.criterion.split(".", 1)[0] for u in graded} == {rubric}
    assert len({u.criterion for u in graded}) == criteria
    assert all(
        " Yes: " in u.definition and " No: " in u.definition and "{{" not in u.definition for u in graded
    )
