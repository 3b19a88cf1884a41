"""grounding-eval report: aggregates by round, condition and model; unscored rows counted apart."""

from __future__ import annotations

import json
import re
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.analysis.summary import load_rows, summarize
from grounding_eval.cli import main
from grounding_eval.errors import DataError
from grounding_eval.judge.audit import write_audit
from grounding_eval.outcome import unscored_result
from grounding_eval.scoring.composite import ROUND3_SAFETY_CHECKS
from tests.analysis.rows import REPO, write
from tests.analysis.rows import row as result_row


def _row(condition: str, *, success: bool, composite: float | None, judge: float | None = None,
         hard: tuple[str, ...] = (), status: str = "scored", failure: int = 0,
         urls: tuple[str, ...] = (), url_score: float | None = None) -> dict[str, Any]:  # fmt: skip
    named: dict[str, float] = {"deterministic_verifier_score": 0.0 if hard else 1.0}
    if composite is not None:
        named["composite"] = composite
    if judge is not None:
        named["round3.llm_judge_score"] = judge
    if url_score is not None:
        named["url_allowlist_score"] = url_score
    found = [{"url": f"https://{i}.example/", "status": s} for i, s in enumerate(urls)]
    return {
        "success": success,
        "failureReason": failure,
        "namedScores": named,
        "prompt": {"label": f"{condition}: c.txt: You are …"},
        "provider": {"id": "file://providers/replay.py:call_api", "label": "recorded"},
        "vars": {"jurisdiction": "IL"},
        "testCase": {"metadata": {"round": "3", "jurisdiction": "IL", "topic": "lockout", "risk_tier": "critical"}},
        "gradingResult": {"componentResults": [
            {"metadata": {"verifier": {"urls": found, "hard_failures": [{"safety_check": h} for h in hard]}}},
            {"metadata": {"judge": {"status": status}}},
        ]},
    }  # fmt: skip


def _file(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"evalId": "x", "results": {"results": rows}}), encoding="utf-8")
    return path


ROWS = [
    _row(
        "C0", success=False, composite=0.2, judge=0.5, hard=("jurisdiction_correct", "hallucinated_citation")
    ),
    _row(
        "C0",
        success=True,
        composite=0.8,
        judge=0.8,
        urls=("IN_ALLOWLIST", "UNCHECKED", "UNCHECKED"),
        url_score=1.0,
    ),
    # The judge reply could not be scored: its URLs are counted all the same (the verifier's columns count
    # every verified row: an outage that leaves rows unscored must not select the verifier's means).
    _row("C1", success=False, composite=None, status="unscored", urls=("UNCHECKED",), url_score=None),
    _row(
        "C1", success=True, composite=0.6, judge=0.6, urls=("HALLUCINATED_URL", "IN_ALLOWLIST"), url_score=0.5
    ),
    _row("C1", success=False, composite=None, failure=2),  # a provider error
]


def test_groups_and_means(tmp_path: Path) -> None:
    groups = {
        g.key: g.as_dict(["condition"]) for g in summarize(load_rows(_file(tmp_path, ROWS)), ["condition"])
    }
    c0, c1 = groups[("C0",)], groups[("C1",)]
    assert c0["rows"] == 2 and c0["scored"] == 2 and c0["passed"] == 1 and c0["pass_rate"] == 0.5
    assert c0["mean_composite"] == 0.5 and c0["mean_judge"] == 0.65 and c0["mean_verifier"] == 0.5
    assert c0["safety_no"] == {
        "hallucinated_citation": 1,
        "jurisdiction_correct": 1,
        "org_attribution_correct": 0,
    }
    # Unscored rows are counted, never averaged in as zeros.
    assert (
        c1["rows"] == 3 and c1["unscored"] == 2 and c1["mean_composite"] == 0.6 and c1["mean_verifier"] == 1.0
    )
    # ... and never failures: 1 passed of the 1 scored row.
    assert (c1["scored"], c1["passed"], c1["pass_rate"]) == (1, 1, 1.0)
    # UNCHECKED URLs are counted next to the URL mean, which leaves them out.
    assert (c0["mean_url_allowlist_score"], c0["urls"], c0["urls_unchecked"]) == (1.0, 3, 2)
    assert (c1["mean_url_allowlist_score"], c1["urls"], c1["urls_unchecked"]) == (0.5, 3, 1)


