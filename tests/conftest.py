"""Shared fixtures: the test directory and allowlist (never the shipped sample data), and the shipped configs'
offline promptfoo runs that several tests read (``shared_eval``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from grounding_eval.verifier.directory import Directory, load_directory
from grounding_eval.verifier.setup import load_resources
from grounding_eval.verifier.verdict import VerifierResources
from tests.promptfoo_runs import EvalRun, run_eval

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


@pytest.fixture(scope="session")
def shared_eval(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], EvalRun]:
    """``shared_eval(config)``: the session's one offline promptfoo run of a shipped config (tests/promptfoo_runs.py)."""
    runs: dict[str, EvalRun] = {}

    def shared(config: str) -> EvalRun:
        if config not in runs:
            runs[config] = run_eval(config, tmp_path_factory.mktemp("eval-" + Path(config).stem))
        return runs[config]

    return shared
