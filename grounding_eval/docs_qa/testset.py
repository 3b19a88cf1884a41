"""The docs-QA test set: records after the seed's "For each question, record", and its type mix.

A record is ``{id, type, question, reference_answer, must_include, source_sections[, note]}``
(``datasets/schemas/docs_qa_question.schema.json``), one per line of ``questions.jsonl`` (or items of
``questions.yaml``). Every record is validated against the JSON Schema, and then against what a schema
cannot see: ids are unique, and every ``source_sections`` entry names a section of the docs set. The
schema already says an out-of-scope question has no source sections and any other has at least one
(and at least one must-include point). Each problem is one line naming the file, the record and the
field.

A docs-QA dataset folder holds ``questions.jsonl`` and the docs set in ``docs/``; recorded assistant
answers (``recorded_answers.yaml``) and recorded grader replies (``grader_replies.yaml``) are fixtures
beside them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from grounding_eval.docs_qa.docs_set import DocsSet
from grounding_eval.docs_qa.rubric import DocsQaRubric
from grounding_eval.errors import DataError, clip
from grounding_eval.files import read_json
from grounding_eval.resources import pack_root

__all__ = [
    "DOCS_DIR",
    "QUESTION_FILES",
    "SCHEMA_PATH",
    "Question",
    "TypeShare",
    "find_questions",
    "is_docs_qa_dataset",
    "load_questions",
    "type_mix",
]

SCHEMA_PATH: Final = pack_root() / "datasets" / "schemas" / "docs_qa_question.schema.json"
QUESTION_FILES: Final = ("questions.jsonl", "questions.yaml")
DOCS_DIR: Final = "docs"
_PLAIN_ID: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")


@dataclass(frozen=True)
class Question:
    """One test-set record."""

    id: str
    type: str
    question: str
    reference_answer: str
    must_include: tuple[str, ...]
    source_sections: tuple[str, ...]
    note: str | None = None

    @property
    def out_of_scope(self) -> bool:
        """Whether the docs set does not cover this question (by its type)."""
        return self.type == "out-of-scope"


@dataclass(frozen=True)
class TypeShare:
    """One question type's count and share against the seed's target."""

    type: str
    n: int
    share: float  # percent of the test set
    target: float  # percent
    off_by: float  # percentage points, signed
    warn: bool


def is_docs_qa_dataset(folder: str | Path) -> bool:
    """Whether ``folder`` looks like a docs-QA dataset (a questions file and a ``docs/`` folder)."""
    root = Path(folder)
    return (root / DOCS_DIR).is_dir() and any((root / name).exists() for name in QUESTION_FILES)


def find_questions(folder: str | Path) -> Path:
    """The questions file of a docs-QA dataset folder.

    Raises:
        DataError: none, or both.
    """
    root = Path(folder)
    found = [root / n for n in QUESTION_FILES if (root / n).exists()]
    if len(found) != 1:
        problem = "both questions.jsonl and questions.yaml exist: keep one" if found else "no questions.jsonl"
        raise DataError(root, problem)
    return found[0]


@cache
def _validator() -> Any:
    import jsonschema  # type: ignore[import-untyped]

    schema = read_json(SCHEMA_PATH)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def load_questions(path: str | Path, docs: DocsSet | None) -> list[Question]:
    """Load and validate a test set; with ``docs``, also resolve every source section.

    Raises:
        DataError: the first problem, on one line naming the file, the record and the field.
    """
    from grounding_eval.data.load import iter_rows

    validator = _validator()
    questions: list[Question] = []
    seen: dict[str, str] = {}
    for where, row in iter_rows(path):
        rid = row.get("id")
        label = (
            f"{where} ({rid if isinstance(rid, str) and _PLAIN_ID.fullmatch(rid) else clip(rid, 20)})"
            if "id" in row
            else where
        )
        errors = sorted(validator.iter_errors(row), key=lambda e: (list(e.absolute_path), e.message))
        if errors:
            error = errors[0]
            field = ".".join(str(p) for p in error.absolute_path) or "record"
            raise DataError(path, f"{label}: {field}: {_schema_message(error)}")
        if row["id"] in seen:
            raise DataError(path, f"{label}: id {row['id']!r} was already used at {seen[row['id']]}")
        seen[row["id"]] = where
        if docs is not None:
            for section in row["source_sections"]:
                if not docs.has(section):
                    raise DataError(
                        path, f"{label}: source_sections: {clip(section, 80)} is not a section of {docs.root}"
                    )
        questions.append(
            Question(
                id=row["id"],
                type=row["type"],
                question=row["question"],
                reference_answer=row["reference_answer"],
                must_include=tuple(row["must_include"]),
                source_sections=tuple(row["source_sections"]),
                note=row.get("note"),
            )
        )
    if not questions:
        raise DataError(path, "the test set has no questions")
    return questions


def _schema_message(error: Any) -> str:
    if error.validator == "maxItems" and error.validator_value == 0:
        return "must be empty for an out-of-scope question"
    if error.validator == "minItems":
        return "needs at least one entry for a question that is not out-of-scope"
    if error.validator == "additionalProperties":
        return f"unknown field(s): {error.message.split('(')[-1].rstrip(')')}"
    return " ".join(str(error.message).split())[:200]


def type_mix(questions: Sequence[Question], rubric: DocsQaRubric) -> list[TypeShare]:
    """Each question type's share of ``questions`` against the rubric's target shares."""
    counts = Counter(q.type for q in questions)
    total = len(questions) or 1
    out = []
    for qt in rubric.question_types:
        share = 100.0 * counts.get(qt.id, 0) / total
        off = share - qt.share
        out.append(
            TypeShare(
                qt.id, counts.get(qt.id, 0), share, qt.share, off, abs(off) > rubric.type_mix_tolerance_points
            )
        )
    return out
