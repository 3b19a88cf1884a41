"""grounding-eval calibrate sample / score: the grading sheet, the key, agreement and kappa, sheet errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.analysis.calibrate import SHEET_COLUMNS, units
from grounding_eval.analysis.summary import load_rows
from grounding_eval.cli import main
from tests.analysis.rows import FIXTURES, row, write

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
) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(lines)
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
    return _sheet(tmp_path / "graded.csv", lines)


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
        # 3 strata (round 3 × C0, C1, C1.5) of 8 rows: round(0.15 × 8) = 1 row each, 27 criteria per row.
        assert "wrote 81 lines (3 of 24 rows, 3 strata)" in capsys.readouterr().out
        lines = list(csv.DictReader(sheet.open(encoding="utf-8")))
        assert tuple(lines[0]) == SHEET_COLUMNS and len(lines) == 81
        assert sorted({line["condition"] for line in lines}) == ["C0", "C1", "C1.5"]
        assert all(line["human_verdict"] == "" and line["human_note"] == "" for line in lines)
        assert not any("judge" in column for column in SHEET_COLUMNS)
        assert all(line["question"] and line["answer"] and line["definition"] for line in lines)
        c0 = next(line for line in lines if line["condition"] == "C0")
        c15 = next(line for line in lines if line["condition"] == "C1.5")
        assert c0["sources"] == "(no sources shown)" and c15["sources"].startswith("[jkb_full_content]")
        key = json.loads((tmp_path / "sheet.key.json").read_text(encoding="utf-8"))
        assert key["seed"] == 7 and len(key["results_sha256"]) == 64
        assert [u["unit_id"] for u in key["units"]] == [line["unit_id"] for line in lines]
        assert {u["judge_verdict"] for u in key["units"]} <= {"Yes", "Partial", "No"}
        # The same seed draws the same sheet.
        again = tmp_path / "again.csv"
        assert main([*args[:-1], str(again)]) == 0
        assert again.read_text(encoding="utf-8") == sheet.read_text(encoding="utf-8")

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
        assert report["below_threshold"] == ["round3.clear_next_steps"] and report["threshold"] == 0.9
        assert "72–85 %" in report["published_range"]

    def test_text_names_the_threshold_and_the_published_range(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        results = _judged(tmp_path)
        assert main(["calibrate", "score", str(results), str(_people_sheet(tmp_path, results))]) == 0
        out = capsys.readouterr().out
        assert "Below the 90% agreement threshold (docs-QA seed): round3.clear_next_steps." in out
        assert "published LLM-judge/human agreement is typically 72–85 %, so this threshold is strict" in out

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
        assert (
            report["graded"] == len(lines)
            and report["agreement_all"] == 1.0
            and report["below_threshold"] == []
        )

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
        sheet = _sheet(tmp_path / "bad.csv", lines, header or ("unit_id", "human_verdict", "human_note"))
        assert main(["calibrate", "score", str(results), str(sheet)]) == 2
        err = capsys.readouterr().err
        assert err == f"grounding-eval: error: {sheet}: {message}\n"

    def test_short_and_long_lines(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        results = _judged(tmp_path)
        sheet = tmp_path / "ragged.csv"
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

    def test_claims_scored_per_claim(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        rows = [row(f"f{i}", "C1", factuality=_claims("Supported", "Partially Supported")) for i in range(3)]
        results = write(tmp_path / "r.json", rows)
        lines = [{"unit_id": u.unit_id, "human_verdict": "supported" if u.criterion.endswith("c1") else "Contradicted",
                  "human_note": ""} for u in units(load_rows(results))]  # fmt: skip
        assert (
            main(["calibrate", "score", str(results), str(_sheet(tmp_path / "s.csv", lines)), "--json"]) == 0
        )
        report = json.loads(capsys.readouterr().out)
        by = {c["criterion"]: c for c in report["criteria"]}
        assert by["factuality.claim.c1"]["agreement"] == 1.0 and by["factuality.claim.c2"]["agreement"] == 0.0
        assert report["overall"][0]["scale"] == "claim" and report["overall"][0]["agreement"] == 0.5


class TestViewerRatings:
    """A promptfoo export with ratings from the viewer (a ``human`` component): row-level agreement."""

    def test_human_components(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        v = {"clear_next_steps": "Yes"}
        rows = [
            row("i1", "C0", verdicts=v, judge_pass=True, human=True),
            row("i2", "C0", verdicts=v, judge_pass=True, human=False),
            row("i3", "C0", verdicts=v, judge_pass=False, human=False),
            row("i4", "C0", verdicts=v, judge_pass=False),  # not rated: counted, not compared
        ]
        assert main(["calibrate", "score", str(write(tmp_path / "export.json", rows)), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        (entry,) = report["criteria"]
        assert (report["graded"], report["ungraded"], entry["n"], entry["agreement"]) == (
            3,
            1,
            3,
            pytest.approx(2 / 3, abs=1e-4),
        )
        # rows: the person's fail / pass / n/a; columns: the judge's. i1 pass·pass, i2 fail·pass, i3 fail·fail.
        assert entry["confusion"]["matrix"] == [[1, 1, 0], [0, 1, 0], [0, 0, 0]]

    def test_no_ratings(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        path = write(tmp_path / "export.json", [row("i1", "C0", verdicts={"a": "Yes"})])
        assert main(["calibrate", "score", str(path)]) == 2
        assert "no row carries a human rating" in capsys.readouterr().err


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
    # round(0.2 × 7) = 1 row in each of the three conditions' strata.
    assert "(3 of 21 rows, 3 strata)" in capsys.readouterr().out


def test_real_factual_accuracy_claims(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real configs/factual_accuracy.yaml run: a sheet line per claim, scored per claim and overall."""
    results = FIXTURES / "factual_accuracy.json"
    graded = units(load_rows(results))
    assert len(graded) == 22 and {u.scale for u in graded} == {"claim"}
    # A person who marks every claim Supported agrees with the judge's 10 Supported of 22.
    lines = [{"unit_id": u.unit_id, "human_verdict": "Supported", "human_note": ""} for u in graded]
    assert main(["calibrate", "score", str(results), str(_sheet(tmp_path / "s.csv", lines)), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (overall,) = report["overall"]
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
