"""End to end: recorded judge replies never grade an answer they were not recorded for.

The pinned promptfoo runs the tiny dataset's Round 3 rows with an answer provider that is *not* the
replay provider (promptfoo's built-in ``echo``, which answers with the prompt itself) and the recorded
judge. Every row must come back as an explicit judge ERROR that names both hashes and the variable to
set — never a fixture verdict for text the recording did not read. This is the "live answers, forgotten
live judge" mistake (``-r file://providers/live.yaml`` without ``GROUNDING_EVAL_JUDGE_PROVIDER``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge.calls import answer_sha256, load_replay_fixtures
from tests.outcomes import unscored_reason

REPO = Path(__file__).resolve().parents[1]
TINY = "tests/fixtures/data/tiny"
pytestmark = pytest.mark.e2e


def _config(tmp_path: Path, unhashed: Path) -> Path:
    """The tiny dataset's Round 3 rows, answered by ``echo``, judged by the recorded judge twice: once
    from the dataset's hashed recordings, once from a copy without hashes."""

    def judge(provider: str) -> dict[str, Any]:
        return {
            "type": "python",
            "value": f"file://{REPO / 'assertions' / 'judge.py'}:get_assert",
            "config": {"rubric": "round3", "provider": provider, "review_queue": str(tmp_path / "q.jsonl")},
        }

    config = {
        "description": "replay guard: live-style answers, recorded judge",
        "prompts": [
            {"id": f"file://{REPO / 'prompts' / name}.txt", "label": label}
            for name, label in (("c0", "C0"), ("c1", "C1"), ("c1_5", "C1.5"))
        ],
        "providers": [{"id": "echo", "label": "not-a-recording"}],
        "defaultTest": {
            "assert": [judge("replay:{dataset}/judge_replies/round3.yaml"), judge(f"replay:{unhashed}")]
        },
        "tests": [
            {
                "path": f"file://{REPO / 'datasets' / 'generate.py'}:generate_tests",
                "config": {"dataset": TINY, "round": "3"},
            }
        ],
    }
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")  # JSON is YAML
    return path


def _without_hashes(tmp_path: Path) -> Path:
    source = (REPO / TINY / "judge_replies" / "round3.yaml").read_text(encoding="utf-8")
    stripped = re.sub(r"(?m)^  answer_sha256: .*\n", "", source)
    path = tmp_path / "round3-unhashed.yaml"
    path.write_text(stripped, encoding="utf-8")
    assert all(f.answer_sha256 is None for f in load_replay_fixtures(path).values())
    return path


def test_live_style_answers_with_the_recorded_judge_are_errors(tmp_path: Path) -> None:
    """echo answers + recorded judge: every judge result is unscored (the judge not run), with no judge scores."""
    if not (REPO / "node_modules" / ".bin" / "promptfoo").exists():
        pytest.fail("node_modules is missing: run scripts/install (npm ci) first")
    recorded = load_replay_fixtures(REPO / TINY / "judge_replies" / "round3.yaml")
    unhashed = _without_hashes(tmp_path)
    out = tmp_path / "out.json"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GROUNDING_EVAL_JUDGE_PROVIDER", "GROUNDING_EVAL_DATASET")
    }
    result = subprocess.run(
        ["npx", "promptfoo", "eval", "-c", str(_config(tmp_path, unhashed)), "-o", str(out),
         "--no-progress-bar", "--no-table", "--no-cache"],
        cwd=REPO, env={**env, "PROMPTFOO_CONFIG_DIR": str(tmp_path / ".promptfoo"), "NO_COLOR": "1"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 100, result.stdout[-3000:] + result.stderr[-3000:]
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]["results"]
    assert sorted(r["prompt"]["label"].split(":")[0] for r in rows) == ["C0", "C1", "C1.5"]
    for row in rows:
        condition = row["prompt"]["label"].split(":")[0]
        key = f"round3/tiny-hr-wv-01/{condition}"
        where = f"{key}: {row['gradingResult']['reason'][:300]}"
        assert row["success"] is False and row["failureReason"] == 1, where
        # No fixture verdict reached the row: not one judge score, not one criterion component.
        assert not any(k.startswith("round3.") for k in row["namedScores"]), where
        results = row["gradingResult"]["componentResults"]
        assert len(results) == 2, where
        actual = answer_sha256(row["response"]["output"])
        hashed, bare = results
        recorded_hash = recorded[key].answer_sha256
        assert recorded_hash is not None and recorded_hash != actual
        why = unscored_reason(hashed)  # the deciding finding: both hashes, and how to judge live instead
        assert why.startswith(
            f"recorded judge reply {key} was recorded for answer sha256 {recorded_hash[:12]}"
        ), where
        assert f"this answer is sha256 {actual[:12]}" in why and "GROUNDING_EVAL_JUDGE_PROVIDER" in why, where
        meta = hashed["metadata"]["judge"]
        assert (meta["recorded_answer_sha256"], meta["answer_sha256"]) == (recorded_hash, actual)
        assert meta["status"] == "unscored" and meta["fixture_key"] == key
        assert unscored_reason(bare).startswith(f"recorded judge reply {key} has no answer hash"), where
        assert "GROUNDING_EVAL_JUDGE_PROVIDER" in unscored_reason(bare)
