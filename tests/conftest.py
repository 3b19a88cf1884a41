"""Shared fixtures: the test directory and allowlist (never the shipped sample data), and the shipped configs'
offline promptfoo runs that several tests read (``shared_eval``)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from grounding_eval.promptfoo.written_paths import WRITE_DIRS_ENV
from grounding_eval.verifier.directory import Directory, load_directory
from grounding_eval.verifier.setup import load_resources
from grounding_eval.verifier.verdict import VerifierResources
from tests.promptfoo_runs import EvalRun, run_eval

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(scope="session", autouse=True)
def _session_cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's own user cache folder (``XDG_CACHE_HOME``), never the person's ``~/.cache``: data caches
    built once are shared by the session's tests (and the promptfoo runs they start), nothing leaks between runs."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(folder))
        # The tests' configs write their audit files, queues and caches under the session's temporary folder,
        # outside the folder they run in: granted as a user grants a folder (grounding_eval/promptfoo/written_paths.py).
        mp.setenv(WRITE_DIRS_ENV, str(tmp_path_factory.getbasetemp()))
        yield folder


@pytest.fixture(autouse=True)
def _fresh_judge_replies(_session_cache_folder: Path) -> None:
    """No test reads a judge reply another test cached: the key holds the endpoint URL, and a stand-in judge on
    127.0.0.1 gets a port an earlier test's stand-in (scripted with other replies) may have had."""
    shutil.rmtree(_session_cache_folder / "grounding-eval" / "judge", ignore_errors=True)


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
