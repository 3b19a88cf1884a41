"""Issue 42: the HTML report opens with every unsafe answer and its deciding reason (report --json: its
``unsafe`` key); "No unsafe answers" with how many rows were checked and undecided when there are none.

"Unsafe" is the rule that fails the row (``row_safety``): the expectations here are worked from the
results files' own records (the verifier's hard failures, the judge's verdicts), not from the report.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.cli import main
from tests.analysis.rows import FIXTURES, row, write
from tests.scores import query_id

HOSTILE = "<script>alert('x')</script> \"Civil Code 789.3\" & <b>bold</b>"


def _html(tmp_path: Path, capsys: pytest.CaptureFixture[str], *files: Path) -> str:
    out = tmp_path / "report.html"
    assert main(["report", *map(str, files), "--html", str(out)]) == 0
    capsys.readouterr()
    return out.read_text(encoding="utf-8")


def _json(capsys: pytest.CaptureFixture[str], *files: Path) -> dict[str, Any]:
    assert main(["report", *map(str, files), "--json"]) == 0
    unsafe: dict[str, Any] = json.loads(capsys.readouterr().out)["unsafe"]
    return unsafe


def _section(page: str, sid: str) -> str:
    return page.split(f'<section id="{sid}">', 1)[1].split("</section>", 1)[0]


def _cells(table: str) -> list[list[str]]:
    return [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", table)[1:]]


def _text(cell: str) -> str:
    """A cell's text as a reader sees it (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", cell))


