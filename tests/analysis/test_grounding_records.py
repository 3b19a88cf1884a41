"""Issue 41, design facts in the report: per item, the records C1 and C1.5 gave the model and where they differ.

Read from the session's offline run of the shipped Round 3 config (``promptfooconfig.yaml``). Expected values
come from the rows' test metadata and the index file, read here with plain set arithmetic and ``json``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.cli import main
from tests.promptfoo_runs import REPO, EvalRun, shared_group

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))]

INDEX = REPO / "datasets" / "sample" / "jkb_index.jsonl"


def _index() -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in INDEX.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["id"]: row for row in rows}


def _expected(results: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Per item of the file with rows under C1 and C1.5: (ids only in C1, ids only in C1.5), each in its
    condition's order."""
    rows = json.loads(results.read_text(encoding="utf-8"))["results"]["results"]
    conditions: dict[str, set[str]] = {}
    meta: dict[str, dict[str, Any]] = {}
    for row in rows:
        item = row["testCase"]["metadata"]["query_id"]
        conditions.setdefault(item, set()).add(
            row["prompt"]["label"].split(":")[0]
        )  # "C1: prompts/c1.txt: …"
        meta[item] = row["testCase"]["metadata"]
    out = {}
    for item, found in conditions.items():
        if {"C1", "C1.5"} <= found:
            c1, c15 = meta[item]["directory_ids"], meta[item]["full_content_ids"]
            out[item] = ([i for i in c1 if i not in c15], [i for i in c15 if i not in c1])
    return out


@pytest.fixture
def run(shared_eval: Callable[[str], EvalRun], monkeypatch: pytest.MonkeyPatch) -> EvalRun:
    monkeypatch.chdir(REPO)  # the rows name their dataset as the generator was given it: datasets/sample
    return shared_eval("promptfooconfig.yaml")


def _report_json(capsys: pytest.CaptureFixture[str], results: Path) -> dict[str, Any]:
    assert main(["report", str(results), "--json"]) == 0
    table: dict[str, Any] = json.loads(capsys.readouterr().out)["grounding_records"]
    return table


def test_json_per_item(run: EvalRun, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _expected(run.out)
    differing = {item for item, (a, b) in expected.items() if a or b}
    assert len(expected) == 8 and len(differing) == 3  # Round 3's 8 items; 3 lose their legal-aid org
    table = _report_json(capsys, run.out)
    assert (table["items"], table["differ"], table["notes"]) == (8, 3, [])
    index = _index()
    by_item = {entry["item"]: entry for entry in table["per_item"]}
    assert set(by_item) == set(expected)
    for item, (c1_only, c15_only) in expected.items():
        entry = by_item[item]
        assert entry["differs"] == (item in differing)
        assert entry["directory"] == "seed"
        assert [r["id"] for r in entry["c1_only"]] == c1_only
        assert [r["id"] for r in entry["c1_5_only"]] == c15_only
        for record in entry["c1_only"] + entry["c1_5_only"]:
            # promptfoo hands a bare host back with its "/" (https://www.lonestarlegal.org/)
            assert (record["organization"], record["url"].rstrip("/")) == (
                index[record["id"]]["organization"],
                index[record["id"]]["url"].rstrip("/"),
            )
        for record in entry["c1_only"]:
            assert "legal-aid" in index[record["id"]]["topics"]


def test_text_lists_each_differing_item(run: EvalRun, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _expected(run.out)
    assert main(["report", str(run.out)]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index(
        "C1 and C1.5 records (per item: what each condition gave the model, from the rows' test metadata)"
    )
    section = out[start + 1 : out.index("", start)]
    assert section[0].startswith("  C1 and C1.5 give different records for 3 of 8 items")
    index = _index()
    listed = section[1:]
    assert [line.split(":")[0].strip() for line in listed] == [i for i, (a, b) in expected.items() if a or b]
    for line in listed:
        item = line.split(":")[0].strip()
        for record in expected[item][0]:
            assert f"only in C1: {record} ({index[record]['organization']})" in line  # URLs: --json


def test_effects_text_says_it_beside_the_effects(run: EvalRun, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run.out), "--effects"]) == 0
    out = capsys.readouterr().out
    assert "C1.5 − C1" in out
    assert "\n  C1 and C1.5 give different records for 3 of 8 items: for those, C1.5 − C1 compares" in out


def test_html_section(run: EvalRun, tmp_path: Path) -> None:
    expected = _expected(run.out)
    page = tmp_path / "report.html"
    assert main(["report", str(run.out), "--html", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    section = text[text.index('<section id="records">') :]
    section = section[: section.index("</section>")]
    assert "different records for 3 of 8 items" in section
    index = _index()
    for item, (c1_only, _) in expected.items():
        assert (f"<td>{item}</td>" in section) == bool(c1_only)
        for record in c1_only:
            assert html.escape(index[record]["organization"]) in section


def _edited(results: Path, dest: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    data = json.loads(results.read_text(encoding="utf-8"))
    for row in data["results"]["results"]:
        edit(row["testCase"]["metadata"])
    dest.write_text(json.dumps(data), encoding="utf-8")
    return dest


def test_matched_rows_give_the_same_records(
    run: EvalRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows of a run with directory: matched (here, the run's rows with their C1 ids set as the generator
    sets them in that mode) differ nowhere, and say they were matched."""

    def matched(meta: dict[str, Any]) -> None:
        meta["directory"] = "matched"
        meta["directory_ids"] = list(meta["full_content_ids"])

    table = _report_json(capsys, _edited(run.out, tmp_path / "matched.json", matched))
    assert (table["items"], table["differ"]) == (8, 0)
    assert {e["directory"] for e in table["per_item"]} == {"matched"}
    assert main(["report", str(tmp_path / "matched.json")]) == 0
    out = capsys.readouterr().out
    assert "  C1 and C1.5 give the same records for all 8 items" in out
    assert "  8 item(s) ran with directory: matched" in out


def test_rows_without_record_names_give_ids_and_say_so(
    run: EvalRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rows written before grounding_organizations: the same comparison, records named by id, one note."""

    def older(meta: dict[str, Any]) -> None:
        del meta["grounding_organizations"], meta["grounding_urls"]

    table = _report_json(capsys, _edited(run.out, tmp_path / "older.json", older))
    assert table["differ"] == 3
    (note,) = table["notes"]
    assert note.startswith("8 item(s) record no grounding_organizations (")
    assert note.endswith("named by id alone")
    assert all(r["organization"] is None for e in table["per_item"] for r in e["c1_only"])


def test_the_report_reads_the_rows_alone(
    run: EvalRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results file whose dataset is gone (or redacted) names the records all the same."""

    def moved(meta: dict[str, Any]) -> None:
        meta["dataset"] = str(tmp_path / "gone")

    table = _report_json(capsys, _edited(run.out, tmp_path / "moved.json", moved))
    assert (table["differ"], table["notes"]) == (3, [])
    assert all(r["organization"] for e in table["per_item"] for r in e["c1_only"])