def test_an_assertion_error_makes_the_row_unscored(tmp_path: Path) -> None:
    """A judge that could not grade (its outcome unscored, no judge record): the row is unscored, out of the
    composite and judge means; the verifier's scores are the answer's and count (issue 38 review)."""
    row = _row("C0", success=False, composite=None, url_score=1.0)
    row["gradingResult"]["componentResults"][1] = unscored_result(
        "ERROR (judge unscored)", "no judge provider"
    )
    (group,) = summarize(load_rows(_file(tmp_path, [row])), ["condition"])
    assert group.unscored == 1 and group.composites == group.judges == []
    assert group.verifiers == [1.0] and group.url_scores == [1.0]


def test_other_grouping_keys(tmp_path: Path) -> None:
    groups = summarize(load_rows(_file(tmp_path, ROWS)), ["round", "risk_tier", "provider"])
    assert [g.key for g in groups] == [("3", "critical", "recorded")]
    with pytest.raises(DataError, match="unknown key"):
        summarize([], ["colour"])


def test_cli_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _file(tmp_path, ROWS)
    assert main(["report", str(path), "--by", "condition"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["condition", "rows", "passed/scored", "unscored", "unsafe.nc", "composite", "judge",
                                "verifier", "url", "UNCHECKED", "urls", "halluc.No", "juris.No", "org.No"]  # fmt: skip
    assert lines[1].split() == ["C0", "2", "1/2", "(50%)", "0", "0", "0.500", "0.650", "0.500", "1.000", "2", "3",
                                "1", "1", "0"]  # fmt: skip
    assert lines[2].split()[:5] == ["C1", "3", "1/1", "(100%)", "2"]  # the 2 unscored rows are not failures
    assert main(["report", str(path), "--by", "condition", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [g["condition"] for g in report["groups"]] == ["C0", "C1"]
    assert report["groups"][0]["urls_unchecked"] == 2 and report["groups"][0]["urls"] == 3


@pytest.mark.parametrize(
    ("content", "message"),
    [("{", "line 1: not valid JSON"), ('{"results": {}}', "not a promptfoo results file")],
)
def test_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(content, encoding="utf-8")
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"grounding-eval: error: {path}: {message}") and err.count("\n") == 1


def _with(change: str | tuple[str, ...], value: Any) -> dict[str, Any]:
    """A valid row with the field at ``change`` (a dotted path, or its keys) set to ``value``."""
    row = _row("C0", success=True, composite=0.5, judge=0.5, urls=("UNCHECKED",), url_score=1.0)
    *parents, last = change.split(".") if isinstance(change, str) else change
    target: Any = row
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    target[int(last) if isinstance(target, list) else last] = value
    return row


_COMPONENTS = "gradingResult.componentResults"
# Each a results file that is JSON but not what promptfoo writes (issue 8: a RecursionError or an
# AttributeError before): one line naming the row and the field, exit 2.
HOSTILE_RESULTS = [
    pytest.param('{"results": ' + "[" * 100_000 + "]" * 100_000 + "}", "not readable: nested too deeply", id="deep-nesting"),
    pytest.param('{"results": [1, 2]}', "not a promptfoo results file", id="results-a-list"),
    pytest.param('{"results": {"results": {"a": 1}}}', "not a promptfoo results file", id="rows-an-object"),
    pytest.param('{"results": {"results": [], "results": []}}', "duplicate key 'results' in one object", id="duplicate-key"),
    pytest.param('{"results": {"results": [{"namedScores": {"composite": NaN}}]}}', "row 1 of results.results: NaN is not a JSON number", id="nan"),
    pytest.param([1], "row 1 of results.results is a number, expected an object", id="row-a-number"),
    pytest.param([_with("namedScores", "x")], "row 1 of results.results: namedScores is a string, expected an object", id="named-scores-string"),
    pytest.param([_with("namedScores.composite", "0.5")], "row 1 of results.results: namedScores.composite is a string, expected a number", id="score-a-string"),
    pytest.param([_with(("namedScores", "round3.llm_judge_score"), True)], "row 1 of results.results: namedScores['round3.llm_judge_score'] is true/false, expected a number", id="judge-score-bool"),
    pytest.param([_with("testCase", [])], "row 1 of results.results: testCase is a list, expected an object", id="test-case-list"),
    pytest.param([_with("testCase.metadata.round", {"a": 1})], "row 1 of results.results: testCase.metadata.round is an object, expected text", id="round-an-object"),
    pytest.param([_with("prompt", "C0")], "row 1 of results.results: prompt is a string, expected an object", id="prompt-string"),
    pytest.param([_with(_COMPONENTS, {})], f"row 1 of results.results: {_COMPONENTS} is an object, expected a list", id="components-object"),
    pytest.param([_with(f"{_COMPONENTS}.1", "x")], f"row 1 of results.results: {_COMPONENTS}[1] is a string, expected an object", id="component-string"),
    pytest.param([_with(f"{_COMPONENTS}.1.metadata.judge", "scored")], f"row 1 of results.results: {_COMPONENTS}[1].metadata.judge is a string, expected an object", id="judge-meta-string"),
    pytest.param([_with(f"{_COMPONENTS}.0.metadata.verifier.urls", ["https://a.org"])], "row 1 of results.results: metadata.verifier.urls[0] is a string, expected an object", id="url-a-string"),
    pytest.param([_with(f"{_COMPONENTS}.0.metadata.verifier.hard_failures", [None])], "row 1 of results.results: metadata.verifier.hard_failures[0] is null, expected an object", id="hard-failure-null"),
    pytest.param([_with(f"{_COMPONENTS}.1.metadata.judge.verdicts", ["Yes"])], "row 1 of results.results: metadata.judge.verdicts is a list, expected an object", id="verdicts-list"),
    pytest.param([_with(f"{_COMPONENTS}.1.metadata.judge_usage", {"providers": {"j": {"model": -1}}})], f"row 1 of results.results: {_COMPONENTS}[1].metadata.judge_usage.providers['j'].model is -1, expected a whole number ≥ 0", id="judge-calls-negative"),
    pytest.param([_with(f"{_COMPONENTS}.1.metadata.judge_usage", {"providers": {"j": {"tokens": "9"}}})], f"row 1 of results.results: {_COMPONENTS}[1].metadata.judge_usage.providers['j'].tokens is a string, expected a number", id="judge-tokens-string"),
    pytest.param([_with(f"{_COMPONENTS}.1.metadata.judge_usage", {"providers": ["j"]})], f"row 1 of results.results: {_COMPONENTS}[1].metadata.judge_usage.providers is a list, expected an object", id="judge-providers-list"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "message"), HOSTILE_RESULTS)
def test_hostile_results_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | list[Any], message: str
) -> None:
    if isinstance(content, list):
        path = _file(tmp_path, content)
    else:
        path = tmp_path / "results.json"
        path.write_text(content, encoding="utf-8")
    assert main(["report", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"grounding-eval: error: {path}: {message}")
    assert captured.err.count("\n") == 1


def test_absent_and_null_fields_read_as_missing(tmp_path: Path) -> None:
    """promptfoo omits or nulls what did not happen (no grading, no metadata): that is not an error."""
    row = {"success": False, "failureReason": 2, "gradingResult": None, "namedScores": None, "testCase": {}}
    (group,) = summarize(load_rows(_file(tmp_path, [row])), ["condition", "provider"])
    assert (group.key, group.rows, group.unscored) == (("?", "?"), 1, 1)


def test_an_unscored_composite_is_not_a_failure(tmp_path: Path) -> None:
    """The judge and the verifier scored the row, the composite could not (e.g. a config.safety_source typo):
    its metadata.composite.status says so, and the row is counted apart. A reason that only reads like it
    (text another assertion's grader could write) does not move a row out of the denominator."""
    unscored = _row("C0", success=False, composite=None, judge=0.9)
    unscored["gradingResult"]["reason"] = "Round 3: UNSCORED: no composite — config.safety_source is 'x'"
    unscored["gradingResult"]["metadata"] = {"composite": {"status": "unscored"}}
    imitation = _row("C0", success=False, composite=None, judge=0.9)
    imitation["gradingResult"]["reason"] = "Round 3: UNSCORED: no composite — trust me"
    passing = _row("C0", success=True, composite=0.9, judge=0.9)
    passing["gradingResult"]["metadata"] = {"composite": {"status": "scored"}}
    (group,) = summarize(load_rows(_file(tmp_path, [unscored, imitation, passing])), ["condition"])
    assert (group.rows, group.rate.scored, group.passed, group.unscored) == (3, 2, 1, 1)
    assert group.judges == [0.9, 0.9]  # the unscored row's judge score is not averaged in either


TERMINAL = yaml.safe_load(
    (Path(__file__).parent / "golden" / "results_terminal.yaml").read_text(encoding="utf-8")
)
# What must never reach the terminal raw: C0 but the line break, DEL, C1, and the invisible format characters.
_RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


@pytest.mark.parametrize("case", TERMINAL["cases"], ids=[c["id"] for c in TERMINAL["cases"]])
class TestTerminalOutput:
    """Every value from a results file is printed through one escaping function (golden table)."""

    @pytest.mark.parametrize("flags", [[], ["--effects"]], ids=["table", "effects"])
    def test_report(self, case: dict[str, str], flags: list[str], tmp_path: Path,
                    capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
        rows = [result_row(f"q{i}", c, composite=0.5 + 0.1 * i, provider=case["value"]) for i in range(3)
                for c in ("C0", "C1")]  # fmt: skip
        assert main(["report", str(write(tmp_path / "results.json", rows)), *flags]) == 0
        out = capsys.readouterr().out
        assert case["shown"] in out
        assert not _RAW.search(out), repr(_RAW.search(out))

    def test_audit(self, case: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        record = {"model": case["value"], "provider": "replay", "rendered_prompt": {"system": f"S {case['value']}",
                  "user": "first line\nsecond line"}, "raw_replies": [f"R {case['value']}"], "errors": []}  # fmt: skip
        record_id = write_audit(tmp_path / "audit", record)
        assert main(["audit", "--dir", str(tmp_path / "audit"), record_id]) == 0
        out = capsys.readouterr().out
        assert f"model: {case['shown']}\n" in out
        assert "first line\nsecond line" in out  # a printed block keeps its line breaks
        assert not _RAW.search(out), repr(_RAW.search(out))

    def test_verify(self, case: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """verify quotes the answer in its findings: an invented URL carrying the value is shown escaped."""
        answer = tmp_path / "answer.txt"
        answer.write_text(f"See https://www.example-invented.test/{case['value']} now.", encoding="utf-8")
        main(["verify", str(answer), "--jurisdiction", "IL", "--offline"])
        out = capsys.readouterr().out
        assert not _RAW.search(out), repr(_RAW.search(out))


def _limited(limit: int) -> None:
    """In the child: files may grow to ``limit`` bytes (writing past it fails with EFBIG, not a signal)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


OLD = "the report from an earlier run, which a failing run must leave as it was\n" * 4


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "{results}", "--html", "{out}"],
        ["report", "{results}", "--json", "-o", "{out}"],
        ["rescore", "{results}", "-o", "{out}", "-j", "1"],
    ],
    ids=["html", "json-o", "rescore-o"],
)
def test_a_failing_write_leaves_the_old_file_as_it_was(tmp_path: Path, argv: list[str]) -> None:
    """The write fails halfway (the file-size limit stands in for a full disk): the command says so in one
    line and the existing output is byte-identical (it was truncated to a broken file before)."""
    rows = [result_row(f"q{i}", c, composite=0.5) for i in range(20) for c in ("C0", "C1")]
    results = write(tmp_path / "results.json", rows)
    out = tmp_path / "out" / "report.out"
    out.parent.mkdir()
    out.write_text(OLD, encoding="utf-8")
    command = [a.format(results=results, out=out) for a in argv]
    done = subprocess.run([sys.executable, "-m", "grounding_eval", *command], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False, preexec_fn=lambda: _limited(4096))  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr == f"grounding-eval: error: {out}: cannot write: File too large\n"
    assert out.read_text(encoding="utf-8") == OLD
    assert [p.name for p in out.parent.iterdir()] == ["report.out"]  # no temporary file left behind
    # Without the limit the same command replaces the file whole.
    assert subprocess.run([sys.executable, "-m", "grounding_eval", *command], cwd=REPO, capture_output=True,
                          timeout=120, check=False).returncode == 0  # fmt: skip
    assert out.read_text(encoding="utf-8") != OLD and out.stat().st_size > 4096


def _judged(row: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    row["gradingResult"]["componentResults"][1]["metadata"]["judge_usage"] = {"providers": usage}
    return row


def test_judge_calls_tokens_and_cost_per_round_and_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the judgments cost: summed per round and judge; unknown cost stays unknown, never 0."""
    rows = [
        _judged(_row("C0", success=True, composite=0.8, judge=0.8),
                {"bedrock:claude": {"calls": 2, "model": 2, "tokens": 9000, "cost": 0.03,
                                    "host": "bedrock-runtime.us-east-1.amazonaws.com"}}),
        _judged(_row("C1", success=False, composite=0.2, judge=0.2),
                {"bedrock:claude": {"calls": 1, "cache": 1, "host": "bedrock-runtime.us-east-1.amazonaws.com"}}),
        _judged(_row("C1", success=True, composite=0.9, judge=0.9), {"replay:r.yaml": {"calls": 1, "recorded": 1}}),
        _row("C0", success=True, composite=0.7, judge=0.7),  # an older file: no judge_usage
    ]  # fmt: skip
    path = _file(tmp_path, rows)
    assert main(["report", str(path), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)["judge_calls"]
    assert table == [
        {"round": "3", "judge": "bedrock:claude", "endpoint": "bedrock-runtime.us-east-1.amazonaws.com", "rows": 2,
         "model_calls": 2, "cached": 1, "recorded": 0, "failed": 0, "invalid": 0, "tokens": 9000, "cost": 0.03},
        {"round": "3", "judge": "replay:r.yaml", "endpoint": None, "rows": 1, "model_calls": 0, "cached": 0,
         "recorded": 1, "failed": 0, "invalid": 0, "tokens": 0, "cost": None},
    ]  # fmt: skip
    assert main(["report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Judge calls, tokens and cost, per round and judge" in text
    (line,) = [ln for ln in text.splitlines() if ln.startswith("3") and "bedrock:claude" in ln]
    assert line.split() == ["3", "bedrock:claude", "bedrock-runtime.us-east-1.amazonaws.com", "2", "2", "1", "0",
                            "0", "0", "9,000", "0.0300"]  # fmt: skip


def test_an_invalid_reply_is_a_failed_judge_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 38: 48 invalid replies showed ``failed 0``. A reply that did not parse is a failed call
    (and counted where it came from); a call with no reply too. Files from before ``invalid`` was
    counted give it for judgments left unscored by invalid replies (one ``errors`` entry per reply)."""
    older = _row("C1", success=False, composite=None)
    older["gradingResult"]["componentResults"][1]["metadata"]["judge"] = {
        "status": "unscored", "error": "invalid_reply", "errors": ["no JSON", "no JSON"]}  # fmt: skip
    rows = [
        _judged(_row("C0", success=True, composite=0.8, judge=0.8),
                {"j": {"calls": 2, "model": 2, "invalid": 1, "tokens": 50}}),  # invalid, then valid
        _judged(_row("C1", success=False, composite=None), {"j": {"calls": 2, "model": 1, "failed": 1}}),
        _judged(older, {"j": {"calls": 2, "recorded": 2}}),
    ]  # fmt: skip
    assert main(["report", str(_file(tmp_path, rows)), "--json"]) == 0
    (cell,) = json.loads(capsys.readouterr().out)["judge_calls"]
    assert (cell["model_calls"], cell["recorded"], cell["failed"], cell["invalid"]) == (3, 2, 4, 3)


def test_a_judge_call_killed_or_lost_is_a_failed_judge_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge call killed at the worker's deadline, or lost with a crashed worker, writes no judge_usage
    (the JavaScript side's unscored result): it is one failed call of the judge its assertion names
    (was: no row in the table, so ``failed 0``). A verifier's unscored result is no judge call."""
    killed = _row("C0", success=False, composite=None)
    killed["gradingResult"]["componentResults"][1] = {
        "pass": False, "score": 0, "reason": "ERROR (judge unscored): the call passed its deadline",
        "assertion": {"type": "javascript", "value": "file://assertions/grounding.cjs:judge",
                      "config": {"rubric": "round3", "provider": "replay:{dataset}/judge_replies/round3.yaml"}},
        "metadata": {"outcome": "unscored", "unscored_reason": "the call passed its deadline"}}  # fmt: skip
    lost_verifier = _row("C1", success=False, composite=None)
    lost_verifier["gradingResult"]["componentResults"][0] = {
        "pass": False, "score": 0, "assertion": {"type": "javascript", "value": "file://assertions/grounding.cjs:verifier"},
        "metadata": {"outcome": "unscored", "unscored_reason": "worker crashed"}}  # fmt: skip
    rows = [_judged(_row("C0", success=True, composite=0.8, judge=0.8), {"replay:round3.yaml": {"calls": 1, "recorded": 1}}),
            killed, lost_verifier]  # fmt: skip
    assert main(["report", str(_file(tmp_path, rows)), "--json"]) == 0
    (cell,) = json.loads(capsys.readouterr().out)["judge_calls"]
    assert (cell["judge"], cell["rows"], cell["recorded"], cell["failed"], cell["invalid"]) == (
        "replay:round3.yaml", 2, 1, 1, 0)  # fmt: skip


def test_no_judge_calls_no_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(_file(tmp_path, ROWS))]) == 0
    assert "Judge calls" not in capsys.readouterr().out


def _verified(row: dict[str, Any], **verifier: Any) -> dict[str, Any]:
    row["gradingResult"]["componentResults"][0]["metadata"]["verifier"].update(verifier)
    return row


UNDECIDED_ROWS = [
    # Recorded by the verifier (issue 38's field), a count beyond its kinds' sum shown as "other".
    _verified(_row("C0", success=True, composite=0.8), undecided={"count": 3, "kinds": {"URL": 1, "statute": 1}},
              citations=[{"status": "KNOWN", "kind": "statute"}, {"status": "UNCHECKED", "kind": "statute"}]),
    _verified(_row("C0", success=True, composite=0.8), undecided={"count": 0, "kinds": {}}, citations=[]),
    # An older verifier: derived from its UNCHECKED URLs and citations.
    _verified(_row("C1", success=True, composite=0.8, urls=("UNCHECKED", "IN_ALLOWLIST")),
              citations=[{"status": "UNCHECKED", "kind": "case"}, {"status": "UNKNOWN", "kind": "statute"}]),
    # Older still: no citation check (citations not recorded) and nothing unchecked.
    _row("C1", success=False, composite=0.2),
    # The judge unscored: the answer's findings count all the same.
    _verified(_row("C1.5", success=False, composite=None, status="unscored"),
              undecided={"count": 1, "kinds": {"URL": 1}}, citations=[]),
    _row("C1.5", success=False, composite=None, failure=2),  # a provider error: the verifier did not run
]  # fmt: skip


def test_undecided_findings_and_citations_per_condition(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38: per group, rows with undecided findings, undecided findings by kind, citations by
    status; an older file's undecided findings derived from UNCHECKED (and said so), citations of a
    verifier that predates the check "not recorded", never 0."""
    for raw in UNDECIDED_ROWS[-1:]:
        raw["gradingResult"]["componentResults"] = []
    path = _file(tmp_path, UNDECIDED_ROWS)
    assert main(["report", str(path), "--json", "--by", "condition"]) == 0
    table = {g["condition"]: g for g in json.loads(capsys.readouterr().out)["findings"]}
    c0, c1, c15 = table["C0"], table["C1"], table["C1.5"]
    assert c0["undecided"] == {"recorded_rows": 2, "derived_rows": 0, "rows_with": 1, "count": 3,
                               "kinds": {"URL": 1, "other": 1, "statute": 1}}  # fmt: skip
    assert c0["citations"] == {"recorded_rows": 2, "rows_with": 1, "count": 2,
                               "statuses": {"KNOWN": 1, "UNCHECKED": 1}}  # fmt: skip
    assert c1["undecided"] == {"recorded_rows": 0, "derived_rows": 2, "rows_with": 1, "count": 2,
                               "kinds": {"URL": 1, "case": 1}}  # fmt: skip
    assert c1["citations"] == {"recorded_rows": 1, "rows_with": 1, "count": 2,
                               "statuses": {"UNCHECKED": 1, "UNKNOWN": 1}}  # fmt: skip
    assert (c15["rows"], c15["verifier_rows"], c15["undecided"]["count"]) == (2, 1, 1)
    assert c15["citations"] == {"recorded_rows": 1, "rows_with": 0, "count": 0, "statuses": {}}
    assert main(["report", str(path), "--by", "condition"]) == 0
    text = capsys.readouterr().out
    lines = {
        ln.split()[0]: ln
        for ln in text.split("Undecided findings and legal citations, per group\n")[1].splitlines()[1:4]
    }
    assert re.split(r"\s{2,}", lines["C0"]) == ["C0", "2", "2", "1", "3", "URL 1, other 1, statute 1", "2",
                                                "KNOWN 1, UNCHECKED 1"]  # fmt: skip
    assert re.split(r"\s{2,}", lines["C1"])[3:6] == ["1*", "2*", "URL 1, case 1"]
    assert "* 2 row(s) were verified before undecided findings were recorded" in text
    # The effects view carries the table too; the HTML page shows it in its findings section.
    assert main(["report", str(path), "--effects"]) == 0
    assert "Undecided findings and legal citations, per group" in capsys.readouterr().out
    page = tmp_path / "report.html"
    assert main(["report", str(path), "--html", str(page)]) == 0
    findings = page.read_text(encoding="utf-8").split('<section id="findings">')[1].split("</section>")[0]
    assert "Undecided findings and legal citations, per condition and model" in findings
    assert "URL 1, other 1, statute 1" in findings and "KNOWN 1, UNCHECKED 1" in findings


def test_a_group_lists_its_top_kinds_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hostile or huge file's many kinds: the 20 most frequent are listed, the rest counted as
    "N other kinds" (the total count is every kind's); rows each adding kinds to one group."""
    rows = [_verified(_row("C0", success=True, composite=0.8),
                      undecided={"count": 3 + i, "kinds": {"URL": 2, f"k{i:02}": 1 + i}}) for i in range(30)]  # fmt: skip
    path = _file(tmp_path, rows)
    assert main(["report", str(path), "--json", "--by", "condition"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["findings"]
    undecided = group["undecided"]
    assert undecided["count"] == sum(3 + i for i in range(30))
    assert undecided["kinds"] == {"URL": 60, **{f"k{i:02}": 1 + i for i in range(11, 30)}}
    assert undecided["other_kinds"] == 11
    assert main(["report", str(path), "--by", "condition"]) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("C0") and "URL 60" in ln]
    assert "k29 30, 11 other kinds" in line and "k10" not in line
    page = tmp_path / "report.html"
    assert main(["report", str(path), "--html", str(page)]) == 0
    assert "k29 30, 11 other kinds" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("undecided", [{"count": "3", "kinds": {}}, {"count": 2, "kinds": {"URL": 1.5}}],
                         ids=["count-text", "kind-fraction"])  # fmt: skip
def test_an_odd_undecided_record_is_skipped_not_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], undecided: dict[str, Any]
) -> None:
    """One odd value in ``undecided`` stopped the whole report (exit 2): that record is skipped with a
    note naming its component, and the safety tables stay."""
    odd = _verified(
        _row("C0", success=False, composite=None, hard=("jurisdiction_correct",)), undecided=undecided
    )
    rows = [
        odd,
        _verified(_row("C0", success=True, composite=0.8), undecided={"count": 1, "kinds": {"URL": 1}}),
    ]
    path = _file(tmp_path, rows)
    assert main(["report", str(path), "--json", "--by", "condition"]) == 0
    out = json.loads(capsys.readouterr().out)
    (group,) = out["findings"]
    assert (group["verifier_rows"], group["undecided"]["count"], group["undecided"]["kinds"]) == (
        1,
        1,
        {"URL": 1},
    )
    assert (
        len(group["skipped"]) == 1
        and "componentResults[0].metadata.verifier.undecided" in group["skipped"][0]
    )
    assert out["groups"][0]["rows"] == 2  # the row is still read: its verifier No fails it as unsafe
    assert main(["report", str(path), "--by", "condition"]) == 0
    text = capsys.readouterr().out
    assert "Undecided record skipped (left out of the counts)" in text and "componentResults[0]" in text


def test_control_characters_in_kind_names_are_escaped_in_html(tmp_path: Path) -> None:
    """A kind or status name holding ESC or BEL reached the HTML page raw; now escaped as in the text."""
    rows = [_verified(_row("C0", success=True, composite=0.8), undecided={"count": 1, "kinds": {"U\x1b[2JRL": 1}},
                      citations=[{"status": "K\x07NOWN", "kind": "statute"}])]  # fmt: skip
    page = tmp_path / "report.html"
    assert main(["report", str(_file(tmp_path, rows)), "--html", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\x07" not in text
    assert "U\\x1b[2JRL 1" in text and "K\\x07NOWN 1" in text


def test_no_verifier_no_findings_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The verifier ran on no row: no table (and no zeros); a group where it did not run says so."""
    row = _row("C0", success=False, composite=None, failure=2)
    row["gradingResult"]["componentResults"] = []
    assert main(["report", str(_file(tmp_path, [row])), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []
    rows = [row, _verified(_row("C1", success=True, composite=0.8), citations=[])]
    assert main(["report", str(_file(tmp_path, rows)), "--json", "--by", "condition"]) == 0
    c0 = json.loads(capsys.readouterr().out)["findings"][0]
    assert (c0["condition"], c0["undecided"], c0["citations"]) == ("C0", None, None)


@pytest.mark.parametrize(
    ("undecided", "field"),
    [({"count": -1, "kinds": {}}, "undecided.count"), ({"count": 1, "kinds": {"URL": "1"}}, "undecided.kinds['URL']"),
     ("three", "undecided is")],
)  # fmt: skip
def test_a_hostile_undecided_record_is_skipped_and_named(tmp_path: Path, undecided: Any, field: str) -> None:
    """Refused before (exit 2, every table lost): now that record alone is skipped, its field named."""
    path = _file(tmp_path, [_verified(_row("C0", success=True, composite=0.8), undecided=undecided)])
    (row,) = load_rows(path)
    assert row.undecided is None and row.verifier_ran
    assert (
        row.undecided_skipped is not None
        and f"componentResults[0].metadata.verifier.{field}" in row.undecided_skipped
    )


def test_a_verifier_check_that_raised_is_not_a_verifier_yes(tmp_path: Path) -> None:
    """Issue 38 review: a verifier check that threw decided nothing: the safety checks it feeds are not
    comparable (the verifier's answer is unknown), never ``both_yes``; the check it does not feed is."""
    raw = _row("C0", success=True, composite=0.8, judge=0.8)
    raw["gradingResult"]["componentResults"][0]["metadata"]["verifier"]["undecided"] = {
        "count": 1, "kinds": {"check": 1},
        "items": [{"kind": "check", "what": "phone_org", "why": "IndexError: list index out of range"}]}  # fmt: skip
    raw["gradingResult"]["componentResults"][1]["metadata"]["judge"] |= {
        "rubric_id": "round3", "verdicts": dict.fromkeys(ROUND3_SAFETY_CHECKS, "Yes")}  # fmt: skip
    (row,) = load_rows(_file(tmp_path, [raw]))
    assert row.safety_unknown == ("org_attribution_correct",)
    assert row.agreement("org_attribution_correct") == ("not_comparable", "the verifier's check raised")
    assert row.agreement("hallucinated_citation") == ("both_yes", None)
    assert row.safety_split() is None


def test_item_ids_and_topics_are_read_from_metadata_and_from_older_files_vars(tmp_path: Path) -> None:
    """Issue 42: the generators keep ``query_id`` and ``topic`` in the test's metadata only; a results file
    written before carries them in the vars too, and one of a config of one's own may carry them only there.
    The report reads the same items and topics from each."""
    old = json.loads((REPO / "tests" / "fixtures" / "analysis" / "round3.json").read_text(encoding="utf-8"))
    rows = old["results"]["results"]

    def variant(name: str, drop_from: str) -> Path:
        data = json.loads(json.dumps(old))
        for r in data["results"]["results"]:
            holder = r["vars"] if drop_from == "vars" else r["testCase"]["metadata"]
            for key in ("query_id", "topic"):
                holder.pop(key)
            if drop_from == "vars":
                r["testCase"]["vars"] = {
                    k: v for k, v in r["testCase"].get("vars", {}).items() if k not in ("query_id", "topic")
                }
        path = tmp_path / name
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    expected = sorted(
        (r["testCase"]["metadata"]["query_id"], r["testCase"]["metadata"]["topic"]) for r in rows
    )
    assert expected == sorted((r["vars"]["query_id"], r["vars"]["topic"]) for r in rows)
    for path in (variant("new.json", "vars"), variant("vars_only.json", "metadata")):
        read = load_rows(path)
        assert sorted((r.query_id, r.keys["topic"]) for r in read) == expected, path.name
