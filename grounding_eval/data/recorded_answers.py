"""Recorded model answers (fixtures): the dataset's ``recorded_answers.yaml``, loaded and checked.

Each recording is one answer for one query under one condition. The replay provider
(:mod:`grounding_eval.promptfoo.replay_provider`) serves them to promptfoo, so an eval runs with no API
key; the CLI and the fixture scripts read them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml

__all__ = ["RecordedAnswer", "cached_recorded_answers", "load_recorded_answers"]

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
def cached_recorded_answers(path: Path) -> dict[tuple[str, str], RecordedAnswer]:
    return load_recorded_answers(path)
