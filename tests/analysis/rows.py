"""Small hand-made promptfoo results rows for the analysis tests (the shapes promptfoo writes with -o)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "analysis"


def row(
    item: str,
    condition: str,
    *,
    composite: float | None = None,
    scores: dict[str, float] | None = None,
    success: bool = True,
    provider: str = "model-a",
    round_: str = "3",
    verdicts: dict[str, str] | None = None,
    judge_status: str = "scored",
    failure: int = 0,
    question_type: str | None = None,
    docs_qa: dict[str, Any] | None = None,
    factuality: dict[str, Any] | None = None,
    human: bool | None = None,
    judge_pass: bool = True,
) -> dict[str, Any]:
    """One result row: item, condition (prompt label), named scores and the components the report reads."""
    named = dict(scores or {})
    if composite is not None:
        named["composite"] = composite
    meta: dict[str, Any] = {"round": round_}
    if question_type is not None:
        meta["question_type"] = question_type
    components: list[dict[str, Any]] = []
    if verdicts is not None:
        components.append({
            "pass": judge_pass, "score": 1, "reason": "judge",
            "assertion": {"type": "python", "value": "file://assertions/judge.py:get_assert"},
            "metadata": {"judge": {"rubric_id": "round3", "rubric_version": "3.0.0", "prompt_version": "round3-p1",
                                   "status": judge_status,
                                   "verdicts": {k: {"verdict": v, "reasoning": "…"} for k, v in verdicts.items()}}},
        })  # fmt: skip
    for key, value in (("docs_qa", docs_qa), ("factuality", factuality)):
        if value is not None:
            components.append({"pass": judge_pass, "score": 1, "reason": key, "assertion": {"type": "python"},
                               "metadata": {key: value}})  # fmt: skip
    if human is not None:
        components.append({"pass": human, "score": float(human), "assertion": {"type": "human"},
                           "reason": "Manual result (overrides all other grading results)", "comment": "checked"})  # fmt: skip
    return {
        "id": f"{item}-{condition}-{provider}",
        "success": success,
        "failureReason": failure,
        "namedScores": named,
        "prompt": {
            "label": f"{condition}: prompts/x.txt",
            "raw": f"Question about {item}. SOURCE-{condition}",
        },
        "provider": {"id": f"openai:chat:{provider}", "label": provider},
        "vars": {
            "query_id": item,
            "question": f"What about {item}?",
            "jkb_full_content": f"SOURCE-{condition}",
        },
        "response": {"output": f"Answer to {item} under {condition}."},
        "testCase": {"metadata": meta},
        "gradingResult": {"pass": success, "score": 1, "reason": "x", "componentResults": components},
    }


def write(path: Path, rows: list[dict[str, Any]], **extra: Any) -> Path:
    """A results file holding ``rows``."""
    data = {"evalId": "eval-test", "results": {"version": 3, "timestamp": "2026-11-30T00:00:00Z", "results": rows},
            "config": {"description": "hand-made"}, **extra}  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
