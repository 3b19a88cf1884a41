"""What ``grounding-eval data validate`` checks beyond loading: every item's grounding blocks and sizes.

* **Errors** (the folder is refused): an item whose C1 directory comes out empty (no matching index
  record), or — for an item a C1.5 round selects (2, 2b, 3) — whose C1.5 content comes out empty (no
  cached article among its records). An eval would otherwise send an empty block; the test generator
  makes such a cell an ``ERROR (no grounding for …)`` row instead.
* **Errors**, too: a citation index (``citations.yaml``) that breaks its JSON Schema
  (``datasets/schemas/citations.schema.json``) or holds an entry the verifier does not read as a
  citation (:func:`check_citation_index`).
* **Warnings**: C1.5 content of one article (the methods document: "two or three relevant articles");
  a documented size that differs when ``dataset.yaml`` claims the real set
  (:func:`~grounding_eval.data.rounds.size_warnings`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grounding_eval.data.conditions import condition_vars
from grounding_eval.data.dataset import Dataset
from grounding_eval.data.rounds import ROUNDS, select_items, size_warnings

__all__ = ["MIN_ARTICLES", "Findings", "check_citation_index", "check_dataset"]

MIN_ARTICLES = 2
"""C1.5 content is "two or three relevant articles" (methods document): fewer is a warning."""


@dataclass(frozen=True)
class Findings:
    """One line per problem, in item order."""

    errors: tuple[str, ...]
    warnings: tuple[str, ...]


def check_dataset(dataset: Dataset) -> Findings:
    """Check every item's C1 directory and (for C1.5 rounds' items) C1.5 content, and the claimed sizes."""
    full_content_rounds: dict[str, list[str]] = {}
    for round_id, spec in ROUNDS.items():
        if "C1.5" in spec.conditions:
            for item in select_items(dataset, round_id=round_id):
                full_content_rounds.setdefault(item.id, []).append(round_id)
    errors: list[str] = []
    warnings: list[str] = []
    for item in (*dataset.queries, *dataset.high_risk):
        grounding = condition_vars(item, dataset)
        if grounding.directory_gap:
            errors.append(f"{dataset.root}: no grounding for C1: {grounding.directory_gap}")
        rounds = full_content_rounds.get(item.id)
        if not rounds:
            continue
        used = f"round{'s' if len(rounds) > 1 else ''} {', '.join(rounds)}"
        if grounding.full_content_gap:
            errors.append(f"{dataset.root}: no grounding for C1.5 ({used}): {grounding.full_content_gap}")
        elif len(grounding.full_content) < MIN_ARTICLES:
            ids = ", ".join(s.record.id for s in grounding.full_content)
            warnings.append(
                f"{dataset.root}: item {item.id!r} ({used}): C1.5 content is {len(grounding.full_content)} "
                f"article ({ids}); the methods document uses two or three"
            )
    errors += check_citation_index(Path(dataset.root))
    return Findings(tuple(errors), (*warnings, *size_warnings(dataset)))


_CITATION_SCHEMA = "datasets/schemas/citations.schema.json"


def check_citation_index(root: Path) -> list[str]:
    """The dataset's citation index against its JSON Schema, then read as the verifier reads it: one
    line per problem (none when the dataset has no ``citations.yaml``)."""
    from grounding_eval.data.dataset import find_citation_index
    from grounding_eval.errors import DataError
    from grounding_eval.files import read_json, read_yaml
    from grounding_eval.resources import pack_root

    path = find_citation_index(root)
    if path is None:
        return []
    import jsonschema  # type: ignore[import-untyped]

    schema = read_json(pack_root() / _CITATION_SCHEMA)
    try:
        data = read_yaml(path, inside=root)
    except DataError as exc:
        return [exc.one_line()]
    problems = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if problems:
        return [
            f"{path}: {'/'.join(map(str, e.absolute_path)) or 'the file'}: {' '.join(e.message.split())[:200]} "
            f"({_CITATION_SCHEMA})"
            for e in problems
        ]
    from grounding_eval.verifier.citations import load_citation_index

    try:
        load_citation_index(path, inside=root)
    except DataError as exc:
        return [exc.one_line()]
    return []
