"""Recorded model answers (fixtures): the dataset's ``recorded_answers.yaml``, loaded and checked.

Each recording is one answer for one query under one condition. The replay provider
(:mod:`grounding_eval.promptfoo.replay_provider`) serves them to promptfoo, so an eval runs with no API
key; the CLI and the fixture scripts read them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from grounding_eval.data.load import raise_or_collect
from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml

__all__ = ["RecordedAnswer", "cached_recorded_answers", "load_recorded_answers"]


@dataclass(frozen=True)
class RecordedAnswer:
    """One recorded answer for a (query, condition) pair."""

    query_id: str
    condition: str
    answer: str
    model: str
    covers: tuple[str, ...] = ()
    note: str | None = None


def load_recorded_answers(
    path: str | Path, *, problems: list[str] | None = None
) -> dict[tuple[str, str], RecordedAnswer]:
    """Load a YAML list of recorded answers keyed by ``(query_id, condition)``; each entry is a
    :class:`~grounding_eval.data.models.RecordedAnswerEntry`.

    Args:
        path: The file.
        problems: When given, every bad entry is added to it as one line and skipped instead of raising.

    Raises:
        DataError: one line naming the file, the entry and the problem.
    """
    from grounding_eval.data.models import RecordedAnswerEntry, validate

    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, list):
        raise DataError(path, "expected a YAML list of recorded answers")
    answers: dict[tuple[str, str], RecordedAnswer] = {}
    for i, entry in enumerate(data, 1):
        found: list[str]
        if not isinstance(entry, dict):
            record, found = None, ["expected a mapping"]
        else:
            record, found = validate(RecordedAnswerEntry, entry)
        where = f"entry {i}"
        if isinstance(entry, dict) and isinstance(entry.get("query_id"), str):
            where += f" ({entry['query_id']})"
        if isinstance(record, RecordedAnswerEntry) and (record.query_id, record.condition) in answers:
            found = [f"a second answer for query {record.query_id!r} under {record.condition}"]
        if found:
            raise_or_collect([DataError(path, f"{where}: {problem}") for problem in found], problems)
            continue
        assert isinstance(record, RecordedAnswerEntry)
        answers[(record.query_id, record.condition)] = RecordedAnswer(
            query_id=record.query_id,
            condition=record.condition,
            answer=record.answer,
            model=record.model,
            covers=record.covers,
            note=record.note,
        )
    return answers


@cache
def cached_recorded_answers(path: Path) -> dict[tuple[str, str], RecordedAnswer]:
    return load_recorded_answers(path)
