"""rescore --retest / --panel end to end (issue 41): the judge asked again with its reply cache bypassed, or
other judges asked, both answers kept, and the report's agreement from them — offline from the sample's
RECORDED FIXTURES, and live through promptfoo's ollama provider against a stand-in on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.cli import main
from tests.model_standin import ModelStandin, RecordedJudge
from tests.promptfoo_runs import EvalRun, offline_env, shared_group

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "datasets" / "sample"
RETEST = "replay:{dataset}/judge_replies/round3.retest.yaml"
SECOND = "replay:{dataset}/judge_replies/round3.second_judge.yaml"


@pytest.fixture
def main_job(shared_eval: Callable[[str], EvalRun]) -> Path:
    run = shared_eval("promptfooconfig.yaml")
    assert run.returncode in (0, 100), run.tail()
    return run.out


def _rows(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["results"]["results"]
    return rows


def _fixture_verdicts(name: str) -> dict[str, dict[str, str]]:
    """Each recording's verdicts per criterion, by its key (rubric/item/condition)."""
    out = {}
    for entry in yaml.safe_load((SAMPLE / "judge_replies" / name).read_text(encoding="utf-8")):
        reply = json.loads(entry["replies"][-1])
        out[entry["key"]] = {c: v["verdict"] for c, v in reply["criteria"].items()}
    return out


def _judge(row: dict[str, Any]) -> dict[str, Any]:
    (found,) = [c["metadata"]["judge"] for c in row["gradingResult"]["componentResults"]
                if "judge" in (c.get("metadata") or {})]  # fmt: skip
    return dict(found)


def _key(row: dict[str, Any]) -> str:
    return str(_judge(row)["fixture_key"])


