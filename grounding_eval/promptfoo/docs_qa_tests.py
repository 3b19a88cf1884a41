"""One promptfoo test per docs-QA question: the question, the docs set as context, the record as metadata.

Config keys (the ``config:`` of the ``tests: - path: file://…/generate.py:generate_tests`` entry):

* ``dataset`` — the docs-QA dataset folder (``questions.jsonl`` + ``docs/`` + recorded fixtures);
  ``$GROUNDING_EVAL_DOCS_QA_DATASET`` overrides it. Relative paths are taken from the working directory
  (promptfoo is run from the repository root), else from the pack.
* ``docs`` — the docs set folder, default ``<dataset>/docs``.
* ``types`` — only these question types; ``ids`` — only these question ids.

Swapping in another docs set and test set is this config alone: the replay provider finds
``recorded_answers.yaml`` and the grader ``grader_replies.yaml`` through ``metadata.dataset``.

Each test's vars: ``question``, ``query_id`` (the question id, for the replay provider),
``reference_answer`` (shown to a reviewer) and ``docs_context`` (every document with its section ids,
for the assistant's prompt; named in ``metadata.source_vars``, so the beforeAll hook keeps it out of the
viewer's columns and :func:`source_vars` rebuilds it for ``rescore``). Its metadata: ``question_type``
(the shared name the by-type report reads), ``question_id``, ``question``, ``reference_answer``,
``must_include``, ``source_sections``, ``dataset`` and ``docs``: what the assertion grades against,
without re-reading the test set.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from grounding_eval.errors import DataError

__all__ = ["DATASET_ENV", "SOURCE_VARS", "docs_context", "generate_tests", "source_vars"]

DATASET_ENV: Final = "GROUNDING_EVAL_DOCS_QA_DATASET"
SOURCE_VARS: Final = ("docs_context",)
"""The long vars, named in ``metadata.source_vars``: the beforeAll hook keeps them out of the viewer's columns."""


def _folder(value: str | Path, pack_root: Path) -> Path:
    path = Path(value)
    if path.is_absolute() or path.exists():
        return path
    return pack_root / path


def docs_context(docs: Any) -> str:
    """The docs set as the assistant sees it: each document under a line naming it and its section ids."""
    blocks = []
    for doc, text in docs.documents.items():
        anchors = [s.anchor for s in docs.sections.values() if s.doc == doc and s.anchor]
        listing = f" (sections: {', '.join('#' + a for a in anchors)})" if anchors else ""
        blocks.append(f"----- {doc}{listing} -----\n{text.strip()}")
    return "\n\n".join(blocks)


def source_vars(metadata: dict[str, Any]) -> dict[str, str]:
    """The source vars of a test made here (``docs_context``), rebuilt from its docs set as the eval
    rendered them: a results file keeps none (the beforeAll hook lifts them out of the vars).

    Raises:
        DataError: the docs set is unreadable.
    """
    docs = str(metadata.get("docs") or "")
    if not docs:
        raise DataError("results row", "its test names source vars but no docs set (testCase.metadata.docs)")
    return {"docs_context": _context(docs)}


@lru_cache(maxsize=4)
def _context(docs: str) -> str:
    from grounding_eval.docs_qa.docs_set import load_docs_set

    return docs_context(load_docs_set(docs))


def generate_tests(config: dict[str, Any] | None, *, pack_root: Path) -> list[dict[str, Any]]:
    """Return the promptfoo tests for the configured docs-QA dataset.

    Raises:
        DataError: the dataset, docs set or test set is missing or invalid (one line naming the file).
    """
    from grounding_eval.docs_qa.docs_set import load_docs_set
    from grounding_eval.docs_qa.testset import DOCS_DIR, find_questions, load_questions

    config = config or {}
    chosen = os.environ.get(DATASET_ENV) or config.get("dataset")
    if not chosen:
        raise DataError(
            None, f"docs-QA tests: set config.dataset (or ${DATASET_ENV}) to a docs-QA dataset folder"
        )
    dataset = _folder(str(chosen), pack_root)
    docs_dir = _folder(str(config["docs"]), pack_root) if config.get("docs") else dataset / DOCS_DIR
    docs = load_docs_set(docs_dir)
    questions = load_questions(find_questions(dataset), docs)
    types = set(config.get("types") or ())
    ids = set(config.get("ids") or ())
    context = docs_context(docs)
    tests = []
    for q in questions:
        if (types and q.type not in types) or (ids and q.id not in ids):
            continue
        tests.append({
            "description": f"{q.id} ({q.type}): {q.question[:80]}",
            "vars": {"query_id": q.id, "question": q.question, "reference_answer": q.reference_answer,
                     "docs_context": context},
            "metadata": {
                "question_type": q.type, "question_id": q.id, "question": q.question,
                "reference_answer": q.reference_answer, "must_include": list(q.must_include),
                "source_sections": list(q.source_sections), "dataset": str(dataset), "docs": str(docs_dir),
                "source_vars": list(SOURCE_VARS),
            },
        })  # fmt: skip
    if not tests:
        raise DataError(dataset, "docs-QA tests: no question matches the configured types/ids")
    return tests
