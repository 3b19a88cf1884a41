"""Replay recorded model answers (fixtures) as a promptfoo provider, so an eval runs with no API key.

A recorded answer is looked up by the test's ``query_id`` — its metadata's, where the pack's generators
put it, or a ``query_id`` var (a config of one's own, a test rebuilt from an older results file) — and the
condition, which is the prompt label's first field (promptfoo labels a file prompt ``"<label>: <file>:
<text>"``). A missing answer is
a provider *error* naming the query, the condition and the file — never an empty or substituted output.
Recordings are not keyed on the prompt text, so a change to how a block is built (such as the
200-character directory description cut) leaves every recording in place; a recorded judge reply is
keyed on the answer it judged (``answer_sha256``), not on the prompt, either. A cell whose grounding
block is empty never reaches this provider: promptfoo makes it an ERROR row while rendering the prompt
(:mod:`grounding_eval.promptfoo.round_tests`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grounding_eval.data.recorded_answers import cached_recorded_answers
from grounding_eval.errors import DataError
from grounding_eval.files import check_inside

__all__ = ["call_replay"]


def call_replay(prompt: str, options: Any, context: Any) -> dict[str, Any]:
    """promptfoo ``call_api``: return the recorded answer for this test and condition.

    The recordings come from ``config.answers`` or, when that is not set, from
    ``recorded_answers.yaml`` in the test's dataset folder (``metadata.dataset``, set by the test
    generator), so swapping the dataset swaps the recordings with it.
    """
    config = (options or {}).get("config") or {}
    context = context or {}
    vars_ = context.get("vars") or {}
    metadata = (context.get("test") or {}).get("metadata") or {}
    if config.get("answers"):
        answers = Path(str(config["answers"]))
    elif metadata.get("dataset"):
        answers = Path(str(metadata["dataset"])) / "recorded_answers.yaml"
    else:
        return {"error": "replay provider: set config.answers, or generate tests from a dataset folder"}
    query_id = metadata.get("query_id") or vars_.get("query_id")
    label = str((context.get("prompt") or {}).get("label") or "")
    condition = label.split(":", 1)[0].strip()
    if not query_id:
        return {"error": "replay provider: the test has no 'query_id' (in its metadata or vars)"}
    try:
        if not config.get("answers"):  # the dataset's own recordings never come from elsewhere
            check_inside(answers, Path(str(metadata["dataset"])))
        recorded = cached_recorded_answers(answers).get((str(query_id), condition))
    except DataError as exc:
        return {"error": f"replay provider: {exc.one_line()}"}
    if recorded is None:
        return {"error": f"replay provider: no recorded answer for query {query_id!r} under {condition!r} "
                         f"(prompt label {label[:40]!r}) in {answers}"}  # fmt: skip
    return {
        "output": recorded.answer,
        "metadata": {
            "recorded_fixture": str(answers),
            "recorded_model": recorded.model,
            "query_id": recorded.query_id,
            "condition": recorded.condition,
            "covers": list(recorded.covers),
        },
    }