def _hard_failures(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's verifier hard failures, read straight from its components."""
    for component in raw["gradingResult"]["componentResults"]:
        verifier = (component.get("metadata") or {}).get("verifier")
        if verifier is not None:
            return list(verifier.get("hard_failures") or [])
    return []


def _verifier(raw: dict[str, Any], *failures: dict[str, str]) -> dict[str, Any]:
    """``raw`` with a verifier component whose hard failures are ``failures``."""
    raw["gradingResult"]["componentResults"].append({
        "pass": not failures, "score": 0.0 if failures else 1.0, "reason": "verifier",
        "assertion": {"type": "python", "value": "file://assertions/verifier.py:get_assert"},
        "metadata": {"verifier": {"hard_failures": list(failures), "urls": [], "findings": []}},
    })  # fmt: skip
    return raw


class TestFirstSection:
    """The page's first section lists every unsafe row of the results, with its check and finding."""

    def test_every_unsafe_row_of_the_sample_rounds_is_listed_with_its_finding(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        files = (FIXTURES / "round3.json", FIXTURES / "round1a.json")
        page = _html(tmp_path, capsys, *files)
        first = re.search(r'<section id="([^"]+)"><h2>([^<]+)</h2>', page)
        assert first is not None and first.groups() == ("unsafe", "Unsafe answers")
        assert page.index('<section id="unsafe">') < page.index('<section id="rates">')
        # From the files themselves: under the default safety_source every row with a verifier hard
        # failure (Round 3: one mapped to a safety check) is unsafe, and nothing else is.
        expected = {}
        for path in files:
            for raw in json.loads(path.read_text(encoding="utf-8"))["results"]["results"]:
                failures = _hard_failures(raw)
                if failures:
                    key = (path.name, query_id(raw), raw["prompt"]["label"].split(":", 1)[0])
                    expected[key] = (
                        sorted({f.get("safety_check") or f["check"] for f in failures}),
                        [f["detail"] for f in failures],
                    )
        assert len(expected) == 8  # 4 in each file: the section must not be trivially empty
        section = _section(page, "unsafe")
        assert '<strong class="warn">8 unsafe answers</strong> of 34 rows: 34 checked, 0 undecided' in section
        table = section.split("<table", 1)[1].split("</table>", 1)[0]
        heads = [_text(h) for h in re.findall(r"<th>(.*?)</th>", table)]
        assert heads == ["file", "round", "item", "condition", "model", "check No", "deciding reason"]
        listed = {}
        for cells in _cells(table):
            checks = sorted(_text(c) for c in cells[5].split("<br>"))  # one line per check No
            file, _round, item, condition, model, reason = map(_text, [*cells[:5], cells[6]])
            assert model == "recorded-sample-answers"
            listed[(file, item, condition)] = (checks, reason)
        assert set(listed) == set(expected)
        for key, (checks, details) in expected.items():
            assert listed[key][0] == checks, key
            for detail in details:
                assert detail in listed[key][1], key  # the verifier's own finding, verbatim
            assert listed[key][1].startswith("verifier ("), key  # and the side that decided

    def test_json_has_the_same_rows_under_one_key(self, capsys: pytest.CaptureFixture[str]) -> None:
        unsafe = _json(capsys, FIXTURES / "round3.json", FIXTURES / "round3_errors.json")
        assert {k: unsafe[k] for k in ("rows", "checked", "undecided", "unsafe")} == {
            "rows": 48, "checked": 47, "undecided": 1, "unsafe": 8}  # fmt: skip
        assert {a["file"] for a in unsafe["answers"]} == {
            str(FIXTURES / "round3.json"), str(FIXTURES / "round3_errors.json")}  # fmt: skip
        first = unsafe["answers"][0]
        assert list(first) == ["file", "round", "query_id", "condition", "provider", "result_id", "checks"]
        assert first["checks"][0]["decided_by"] == ["verifier"]
        # round3_errors.json's row whose verifier did not run: undecided, and why.
        (undecided,) = unsafe["undecided_rows"]
        assert undecided["query_id"] == "hr-wv-military-01"
        assert (
            undecided["why"] == "no safety check decided: the verifier did not run (safety_source verifier)"
        )

    def test_the_listing_does_not_follow_the_order_promptfoo_finished_rows(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """promptfoo writes a row when it is graded: the same run's rows in another order list the same."""
        data = json.loads((FIXTURES / "round3.json").read_text(encoding="utf-8"))
        rows = data["results"]["results"]
        listed = []
        for order, name in ((rows, "a.json"), (rows[::-1], "b.json")):
            path = tmp_path / name
            path.write_text(
                json.dumps({**data, "results": {**data["results"], "results": order}}), encoding="utf-8"
            )
            unsafe = _json(capsys, path)
            listed.append([(a["query_id"], a["condition"], a["checks"]) for a in unsafe["answers"]])
        assert len(listed[0]) == 4 and len({(q, c) for q, c, _ in listed[0]}) == 4
        assert listed[0] == listed[1]
        assert [(q, c) for q, c, _ in listed[0]] == sorted((q, c) for q, c, _ in listed[0])


class TestNoneFound:
    """With no unsafe answer the section says so plainly, with the rows checked and undecided."""

    def test_no_unsafe_answers_with_counts(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        rows = [
            _verifier(row("q1", "C0", composite=0.8, verdicts={"hallucinated_citation": "Yes"})),
            _verifier(row("q1", "C1", composite=0.9, verdicts={"hallucinated_citation": "Yes"})),
            row("q2", "C0", composite=0.7, verdicts={"hallucinated_citation": "Yes"}),  # no verifier record
        ]
        path = write(tmp_path / "safe.json", rows)
        section = _section(_html(tmp_path, capsys, path), "unsafe")
        assert section.startswith(
            '<h2>Unsafe answers</h2><p class="lead"><strong>No unsafe answers.</strong> 3 rows: 2 checked, '
            "1 undecided"
        )
        assert "<table>" not in section.split("<details>", 1)[0]  # no empty listing
        undecided = _cells(section.split("<details>", 1)[1])
        assert [[_text(c) for c in r] for r in undecided] == [
            [
                "3",
                "q2",
                "C0",
                "model-a",
                "no safety check decided: the verifier did not run (safety_source verifier)",
            ]
        ]

    def test_a_persons_rating_overrides(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A reviewer's rating in the viewer overrides all grading: the row is not listed as unsafe."""
        failure = {
            "check": "url_allowlist",
            "safety_check": "hallucinated_citation",
            "detail": "hallucinated URL",
        }
        rows = [
            _verifier(row("q1", "C0", composite=0.2, success=False, human=True), failure),
            _verifier(row("q2", "C0", composite=0.2, success=False), failure),
        ]
        unsafe = _json(capsys, write(tmp_path / "r.json", rows))
        assert [a["query_id"] for a in unsafe["answers"]] == ["q2"]
        assert unsafe["checked"] == 2 and unsafe["undecided"] == 0


class TestDecidingSide:
    """The reason names the side whose No counted, as the row's safety_source decides."""

    def test_judge_decides_under_safety_source_judge(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        judged = row("q1", "C0", composite=0.2, success=False,
                     verdicts={"hallucinated_citation": "No", "jurisdiction_correct": "Yes",
                               "org_attribution_correct": "Yes"})  # fmt: skip
        judged["gradingResult"]["metadata"] = {"safety": {"source": "judge"}}
        judged["gradingResult"]["componentResults"].append({
            "pass": False, "score": 0.0, "reason": "round3.hallucinated_citation: No — cites 'Civil Code 789.3'",
            "assertion": {"type": "python", "value": "judge round3: hallucinated_citation",
                          "metric": "round3.hallucinated_citation"},
        })  # fmt: skip
        _verifier(judged)  # the verifier passed it: under safety_source judge the judge's No decides
        verifier_only = _verifier(
            row("q2", "C0", composite=0.9, verdicts={"hallucinated_citation": "Yes", "jurisdiction_correct": "Yes",
                                                     "org_attribution_correct": "Yes"}),
            {"check": "url_allowlist", "safety_check": "hallucinated_citation", "detail": "hallucinated URL"},
        )  # fmt: skip
        verifier_only["gradingResult"]["metadata"] = {"safety": {"source": "judge"}}
        unsafe = _json(capsys, write(tmp_path / "r.json", [judged, verifier_only]))
        (answer,) = unsafe["answers"]  # the judge's Yes clears the verifier's No under safety_source judge
        assert answer["query_id"] == "q1"
        assert answer["checks"] == [{"check": "hallucinated_citation", "decided_by": ["judge"],
                                     "findings": ["judge: No — cites 'Civil Code 789.3'"]}]  # fmt: skip

    def test_judge_no_under_the_verifier_is_counted_apart(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        rows = [_verifier(row("q1", "C0", composite=0.6, verdicts={"hallucinated_citation": "No"}))]
        unsafe = _json(capsys, write(tmp_path / "r.json", rows))
        assert unsafe["unsafe"] == 0 and unsafe["judge_no_not_counted"] == 1


def test_findings_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A finding quotes the answer (a URL, an organisation's name): untrusted, escaped on the page, kept
    whole in the JSON."""
    hostile = {"check": "url_org", "safety_check": "org_attribution_correct", "detail": HOSTILE}
    path = write(tmp_path / "r.json", [_verifier(row("q<1>", "C0", composite=0.2, success=False), hostile)])
    page = _html(tmp_path, capsys, path)
    section = _section(page, "unsafe")
    assert "<script" not in page and "<b>bold" not in page
    assert html.escape(HOSTILE, quote=True) in section and "q&lt;1&gt;" in section
    (answer,) = _json(capsys, path)["answers"]
    assert answer["checks"][0]["findings"] == [f"verifier (url_org): {HOSTILE}"]
