"""Grading sheets never lose data and never become formulas: ``calibrate sample -o`` refuses an existing
sheet or key, writes only whole files, cells are neutralised against CSV injection and clipped with a
marker past a spreadsheet's cell limit, and the reader reads back every sheet the writer writes.

Golden table: ``tests/golden/calibration_sheets.yaml`` (text → cell → text read back, worked by hand;
headers naming a column twice).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.analysis.calibrate import (
    CELL_LIMIT,
    SHEET_COLUMNS,
    Cell,
    read_cell,
    read_sheet,
    sheet_cell,
    sheet_text,
    write_sample,
)
from grounding_eval.cli import main
from grounding_eval.errors import DataError
from grounding_eval.files import write_text_atomic
from tests.analysis.rows import REPO, row, write

GOLDEN: dict[str, list[dict[str, Any]]] = yaml.safe_load(
    (REPO / "tests" / "golden" / "calibration_sheets.yaml").read_text(encoding="utf-8")
)
CASES = GOLDEN["cases"]


def _text(spec: str | dict[str, Any]) -> str:
    return spec if isinstance(spec, str) else spec["prefix"] + spec["repeat"] * spec["times"]


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _expected_read(case: dict[str, Any]) -> Cell:
    read = case["read"]
    if isinstance(read, str):
        return Cell(read)
    return Cell(_text(case["text"])[: read["head"]], read["length"])


def _sample(results: Path, sheet: Path, *extra: str) -> int:
    return main(
        ["calibrate", "sample", str(results), "--fraction", "0.2", "--seed", "3", "-o", str(sheet), *extra]
    )


def _results(tmp_path: Path, answers: list[str] | None = None, **kwargs: Any) -> Path:
    rows = [row(f"i{k}", "C1", verdicts={"clear_next_steps": "Yes"}, **kwargs) for k in range(10)]
    for k, r in enumerate(rows):
        if answers:
            r["response"]["output"] = answers[k % len(answers)]
    return write(tmp_path / "results.json", rows)


def _grade(sheet: Path, verdict: str = "Yes") -> bytes:
    """Fill every human_verdict as a grader would (through csv, the sheet's own cells kept) and return
    the graded file's bytes."""
    lines = list(csv.reader(io.StringIO(sheet.read_bytes().decode("utf-8"), newline="")))
    column = lines[0].index("human_verdict")
    for line in lines[1:]:
        line[column] = verdict
    buffer = io.StringIO()
    csv.writer(buffer).writerows(lines)
    sheet.write_bytes(buffer.getvalue().encode("utf-8"))
    return sheet.read_bytes()


class TestCells:
    """Each golden text is written as its cell, and read back as the text (or its start, marked clipped)."""

    @pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
    def test_golden(self, case: dict[str, Any]) -> None:
        cell = sheet_cell(_text(case["text"]))
        if isinstance(case["cell"], str):
            assert cell == case["cell"]
        else:
            assert cell.startswith(case["cell"]["starts"])
            assert _units(cell) == case["cell"]["utf16_units"] <= CELL_LIMIT
        assert read_cell(cell) == _expected_read(case)

    def test_the_golden_cells_in_one_real_sheet(self, tmp_path: Path) -> None:
        """Through csv quoting and a UTF-8 file on disk: the reader gives back what the table says."""
        lines = [{"unit_id": c["id"], "answer": _text(c["text"]), "sources": _text(c["text"])} for c in CASES]
        text, clipped = sheet_text(lines, tmp_path / "results.json")
        assert clipped == 2 * sum(1 for c in CASES if isinstance(c["read"], dict) and c["read"]["length"])
        path = tmp_path / "sheet.csv"
        write_text_atomic(path, text)
        header, records = read_sheet(path)
        assert header == SHEET_COLUMNS and len(records) == len(CASES)
        for case, (_, cells) in zip(CASES, records, strict=True):
            assert cells["unit_id"] == Cell(case["id"])
            assert cells["answer"] == cells["sources"] == _expected_read(case)
            assert cells["human_verdict"] == Cell("")


_TRIGGERS = st.sampled_from(["=", "+", "-", "@", "\t", "\r", "'", "\n", '"', ",", "\ud83d", "\udc00", "["])


@st.composite
def _hostile_text(draw: st.DrawFn) -> str:
    """Any text, often starting with triggers and apostrophes, sometimes a forged marker, sometimes long."""
    head = "".join(draw(st.lists(_TRIGGERS, max_size=4)))
    body = draw(st.text(alphabet=st.one_of(st.characters(), _TRIGGERS), max_size=30))
    if draw(st.booleans()):
        body = (
            draw(st.sampled_from(["[grounding-eval clipped this cell: ", sheet_cell("x" * 40_000)[:130]]))
            + body
        )
    if draw(st.integers(0, 4)) == 0:  # long enough to be clipped, or just under the limit
        body *= draw(st.sampled_from([CELL_LIMIT // max(1, len(body)), 40_000 // max(1, len(body)) + 1]))
    return head + body


@pytest.fixture(scope="module")
def sheet_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sheets") / "sheet.csv"


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(_hostile_text(), min_size=1, max_size=3))
def test_round_trip_is_the_identity(sheet_path: Path, texts: list[str]) -> None:
    """Any text → written in a sheet file → read back: the same text (a lone surrogate as U+FFFD), or, past
    the cell limit, its start and its whole length; no cell is a formula or over the limit."""
    lines = [{"unit_id": f"u{k}", "question": t, "answer": t} for k, t in enumerate(texts)]
    text, _ = sheet_text(lines, sheet_path)
    write_text_atomic(sheet_path, text)
    _, records = read_sheet(sheet_path)
    assert len(records) == len(texts)
    for t, (_, cells) in zip(texts, records, strict=True):
        writable = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in t)
        got = cells["answer"]
        assert cells["question"] == got
        if got.clipped:
            event("clipped")
            assert got.length == len(writable) and writable.startswith(got.text) and len(got.text) > 16_000
        else:
            event("escaped" if sheet_cell(t) != writable else "written as it is")
            assert got.text == writable
    raw = list(csv.reader(io.StringIO(sheet_path.read_text(encoding="utf-8"), newline="")))
    for line in raw[1:]:
        assert all(
            _units(c) <= CELL_LIMIT and not c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in line
        )


class TestSampleNeverLosesASheet:
    """calibrate sample -o: an existing sheet or key is refused unless --force; a failing run leaves it."""

    def test_a_graded_sheet_is_not_overwritten(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The red team's case: sampling again over a graded sheet made it ungraded (2 graded → 0)."""
        results, sheet = _results(tmp_path), tmp_path / "sheet.csv"
        assert _sample(results, sheet) == 0
        graded = _grade(sheet)
        key = sheet.with_name("sheet.key.json").read_text(encoding="utf-8")
        capsys.readouterr()
        assert _sample(results, sheet) == 2
        assert capsys.readouterr().err == (
            f"grounding-eval: error: {sheet}: exists (it may hold people's verdicts): use --force to overwrite\n"
        )
        assert sheet.read_bytes() == graded
        assert sheet.with_name("sheet.key.json").read_text(encoding="utf-8") == key
        assert main(["calibrate", "score", str(results), str(sheet), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["graded"] == 2

    def test_a_key_alone_is_not_overwritten(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """sheet.csv and sheet.tsv share sheet.key.json: the key of the other sheet is kept."""
        results = _results(tmp_path)
        assert _sample(results, tmp_path / "sheet.tsv") == 0
        capsys.readouterr()
        key = tmp_path / "sheet.key.json"
        assert _sample(results, tmp_path / "sheet.csv") == 2
        assert capsys.readouterr().err == (
            f"grounding-eval: error: {key}: exists (the key of a sheet drawn before): use --force to overwrite\n"
        )
        assert not (tmp_path / "sheet.csv").exists()

    def test_force_replaces_both(self, tmp_path: Path) -> None:
        results, sheet = _results(tmp_path), tmp_path / "sheet.csv"
        write_sample(results, sheet, fraction=0.2, by=["round"], seed=3)
        graded = _grade(sheet)
        drawn = write_sample(results, sheet, fraction=0.2, by=["round"], seed=4, force=True)
        assert sheet.read_bytes() != graded
        assert json.loads(drawn.key.read_text(encoding="utf-8"))["seed"] == 4

    def test_force_on_the_command_line(self, tmp_path: Path) -> None:
        results, sheet = _results(tmp_path), tmp_path / "sheet.csv"
        assert _sample(results, sheet) == 0
        graded = _grade(sheet)
        assert _sample(results, sheet, "--force") == 0
        assert sheet.read_bytes() != graded
        assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "sheet.csv", "sheet.key.json"]

    def test_the_results_file_is_never_the_sheet(self, tmp_path: Path) -> None:
        results = _results(tmp_path)
        before = results.read_bytes()
        with pytest.raises(DataError, match="is the results file being sampled"):
            write_sample(results, results, fraction=0.2, by=["round"], seed=3, force=True)
        assert results.read_bytes() == before

    def test_a_failing_run_leaves_the_old_sheet(self, tmp_path: Path) -> None:
        """Even with --force, a run that stops (here: a key column over the cell limit) writes nothing."""
        good, sheet = _results(tmp_path), tmp_path / "sheet.csv"
        write_sample(good, sheet, fraction=0.2, by=["round"], seed=3)
        graded = _grade(sheet)
        bad = write(tmp_path / "bad.json", [row(f"i{k}", "C1", verdicts={"clear_next_steps": "Yes"},
                                                provider="p" * 40_000) for k in range(10)])  # fmt: skip
        with pytest.raises(DataError, match="key column is never clipped"):
            write_sample(bad, sheet, fraction=0.2, by=["round"], seed=3, force=True)
        assert sheet.read_bytes() == graded
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            "bad.json",
            "results.json",
            "sheet.csv",
            "sheet.key.json",
        ]

    def test_a_missing_folder_is_one_line(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        sheet = tmp_path / "no" / "sheet.csv"
        assert _sample(_results(tmp_path), sheet) == 2
        assert (
            capsys.readouterr().err
            == f"grounding-eval: error: {sheet}: cannot write: the folder {sheet.parent} does not exist\n"
        )


@pytest.mark.parametrize("case", GOLDEN["hostile_results"], ids=lambda c: c["id"])
def test_hostile_results_reach_the_sheet_inert_and_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: dict[str, Any]
) -> None:
    """What promptfoo and a hostile model put in a results file: the sheet's cells are inert and UTF-8,
    the reader gives the text back, and the graded sheet scores; or one line, and nothing written."""
    fields = {"round_": case["round"]} if "round" in case else {}
    if "provider" in case:
        fields["provider"] = _text(case["provider"])
    answers = [_text(case["answer"])] if "answer" in case else None
    results, sheet = _results(tmp_path, answers, **fields), tmp_path / "s.csv"
    if "error" in case:
        assert _sample(results, sheet) == 2
        assert capsys.readouterr().err == f"grounding-eval: error: {results}: {case['error']}\n"
        assert not sheet.exists() and not sheet.with_name("s.key.json").exists()
        return
    assert _sample(results, sheet) == 0
    summary = capsys.readouterr().out.splitlines()
    assert summary[1:-1] == ([case["summary"]] if "summary" in case else [])
    raw = list(csv.DictReader(io.StringIO(sheet.read_bytes().decode("utf-8"), newline="")))
    _, records = read_sheet(sheet)
    assert len(raw) == len(records) == 2
    for line, (_, cells) in zip(raw, records, strict=True):
        assert {c: line[c] for c in case.get("raw", {})} == case.get("raw", {})
        assert all(line[c].startswith(v) for c, v in case.get("raw_starts", {}).items())
        for column, expected in case["read"].items():
            whole = answers[0] if column == "answer" and answers else None
            if isinstance(expected, str):
                assert cells[column] == Cell(expected)
            else:
                assert whole is not None and cells[column] == Cell(
                    whole[: expected["head"]], expected["length"]
                )
    _grade(sheet, "No")
    capsys.readouterr()
    assert main(["calibrate", "score", str(results), str(sheet), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["graded"] == 2 and report["criteria"][0]["agreement"] == 0.0  # the judge said Yes


@pytest.mark.parametrize("case", GOLDEN["duplicate_headers"], ids=lambda c: c["id"])
def test_a_column_named_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: dict[str, str]
) -> None:
    """Today: the last column of the name wins ("0 graded, 81 ungraded" when it was blank), no error."""
    results, sheet = _results(tmp_path), tmp_path / "s.csv"
    assert _sample(results, sheet) == 0
    uid = read_sheet(sheet)[1][0][1]["unit_id"].text
    capsys.readouterr()
    fields = case["header"].count(",") + 1
    sheet.write_text(f"{case['header']}\n{uid},Yes{',' * (fields - 2)}\n", encoding="utf-8")
    assert main(["calibrate", "score", str(results), str(sheet)]) == 2
    assert capsys.readouterr().err == (
        f"grounding-eval: error: {sheet}: the header names column '{case['column']}' twice "
        f"(columns {case['positions']})\n"
    )