@pytest.mark.e2e
@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_offline_retest_and_panel_keep_both_answers_and_change_no_score(
    main_job: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain, asked = tmp_path / "plain.json", tmp_path / "asked.json"
    assert main(["rescore", str(main_job), "-o", str(plain), "-j", "1"]) == 0
    assert main(["rescore", str(main_job), "-o", str(asked), "-j", "2", "--retest", "0.5", "--seed", "7",
                 "--retest-judge", RETEST, "--panel", SECOND]) == 0  # fmt: skip
    capsys.readouterr()
    before, after = _rows(plain), _rows(asked)
    assert [(r["success"], r["score"], r["namedScores"]) for r in after] == [
        (r["success"], r["score"], r["namedScores"]) for r in before
    ]
    retest, second = _fixture_verdicts("round3.retest.yaml"), _fixture_verdicts("round3.second_judge.yaml")
    retested = [r for r in after if "judge_retest" in r["gradingResult"]["metadata"]]
    assert len(retested) == 12  # round(0.5 × 24)
    for row in retested:
        entry = row["gradingResult"]["metadata"]["judge_retest"]
        assert entry["status"] == "scored" and entry["verdicts"] == retest[_key(row)]
        assert entry["provider"] == "replay:datasets/sample/judge_replies/round3.retest.yaml"
    for row in after:
        (entry,) = row["gradingResult"]["metadata"]["judge_panel"]
        assert entry["verdicts"] == second[_key(row)]
    again = tmp_path / "again.json"  # the same seed draws the same rows
    assert main(["rescore", str(main_job), "-o", str(again), "-j", "1", "--retest", "0.5", "--seed", "7",
                 "--retest-judge", RETEST]) == 0  # fmt: skip
    assert [r["id"] for r in _rows(again) if "judge_retest" in r["gradingResult"]["metadata"]] == [
        r["id"] for r in retested
    ]
    capsys.readouterr()
    assert main(["report", str(asked), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    reliability = found["judge_reliability"]
    assert reliability["retest"]["compared_rows"] == 12 and reliability["retest"]["unscored"] == 0
    own = {_key(r): dict(_judge(r)["verdicts"]) for r in after}
    differ = sum(own[_key(r)][c] != retest[_key(r)][c] for r in retested for c in own[_key(r)])
    agreed = sum(c["agreement"] * c["n"] for c in reliability["retest"]["criteria"])
    total = sum(c["n"] for c in reliability["retest"]["criteria"])
    assert total - round(agreed) == differ > 0
    (pair,) = reliability["panel"]["pairs"]
    assert (
        pair["compared_rows"] == 24
        and pair["b"] == "replay:datasets/sample/judge_replies/round3.second_judge.yaml"
    )
    assert {"round", "condition", "provider", "mean_words"} <= set(found["answer_length"][0])
    assert main(["report", str(asked)]) == 0
    text = capsys.readouterr().out
    assert "Judge test-retest: 12 rows asked twice" in text and "Judge panel: judge vs replay:" in text


@pytest.mark.e2e
@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_a_recording_is_never_retested_against_itself(
    main_job: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--retest with the row's own recorded judge would read the same replies twice (agreement by
    construction): each such retest is unscored, saying why, and the report counts it apart."""
    out = tmp_path / "out.json"
    assert main(["rescore", str(main_job), "-o", str(out), "-j", "1", "--retest", "0.25", "--seed", "1"]) == 0
    entries = [r["gradingResult"]["metadata"]["judge_retest"] for r in _rows(out)
               if "judge_retest" in r["gradingResult"]["metadata"]]  # fmt: skip
    assert len(entries) == 6
    assert all(e["status"] == "unscored" and "--retest-judge" in e["reason"] for e in entries)
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    retest = json.loads(capsys.readouterr().out)["judge_reliability"]["retest"]
    assert (retest["unscored"], retest["compared_rows"], retest["criteria"]) == (6, 0, [])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retest", "0.5"], "--retest: needs --seed N"),
        (["--retest", "1.5", "--seed", "1"], "--retest: 1.5 is not a share of the rows in (0, 1]"),
        (["--seed", "1"], "--seed: needs --retest FRACTION"),
    ],
)
def test_retest_options_are_checked_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["rescore", str(tmp_path / "absent.json"), "-o", str(tmp_path / "o.json"), *args]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.e2e
@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_a_live_retest_bypasses_the_reply_cache_and_only_the_retest(main_job: Path, tmp_path: Path) -> None:
    """A live judge (promptfoo's ollama provider, a stand-in serving the recorded replies): the first
    rescore fills the pack's reply cache (24 requests); a second with --retest 0.25 serves the grading
    from the cache and sends exactly the 6 retest requests to the model."""
    answers = {}
    for row in _rows(main_job):
        answers[_key(row)] = row["response"]["output"]
    judge = RecordedJudge.from_files(str(SAMPLE / "judge_replies" / "round3.yaml"), answers)
    standin = ModelStandin(judge)
    env = offline_env(tmp_path, {"XDG_CACHE_HOME": str(tmp_path / "cache"), "OLLAMA_BASE_URL": standin.url,
                                 "GROUNDING_EVAL_JUDGE_PROVIDER": "ollama:chat:standin-judge"})  # fmt: skip

    def rescore(out: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "grounding_eval", "rescore", str(main_job), "-o", str(tmp_path / out), "-j", "2",
             *extra],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=400, check=False,
        )  # fmt: skip

    with standin.running():
        first = rescore("first.json")
        assert first.returncode == 0, first.stderr[-2000:]
        assert len(standin.served) == 24 and judge.unmatched == 0
        second = rescore("second.json", "--retest", "0.25", "--seed", "3")
        assert second.returncode == 0, second.stderr[-2000:]
    assert len(standin.served) == 24 + 6
    rows = _rows(tmp_path / "second.json")
    retested = [r["gradingResult"]["metadata"]["judge_retest"] for r in rows
                if "judge_retest" in r["gradingResult"]["metadata"]]  # fmt: skip
    assert len(retested) == 6
    assert all(e["cached"] is False and e["provider"] == "ollama:chat:standin-judge" for e in retested)
    graded = [c["metadata"]["judge"]["cached"] for r in rows for c in r["gradingResult"]["componentResults"]
              if "judge" in (c.get("metadata") or {})]  # fmt: skip
    assert graded == [True] * 24  # the row's own grading came from the cache
