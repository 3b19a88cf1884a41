"""Replay recorded model answers (fixtures) as a promptfoo provider, so an eval runs with no API key.

A recorded answer is looked up by the test's ``query_id`` var and the condition, which is the prompt
label's first field (promptfoo labels a file prompt ``"<label>: <file>: <text>"``). A missing answer is
a provider *error* naming the query, the condition and the file — never an empty or substituted output.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from grounding_eval.errors import DataError
from grounding_eval.files import check_inside, read_yaml

__all__ = ["RecordedAnswer", "call_replay", "load_recorded_answers"]

_FIELDS = {"query_id", "condition", "answer", "model", "covers", "note"}


@dataclass(frozen=True)
class RecordedAnswer:
    """One recorded answer for a (query, condition) pair."""

    query_id: str
    condition: str
    answer: str
    model: str
    covers: tuple[str, ...] = ()
    note: str | None = None


def load_recorded_answers(path: str | Path) -> dict[tuple[str, str], RecordedAnswer]:
    """Load a YAML list of recorded answers keyed by ``(query_id, condition)``.

    Raises:
        DataError: one line naming the file, the entry and the problem.
    """
    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, list):
        raise DataError(path, "expected a YAML list of recorded answers")
    answers: dict[tuple[str, str], RecordedAnswer] = {}
    for i, entry in enumerate(data, 1):
        if not isinstance(entry, dict):
            raise DataError(path, f"entry {i}: expected a mapping")
        unknown = set(entry) - _FIELDS
        if unknown:
            raise DataError(path, f"entry {i}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")
        for field in ("query_id", "condition", "answer", "model"):
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise DataError(path, f"entry {i}: field {field!r} is required and must be text")
        key = (entry["query_id"], entry["condition"])
        if key in answers:
            raise DataError(path, f"entry {i}: a second answer for query {key[0]!r} under {key[1]}")
        answers[key] = RecordedAnswer(
            query_id=entry["query_id"],
            condition=entry["condition"],
            answer=entry["answer"],
            model=entry["model"],
            covers=tuple(str(c) for c in entry.get("covers") or ()),
            note=entry.get("note"),
        )
    return answers


@cache
def _answers(path: Path) -> dict[tuple[str, str], RecordedAnswer]:
    return load_recorded_answers(path)


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
    query_id = vars_.get("query_id")
    label = str((context.get("prompt") or {}).get("label") or "")
    condition = label.split(":", 1)[0].strip()
    if not query_id:
        return {"error": "replay provider: the test has no 'query_id' var"}
    try:
        if not config.get("answers"):  # the dataset's own recordings never come from elsewhere
            check_inside(answers, Path(str(metadata["dataset"])))
        recorded = _answers(answers).get((str(query_id), condition))
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
