"""The one registry of calls (``assertions/calls.json``, :mod:`grounding_eval.calls`) is what every entry
answers: the worker, both entry files, the configuration check; and JavaScript's deadline is Python's bound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from grounding_eval import calls
from grounding_eval.promptfoo import worker
from grounding_eval.promptfoo.preflight import preflight

REPO = Path(__file__).resolve().parents[1]


def _node(script: str) -> str:
    return subprocess.run(
        ["node", "-e", script], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_the_worker_answers_every_call_and_no_other() -> None:
    assert list(worker.CALLS) == list(calls.CALLS)
    reply = worker.handle({"id": 1, "call": "round9", "args": [{}, {}], "pack_root": str(REPO)})
    assert reply["result"]["reason"] == f"{calls.WORKER_FAILED}: unknown call 'round9'"


def test_both_entry_files_export_each_assertion_and_scoring_call() -> None:
    graded = [c.name for c in calls.CALLS.values() if c.kind != "worker"]
    exported = json.loads(
        _node("console.log(JSON.stringify(Object.keys(require('./assertions/grounding.cjs'))))")
    )
    assert [name for name in exported if name not in ("beforeAll", "deadlineSeconds")] == graded
    python = subprocess.run(
        [sys.executable, "-c", f"import grounding; print(sorted(n for n in {graded!r} if callable(getattr(grounding, n))))"],
        cwd=REPO / "assertions", capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    assert python.stdout.strip() == str(sorted(graded))


def test_a_failed_composite_says_the_scoring_prefix_in_both_languages() -> None:
    reply = worker.handle({"id": 1, "call": "round3", "args": "not a list", "pack_root": str(REPO)})
    assert reply["result"]["reason"].startswith(f"{calls.SCORING_FAILED}: malformed request")
    assert reply["result"]["metadata"]["composite"] == {"status": "unscored"}


def test_preflight_knows_only_the_assertion_calls() -> None:
    assert preflight("round3", {}, REPO) == {"ok": False, "error": "unknown grounding-eval call 'round3'"}


def test_javascript_deadline_is_the_python_bound() -> None:
    """The default call deadline in grounding.cjs is MODEL_CALLS_PER_JUDGMENT × one model call's worst case
    (Python's worst_case_seconds) + the margin, for the defaults and for a config's own timeout."""
    seconds = json.loads(
        _node(
            "const g = require('./assertions/grounding.cjs');"
            "console.log(JSON.stringify([g.deadlineSeconds({}), g.deadlineSeconds({config: {timeout: 7, max_retries: 2}})]))"
        )
    )
    expected = [
        calls.MODEL_CALLS_PER_JUDGMENT * calls.worst_case_seconds(timeout=t, max_retries=r)
        + calls.CALL_MARGIN_S
        for t, r in ((calls.JUDGE_TIMEOUT_S, calls.JUDGE_MAX_RETRIES), (7, 2))
    ]
    assert seconds == expected
    assert calls.MODEL_CALL_DEFAULT_S == 720.0
