"""promptfoo test generator: one test per selected item, with the C1/C1.5 variables filled from data.

Used as ``tests: [{path: file://datasets/generate.py:generate_tests, config: {...}}]``. Config keys:

``dataset``  dataset folder (default the pack's ``datasets/sample``; ``$GROUNDING_EVAL_DATASET`` wins)
``round``    1a | 1b | 2 | 2b | 3 — selects items and declares the round in each test's metadata
``tags``     override the round's tags (any of them qualifies)
``ids``      keep only these item ids

Vars per test: ``query_id``, ``jurisdiction`` (two-letter code), ``question``, ``topic``, ``jkb_directory``,
``jkb_full_content``. High-Risk fields and the grounding choices go in the test's metadata (lists in vars
would make promptfoo multiply the test).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grounding_eval.data.conditions import condition_vars
from grounding_eval.data.dataset import load_dataset, resolve_dataset_dir
from grounding_eval.data.records import HighRiskItem
from grounding_eval.data.rounds import ROUNDS, select_items
from grounding_eval.errors import DataError

__all__ = ["generate_tests"]


def generate_tests(config: dict[str, Any] | None = None, *, pack_root: Path) -> list[dict[str, Any]]:
    """Build promptfoo test cases from a dataset.

    Raises:
        DataError: a bad dataset or config, as one line (promptfoo shows it and stops).
    """
    config = dict(config or {})
    unknown = set(config) - {"dataset", "round", "tags", "ids"}
    if unknown:
        raise DataError("test generator config", f"unknown key(s) {', '.join(sorted(unknown))}")
    root = resolve_dataset_dir(config.get("dataset"), pack_root / "datasets" / "sample")
    dataset = load_dataset(root)
    round_id = str(config["round"]) if config.get("round") is not None else None
    try:
        items = select_items(dataset, round_id=round_id, tags=_list(config, "tags"), ids=_list(config, "ids"))
    except KeyError as exc:
        raise DataError("test generator config", str(exc.args[0])) from None
    if not items:
        raise DataError(
            root,
            f"no items selected (round {round_id!r}, tags {config.get('tags')!r}, ids {config.get('ids')!r})",
        )
    spec = ROUNDS.get(round_id) if round_id else None
    suffix = f" (round {spec.id})" if spec else ""
    tests = []
    for item in items:
        grounding = condition_vars(item, dataset)
        if spec and "C1.5" in spec.conditions and not grounding.full_content:
            raise DataError(root, f"id {item.id!r}: no cached article to fill C1.5 (round {round_id})")
        metadata: dict[str, Any] = {
            "query_id": item.id,
            "jurisdiction": item.jurisdiction,
            "topic": item.topic,
            "tags": list(item.tags),
            "dataset": str(root),
            "directory_ids": [s.record.id for s in grounding.directory],
            "full_content_ids": [s.record.id for s in grounding.full_content],
            "directory_tokens": grounding.directory_tokens,
            "full_content_tokens": grounding.full_content_tokens,
        }
        if spec:
            metadata |= {
                "round": spec.id,
                "conditions": list(spec.conditions),
                "rubric": spec.rubric,
                "quotation": "scored" if spec.quotation_scored else "information",
            }
        if isinstance(item, HighRiskItem):
            metadata |= {
                "risk_tier": item.risk_tier,
                "required_clarifying_questions": list(item.required_clarifying_questions),
                "failure_modes": list(item.failure_modes),
                "sme_variables": list(item.sme_variables),
            }
        tests.append({
            "description": f"{item.jurisdiction} · {item.topic} · {item.id}{suffix}",
            "vars": {
                "query_id": item.id,
                "jurisdiction": item.jurisdiction,
                "question": item.question,
                "topic": item.topic,
                "jkb_directory": grounding.jkb_directory,
                "jkb_full_content": grounding.jkb_full_content,
            },
            "metadata": metadata,
        })  # fmt: skip
    return tests


def _list(config: dict[str, Any], key: str) -> list[str] | None:
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise DataError("test generator config", f"{key!r} must be a list")
    return [str(v) for v in value]
