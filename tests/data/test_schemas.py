"""The JSON Schemas in datasets/schemas/ agree with the loaders on the golden and invalid files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from grounding_eval.data.load import HIGH_RISK_FIELDS, INDEX_FIELDS, QUERY_FIELDS, iter_rows

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "datasets" / "schemas"
CASES = [
    (
        "query",
        QUERY_FIELDS,
        [REPO / "datasets" / "sample" / "queries.jsonl", REPO / "tests/fixtures/data/tiny/queries.jsonl"],
    ),
    ("high_risk_item", HIGH_RISK_FIELDS, [REPO / "datasets" / "sample" / "high_risk.jsonl"]),
    (
        "index_record",
        INDEX_FIELDS,
        [REPO / "datasets" / "sample" / "jkb_index.jsonl", REPO / "tests/fixtures/data/tiny/jkb_index.csv"],
    ),
]


def _schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@pytest.mark.parametrize(("name", "fields", "files"), CASES, ids=[c[0] for c in CASES])
def test_schema_matches_loader_fields(name: str, fields: Any, files: list[Path]) -> None:
    """Same field names, same required fields, and every golden record validates."""
    schema = _schema(name)
    assert set(schema["properties"]) == set(fields)
    assert set(schema["required"]) == {k for k, f in fields.items() if f.required}
    validator = jsonschema.Draft202012Validator(schema)
    for path in files:
        for where, row in iter_rows(path):
            errors = [e.message for e in validator.iter_errors(row)]
            assert not errors, f"{path} {where}: {errors}"


@pytest.mark.parametrize(
    ("name", "row"),
    [
        ("query", {"id": "q1", "jurisdiction": "IL", "topic": "t"}),
        ("query", {"id": "q 1", "jurisdiction": "IL", "topic": "t", "question": "q"}),
        ("query", {"id": "q1", "jurisdiction": "IL", "topic": "t", "question": "q", "colour": "red"}),
        ("high_risk_item", {"id": "h", "jurisdiction": "IL", "topic": "t", "question": "q", "required_clarifying_questions": [],
                            "failure_modes": ["f"], "risk_tier": "high", "sme_variables": ["v"]}),
        ("high_risk_item", {"id": "h", "jurisdiction": "IL", "topic": "t", "question": "q", "required_clarifying_questions": ["c"],
                            "failure_modes": ["f"], "risk_tier": "extreme", "sme_variables": ["v"]}),
        ("index_record", {"id": "r", "state": "US", "title": "T", "url": "example.org", "description": "D", "organization": "O"}),
        ("index_record", {"id": "r", "state": "US", "title": "T", "url": "https://e.org", "description": "x" * 401, "organization": "O"}),
    ],
)  # fmt: skip
def test_schema_rejects_what_the_loader_rejects(name: str, row: dict[str, Any]) -> None:
    assert list(jsonschema.Draft202012Validator(_schema(name)).iter_errors(row))
