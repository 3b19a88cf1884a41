"""One pass-rate definition in every output of ``grounding-eval report`` (issue 18 §3).

The golden table ``tests/golden/pass_rate.yaml`` gives groups of rows (pass, fail, error, unscored) and
the hand-worked rate: passed ÷ scored, unscored rows counted apart, ``n/a`` when nothing is scored. Each
case is written as a promptfoo results file and read back through every output that shows a pass rate:
the default table (text and ``--json``), ``--rates`` (text and JSON), ``--effects``, the docs-QA table
by question type, and the HTML report.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.analysis.summary import load_rows, pass_rate, summarize
from grounding_eval.cli import main
from grounding_eval.outcome import unscored_result
from tests.analysis.rows import row, write

GOLDEN = Path(__file__).resolve().parent / "golden" / "pass_rate.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))["cases"]
VERDICTS = {"engages_with_variables": "Yes"}
# The labels of the pack's assertions' unscored results (grounding.cjs's worker and each Python adapter write
# them with outcome.unscored_result), and the metadata they attach.
ERRORS = {"verifier-error": "ERROR (verifier not run)", "factuality-error": "ERROR (factuality unscored)",
          "docs-qa-error": "ERROR (docs-qa unscored)"}  # fmt: skip
ERROR_METADATA = {"factuality-error": {"factuality": {"status": "error", "score": None, "reason": "x"}}}


def _results(tmp_path: Path, outcomes: list[str]) -> Path:
    """One group (round 3, C1, model-a, question type direct-lookup) with one row per outcome."""
    rows = []
    for i, outcome in enumerate(outcomes):
        item = f"q{i}"
        common: dict[str, Any] = {"question_type": "direct-lookup"}
        if outcome in ("pass", "fail"):
            rows.append(
                row(item, "C1", composite=0.5, success=outcome == "pass", verdicts=VERDICTS, **common)
            )
        elif outcome == "error":
            rows.append(row(item, "C1", success=False, failure=2, **common))
        elif outcome in ("unscored", "unscored-success"):
            rows.append(row(item, "C1", success=outcome == "unscored-success", verdicts=VERDICTS,
                            judge_status="unscored", **common))  # fmt: skip
        elif outcome in ERRORS:
            failed = row(item, "C1", success=False, **common)
            failed["gradingResult"]["componentResults"] = [
                {**unscored_result(ERRORS[outcome], "what went wrong", **ERROR_METADATA.get(outcome, {})),
                 "assertion": {"type": "javascript"}}
            ]  # fmt: skip
            rows.append(failed)
        elif outcome == "unsafe-judge-unscored":
            # The composite's own result as score_round3 returns it for a judge outage under a verifier
            # hard failure (the judge's component says unscored; the row fails as unsafe).
            failed = row(item, "C1", success=False, verdicts=VERDICTS, judge_status="unscored", **common)
            failed["gradingResult"]["metadata"] = {
                "outcome": "fail",
                "composite": {"status": "unscored", "unscored_reason": "the judge reply could not be scored",
                              "safety_from": ["verifier"]},
            }  # fmt: skip
            failed["gradingResult"]["componentResults"][0]["metadata"] |= {
                "outcome": "unscored",
                "unscored_reason": "invalid twice",
            }
            rows.append(failed)
        elif outcome in UNSAFE_OLDER:
            rows.append(_unsafe_older(item, outcome, common))
        elif outcome == "composite-unscored":
            failed = row(item, "C1", success=False, verdicts=VERDICTS, **common)
            failed["gradingResult"]["metadata"] = {"composite": {"status": "unscored"}}
            rows.append(failed)
        else:
            raise AssertionError(f"unknown outcome {outcome!r} in {GOLDEN.name}")
    return write(tmp_path / "results.json", rows)


UNSAFE_OLDER = ("unsafe-composite-crashed", "unsafe-before-safety-from", "unsafe-before-outcome",
                "verifier-no-judge-cleared")  # fmt: skip
_SAFE = {"hallucinated_citation": "Yes", "jurisdiction_correct": "Yes", "org_attribution_correct": "Yes"}


def _unsafe_older(item: str, outcome: str, common: dict[str, Any]) -> dict[str, Any]:
    """A row whose verifier found a hallucinated URL and whose composite wrote no safety verdict: it
    crashed (grounding.cjs's unscored result), or the file predates safety_from or outcome."""
    cleared = outcome == "verifier-no-judge-cleared"
    built = row(item, "C1", success=False, verdicts=VERDICTS | (_SAFE if cleared else {}),
                judge_status="scored" if cleared else "unscored", **common)  # fmt: skip
    judge = built["gradingResult"]["componentResults"][0]
    judge["assertion"]["config"] = {"safety_source": "judge"} if cleared else {}
    failure = {
        "check": "url_allowlist",
        "safety_check": "hallucinated_citation",
        "detail": "hallucinated URL",
    }
    verifier: dict[str, Any] = {"pass": False, "score": 0.0, "reason": "FAIL deterministic verifier 0.00",
                                "assertion": {"type": "javascript"},
                                "metadata": {"verifier": {"hard_failures": [failure], "score": 0.0, "urls": []}}}  # fmt: skip
    built["gradingResult"]["componentResults"].append(verifier)
    if outcome == "unsafe-before-outcome":
        built["gradingResult"]["metadata"] = {"composite": {"status": "unscored"}}
        return built
    why = (
        "composite not computed"
        if outcome != "unsafe-before-safety-from"
        else "the judge reply could not be scored"
    )
    built["gradingResult"]["metadata"] = {"composite": {"status": "unscored"}, "outcome": "unscored",
                                          "unscored_reason": why}  # fmt: skip
    if not cleared:
        judge["metadata"] |= {"outcome": "unscored", "unscored_reason": "invalid twice"}
    verifier["metadata"]["outcome"] = "fail"
    return built


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["report", *args]) == 0
    out: str = capsys.readouterr().out
    return out


