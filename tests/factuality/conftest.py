"""Shared pieces for the factual-accuracy tests: the rubric, the fixture evidence, reply builders.

The scriptable 127.0.0.1 judge server and the three wire formats are the rubric judge's test fixtures
(``tests/judge/conftest.py``), imported here so both judges are tested against the same server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.factuality.evidence import Document, load_evidence_files
from grounding_eval.factuality.rubric import FactualityRubric, load_rubric
from tests.judge.conftest import JudgeServer, Scripted, WireCase, judge_server, wire_case, wire_cases

__all__ = [
    "FIXTURES",
    "JudgeServer",
    "Scripted",
    "WireCase",
    "judge_server",
    "reply",
    "wire_case",
    "wire_cases",
]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "factuality"
EVIDENCE_FILES = [FIXTURES / "evidence" / "scra.txt", FIXTURES / "evidence" / "avoid.txt"]

SUPPORTED = {
    "claim_id": "c1",
    "claim_text": "A landlord may not evict a servicemember's family without a court order.",
    "verification_result": "Supported",
    "evidence_quote": "Except by court order, a landlord (or another person with paramount title) may not",
    "score": 1,
    "severity": None,
    "judge_rationale": "3951(a)(1).",
}
CONTRADICTED = {
    "claim_id": "c2",
    "claim_text": "Every renter qualifies for free legal aid.",
    "verification_result": "Contradicted",
    "evidence_quote": "You may qualify for free legal aid based on your income.",
    "score": 0,
    "severity": "Major",
    "judge_rationale": "Eligibility depends on income.",
}


def reply(*claims: dict[str, Any], score: Any = "auto", total: Any = "auto") -> str:
    """A schema-valid reply with these claims; the judge's own numbers computed unless given."""
    counted = [c["score"] for c in claims if c["score"] is not None]
    return json.dumps({
        "overall_factual_accuracy_score": (sum(counted) / len(counted) if counted else None) if score == "auto" else score,
        "total_verifiable_claims": len(counted) if total == "auto" else total,
        "claim_verifications": list(claims),
        "overall_summary": "test reply",
    })  # fmt: skip


@pytest.fixture(scope="session")
def rubric() -> FactualityRubric:
    return load_rubric()


@pytest.fixture(scope="session")
def documents(rubric: FactualityRubric) -> list[Document]:
    return load_evidence_files(EVIDENCE_FILES, max_chars=rubric.chunk_chars)


@pytest.fixture(autouse=True)
def _fresh_clients() -> Iterator[None]:
    """A new process's judge clients for every test (the adapters build each client once per process,
    with the API key and base URL the environment holds then; tests change the environment)."""
    from grounding_eval.judge import clients

    clients.forget_clients()
    yield
    clients.forget_clients()
