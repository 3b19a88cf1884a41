"""grounding-eval rescore: an existing results file graded again, without promptfoo, as promptfoo grades it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.cli import main
from grounding_eval.judge.rubric import load_rubric, rubric_path
from grounding_eval.rescore import aggregate, rescore_rows
from tests.promptfoo_runs import EvalRun, run_eval, shared_group
from tests.scores import query_id, row_scores

REPO = Path(__file__).resolve().parents[1]
MAIN_JOB_GROUP = shared_group("promptfooconfig.yaml")


@pytest.fixture
def main_job(shared_eval: Callable[[str], EvalRun]) -> Path:
    """The main job's results, written by the pinned promptfoo (offline, recorded answers and judge)."""
    run = shared_eval("promptfooconfig.yaml")
    assert run.returncode in (0, 100), run.tail()
    return run.out


def _graded(rows: list[dict[str, Any]]) -> list[Any]:
    out = []
    for r in rows:
        components = []
        for c in r["gradingResult"]["componentResults"]:
            metadata = json.loads(json.dumps(c.get("metadata") or {}))
            (metadata.get("judge") or {}).pop("timestamp", None)
            assertion = c.get("assertion") or {}
            components.append((c["pass"], c["score"], c["reason"], assertion.get("value"), metadata))
        grading = {k: v for k, v in r["gradingResult"].items() if k != "componentResults"}
        out.append(
            (
                r["id"],
                r["success"],
                r["score"],
                row_scores(r),
                r["failureReason"],
                r.get("error"),
                grading,
                components,
            )
        )
    return out