def _percent(rate: float | None) -> str:
    """The expected rate as every text output shows it, from the golden decimal."""
    return "n/a" if rate is None else f"{round(rate * 100)}%"


@pytest.fixture(params=CASES, ids=[c["id"] for c in CASES])
def case(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[dict[str, Any], Path]:
    return request.param["expected"], _results(tmp_path, request.param["rows"])


def test_golden_table_is_self_consistent() -> None:
    """The hand-worked numbers agree with the outcomes listed (a typo in the table cannot pass silently)."""
    for c in CASES:
        rows, e = c["rows"], c["expected"]
        # a scored failure (issue 38), whatever the composite wrote
        failed = sum(rows.count(k) for k in ("fail", "unsafe-judge-unscored", *UNSAFE_OLDER[:3]))
        assert e["rows"] == len(rows) and e["scored"] == rows.count("pass") + failed, c["id"]
        assert e["passed"] == rows.count("pass") and e["unscored"] == e["rows"] - e["scored"], c["id"]
        if e["scored"]:
            assert e["rate"] == pytest.approx(e["passed"] / e["scored"], abs=5e-5), c["id"]
        else:
            assert e["rate"] is None and e["text"] == "n/a", c["id"]


def test_pass_rate(case: tuple[dict[str, Any], Path]) -> None:
    expected, path = case
    rate = pass_rate(load_rows(path))
    assert (rate.rows, rate.scored, rate.passed, rate.unscored) == (
        expected["rows"], expected["scored"], expected["passed"], expected["unscored"],
    )  # fmt: skip
    assert rate.rate == (None if expected["rate"] is None else pytest.approx(expected["rate"], abs=5e-5))
    assert rate.text() == expected["text"]


def test_default_table(case: tuple[dict[str, Any], Path], capsys: pytest.CaptureFixture[str]) -> None:
    expected, path = case
    (group,) = summarize(load_rows(path), ["condition"])
    d = group.as_dict(["condition"])
    assert (d["rows"], d["scored"], d["passed"], d["unscored"]) == (
        expected["rows"], expected["scored"], expected["passed"], expected["unscored"],
    )  # fmt: skip
    assert d["pass_rate"] == (None if expected["rate"] is None else pytest.approx(expected["rate"], abs=5e-5))
    lines = _cli(capsys, str(path), "--by", "condition").splitlines()
    assert lines[0].split()[:4] == ["condition", "rows", "passed/scored", "unscored"]
    cells = re.split(r"\s{2,}", lines[1])
    assert cells[:4] == ["C1", str(expected["rows"]), expected["text"], str(expected["unscored"])]
    if "halluc_no" in expected:
        assert d["safety_no"]["hallucinated_citation"] == expected["halluc_no"]
        assert cells[-3] == str(expected["halluc_no"])
    text = _cli(capsys, str(path), "--by", "condition")
    if "unsafe_nc" in expected:
        assert (d["unsafe_no_composite"], d["rate_selected_by_outage"]) == (
            expected["unsafe_nc"],
            expected["selected"],
        )
        assert cells[4] == str(expected["unsafe_nc"])
        assert ("C1: the pass rate is taken over rows selected by an outage" in text) is expected["selected"]
    (json_group,) = json.loads(_cli(capsys, str(path), "--by", "condition", "--json"))["groups"]
    assert {k: json_group[k] for k in ("rows", "scored", "passed", "pass_rate", "unscored")} == {
        k: d[k] for k in ("rows", "scored", "passed", "pass_rate", "unscored")
    }


def test_rates_and_effects(case: tuple[dict[str, Any], Path], capsys: pytest.CaptureFixture[str]) -> None:
    expected, path = case
    (entry,) = json.loads(_cli(capsys, str(path), "--rates", "--json"))
    assert (entry["rows"], entry["n"], entry["passed"], entry["unscored"]) == (
        expected["rows"], expected["scored"], expected["passed"], expected["unscored"],
    )  # fmt: skip
    assert entry["pass_rate"] == (
        None if expected["rate"] is None else pytest.approx(expected["rate"], abs=5e-5)
    )
    if "unsafe_nc" in expected:
        assert (entry["unsafe_no_composite"], entry["selected_by_outage"]) == (
            expected["unsafe_nc"],
            expected["selected"],
        )
    for args in (("--rates",), ("--effects",)):
        out = _cli(capsys, str(path), *args)
        line = next(x for x in out.splitlines() if x.startswith("3 "))
        cells = re.split(r"\s{2,}", line)
        if "unsafe_nc" in expected:
            assert cells[-2] == str(expected["unsafe_nc"]), (args, line)
            assert ("selected by an outage" in out) is expected["selected"], args
        assert cells[3:6] == [str(expected["scored"]), str(expected["passed"]), cells[5]], args
        assert cells[5].split(" [")[0] == _percent(expected["rate"]), (args, line)
        assert cells[-1] == str(expected["unscored"]), (args, line)


def test_question_types(case: tuple[dict[str, Any], Path], capsys: pytest.CaptureFixture[str]) -> None:
    expected, path = case
    entries = json.loads(_cli(capsys, str(path), "--by", "question_type", "--json"))
    for entry in entries:  # the type, then Overall: the same rows
        assert (entry["rows"], entry["scored"], entry["passed"], entry["unscored"]) == (
            expected["rows"], expected["scored"], expected["passed"], expected["unscored"],
        )  # fmt: skip
    text = _cli(capsys, str(path), "--by", "question_type")
    assert f"| Direct lookup | {_percent(expected['rate'])} | {expected['scored']} |" in text


def test_html(case: tuple[dict[str, Any], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected, path = case
    out = tmp_path / "report.html"
    _cli(capsys, str(path), "--html", str(out))
    page = out.read_text(encoding="utf-8")
    section = page.split('<section id="rates">', 1)[1].split("</section>", 1)[0]
    table = section.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    (tr,) = re.findall(r"<tr>(.*?)</tr>", table)
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
    # round, condition, model, scored rows, passed, pass rate, Wilson, composite, bootstrap, unscored
    assert cells[3:6] == [str(expected["scored"]), str(expected["passed"]), _percent(expected["rate"])]
    assert cells[9] == str(expected["unscored"])
    if "unsafe_nc" in expected:
        assert cells[10] == str(expected["unsafe_nc"])
        assert ("selected by an outage" in section) is expected["selected"]
    docs = page.split('<section id="docsqa">', 1)[1].split("</section>", 1)[0]
    typed = next(tr for tr in re.findall(r"<tr>(.*?)</tr>", docs) if "Direct lookup" in tr)
    # Question type, pass rate, n, Wilson, unscored
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", typed)]
    assert cells[1:3] == [_percent(expected["rate"]), str(expected["scored"])]
    assert cells[4] == str(expected["unscored"])
