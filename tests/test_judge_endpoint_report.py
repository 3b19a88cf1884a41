"""Where each live judge was asked, in the report: the provenance lines and the judge-calls table (issue 39)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.cli import main
from grounding_eval.provenance import format_provenance, results_provenance
from tests.test_report import _file, _judged, _row

HOST = "judge.example:8443"


def _with_endpoint(row: dict[str, Any]) -> dict[str, Any]:
    judged = _judged(row, {"openai:chat:gpt-4o-mini": {"calls": 1, "model": 1, "tokens": 10, "host": HOST}})
    meta = judged["gradingResult"]["componentResults"][1]["metadata"]
    meta["provenance"] = {"grounding_eval": "0.1.0", "dataset": "sample", "judge_endpoints": [HOST]}
    return judged


def test_the_provenance_names_the_hosts_the_live_judges_were_asked_at() -> None:
    rows = [_with_endpoint(_row("C0", success=True, composite=0.8, judge=0.8)),
            _row("C1", success=True, composite=0.7, judge=0.7)]  # fmt: skip
    summary = results_provenance({"results": {"results": rows}})
    assert summary["judge_endpoints"] == {HOST: 1}
    assert (
        format_provenance(summary)[-1]
        == f"judge endpoints (hosts the live judges were asked at): {HOST} (1 rows)"
    )


def test_a_recorded_judge_adds_no_endpoint_line() -> None:
    summary = results_provenance(
        {"results": {"results": [_row("C0", success=True, composite=0.8, judge=0.8)]}}
    )
    assert not any(line.startswith("judge endpoints") for line in format_provenance(summary))


def test_the_judge_calls_table_has_the_endpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, [_with_endpoint(_row("C0", success=True, composite=0.8, judge=0.8))])
    assert main(["report", str(path), "--json"]) == 0
    (cell,) = json.loads(capsys.readouterr().out)["judge_calls"]
    assert (cell["judge"], cell["endpoint"], cell["model_calls"]) == ("openai:chat:gpt-4o-mini", HOST, 1)
    assert main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    (line,) = [ln for ln in text.splitlines() if "openai:chat:gpt-4o-mini" in ln and ln.startswith("3")]
    assert line.split()[:3] == ["3", "openai:chat:gpt-4o-mini", HOST]
    assert f"judge endpoints (hosts the live judges were asked at): {HOST} (1 rows)" in text
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--html", str(out)]) == 0
    assert f"openai:chat:gpt-4o-mini at {HOST}" in out.read_text(encoding="utf-8")


def test_the_html_report_has_the_judge_calls_table_with_the_endpoint(tmp_path: Path) -> None:
    path = _file(tmp_path, [_with_endpoint(_row("C0", success=True, composite=0.8, judge=0.8)),
                            _row("C1", success=True, composite=0.7, judge=0.7)])  # fmt: skip
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    table = page.split("<h3>Judge calls</h3>", 1)[1].split("</table>", 1)[0]
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>.*?</td>", table, re.S)]
    assert cells[:4] == ["3", "openai:chat:gpt-4o-mini", HOST, "1"]
    assert "–" in cells  # the recorded judge's line: asked at no endpoint
