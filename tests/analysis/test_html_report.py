"""grounding-eval report --html: one self-contained page, every section, readable at 2,000 rows."""

from __future__ import annotations

import copy
import csv
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.cli import main
from tests.analysis.rows import FIXTURES, REPO
from tests.browser.viewer import require_chromium
from tests.scores import query_id

SECTIONS = ["unsafe", "rates", "effects", "criteria", "findings", "safety", "docsqa", "records", "length",
            "reliability", "calibration", "provenance"]  # fmt: skip


def _report(tmp_path: Path, *files: Path, extra: tuple[str, ...] = ()) -> str:
    out = tmp_path / "report.html"
    assert main(["report", *map(str, files), "--html", str(out), *extra]) == 0
    return out.read_text(encoding="utf-8")


def test_sample_rounds_make_a_self_contained_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = _report(
        tmp_path, FIXTURES / "round3.json", FIXTURES / "round1a.json", FIXTURES / "round3_errors.json"
    )
    capsys.readouterr()
    for sid in SECTIONS:
        assert f'<section id="{sid}">' in page, sid
    # Nothing fetched at view time: no scripts, stylesheets, images or fonts by URL (a figure's url(#…)
    # names a clip path in the page itself).
    assert not re.search(r"<script|<link|<img|src=|url\((?!#)|@import", page)
    assert page.count('<svg role="img"') >= 4
    assert 'aria-label="Paired condition effects"' in page
    # Provenance: eval ids, config description, rubric versions and provenance, datasets with counts.
    assert "eval-" in page and "Round 3 — High-Risk Challenge items" in page
    assert "round3@3.0.0" in page and "round3-p1" in page and "methods-document" in page
    assert "datasets/sample" in page
    # The findings and the judge-vs-verifier table come from the real rows.
    assert "HALLUCINATED_URL" in page and "judge only no" in page and "verifier only no" in page


