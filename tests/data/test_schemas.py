"""The JSON Schemas in datasets/schemas/ are the ones generated from the models, and accept the shipped
files the loaders accept and refuse what they refuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from grounding_eval.data.load import iter_rows
from grounding_eval.data.schemas import generated_schemas, main
from grounding_eval.files import read_yaml

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "datasets" / "schemas"
SAMPLE = REPO / "datasets" / "sample"


def _schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def test_committed_schemas_are_the_generated_ones() -> None:
    for name, text in generated_schemas().items():
        assert (SCHEMAS / name).read_text(encoding="utf-8") == text, (
            f"{name} is stale: run python -m grounding_eval.data.schemas --write"
        )
    assert main(["--check"]) == 0


RECORDS = [
    ("query", [SAMPLE / "queries.jsonl", REPO / "tests/fixtures/data/tiny/queries.jsonl"]),
    ("high_risk_item", [SAMPLE / "high_risk.jsonl"]),
    ("index_record", [SAMPLE / "jkb_index.jsonl", REPO / "tests/fixtures/data/tiny/jkb_index.csv"]),
    ("docs_qa_question", [REPO / "datasets/docs_qa/questions.jsonl"]),
]
LISTS = [
    ("recorded_answer", [SAMPLE / "recorded_answers.yaml", REPO / "datasets/docs_qa/recorded_answers.yaml"]),
    ("recorded_judge_reply", sorted((SAMPLE / "judge_replies").glob("*.yaml"))),
    ("organization", [SAMPLE / "organizations.yaml"]),
]


@pytest.mark.parametrize(("name", "files"), RECORDS, ids=[c[0] for c in RECORDS])
def test_schema_accepts_the_shipped_records(name: str, files: list[Path]) -> None:
    validator = jsonschema.Draft202012Validator(_schema(name))
    for path in files:
        for where, row in iter_rows(path):
            assert not [e.message for e in validator.iter_errors(row)], f"{path} {where}"


@pytest.mark.parametrize(("name", "files"), LISTS, ids=[c[0] for c in LISTS])
def test_schema_accepts_the_shipped_entries(name: str, files: list[Path]) -> None:
    validator = jsonschema.Draft202012Validator(_schema(name))
    for path in files:
        for i, entry in enumerate(read_yaml(path), 1):
            assert not [e.message for e in validator.iter_errors(entry)], f"{path} entry {i}"


def test_citation_schema_accepts_the_sample_index() -> None:
    validator = jsonschema.Draft202012Validator(_schema("citations"))
    assert not list(validator.iter_errors(read_yaml(SAMPLE / "citations.yaml")))


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
        ("recorded_answer", {"query_id": "q1", "condition": "C15", "answer": "a", "model": "m"}),
        ("recorded_judge_reply", {"key": "v3/q1/C0", "answer_sha256": "f431", "replies": ["{}"]}),
        ("recorded_judge_reply", {"key": "v3/q1/C0", "replies": []}),
        ("organization", {"name": "X", "states": ["IL"], "website": "https://x.org"}),
        ("dataset_manifest", {"rounds": ["4"]}),
        ("citations", {"covers": []}),
        ("docs_qa_question", {"id": "Q1", "type": "out-of-scope", "question": "q", "reference_answer": "r",
                              "must_include": [], "source_sections": ["a.md#b"]}),
        ("docs_qa_question", {"id": "Q1", "type": "reworded", "question": "q", "reference_answer": "r",
                              "must_include": ["x"], "source_sections": []}),
    ],
)  # fmt: skip
def test_schema_rejects_what_the_loader_rejects(name: str, row: dict[str, Any]) -> None:
    assert list(jsonschema.Draft202012Validator(_schema(name)).iter_errors(row))


def test_the_directory_loader_reads_the_organization_model_fields() -> None:
    """The verifier's directory loader validates entries itself (it runs in assertion processes); the
    schema's model names the same fields."""
    from grounding_eval.data.models import OrganizationEntry
    from grounding_eval.verifier.directory import _FIELDS

    assert set(OrganizationEntry.model_fields) == _FIELDS
