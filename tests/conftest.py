"""Shared fixtures: the test directory and allowlist (never the shipped sample data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounding_eval.verifier.directory import Directory, load_directory
from grounding_eval.verifier.setup import load_resources
from grounding_eval.verifier.verdict import VerifierResources

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="session")
def directory() -> Directory:
    return load_directory(FIXTURES / "verifier" / "orgs.yaml")


@pytest.fixture(scope="session")
def resources() -> VerifierResources:
    """Offline resources over the test fixtures, with a small recorded liveness snapshot."""
    return load_resources(
        allowlist=FIXTURES / "verifier" / "allowlist.txt",
        orgs=FIXTURES / "verifier" / "orgs.yaml",
        liveness="offline",
        snapshot=FIXTURES / "verifier" / "liveness_snapshot.csv",
        cache_path=None,
    )