def _rows(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    return rows


@pytest.mark.e2e
@pytest.mark.xdist_group(MAIN_JOB_GROUP)
def test_source_vars_come_from_the_dataset_or_the_rescore_stops(
    main_job: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The results file keeps no source vars (the beforeAll hook lifted them): rescore rebuilds them from
    the test's dataset, and a dataset that is gone stops it, in one line, before any grading."""
    data = json.loads(main_job.read_text(encoding="utf-8"))
    rows = data["results"]["results"]
    lifted = ["jkb_directory", "jkb_full_content", "jurisdiction"]  # the state, in the metadata too
    assert rows and all(not set(lifted) & set(r["testCase"]["vars"]) for r in rows)
    assert all(r["testCase"]["metadata"]["source_vars"] == lifted for r in rows)
    rows[-1]["testCase"]["metadata"]["dataset"] = str(tmp_path / "gone")
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(data), encoding="utf-8")
    assert main(["rescore", str(moved), "-o", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{moved}: row {len(rows)}: " in err and "dataset folder not found" in err
    assert not (tmp_path / "out.json").exists()


@pytest.mark.e2e
@pytest.mark.xdist_group(MAIN_JOB_GROUP)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_unchanged_results_file_is_graded_exactly_as_promptfoo_graded_it(
    main_job: Path, tmp_path: Path, jobs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "new.json"
    assert main(["rescore", str(main_job), "-o", str(new), "-j", jobs]) == 0
    line = capsys.readouterr().out
    assert line.startswith("rescored 24 rows in ") and "12 passed" in line, line
    before, after = _rows(main_job), _rows(new)
    assert len(after) == 24
    assert _graded(after) == _graded(before)
    data = json.loads(new.read_text(encoding="utf-8"))
    assert data["evalId"].startswith(
        json.loads(main_job.read_text(encoding="utf-8"))["evalId"] + "-rescored-"
    )
    assert data["results"]["stats"]["successes"] == 12 and data["results"]["stats"]["failures"] == 12


@pytest.mark.e2e
@pytest.mark.xdist_group(MAIN_JOB_GROUP)
def test_the_viewer_imports_the_rescored_file(main_job: Path, tmp_path: Path) -> None:
    new = tmp_path / "new.json"
    assert main(["rescore", str(main_job), "-o", str(new)]) == 0
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"}
    done = subprocess.run(
        ["npx", "promptfoo", "import", str(new)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    listed = subprocess.run(
        ["npx", "promptfoo", "list", "evals"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert json.loads(new.read_text(encoding="utf-8"))["evalId"][:20] in listed.stdout


def test_what_is_not_ours_is_kept_and_counted() -> None:
    theirs = {"type": "contains", "value": "Legal"}
    recorded = {
        "pass": False,
        "score": 0.0,
        "reason": "Expected output to contain Legal",
        "assertion": theirs,
    }
    row = {
        "id": "r1",
        "vars": {},
        "prompt": {"raw": "Q"},
        "response": {"output": "An answer."},
        "testCase": {"assert": [theirs], "assertScoringFunction": "file://my_scoring.py:score"},
        "gradingResult": {"componentResults": [recorded]},
    }
    errored = {"id": "r2", "failureReason": 2, "error": "provider down", "response": {"output": ""}}
    rows, kept = rescore_rows([row, errored], None)
    assert kept == {"rows": 1, "assertions": 1, "scoring": 1}
    assert rows[1] is errored
    assert rows[0]["gradingResult"]["componentResults"] == [recorded]
    assert rows[0]["success"] is False and rows[0]["failureReason"] == 1


def test_aggregation_follows_promptfoo() -> None:
    """Weighted mean score; named scores weight-averaged across assertions; metric named by the config."""
    results = [
        {
            "pass": True,
            "score": 1.0,
            "reason": "a",
            "namedScores": {"x": 1.0},
            "componentResults": [{"pass": True}],
        },
        {"pass": False, "score": 0.5, "reason": "b", "namedScores": {"x": 0.0, "y": 0.5}},
    ]
    assertions = [{"type": "python", "weight": 3}, {"type": "python", "metric": "m"}]
    grading = aggregate(results, assertions)
    assert grading["score"] == pytest.approx((3 * 1.0 + 0.5) / 4)
    assert grading["namedScores"] == {"x": pytest.approx(0.75), "m": 0.5, "y": 0.5}
    assert grading["pass"] is False and grading["reason"] == "b"
    assert [c.get("reason") for c in grading["componentResults"]] == ["a", None, "b"]
    assert grading["componentResults"][1]["assertion"] == results[0].get("assertion")


@pytest.mark.parametrize("verdict", ["false", "true", 1, None])
def test_a_kept_pass_counts_only_when_it_is_true(verdict: Any) -> None:
    """A kept assertion's ``pass`` from a received results file is read strictly: ``"false"`` (a string,
    truthy) or ``1`` is not a pass, and the row's reason says what the file held."""
    grading = aggregate([{"pass": True, "score": 1, "reason": "a"}, {"pass": verdict, "score": 1}], [{}, {}])
    assert grading["pass"] is False
    assert (
        grading["reason"].startswith("an assertion's pass is ") and "expected true/false" in grading["reason"]
    )


def test_tokens_are_summed_as_promptfoo_0_123_sums_them() -> None:
    """Without incurredTokenUsage the five counts add up; once one result reports it (a cached grader reply
    incurs nothing), the row's incurredTokenUsage is the others' counts plus that one's."""
    paid = {
        "pass": True,
        "score": 1,
        "tokensUsed": {"total": 30, "prompt": 20, "completion": 10, "numRequests": 1},
    }
    plain = aggregate([paid, {"pass": True, "score": 1}], [{}, {}])["tokensUsed"]
    assert plain == {"total": 30, "prompt": 20, "completion": 10, "cached": 0, "numRequests": 1}
    cached = {
        "pass": True,
        "score": 1,
        "tokensUsed": {"total": 12, "cached": 12},
        "metadata": {"cachedResponse": True},
    }
    used = aggregate([paid, cached], [{}, {}])["tokensUsed"]
    assert used == {
        "total": 42, "prompt": 20, "completion": 10, "cached": 12, "numRequests": 2,
        "incurredTokenUsage": {"total": 30, "prompt": 20, "completion": 10, "cached": 0, "numRequests": 1},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("not json", "line 1: not valid JSON (Expecting value)"),
        ("[]", "not a promptfoo results file"),
        ('{"results": {}}', "not a promptfoo results file"),
        ('{"results": {"results": 3}}', "not a promptfoo results file"),
    ],
)
def test_not_a_results_file_is_one_line(
    tmp_path: Path, content: str, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    assert main(["rescore", str(bad), "-o", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}: {problem}" in err
    assert not (tmp_path / "out.json").exists()


@pytest.mark.e2e
@pytest.mark.xdist_group(MAIN_JOB_GROUP)
def test_report_prints_what_produced_the_rows(main_job: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report ends with each file's provenance: pack version, rubric id@version and hash, dataset."""
    assert main(["report", str(main_job)]) == 0
    out = capsys.readouterr().out
    tail = out[out.index(f"Provenance of {main_job}") :]
    assert "rows with provenance: 24 of 24" in tail
    assert "rubrics: round3@3.0.0 sha256:" in tail and "datasets: sample (24 rows)" in tail


def _judge_decides_config(folder: Path) -> Path:
    """The main job with ``safety_source: judge`` in its judge assertion's config (paths made absolute)."""
    text = (REPO / "promptfooconfig.yaml").read_text(encoding="utf-8").replace("file://", f"file://{REPO}/")
    config = yaml.safe_load(text)
    judge = next(a for a in config["defaultTest"]["assert"] if a["value"].endswith(":judge"))
    judge["config"]["safety_source"] = "judge"
    path = folder / "judge_decides.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.e2e
def test_safety_source_judge_in_promptfoo_and_in_rescore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pinned promptfoo hands the judge's config to the scoring function: every row is decided by the
    judge's own safety verdicts (Round 3's formula worked here from the row's judge metadata), records
    it in ``metadata.safety``, and ``rescore`` grades it the same way."""
    run = run_eval(_judge_decides_config(tmp_path), tmp_path)
    assert run.returncode in (0, 100), run.tail()
    rows = run.rows()
    assert len(rows) == 24
    value = {"Yes": 1.0, "Partial": 0.5, "No": 0.0}
    core = list(load_rubric(rubric_path("round3")).core)  # the seven core criteria, as the rubric lists them
    for row in rows:
        grading = row["gradingResult"]
        judge = next(
            c["metadata"]["judge"]
            for c in grading["componentResults"]
            if "judge" in (c.get("metadata") or {})
        )
        verdicts = judge["verdicts"]
        judge_no = [c for c in ("hallucinated_citation", "jurisdiction_correct", "org_attribution_correct")
                    if verdicts[c] == "No"]  # fmt: skip
        score = sum(value[verdicts[c]] for c in core) / len(core) - 0.3 * len(judge_no)
        passed = score >= 0.5 and not judge_no and verdicts["source_fidelity"] != "No"
        where = (query_id(row), row["prompt"]["label"][:4])
        assert row["success"] is passed, where
        assert row_scores(row)["composite"] == pytest.approx(score, abs=1e-4), where
        assert grading["metadata"]["safety"]["source"] == "judge", where
        assert grading["metadata"]["safety"]["decided_no"] == judge_no, where
    new = tmp_path / "new.json"
    assert main(["rescore", str(run.out), "-o", str(new), "-j", "1"]) == 0
    capsys.readouterr()
    assert _graded(_rows(new)) == _graded(rows)


_METRIC_KEYS = ("score", "testPassCount", "testFailCount", "testErrorCount", "assertPassCount", "assertFailCount",
                "namedScores", "namedScoresCount", "namedScoreWeights")  # fmt: skip


@pytest.mark.e2e
@pytest.mark.xdist_group(MAIN_JOB_GROUP)
def test_prompt_metrics_are_summed_as_promptfoo_sums_them(main_job: Path, tmp_path: Path) -> None:
    """Each prompt's metrics recomputed from the rescored rows equal what the pinned promptfoo wrote for the
    same rows (score, test and assertion counts, named-score sums, counts and weights)."""
    before = json.loads(main_job.read_text(encoding="utf-8"))["results"]["prompts"]
    for prompt in before:  # stale counts: what a file graded with an older directory would hold
        prompt["metrics"]["testPassCount"] = -1
        prompt["metrics"]["namedScores"] = {"stale": 1}
    stale = tmp_path / "stale.json"
    data = json.loads(main_job.read_text(encoding="utf-8"))
    data["results"]["prompts"] = before
    stale.write_text(json.dumps(data), encoding="utf-8")
    new = tmp_path / "new.json"
    assert main(["rescore", str(stale), "-o", str(new), "-j", "1"]) == 0
    written = json.loads(main_job.read_text(encoding="utf-8"))["results"]["prompts"]
    after = json.loads(new.read_text(encoding="utf-8"))["results"]["prompts"]
    assert len(after) == len(written) == 3
    for theirs, ours in zip(written, after, strict=True):
        for key in _METRIC_KEYS:
            assert ours["metrics"][key] == pytest.approx(theirs["metrics"][key]), (theirs["label"][:4], key)
        assert ours["metrics"]["totalLatencyMs"] == theirs["metrics"]["totalLatencyMs"]  # not grading's: kept


_VERIFIER = {"type": "javascript", "value": "file://assertions/grounding.cjs:verifier",
             "config": {"liveness": "offline"}}  # fmt: skip
_FINE = "Call Legal Aid Chicago at (312) 341-1070."
_INVENTED = "Call Legal Aid Chicago at (312) 341-1070 or see https://legal-help.invented/ for forms."


def _graded_row(number: int, prompt: int, output: str | None) -> dict[str, Any]:
    """A row as promptfoo recorded it when every answer passed (an older directory, say)."""
    row: dict[str, Any] = {
        "id": f"r{number}", "testIdx": number, "promptIdx": prompt, "success": output is not None,
        "score": 1.0 if output is not None else 0, "failureReason": 0 if output is not None else 2,
        "namedScores": {"deterministic_verifier_score": 1.0} if output is not None else {},
        "vars": {"jurisdiction": "IL", "query_id": f"q{number}"}, "prompt": {"raw": "Q", "label": f"C{prompt}"},
        "testCase": {"vars": {"jurisdiction": "IL"}, "assert": [_VERIFIER]},
        "gradingResult": {"pass": True, "score": 1.0, "componentResults": [{"pass": True, "assertion": _VERIFIER}]}
        if output is not None else None,
    }  # fmt: skip
    row["response"] = {"output": output} if output is not None else {}
    if output is None:
        row["error"] = "provider down"
    return row


def test_rescore_brings_the_viewer_header_up_to_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's case: the recorded metrics said every graded row passed; after rescoring, an answer with an
    invented URL fails (a HALLUCINATED_URL hard failure), and the prompt's metrics and the stats say so. Worked
    by hand: prompt 0 has r1 (fine: pass), r2 (invented URL: fail), r3 (provider error: kept); prompt 1 has r4
    (fine: pass)."""
    rows = [
        _graded_row(1, 0, _FINE),
        _graded_row(2, 0, _INVENTED),
        _graded_row(3, 0, None),
        _graded_row(4, 1, _FINE),
    ]
    stale = {"score": 2.0, "testPassCount": 2, "testFailCount": 0, "testErrorCount": 1, "assertPassCount": 2,
             "assertFailCount": 0, "namedScores": {"deterministic_verifier_score": 2.0},
             "namedScoresCount": {"deterministic_verifier_score": 2}, "totalLatencyMs": 40, "cost": 0.5,
             "tokenUsage": {"total": 7, "assertions": {"total": 0}}}  # fmt: skip
    prompts = [
        {"label": "C0", "id": "p0", "metrics": stale},
        {"label": "C1", "id": "p1", "metrics": dict(stale)},
    ]
    data = {"evalId": "e1", "results": {"version": 3, "prompts": prompts, "results": rows,
                                        "stats": {"successes": 3, "failures": 0, "errors": 1}}}  # fmt: skip
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    new = tmp_path / "new.json"
    assert main(["rescore", str(path), "-o", str(new), "-j", "1"]) == 0
    assert "2 passed" in capsys.readouterr().out
    out = json.loads(new.read_text(encoding="utf-8"))["results"]
    first, second = (p["metrics"] for p in out["prompts"])
    assert (first["testPassCount"], first["testFailCount"], first["testErrorCount"]) == (1, 1, 1)
    assert first["score"] == pytest.approx(1.0)  # 1 + 0 + the error row's 0
    assert first["namedScores"]["deterministic_verifier_score"] == pytest.approx(1.0)  # 1 + 0
    assert first["namedScoresCount"]["deterministic_verifier_score"] == 2  # no assertion names it: 1 per row
    # The header's chips are the rows' own (a check's score is metadata, not a chip), nothing stale.
    assert set(first["namedScores"]) == set(second["namedScores"]) == {"deterministic_verifier_score"}
    assert (second["testPassCount"], second["testFailCount"], second["testErrorCount"]) == (1, 0, 0)
    assert (
        first["totalLatencyMs"] == 40 and first["cost"] == 0.5 and first["tokenUsage"]["total"] == 7
    )  # kept
    assert out["stats"] == {"successes": 2, "failures": 1, "errors": 1}