def test_safety_split_per_condition(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The hand-made judge-vs-verifier file (tests/fixtures/report): per condition, rows with a verifier No,
    a judge No, both, a judge No the verifier passed, a verifier No only, missing a side; worked by hand
    from its rows (see tests/test_report_safety_agreement.py::TestSplit)."""
    page = _report(tmp_path, REPO / "tests" / "fixtures" / "report" / "safety_agreement.json")
    capsys.readouterr()
    section = page.split('<section id="safety">', 1)[1].split("</section>", 1)[0]
    split = section.split("rows with a No on any check</h3>", 1)[1].split("</table>", 1)[0]
    heads = re.findall(r"<th>(.*?)</th>", split)
    assert heads == ["round", "condition", "model", "rows", "verifier No", "judge No", "both No",
                     "judge disagrees", "verifier No only", "not comparable", "decided by"]  # fmt: skip
    body = [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", split)[1:]]
    assert [b[1:] for b in body] == [
        ["C0", "recorded", "3", "1", "2", "1", "1", "0", "1", "not recorded 3"],
        ["C1", "recorded", "3", "1", "0", "0", "0", "1", "1", "not recorded 3"],
        ["C1.5", "recorded", "3", "1", "1", "1", "0", "1", "2", "not recorded 3"],
    ]


def test_calibration_section_with_a_sheet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sheet = tmp_path / "sheet.csv"
    assert (
        main(
            [
                "calibrate",
                "sample",
                str(FIXTURES / "round3.json"),
                "--fraction",
                "0.1",
                "--seed",
                "2",
                "-o",
                str(sheet),
            ]
        )
        == 0
    )
    lines = list(csv.DictReader(sheet.open(encoding="utf-8", newline="")))
    with sheet.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(lines[0]))
        writer.writeheader()
        writer.writerows({**line, "human_verdict": "No"} for line in lines)  # a strict person: No everywhere
    page = _report(tmp_path, FIXTURES / "round3.json", extra=("--sheet", str(sheet)))
    capsys.readouterr()
    section = page.split('<section id="calibration">', 1)[1].split("</section>", 1)[0]
    assert "units graded by people" in section and "72–85 %" in section and "below it:" in section
    assert "round3.clear_next_steps" in section


def big_results(path: Path, copies: int = 84) -> Path:
    """The real Round 3 rows, 24 × ``copies`` (2,016 rows for 84), as two models on renamed items."""
    data = json.loads((FIXTURES / "round3.json").read_text(encoding="utf-8"))
    rows: list[dict[str, Any]] = []
    for k in range(copies):
        for r in data["results"]["results"]:
            r = copy.deepcopy(r)
            r["testCase"]["metadata"]["query_id"] = f"{query_id(r)}-{k // 2}"
            r["provider"] = {"id": "replay", "label": f"model-{'ab'[k % 2]}"}
            rows.append(r)
    data["results"]["results"] = rows
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_two_thousand_rows_stay_small(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The page's size does not grow with the rows; its time is benchmarks/report_scale.py's, on CPU time."""
    page = _report(tmp_path, big_results(tmp_path / "big.json"))
    capsys.readouterr()
    assert "2016 result rows" in page
    assert len(page) < 1_500_000, len(page)  # aggregates and capped examples, not one line per row


def test_report_in_a_real_browser(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_chromium()
    html = tmp_path / "report.html"
    assert (
        main(
            [
                "report",
                str(big_results(tmp_path / "big.json")),
                str(FIXTURES / "round1a.json"),
                "--html",
                str(html),
            ]
        )
        == 0
    )
    capsys.readouterr()
    shot = tmp_path / "report.png"
    check = subprocess.run(
        ["node", str(REPO / "tests" / "analysis" / "report_check.mjs"), str(html), str(shot)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr[-3000:]
    seen = json.loads(check.stdout.strip().splitlines()[-1])
    assert seen["requests"] == []  # no network at view time
    assert seen["loadMs"] < 2000, seen["loadMs"]
    sections = {s["id"]: s for s in seen["sections"]}
    assert list(sections) == SECTIONS
    assert (
        sections["rates"]["charts"] == 2 and sections["rates"]["marks"] >= 2 * 8
    )  # 2 charts × (3 + 3 + 2) bars
    assert sections["effects"]["charts"] == 1 and sections["effects"]["marks"] >= 9
    assert sections["criteria"]["charts"] >= 2 and sections["criteria"]["marks"] > 100
    # Every unsafe row listed first: 4 of the Round 3 fixture's 24 rows, in each of 84 copies, and round1a's 4.
    assert sections["unsafe"]["heading"] == "Unsafe answers" and sections["unsafe"]["rows"] == 4 * 84 + 4
    assert sections["findings"]["rows"] >= 3 and sections["safety"]["tables"] >= 3  # split, per check, groups
    assert sections["provenance"]["tables"] == 3
    # Every figure reads at the page's width (the hand-drawn bars were 240 px wide) and no text is cut.
    figures = [f for s in seen["sections"] for f in s["figures"]]
    assert len(figures) == sum(s["charts"] for s in seen["sections"]) >= 6
    for figure in figures:
        assert figure["width"] >= 500 and figure["cut"] == [], figure
    # The figures' text is text a reader (and a screen reader) gets: titles, axis titles, labels.
    for text in ("Pass rate by round, model and condition", "Condition, grouped by round and model",
                 "Mean paired difference per item", "hateful_language (No = good)", "model-a"):  # fmt: skip
        assert text in seen["text"], text
    assert shot.stat().st_size > 10_000


def test_a_disagreement_shows_what_each_side_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each listed disagreement carries the judge's reason on that check (the criterion's own component)
    and the verifier's findings mapped to it — escaped, since a judge's reason can quote the answer."""
    data = json.loads((FIXTURES / "round3.json").read_text(encoding="utf-8"))
    rows = data["results"]["results"]
    row = next(r for r in rows if query_id(r) == "hr-mi-utilities-01" and r["prompt"]["label"][:3] == "C0:")
    row["gradingResult"]["componentResults"].append({
        "pass": False, "score": 0.0,
        "reason": "round3.hallucinated_citation: No — cites <script>alert(1)</script> 'Civil Code 789.3'",
        "assertion": {"type": "python", "value": "judge round3: hallucinated_citation",
                      "metric": "round3.hallucinated_citation"},
    })  # fmt: skip
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    page = _report(tmp_path, path)
    capsys.readouterr()
    listing = page.split("<h3>Rows where they disagree</h3>", 1)[1].split("</table>", 1)[0]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", listing)[1:]]
    mine = [c for c in cells if c[0] == "hallucinated_citation" and c[2].startswith("hr-mi-utilities-01 (C0")]
    assert mine == [[
        "hallucinated_citation", "judge only no", "hr-mi-utilities-01 (C0, recorded-sample-answers)",
        "judge: No — cites &lt;script&gt;alert(1)&lt;/script&gt; &#x27;Civil Code 789.3&#x27; | verifier: no finding",
    ]]  # fmt: skip
    assert "<script" not in page


def test_provenance_names_what_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With -r, promptfoo keeps the config's provider list in the results; the rows say who answered, and
    each judged row which judge: those are what the provenance names (issue 21)."""
    from tests.analysis.rows import row, write

    rows = [row("q1", "C0", composite=0.5, verdicts={"jurisdiction_correct": "Yes"}, provider="gpt-live")]
    rows[0]["gradingResult"]["componentResults"][0]["metadata"]["judge_usage"] = {
        "providers": {"bedrock:claude-judge": {"calls": 1, "model": 1, "tokens": 10}}}  # fmt: skip
    config = {"description": "hand-made", "providers": [{"id": "file://providers/replay.py:call_api",
                                                          "label": "recorded-sample-answers"}]}  # fmt: skip
    path = write(tmp_path / "r.json", rows, config=config)
    page = _report(tmp_path, path)
    capsys.readouterr()
    provenance = page[page.index("<h3>Results files</h3>") :]
    assert "gpt-live (openai:chat:gpt-live)" in provenance and "recorded-sample-answers" not in provenance
    judges = provenance[provenance.index("<h3>Judge rubrics</h3>") : provenance.index("<h3>Datasets</h3>")]
    assert "judge (model)" in judges and "bedrock:claude-judge" in judges
