"""calibrate score on ratings made in promptfoo's viewer: real promptfoo, its own rating API on 127.0.0.1.

Reads the session's offline run of configs/round1a.yaml (its own promptfoo database), serves it with
``promptfoo view -n`` on a free 127.0.0.1 port, posts three 👍/👎 ratings to the viewer's own API the way
its web page does (``POST /api/eval/:evalId/results/:id/rating`` with the cell's grading result plus a
``human`` component), exports the eval as JSON with ``promptfoo export eval`` and scores the people
against each row's final verdict (its composite's pass) in the run's own results file: rating a row
replaces its verdict in the database, so the export alone no longer holds what the person saw.
"""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.analysis.summary import load_rows
from grounding_eval.cli import main
from tests.analysis.rows import REPO
from tests.browser.viewer import served_viewer
from tests.promptfoo_runs import EvalRun, shared_group

pytestmark = pytest.mark.e2e


def _rated(grading: dict[str, Any], passed: bool, comment: str) -> dict[str, Any]:
    """The viewer's own rule (promptfoo 0.121.20's web app): the human component overrides the row."""
    human = {"pass": passed, "score": float(passed), "reason": "Manual result (overrides all other grading results)",
             "comment": comment, "assertion": {"type": "human"}}  # fmt: skip
    components = [
        c for c in grading.get("componentResults") or [] if (c.get("assertion") or {}).get("type") != "human"
    ]
    return {**grading, "pass": passed, "score": float(passed), "reason": human["reason"], "comment": comment,
            "componentResults": [*components, human]}  # fmt: skip


@pytest.mark.xdist_group(shared_group("configs/round1a.yaml"))
def test_ratings_posted_to_the_viewer_are_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shared_eval: Callable[[str], EvalRun]
) -> None:
    run = shared_eval("configs/round1a.yaml")  # the ratings go to this run's own database
    assert run.returncode in (0, 100), run.tail()
    env, results = run.env, run.out
    data = json.loads(results.read_text(encoding="utf-8"))
    eval_id, raw_rows = data["evalId"], data["results"]["results"]
    judged = [(raw, row) for raw, row in zip(raw_rows, load_rows(results), strict=True) if not row.unscored]
    assert len(judged) >= 3
    # The final verdicts differ from the judge components' somewhere, or this test could not tell them apart.
    assert any(row.passed != row.judge_pass for _, row in judged), (
        "round1a has no row whose composite overrules its judge"
    )
    picked = sorted(judged, key=lambda pair: pair[1].passed == pair[1].judge_pass)[:3]
    # People agree with the row's final verdict on the first two rows and disagree on the third.
    ratings = [(raw, row.passed, "agree") for raw, row in picked[:2]]
    ratings.append((picked[2][0], not picked[2][1].passed, "disagree"))
    # Against the judge components instead, the same ratings would not agree 2 of 3 times.
    assert (
        sum(passed == row.judge_pass for (_, row), (_, passed, _) in zip(picked, ratings, strict=True)) != 2
    )
    with served_viewer(env) as base:
        for raw, passed, comment in ratings:
            body = json.dumps(_rated(raw["gradingResult"], bool(passed), comment)).encode()
            request = urllib.request.Request(
                f"{base}/api/eval/{eval_id}/results/{raw['id']}/rating",
                data=body, headers={"Content-Type": "application/json"}, method="POST",
            )  # fmt: skip
            with urllib.request.urlopen(request, timeout=30) as response:
                assert response.status == 200
                assert json.loads(response.read())["success"] is bool(passed)
    export = tmp_path / "export.json"
    done = subprocess.run(
        ["npx", "promptfoo", "export", "eval", eval_id, "-o", str(export)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    exported = load_rows(export)
    rated = [r for r in exported if r.human is not None]
    assert len(rated) == 3 and {r.human["comment"] for r in rated if r.human} == {"agree", "disagree"}
    # The judge's own components survive the export beside the human one; the row's pass is the rating.
    assert all(r.judge_pass is not None and r.verdicts for r in rated)
    assert all(r.human is not None and r.passed is r.human["pass"] for r in rated)
    assert main(["calibrate", "score", str(export), "--ratings", str(export)]) == 2
    assert "a rating replaces the row's verdict" in capsys.readouterr().err
    assert main(["calibrate", "score", str(results), "--ratings", str(export), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (entry,) = report["criteria"]
    assert entry["criterion"] == "row (viewer 👍/👎 vs final verdict)"
    assert report["blind"] is False and report["label"] == "non-blind (graders saw the judge's chips)"
    assert report["threshold"] is None and report["below_threshold"] is None
    assert (report["graded"], report["not_rated"]) == (3, len(raw_rows) - 3)
    assert entry["agreement"] == pytest.approx(2 / 3, abs=1e-4)
