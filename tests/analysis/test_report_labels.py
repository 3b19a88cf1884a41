"""Issue 42: labels that say what they label. A bar's value is written where the bar ends (the point
estimate), not at its interval's top; a confusion matrix names its rows (the person's verdicts) and its
columns (the judge's), in the HTML report and in ``calibrate score``'s text."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.analysis.figures import report_charts
from grounding_eval.analysis.report_data import ReportData
from grounding_eval.analysis.summary import load_results
from grounding_eval.cli import main
from tests.analysis.rows import FIXTURES


class TestValueLabels:
    """Each bar's value label sits at the bar's top, beside the whisker, not at the whisker's end."""

    @pytest.mark.parametrize("name", ["pass-rate", "mean-composite"])
    def test_label_at_the_point_estimate(self, name: str) -> None:
        rows = [r for f in ("round3.json", "round1a.json") for r in load_results(FIXTURES / f).rows]
        (chart,) = [c for c in report_charts(ReportData(rows)) if c.name == name]
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        figure = chart.figure
        canvas = FigureCanvasAgg(figure)
        canvas.draw()  # lays the texts out: their extents are where a reader sees them
        renderer = canvas.get_renderer()
        (ax,) = [a for a in figure.axes if a.patches]
        bars = [p for p in ax.patches if (p.get_gid() or "").startswith("mark-bar-")]
        whiskers = {round(float(seg[0][0]), 6): seg for c in ax.collections for seg in c.get_segments()}
        labelled = 0
        for bar in bars:
            centre = bar.get_x() + bar.get_width() / 2
            value = bar.get_height()
            # the value label is anchored in data coordinates (a group label under the axis is not)
            (label,) = [
                t for t in ax.texts if getattr(t, "xycoords", None) == "data" and abs(t.xy[0] - centre) < 1e-9
            ]
            box = label.get_window_extent(renderer)
            top = ax.transData.transform((centre, value))  # the bar's top, in pixels
            # At the value's height: the label's bottom within a few pixels above the bar's top.
            assert 0 <= box.y0 - top[1] <= 6, (name, label.get_text(), box, top)
            whisker = whiskers.get(round(centre, 6))
            if whisker is None:
                continue
            (_low, high) = sorted(float(y) for _, y in whisker)
            assert high > value + 0.05, (name, centre)  # an interval reaching well past the bar …
            end = ax.transData.transform((centre, high))
            assert box.y1 < end[1] - 10, (name, label.get_text())  # … and the label nowhere near its end
            assert box.x1 <= top[0], (name, label.get_text())  # beside the whisker, never across it
            labelled += 1
        assert labelled >= 3, name  # the fixture's Round 3 bars have intervals


def _graded_sheet(tmp_path: Path) -> Path:
    sheet = tmp_path / "sheet.csv"
    args = ["calibrate", "sample", str(FIXTURES / "round3.json"), "--fraction", "0.2", "--seed", "2"]
    assert main([*args, "-o", str(sheet)]) == 0
    lines = list(csv.DictReader(sheet.open(encoding="utf-8", newline="")))
    grades = ["Yes", "No", "Partial"]
    with sheet.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(lines[0]))
        writer.writeheader()
        writer.writerows({**line, "human_verdict": grades[k % 3]} for k, line in enumerate(lines))
    return sheet


def _score(capsys: pytest.CaptureFixture[str], sheet: Path, *extra: str) -> str:
    assert main(["calibrate", "score", str(FIXTURES / "round3.json"), str(sheet), *extra]) == 0
    return capsys.readouterr().out


class TestConfusionLabels:
    """The matrix's order is written on it: the person's verdicts down the side, the judge's across."""

    def test_html_names_rows_and_columns(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        sheet = _graded_sheet(tmp_path)
        capsys.readouterr()
        criteria = {c["criterion"]: c for c in json.loads(_score(capsys, sheet, "--json"))["criteria"]}
        out = tmp_path / "report.html"
        assert main(["report", str(FIXTURES / "round3.json"), "--html", str(out), "--sheet", str(sheet)]) == 0
        capsys.readouterr()
        section = (
            out.read_text(encoding="utf-8").split('<section id="calibration">', 1)[1].split("</section>")[0]
        )
        tables = re.findall(r'<table class="confusion"><caption>(.*?)</caption>(.*?)</table>', section)
        assert [name for name, _ in tables] == list(criteria)
        for name, table in tables:
            head = re.findall(r"<th>(.*?)</th>", table.split("</thead>")[0])
            assert head == ["person ↓ judge →", "judge No", "judge Partial", "judge Yes"], name
            body = [
                (re.search(r"<th>(.*?)</th>", tr).group(1), [int(n) for n in re.findall(r">(\d+)</td>", tr)])  # type: ignore[union-attr]
                for tr in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])
            ]
            matrix: list[list[int]] = criteria[name]["confusion"]["matrix"]
            assert body == list(zip(["person No", "person Partial", "person Yes"], matrix, strict=True)), name
        # The agreement table no longer carries an unlabelled "3 0 1 | 0 0 0 | …" cell.
        assert not re.search(r"<td>\d+ \d+ \d+ \| ", section)

    def test_text_names_rows_and_columns(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        sheet = _graded_sheet(tmp_path)
        capsys.readouterr()
        report: dict[str, Any] = json.loads(_score(capsys, sheet, "--json"))
        lines = _score(capsys, sheet).splitlines()
        start = lines.index(
            "Confusion per criterion (counts of units; rows: the person's verdict, columns: the judge's)"
        )
        block = lines[start + 1 :]
        for k, criterion in enumerate(report["criteria"]):
            name, head, *rows = block[5 * k : 5 * k + 5]
            assert name == f"  {criterion['criterion']}"
            assert head.split() == [
                "person",
                "↓",
                "judge",
                "→",
                *" ".join(f"judge {v}" for v in ("No", "Partial", "Yes")).split(),
            ]
            labels = ["No", "Partial", "Yes"]
            for label, line, counts in zip(labels, rows, criterion["confusion"]["matrix"], strict=True):
                assert line.split() == ["person", label, *map(str, counts)], (criterion["criterion"], line)
